# The streaming views' memory per coroutine: ctp-cat over a generated trace of 200,000
# coroutines in one process (scripts/make-big-trace), each view's peak RSS less that of plain
# JSON Lines (which keeps nothing), per coroutine. The bounds hold the bench's target for the
# text view (cat_text_peak_rss_mb <= 64 MB over 10^6 coroutines) with room for the allocator:
# a name is 40 bytes and 8 of tables now (51 bytes a coroutine measured here), and the 4 bytes
# a slot that a chain once added read 58 and went past the target at 10^6.
set -euo pipefail
CAT=$1
MAKE_TRACE=$2
COROS=200000
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ctp-views-memory.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
"$MAKE_TRACE" "$COROS" "$WORK/t.zst"

peak_kb() { # FORMAT: ctp-cat's peak RSS in kB for --format=FORMAT
	/usr/bin/time -f "%M" -o "$WORK/maxrss" "$CAT" --format="$1" "$WORK/t.zst" >/dev/null
	tail -n 1 "$WORK/maxrss"
}
base_kb=$(peak_kb jsonl)
failed=0
for view in text:56 csv:56 corotracer:64 perfetto:8; do
	format=${view%:*} bound=${view#*:}
	kb=$(peak_kb "$format")
	per_coro=$(((kb - base_kb) * 1024 / COROS))
	echo "$format: $kb kB peak, $per_coro bytes a coroutine over jsonl's $base_kb kB (bound $bound)"
	[ "$per_coro" -le "$bound" ] || { echo "FAIL: $format keeps $per_coro bytes a coroutine"; failed=1; }
done
exit "$failed"
