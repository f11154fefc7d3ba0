# While every CPU is busy, the collector holds conversion back, so that the traced program has the
# CPUs (collector/convert_pacing.h), and the trace loses nothing by it: four processes, one
# after another under one ctp-run, each make 100,000 switches while a busy loop runs on every CPU;
# each one's switches are all in the trace, and the summary says that conversion held back. A
# hold that a quarter of the spool ended is named too. A short run's holds are too short to name.
# With CTP_HOLD_MS=0 it never holds, and a bad CTP_HOLD_MS is named and ignored.
source "$CTP_SOURCE_DIR/test/integration/lib.sh"

ROUNDS=50000 # 100,000 switches of 48 bytes a process: its ring holds them if the harvester waits
RUNS=4
for _ in $(seq "$(nproc)"); do
	sh -c 'while :; do :; done' &
	at_exit kill "$!"
done

run_all="for i in \$(seq $RUNS); do \"\$1\" $ROUNDS || exit; done"
trace busy -- sh -c "$run_all" sh "$PROGRAMS/pingpong_count"
expect_eq "every run ended well" 0 "$status"
expect_eq "each run made its switches" "$RUNS" \
	"$(lines -c "^switches $((2 * ROUNDS))\$" "$WORK/busy.out")"
per_pid=$(grep '^{"type":"switch"' "$WORK/busy.jsonl" | jq -r .pid | sort | uniq -c |
	awk -v want=$((2 * ROUNDS)) '$1 == want {n++} END {print n + 0}')
expect_eq "every switch of every run is in the trace" "$RUNS" "$per_pid"
expect_eq "nothing was lost" 0 "$(q busy '[.[] | select(.type == "loss")] | length')"
check "the summary says conversion held back for the busy CPUs" \
	grep -q '^ctp: the CPUs were busy: conversion held back [0-9]* times\?, [0-9.]* s in all' \
	"$WORK/busy.err"
check "no hold ended on the spool (the runs' 19 MB of records never reach its quarter)" \
	bash -c '! grep -q "quarter of the spool" "$1"' sh "$WORK/busy.err"

# A hold that a quarter of the spool ends leaves conversion to share the busy CPUs with the
# program: the summary says so, with the setting that holds longer. 400,000 switches of 48 bytes
# (19 MB) against a 16 MiB spool, whose quarter is 4 MiB; nothing is lost by it either.
CTP_SPOOL_MB=16 trace small_spool -- "$PROGRAMS/pingpong_count" 200000
expect_eq "(16 MiB spool) the run ended well" 0 "$status"
expect_eq "(16 MiB spool) every switch is in the trace" 400000 \
	"$(lines -c '^{"type":"switch"' "$WORK/small_spool.jsonl")"
check "(16 MiB spool) the summary names the holds the spool ended, and CTP_SPOOL_MB" \
	grep -q '^ctp: conversion held back for the busy CPUs until a quarter of the spool (4 MiB) waited ([0-9]* times\?), .*(CTP_SPOOL_MB, --spool-mb)$' \
	"$WORK/small_spool.err"

# A short run holds for a few ms at most, which delayed nothing a user could see: no line.
trace short -- "$PROGRAMS/pingpong_count" 10
expect_eq "(short run) it ended well" 0 "$status"
check "(short run) the summary does not name holds of a few ms" \
	bash -c '! grep -q "held back" "$1"' sh "$WORK/short.err"

CTP_HOLD_MS=0 trace never -- "$PROGRAMS/pingpong_count" "$ROUNDS"
expect_eq "(CTP_HOLD_MS=0) the run ended well" 0 "$status"
expect_eq "(CTP_HOLD_MS=0) every switch is in the trace" $((2 * ROUNDS)) \
	"$(lines -c '^{"type":"switch"' "$WORK/never.jsonl")"
check "(CTP_HOLD_MS=0) conversion never held back" \
	bash -c '! grep -q "held back" "$1"' sh "$WORK/never.err"

CTP_HOLD_MS=soon trace bad -- "$PROGRAMS/pingpong_count" 1000
expect_eq "(CTP_HOLD_MS=soon) the run ended well" 0 "$status"
check "(CTP_HOLD_MS=soon) the bad value is named" \
	grep -q "ignoring CTP_HOLD_MS=soon: not a number from 0 to 60000" "$WORK/bad.err"
expect_eq "(CTP_HOLD_MS=soon) every switch is in the trace" 2000 \
	"$(lines -c '^{"type":"switch"' "$WORK/bad.jsonl")"
finish
