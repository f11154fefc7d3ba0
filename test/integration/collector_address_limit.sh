# The collector inherits the program's address-space limit (ulimit -v). Under 156 MiB its
# default spool of 256 MiB cannot be mapped: it now fits the spool into the room the limit
# leaves and says so, and the trace holds every switch. A soft limit alone is the program's:
# the collector lifts its own to the hard limit. Under 976 MiB, six threads switching flat out
# grow the segment (their rings grow to 16 MiB) past what the collector could map when it
# mapped the segment whole in each of its threads: it stopped harvesting every ring and lost
# more than half the switches without counting them ("0 events lost"). Now each of its threads
# maps the blocks it reads on its own (the harvester the rings, the converter the station and
# module chunks): the loss is counted, or, where a ring could never be mapped, said.
source "$CTP_SOURCE_DIR/test/integration/lib.sh"

# limited NAME KB ULIMIT-OPTIONS -- PROGRAM ARGS: traces PROGRAM under `ulimit OPTIONS KB`.
limited() {
	local name=$1 kb=$2 opts=()
	shift 2
	while [ "$1" != -- ]; do
		opts+=("$1")
		shift
	done
	shift
	status=0
	(ulimit "${opts[@]}" "$kb" && exec "$CTP_RUN" -o "$WORK/$name.jsonl.zst" -- "$@") \
		>"$WORK/$name.out" 2>"$WORK/$name.err" || status=$?
	expect_eq "($name) the program ran to its end" 0 "$status"
	check "($name) the collector ran to its end" \
		not_in "$WORK/$name.err" "ctp-collector was killed\|out of memory$\|out of memory for the spool"
	local cat_status=0
	"$CTP_CAT" "$WORK/$name.jsonl.zst" >"$WORK/$name.jsonl" || cat_status=$?
	expect_eq "($name) ctp-cat reads the trace whole" 0 "$cat_status"
	made=$(sed -n 's/^switches \([0-9]*\)$/\1/p' "$WORK/$name.out")
	switches=$(lines -c '^{"type":"switch"' "$WORK/$name.jsonl")
	lost=$(lines '^{"type":"loss"' "$WORK/$name.jsonl" | jq -n '[inputs | .count] | add // 0')
	# A loss count is of records of any kind: a thread's end may be among them.
	extra=$((switches + lost - made))
	expect_eq "($name) the last line is the end line" end \
		"$(tail -n 1 "$WORK/$name.jsonl" | jq -r .type)"
	echo "($name) kept $switches of $made switches, $lost counted as lost; ctp-run said:"
	sed 's/^/    /' "$WORK/$name.err"
}

accounted() {
	[ "$extra" -ge 0 ] && [ "$extra" -le "$1" ]
}

not_in() {
	! grep -q "$2" "$1"
}

limited hard 160000 -v -- "$PROGRAMS/pingpong_count" 1000000
check "(hard) switch lines ($switches) + loss ($lost) = switches made ($made)" accounted 0
check "(hard) the collector says it fitted its spool into the limit" \
	grep -q "^ctp-collector: the address-space limit (ulimit -v, 156 MiB) leaves room for a spool of [0-9]* MiB, not 256 (--spool-mb)" \
	"$WORK/hard.err"

limited soft 160000 -S -v -- "$PROGRAMS/pingpong_count" 1000000
check "(soft) switch lines ($switches) + loss ($lost) = switches made ($made)" accounted 0
check "(soft) the collector lifts a soft limit and keeps its spool" \
	not_in "$WORK/soft.err" "address-space limit"

THREADS=6
limited threads 1000000 -v -- "$PROGRAMS/pingpong_threads" "$THREADS" 3000
# Loss is never silent: counted, or, where the collector could not map the segment's last
# growth even at the end, said.
missing_said() {
	grep -q "could never be mapped: the records of rings added since .* are missing and not counted as lost" \
		"$WORK/threads.err"
}
accounted_or_said() {
	accounted "$THREADS" || missing_said
}
check "(threads) switch lines ($switches) + loss ($lost) = switches made ($made), or what is missing is said" \
	accounted_or_said
finish
