# A program that makes a coroutine per job, one after another, as a server makes one per request
# (pdns-recursor's MTasker): 10^6 of them. A coroutine that ended leaves the collector's table
# once its last events are converted, and what its final state line needs waits in an unlinked
# temporary file until the process ends. Kept in the table, they took the collector to 351-364
# MB at its peak (the table alone to 201 MB, as it doubled). The trace says the same as before:
# one state line per coroutine, exited, with its resumes and the time of its last switch, after
# one coro_end each.
source "$CTP_SOURCE_DIR/test/integration/lib.sh"

N=1000000
# What the collector may hold of a backlog (CTP_SPOOL_MB), which the bound below counts: room
# for the moments the collector falls behind (run alone, it keeps up: no event may be lost).
SPOOL_MB=64

mkdir "$WORK/tmp"
status=0
CTP_SPOOL_MB=$SPOOL_MB TMPDIR="$WORK/tmp" /usr/bin/time -f "%M" -o "$WORK/maxrss" \
	"$CTP_RUN" -o "$WORK/churn.jsonl.zst" -- "$PROGRAMS/coro_churn" "$N" \
	>"$WORK/churn.out" 2>"$WORK/churn.err" || status=$?
expect_eq "the program ran to its end" 0 "$status"
expect_eq "it made and ended every coroutine" "made $N ended $N" "$(cat "$WORK/churn.out")"
cat_status=0
"$CTP_CAT" "$WORK/churn.jsonl.zst" >"$WORK/churn.jsonl" || cat_status=$?
expect_eq "ctp-cat reads the trace whole" 0 "$cat_status"
expect_eq "the collector had its temporary file (no complaint)" 0 \
	"$(lines -c "coroutines that ended" "$WORK/churn.err")"
expect_eq "no event lost" 0 "$(tail -n 1 "$WORK/churn.jsonl" | jq .lost)"

# The largest process of the run: the collector (the program is a few MB, its segment shared).
peak_mb=$(($(tail -n 1 "$WORK/maxrss") / 1024))
bound_mb=$((SPOOL_MB + 3 * 16 + 100))
check "peak RSS ($peak_mb MB) within the spool, three times the ring and 100 MB ($bound_mb MB)" \
	[ "$peak_mb" -le "$bound_mb" ]

lines '^{"type":"state"' "$WORK/churn.jsonl" >"$WORK/states"
expect_eq "one state line per coroutine and the main thread" $((N + 1)) "$(wc -l <"$WORK/states")"
# Fields by position, as ctp-cat writes them (sed over a million lines took seconds):
# {"type":"state","pid":P,"coro":C,"state":S,"tid":T,"since":N,...
expect_eq "every coroutine's id once" $((N + 1)) \
	"$(cut -d, -f3 "$WORK/states" | sort -u | wc -l)"
expect_eq "every job exited, resumed twice" "$N" \
	"$(lines -c '"state":"exited",.*"stack":null,"switches":2}$' "$WORK/states")"
expect_eq "one coro_end each, returned" "$N" \
	"$(lines -c '^{"type":"coro_end",.*"how":"returned"}$' "$WORK/churn.jsonl")"
# Each exited coroutine's `since` is the time of its last switch: the return that left it.
# {"type":"switch","pid":P,"tid":T,"ts":N,"from":F,...: split at , and :, F is $10 and N $8.
lines '"how":"return"' "$WORK/churn.jsonl" | awk -F'[,:]' '{print $10, $8}' | sort >"$WORK/returns"
lines '"state":"exited"' "$WORK/states" | awk -F'[,:]' '{print $6, $12}' | sort >"$WORK/sinces"
expect_eq "a return switch for every job" "$N" "$(wc -l <"$WORK/returns")"
check "every exited coroutine's since is its return's time" cmp -s "$WORK/returns" "$WORK/sinces"

# Where no temporary file can be made, they stay in memory, and the collector says so.
N_SMALL=100000
status=0
TMPDIR="$WORK/missing" "$CTP_RUN" -o "$WORK/small.jsonl.zst" -- "$PROGRAMS/coro_churn" \
	"$N_SMALL" >"$WORK/small.out" 2>"$WORK/small.err" || status=$?
expect_eq "(no temporary file) the program ran to its end" 0 "$status"
check "(no temporary file) the collector says where it could not write" \
	grep -q "cannot keep the coroutines that ended in a temporary file in $WORK/missing" \
	"$WORK/small.err"
"$CTP_CAT" "$WORK/small.jsonl.zst" >"$WORK/small.jsonl"
expect_eq "(no temporary file) every job's state line" "$N_SMALL" \
	"$(lines -c '^{"type":"state",.*"state":"exited",.*"switches":2}$' "$WORK/small.jsonl")"
finish
