# A coroutine that dereferences NULL: the report has a crash finding that names the signal and
# the coroutine by its entry function, and exits 3.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/report_lib.sh"

ulimit -c 0 # no core file from the crash
trace cr -- "$PROGRAMS/ucontext_crash" 5
expect_eq "the program died of SIGSEGV" 139 "$status"
report cr
expect_eq "--report exits 3 on a crash" 3 "$report_status"
expect_eq "one crash finding, first" "crash" "$(rq cr '.findings[0].kind')"
expect_eq "it names the signal and the crashing coroutine's entry" "11:SIGSEGV:crasher" \
	"$(rq cr '.findings[0] | "\(.signal):\(.signal_name):\(.entry)"')"
pid=$(q cr '.[] | select(.type == "process") | .pid')
expect_eq "and the process and thread" "$pid:$pid" "$(rq cr '.findings[0] | "\(.pid):\(.tid)"')"
expect_eq "the coroutine's creation stack" "make" "$(rq cr '.findings[0].created_stack[0]')"
expect_eq "no leak reported for a process that was killed" 0 "$(rq cr '.summary.findings.leak')"
text_status=0
"$CTP_CAT" --report "$WORK/cr.jsonl.zst" >"$WORK/cr.txt" || text_status=$?
expect_eq "the text report exits 3 too" 3 "$text_status"
check "the text report says it" grep -q "^CRASH: pid $pid (ucontext_crash) died of signal 11 (SIGSEGV)" "$WORK/cr.txt"
finish
