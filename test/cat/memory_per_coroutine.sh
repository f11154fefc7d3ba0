# ctp-cat's memory per coroutine, for each output: over a generated trace of 200,000 coroutines
# in one process (scripts/make-big-trace), each one's peak RSS less that of plain JSON Lines
# (which keeps nothing), per coroutine.
# - The streaming views keep a name per coroutine of a live process. Their bounds hold the
#   bench's target for the text view (cat_text_peak_rss_mb <= 64 MB over 10^6 coroutines) with
#   room for the allocator: a name is 40 bytes and 8 of tables now (51 bytes a coroutine
#   measured here), and the 4 bytes a slot that a chain once added read 58 and went past the
#   target at 10^6.
# - --report keeps a record per coroutine (docs/ctp-cat.md: 176 bytes and 4 in its table; 183
#   measured here).
# - --html keeps that, 16 bytes a switch for the timeline, and the histories of the coroutines
#   it lists (every live one, the first and the last 10,000 to end): 326 bytes here, where every
#   coroutine's history took 509 and a history's first events allocated whole 2,070 (2 GB over
#   10^6).
set -euo pipefail
CAT=$1
MAKE_TRACE=$2
COROS=200000
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ctp-cat-memory.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
"$MAKE_TRACE" "$COROS" "$WORK/t.zst"

peak_kb() { # ARGS...: ctp-cat's peak RSS in kB, run with ARGS on the trace
	/usr/bin/time -f "%M" -o "$WORK/maxrss" "$CAT" "$@" "$WORK/t.zst" >/dev/null
	tail -n 1 "$WORK/maxrss"
}
base_kb=$(peak_kb --format=jsonl)
failed=0
check() { # NAME BOUND ARGS...
	local name=$1 bound=$2 kb per_coro
	shift 2
	kb=$(peak_kb "$@")
	per_coro=$(((kb - base_kb) * 1024 / COROS))
	echo "$name: $kb kB peak, $per_coro bytes a coroutine over jsonl's $base_kb kB (bound $bound)"
	[ "$per_coro" -le "$bound" ] || { echo "FAIL: $name keeps $per_coro bytes a coroutine"; failed=1; }
}
check text 56 --format=text
check csv 56 --format=csv
check corotracer 64 --format=corotracer
check perfetto 8 --format=perfetto
check report 200 --report
check html 360 --html "$WORK/page.html"
exit "$failed"
