#!/bin/bash
# ctp-cat as a user runs it: output, stderr messages and exit codes on whole, cut, wrong and
# missing traces. Inputs are made here with the zstd command, one frame per group of lines.
# Usage: test_ctp_cat.sh PATH-TO-ctp-cat
set -u
CAT=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir" || exit 1
failures=0

fail() {
	echo "FAIL: $*" >&2
	failures=$((failures + 1))
}

# expect_rc WANT DESCRIPTION CMD...: runs CMD with stdout in out, stderr in err.
expect_rc() {
	local want=$1 what=$2
	shift 2
	"$@" >out 2>err
	local rc=$?
	[ "$rc" -eq "$want" ] || fail "$what: exit $rc, expected $want (stderr: $(cat err))"
}

expect_err() {
	grep -qF -- "$1" err || fail "stderr lacks '$1': $(cat err)"
}

header='{"type":"trace","format":"ctp-trace","version":1,"tool":"ctp test","start":5}'
printf '%s\n{"type":"process","pid":9,"ppid":1,"exe":"/bin/x","argv":["x"]}\n' "$header" >plain
zstd -q -c plain >trace.zst
for f in 1 2 3 4 5; do
	: >frame
	for i in 1 2 3 4; do
		printf '{"type":"switch","pid":9,"tid":9,"ts":%d,"from":%d,"to":%d,"how":"swapcontext","stack":null}\n' \
			"$f$i" "$i" "$f" >>frame
	done
	# The collector's last line: without it the trace is incomplete.
	[ "$f" = 5 ] && echo '{"type":"end","lines":22,"lost":0}' >>frame
	cat frame >>plain
	zstd -q -c frame >>trace.zst
done
size=$(stat -c %s trace.zst)
last_frame=$((size - $(zstd -q -c frame | wc -c)))

# A whole trace: the lines, byte for byte, exit 0, nothing on stderr.
expect_rc 0 "whole trace" "$CAT" trace.zst
cmp -s out plain || fail "whole trace: output differs from the lines written"
[ -s err ] && fail "whole trace: stderr not empty: $(cat err)"
expect_rc 0 "from stdin" "$CAT" - <trace.zst
cmp -s out plain || fail "stdin: output differs"

# Whole frames but no end line: the collector did not finish; every line, the note, exit 1.
head -n 22 plain | zstd -q -c >noend.zst
expect_rc 1 "no end line" "$CAT" noend.zst
expect_err "ctp-cat: noend.zst: trace has no end line: the collector did not finish"
head -n 22 plain | cmp -s - out || fail "no end line: output differs from the lines written"

# The same files while a process still holds them open for writing (a collector at work, or the
# plain form's waiting for more processes): still being written, not damaged; exit 1, every line.
exec 3>>noend.zst
expect_rc 1 "no end line, still written" "$CAT" noend.zst
expect_err "ctp-cat: noend.zst: still being written: 22 lines so far, no end line yet (ctp-cat -f reads it to its end)"
head -n 22 plain | cmp -s - out || fail "no end line, still written: output differs"
exec 3>&-
head -c $((size - 5)) trace.zst >growing.zst
exec 3>>growing.zst
expect_rc 1 "cut inside a frame, still written" "$CAT" growing.zst
expect_err "ctp-cat: growing.zst: still being written: "
head -n 18 plain | cmp -s - <(head -n 18 out) || fail "cut, still written: the whole frames' lines differ"
exec 3>&-
: >starting.zst
exec 3>>starting.zst
expect_rc 1 "empty, still written" "$CAT" --report starting.zst
expect_err "ctp-cat: starting.zst: still being written: 0 lines so far"
exec 3>&-
expect_rc 0 "whole trace, still written" "$CAT" trace.zst 3>>trace.zst
[ -s err ] && fail "whole trace, still written: stderr not empty: $(cat err)"

# Cut inside the last frame: all lines of the whole frames, the cut told, exit 1.
cut=$((size - 5))
head -c $cut trace.zst >cut.zst
expect_rc 1 "cut trace" "$CAT" cut.zst
expect_err "ctp-cat: cut.zst: trace cut off at byte $cut (last complete frame ends at byte $last_frame); "
head -n 18 plain | cmp -s - <(head -n 18 out) || fail "cut trace: the whole frames' lines differ"
[ "$(wc -l <out)" -ge 18 ] || fail "cut trace: fewer lines than the whole frames hold"
grep -qF "$(wc -l <out) lines read" err || fail "cut trace: line count in message: $(cat err)"
head -c $cut trace.zst | "$CAT" - >/dev/null 2>err
grep -qF "ctp-cat: (standard input): trace cut off at byte $cut" err || fail "cut stdin: $(cat err)"

