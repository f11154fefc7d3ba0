# The collector keeps up with a fast ping-pong: 1,000,000 round trips (2,000,000 switches,
# about 1.6 M/s right after start, when the symbolizer loads libc's debug information) traced
# with the default settings. Loss accounting is exact: `switch` lines plus `loss` counts equal
# the switches the program made (loss counts records of every kind: see below). And the
# harvester thread should leave no loss at all; on 2 cores shared with other work a little can
# happen, so that is reported, not failed, unless CTP_EXPECT_NO_LOSS=1. The trace ends with an `end` line that counts its lines and the loss.
source "$CTP_SOURCE_DIR/test/integration/lib.sh"

trace pp -- "$PROGRAMS/pingpong_count" 1000000
expect_eq "the program ran to its end" 0 "$status"
made=$(sed -n 's/^switches \([0-9]*\)$/\1/p' "$WORK/pp.out")
expect_eq "the program made 2 switches per round trip" 2000000 "$made"

# Two million lines: count with grep, parse only the few that are not switches.
switches=$(grep -c '^{"type":"switch"' "$WORK/pp.jsonl" || true)
grep -v '^{"type":"switch"' "$WORK/pp.jsonl" >"$WORK/rest.jsonl"
lost=$(jq -s '[.[] | select(.type == "loss") | .count] | add // 0' "$WORK/rest.jsonl")
# A loss count is of records of any kind: besides its switches the program writes a thread, a
# create and an exit record, which may be among the lost when there is loss.
extra=$((switches + lost - made))
check "switch lines + loss counts = switches made (+ at most 3 other records lost: $extra)" \
	test "$extra" -ge 0 -a "$extra" -le 3 -a \( "$lost" -gt 0 -o "$extra" -eq 0 \)
echo "loss: $lost of $made switches"
if [ "${CTP_EXPECT_NO_LOSS:-0}" = 1 ]; then
	expect_eq "no switch lost" 0 "$lost"
fi

lines=$(wc -l <"$WORK/pp.jsonl")
expect_eq "the last line is the end line" end "$(tail -n 1 "$WORK/pp.jsonl" | jq -r .type)"
expect_eq "end counts the lines before it" "$((lines - 1))" "$(tail -n 1 "$WORK/pp.jsonl" | jq .lines)"
expect_eq "end counts the loss" "$lost" "$(tail -n 1 "$WORK/pp.jsonl" | jq .lost)"
expect_eq "the summary says the same loss" 1 \
	"$(grep -c "2 coroutines, $switches switches, $lost events lost" "$WORK/pp.err")"
finish
