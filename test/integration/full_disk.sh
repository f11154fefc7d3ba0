# A full disk under the collector: it must not die, must say what it could not write, and its
# `end` line must count only the lines written and name the unwritten ones, so that ctp-cat says
# the trace is incomplete (exit 1) and --report warns, instead of a whole-looking trace.
#
# The disk is made full with a file size limit (ulimit -f) on the collector alone: it works for
# any user, in containers and in CI, where mounting a small tmpfs needs privileges. Writes past
# the limit fail with EFBIG (the collector ignores SIGXFSZ), as they fail with ENOSPC on a full
# file system: the same path in the writer. The collector is started here (not by ctp-run) so
# that the limit does not apply to the traced programs, whose segments are files too.
#
# The traced shell starts the ping-pong once the header is in the file, and sleeps after it, so
# that the first frame (the header) and the last (the processes' ends and the `end` line) are
# small frames of their own that fit under the limit, while every frame of switches in between
# does not.
source "$(dirname "$0")/lib.sh"

COLLECTOR=$CTP_BUILD_DIR/collector/ctp-collector
PRELOAD=$CTP_BUILD_DIR/preload/libctp_preload.so
LIMIT_KB=8
mkdir -m 700 "$WORK/run"
mkfifo "$WORK/ready" "$WORK/go"

(
	ulimit -f $LIMIT_KB
	exec "$COLLECTOR" --socket "$WORK/run/sock" --output "$WORK/full.jsonl.zst" --ready-fd 3 \
		--grace-ms 200 --summary 3>"$WORK/ready" 2>"$WORK/collector.err"
) &
collector=$!
read -r word <"$WORK/ready"
expect_eq "the collector is ready" ready "$word"

CTP_SOCKET=$WORK/run/sock LD_PRELOAD=$PRELOAD \
	sh -c "read go <'$WORK/go'; '$PROGRAMS/ucontext_pingpong' 100000; sleep 3" >"$WORK/app.out" &
app=$!
# header_written: the file, still being written (ctp-cat: 1), begins with the header.
header_written() {
	local st=0
	"$CTP_CAT" "$WORK/full.jsonl.zst" >"$WORK/head.jsonl" 2>/dev/null || st=$?
	[ "$st" -eq 1 ] && [ "$(jq -r .type "$WORK/head.jsonl" 2>/dev/null | head -n 1)" = trace ]
}
check "the header is written before the ping-pong starts" wait_until 30 header_written
echo go >"$WORK/go"
wait $app
st=0
wait $collector || st=$?
expect_eq "the collector ends with failure, not killed by SIGXFSZ" 1 "$st"
check "the collector says it could not write" grep -q "cannot write .*full.jsonl.zst: File too large" \
	"$WORK/collector.err"
check "its summary says lines were not written" grep -q "lines NOT WRITTEN" "$WORK/collector.err"
check "the trace stays under the limit" test "$(stat -c %s "$WORK/full.jsonl.zst")" -le $((LIMIT_KB * 1024))

st=0
"$CTP_CAT" "$WORK/full.jsonl.zst" >"$WORK/full.jsonl" 2>"$WORK/cat.err" || st=$?
expect_eq "ctp-cat: incomplete" 1 "$st"
check "ctp-cat says lines could not be written" \
	grep -q "the collector could not write [0-9]* lines (a write error: full disk?)" "$WORK/cat.err"
read_lines=$(wc -l <"$WORK/full.jsonl")
expect_eq "the end line counts the lines written" "$((read_lines - 1))" \
	"$(q full '.[] | select(.type == "end") | .lines')"
# Every switch is a line written or one counted unwritten (how many made it into the frames
# written before the limit depends on timing).
check "the end line counts the unwritten lines (written + unwritten switches >= 200002)" \
	test "$(q full '([.[] | select(.type == "switch")] | length)
		+ (.[] | select(.type == "end") | .unwritten)')" -ge 200002

st=0
"$CTP_CAT" --report "$WORK/full.jsonl.zst" >"$WORK/report.txt" 2>/dev/null || st=$?
check "--report does not exit 0" test "$st" -ne 0
check "--report warns that lines were not written" \
	grep -q "WARNING: the collector could not write [0-9]* trace lines" "$WORK/report.txt"

# ctp-cat --html whose page cannot be written whole (a file size limit on ctp-cat alone, as
# above): the page's data goes out as it is made, so the write fails in the middle of it. It
# says so, exits 2 and leaves no page (nor a cut one that looks whole, nor its temporary file).
"$CTP_SOURCE_DIR/scripts/make-big-trace" 2000 "$WORK/many.zst"
mkdir "$WORK/page"
st=0
(
	trap '' XFSZ
	ulimit -f 64
	exec "$CTP_CAT" --html "$WORK/page/page.html" "$WORK/many.zst"
) 2>"$WORK/html.err" || st=$?
expect_eq "ctp-cat --html on a full disk exits 2" 2 "$st"
check "it says which file it could not write, and why" \
	grep -qF "ctp-cat: cannot write $WORK/page/page.html: File too large" "$WORK/html.err"
check "it leaves nothing in the page's directory" test -z "$(ls -A "$WORK/page")"
"$CTP_CAT" --html "$WORK/page/page.html" "$WORK/many.zst"
check "without the limit the page is over 64 KiB" \
	test "$(stat -c %s "$WORK/page/page.html")" -gt $((64 * 1024))

finish