# Not zstd, not a trace, empty, missing, a directory.
expect_rc 2 "plain text" "$CAT" plain
expect_err "ctp-cat: plain: not a ctp trace (not zstd-compressed)"
echo '{"hello":"world"}' | zstd -q -c >other.zst
expect_rc 2 "zstd, not a trace" "$CAT" other.zst
expect_err "ctp-cat: other.zst: not a ctp trace ("
[ -s out ] && fail "not a trace: something printed on stdout"
: >empty
expect_rc 2 "empty file" "$CAT" empty
expect_err "not a ctp trace (empty file)"
expect_rc 2 "missing file" "$CAT" no-such-file
expect_err "ctp-cat: no-such-file: cannot open: No such file or directory"
mkdir adir
expect_rc 2 "directory" "$CAT" adir
expect_err "ctp-cat: adir: read error: Is a directory"

# A bad line in the middle: warned with its number, skipped, the rest printed, exit 1.
printf '%s\n{"type":"loss","pid":9,"tid":9,"count":3}\nnot json\n{"type":"exit","pid":9,"status":0}\n' \
	"$header" | zstd -q -c >badline.zst
expect_rc 1 "bad line" "$CAT" badline.zst
expect_err "ctp-cat: badline.zst: line 3: not valid JSON"
[ "$(wc -l <out)" -eq 3 ] || fail "bad line: expected 3 lines out, got $(wc -l <out)"
grep -q '"type":"exit"' out || fail "bad line: the line after it is missing"

# Loss in words: one event, or several; the report's summary counts them the same way.
for lost in 1 3; do
	printf '%s\n{"type":"process","pid":9,"ppid":1,"exe":"/bin/x","argv":["x"]}\n{"type":"loss","pid":9,"tid":9,"count":%d}\n{"type":"end","lines":3,"lost":%d}\n' \
		"$header" "$lost" "$lost" | zstd -q -c >lost.zst
	words="$lost events lost"
	[ "$lost" = 1 ] && words="1 event lost"
	expect_rc 0 "$words, as text" "$CAT" --format=text lost.zst
	grep -q "$words\$" out || fail "$words: the text view says: $(grep lost out)"
	expect_rc 0 "$words, reported" "$CAT" --report lost.zst
	grep -q ", $words" out || fail "$words: the report's summary says: $(grep lost out)"
	warning="$lost events were lost"
	[ "$lost" = 1 ] && warning="1 event was lost"
	grep -q "WARNING: $warning" out || fail "$words: the report's warning says: $(grep lost out)"
done

# Garbage after whole frames: the frames are printed, the damage told, exit 1.
cat trace.zst plain >tail.zst
expect_rc 1 "garbage after the frames" "$CAT" tail.zst
expect_err "damaged zstd data after byte $size"
cmp -s out plain || fail "garbage after the frames: output differs"

# zstd, but cut before its header line was whole: not a trace (2), not a cut trace (1).
head -c 10 trace.zst >headless.zst
expect_rc 2 "zstd without a whole header line" "$CAT" headless.zst
expect_err "ctp-cat: headless.zst: not a ctp trace (cut off before its first line was complete"

# Lines after the end line, and two traces one after the other: the first trace is printed,
# the rest is named and not read, exit 1.
cat trace.zst trace.zst >twice.zst
expect_rc 1 "two traces concatenated" "$CAT" twice.zst
expect_err "ctp-cat: twice.zst: more follows the end line (line 23): traces concatenated?; the rest is not read"
cmp -s out plain || fail "two traces concatenated: the first trace's lines differ"
(cat plain; echo '{"type":"exit","pid":9,"status":0}') | zstd -q -c >afterend.zst
expect_rc 1 "a line after the end line" "$CAT" afterend.zst
expect_err "more follows the end line"
head -n 12 plain | cat - plain | zstd -q -c >spliced.zst
expect_rc 1 "a second header without an end line before it" "$CAT" spliced.zst
expect_err "ctp-cat: spliced.zst: a second trace header at line 13: traces concatenated?"

