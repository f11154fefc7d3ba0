# The collector keeps up with a fast ping-pong: 1,000,000 round trips (2,000,000 switches,
# about 1.6 M/s right after start, when the symbolizer loads libc's debug information) traced
# with the default settings. Loss accounting is exact: `switch` lines plus `loss` counts equal
# the switches the program made (loss counts records of every kind: see below). Whether there is
# loss at all depends on how the machine shares its cores, so the amount is reported, not
# asserted. The trace ends with an `end` line that counts its lines and the loss.
source "$CTP_SOURCE_DIR/test/integration/lib.sh"

trace pp -- "$PROGRAMS/pingpong_count" 1000000
expect_eq "the program ran to its end" 0 "$status"
made=$(sed -n 's/^switches \([0-9]*\)$/\1/p' "$WORK/pp.out")
expect_eq "the program made 2 switches per round trip" 2000000 "$made"

# Two million lines: count with grep, parse only the few that are not switches.
switches=$(lines -c '^{"type":"switch"' "$WORK/pp.jsonl")
grep -v '^{"type":"switch"' "$WORK/pp.jsonl" >"$WORK/rest.jsonl"
lost=$(jq -s '[.[] | select(.type == "loss") | .count] | add // 0' "$WORK/rest.jsonl")
main=$(jq -r 'select(.type == "coro" and .kind == "thread") | .coro' "$WORK/rest.jsonl")
# What the program's ring carries: a thread record, the create record of its coroutine, the
# switches, and the coroutine's exit record just before its last switch. A loss count is of
# records of any kind. The first two are the first records of an empty ring, which cannot be
# dropped (and the coroutine's line names its creator, which only its create record tells); the
# exit record shows in no line. So the switch lines plus the loss are the switches made, plus one
# when the exit record was among the lost.
expect_eq "the coroutine's create record arrived: it names the main thread as its creator" \
	"$main" "$(jq -r 'select(.type == "coro" and .kind == "ucontext") | .parent' "$WORK/rest.jsonl")"
loss_is_exact() {
	local extra=$((switches + lost - made))
	[ "$extra" -eq 0 ] || [ "$extra" -eq 1 -a "$lost" -gt 0 ]
}
check "switch lines ($switches) + loss ($lost) = switches made ($made), + 1 if the exit record was lost" \
	loss_is_exact
# The main thread's station counts its resumes however many records were lost: one per round
# trip, and its first run.
expect_eq "the main thread's station counted its resumes, loss or not" $((made / 2 + 1)) \
	"$(jq -r "select(.type == \"state\" and .coro == $main) | .switches" "$WORK/rest.jsonl")"
echo "loss: $lost of $made switches"

nlines=$(wc -l <"$WORK/pp.jsonl")
expect_eq "the last line is the end line" end "$(tail -n 1 "$WORK/pp.jsonl" | jq -r .type)"
expect_eq "end counts the lines before it" "$((nlines - 1))" "$(tail -n 1 "$WORK/pp.jsonl" | jq .lines)"
expect_eq "end counts the loss" "$lost" "$(tail -n 1 "$WORK/pp.jsonl" | jq .lost)"
events=events
[ "$lost" = 1 ] && events=event
expect_eq "the summary says the same loss" 1 \
	"$(grep -c "1 coroutine and 1 thread, $switches switches, $lost $events lost" "$WORK/pp.err")"
finish
