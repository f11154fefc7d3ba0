# The collector's memory stays bounded when the program outruns it: six threads switch flat out
# for 3 s (on two CPUs, several times what the collector takes in), with a spool of 32 MiB
# (CTP_SPOOL_MB). What the collector may hold is that spool, the rings of the segment it maps,
# the records taken from the rings that wait for the slowest ring before they are put in time
# order (at most what the rings hold again, in queues that grow by doubling: up to twice that
# in memory), and its own tens of MB: 227-272 MB alone, 378 MB once under scripts/test. The rest
# is dropped by the rings and counted: the trace's switch lines plus its loss are the switches
# made. Before every harvest pass said how far it got, a ring left behind kept every record of
# the process in that queue: 0.8-1.05 GB in this run.
source "$CTP_SOURCE_DIR/test/integration/lib.sh"

THREADS=6
SPOOL_MB=32
RING_MB=16 # the rings' largest size, the default of CTP_RING_KB

status=0
CTP_SPOOL_MB=$SPOOL_MB /usr/bin/time -f "%M" -o "$WORK/maxrss" \
	"$CTP_RUN" -o "$WORK/t.jsonl.zst" -- "$PROGRAMS/pingpong_threads" "$THREADS" 3000 \
	>"$WORK/t.out" 2>"$WORK/t.err" || status=$?
expect_eq "the program ran to its end" 0 "$status"
cat_status=0
"$CTP_CAT" "$WORK/t.jsonl.zst" >"$WORK/t.jsonl" || cat_status=$?
expect_eq "ctp-cat reads the trace whole" 0 "$cat_status"

# The largest process of the run: the collector, or the program with its rings.
peak_mb=$(($(tail -n 1 "$WORK/maxrss") / 1024))
bound_mb=$((SPOOL_MB + 3 * THREADS * RING_MB + 128))
check "peak RSS ($peak_mb MB) within the spool, three times the rings and 128 MB ($bound_mb MB)" \
	[ "$peak_mb" -le "$bound_mb" ]

made=$(sed -n 's/^switches \([0-9]*\)$/\1/p' "$WORK/t.out")
switches=$(lines -c '^{"type":"switch"' "$WORK/t.jsonl")
lost=$(lines '^{"type":"loss"' "$WORK/t.jsonl" | jq -n '[inputs | .count] | add // 0')
# A loss count is of records of any kind: a thread's end may be among them.
extra=$((switches + lost - made))
check "switch lines ($switches) + loss ($lost) = switches made ($made), + at most one a thread" \
	[ "$extra" -ge 0 -a "$extra" -le "$THREADS" ]
expect_eq "the last line is the end line" end "$(tail -n 1 "$WORK/t.jsonl" | jq -r .type)"
expect_eq "end counts the loss" "$lost" "$(tail -n 1 "$WORK/t.jsonl" | jq .lost)"
# What the collector says of its full spool matches the loss: the rings hold records meanwhile
# and drop only what does not fit (it used to say records were dropped even where none was).
if [ "$lost" -gt 0 ]; then
	check "the collector says the spool filled and how many events were lost ($lost)" \
		grep -q "^ctp-collector: the spool reached its limit of $SPOOL_MB MiB; the rings held records meanwhile, and $lost events\\? w[a-z]* lost in all" \
		"$WORK/t.err"
else
	check "the collector claims no loss (the trace has none)" \
		bash -c '! grep -q "lost in all" "$1"' sh "$WORK/t.err"
fi
echo "kept $switches of $made switches, peak RSS $peak_mb MB"

# A limit that is no number is named and ignored, as a bad CTP_HOLD_MS is.
CTP_SPOOL_MB=lots trace bad -- "$PROGRAMS/pingpong_count" 1000
expect_eq "(CTP_SPOOL_MB=lots) the run ended well" 0 "$status"
check "(CTP_SPOOL_MB=lots) the bad value is named" \
	grep -q "ignoring CTP_SPOOL_MB=lots: not a number from 1 to 1048576" "$WORK/bad.err"
expect_eq "(CTP_SPOOL_MB=lots) every switch is in the trace" 2000 \
	"$(lines -c '^{"type":"switch"' "$WORK/bad.jsonl")"
finish
