# A healthy GNU Pth program (20 threads yield and return, joined, then pth_kill): Pth's scheduler
# probes its own wake-up pipe with a zero-timeout poll on every dispatch, and pth_kill closes it.
# The scheduler polls that pipe; it does not wait on it: no lost wakeup, and its final state
# names no fd.
source "$(dirname "$0")/lib.sh"

trace yield "$PROGRAMS/pth_yield_join"
expect_eq "the program ran to its end" "0 done" "$status $(cat "$WORK/yield.out")"
rc=0
"$CTP_CAT" --report --json "$WORK/yield.jsonl.zst" >"$WORK/report.json" || rc=$?
expect_eq "--report: nothing that fails (exit 0)" 0 "$rc"
expect_eq "no lost wakeup, no missed readiness" 0 \
	"$(jq '[.findings[] | select(.kind == "lost_wakeup" or .kind == "missed_readiness")]
		| length' "$WORK/report.json")"
expect_eq "no coroutine ends waiting on an fd" 0 \
	"$(q yield '[.[] | select(.type == "state" and .wait != null)] | length')"
# Pth frees a finished thread's stack at pth_join: the preload sees the block freed and ends the
# thread's coroutine there, so none is left stuck in pth_exit or leaked.
expect_eq "no stuck and no leaked coroutine (their stacks were freed at pth_join)" 0 \
	"$(jq '[.findings[] | select(.kind == "stuck" or .kind == "leak")] | length' \
		"$WORK/report.json")"
expect_eq "the 20 threads and the scheduler (freed at pth_kill) end as abandoned" 21 \
	"$(q yield '[.[] | select(.type == "coro_end" and .how == "abandoned")] | length')"
check "the scheduler probed its pipe (would_block events were seen)" \
	[ "$(q yield '[.[] | select(.type == "fd" and .event == "would_block")] | length')" -gt 0 ]
finish