# The end line says what the collector could not write (a full disk), or counts lines that are
# not there: every line read is printed, the gap told, exit 1.
(head -n 22 plain; echo '{"type":"end","lines":22,"lost":0,"unwritten":40}') | zstd -q -c >unwritten.zst
expect_rc 1 "lines the collector could not write" "$CAT" unwritten.zst
expect_err "ctp-cat: unwritten.zst: the collector could not write 40 lines (a write error: full disk?): the trace is incomplete"
[ "$(wc -l <out)" -eq 23 ] || fail "unwritten lines: expected 23 lines out, got $(wc -l <out)"
(head -n 2 plain; tail -n 5 plain) | zstd -q -c >gap.zst
expect_rc 1 "fewer lines than the end line counts" "$CAT" gap.zst
expect_err "ctp-cat: gap.zst: the end line counts 22 lines before it, 6 were read: the trace is incomplete"
expect_rc 1 "--report on a trace with unwritten lines" "$CAT" --report unwritten.zst
grep -qF "WARNING: the collector could not write 40 trace lines" out ||
	fail "--report does not warn of unwritten lines: $(cat out)"

# An input that is not a trace touches no output: no database file is made, an existing file
# of the same name stays as it was.
expect_rc 2 "--sqlite from something that is not a trace" "$CAT" --sqlite fresh.db plain
[ -e fresh.db ] && fail "--sqlite from something that is not a trace made fresh.db"
echo "not a database" >kept.db
expect_rc 2 "--sqlite over a file, from something that is not a trace" "$CAT" --sqlite kept.db plain
[ "$(cat kept.db)" = "not a database" ] || fail "--sqlite changed kept.db: $(cat kept.db)"

# A reader that goes away: quiet, exit 0, however much was left.
for i in $(seq 1 20000); do
	printf '{"type":"switch","pid":9,"tid":9,"ts":%d,"from":1,"to":2,"how":"swapcontext","stack":null}\n' "$i"
done >many
(echo "$header"; cat many) | zstd -q -c >many.zst
"$CAT" many.zst 2>err | head -n 1 >out
rc=${PIPESTATUS[0]}
[ "$rc" -eq 0 ] || fail "closed stdout: exit $rc"
[ -s err ] && fail "closed stdout: stderr not empty: $(cat err)"
grep -qF '"type":"trace"' out || fail "closed stdout: first line missing"

# Usage.
expect_rc 0 "--help" "$CAT" --help
grep -q "Exit status" out || fail "--help does not document the exit status"
expect_rc 0 "--version" "$CAT" --version
grep -q "^ctp-cat (ctp " out || fail "--version: $(cat out)"
expect_rc 2 "no file" "$CAT"
expect_rc 2 "unknown option" "$CAT" --bogus trace.zst
expect_err "unknown option '--bogus'"
expect_rc 2 "two files" "$CAT" trace.zst trace.zst
# One rule for times: a duration carries its unit; a bare number is none (docs/ctp-cat.md).
expect_rc 2 "--missed-after without a unit" "$CAT" --report --missed-after 5 trace.zst
expect_err "not a duration with a unit"
expect_rc 0 "--missed-after 1.5s and --never-yielded-after 2m" "$CAT" --report \
	--missed-after 1.5s --never-yielded-after 2m trace.zst
expect_rc 0 "--since with a unit is relative to the start" "$CAT" --since 6ns --type=switch trace.zst
[ "$(grep -c '"switch"' out)" = 20 ] || fail "--since 6ns: $(grep -c '"switch"' out) switches, expected 20"
expect_rc 0 "--since 1h: an hour in, past the trace's end" "$CAT" --since 1h --type=switch trace.zst
[ "$(grep -c '"switch"' out)" = 0 ] || fail "--since 1h: $(grep -c '"switch"' out) switches, expected 0"
expect_rc 0 "--until with digits alone is an absolute ns" "$CAT" --until 20 --type=switch trace.zst
[ "$(grep -c '"switch"' out)" = 4 ] || fail "--until 20: $(grep -c '"switch"' out) switches, expected 4"

if [ "$failures" -ne 0 ]; then
	echo "$failures check(s) failed" >&2
	exit 1
fi
echo "all ctp-cat checks passed"
