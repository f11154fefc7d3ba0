# A coroutine dereferences NULL after some switches while another one is suspended: ctp-run
# exits 128+11, and the trace holds every switch up to the crash, the final states and an exit
# line that names the signal and the coroutine that was running.
source "$(dirname "$0")/lib.sh"

ulimit -c 0 # no core file from the crash
ROUNDS=50
trace cr -- "$PROGRAMS/ucontext_crash" $ROUNDS
expect_eq "ctp-run exits 128+SIGSEGV" 139 "$status"
made=$(sed -n 's/^switches //p' "$WORK/cr.err")
# Main resumes the bystander once (and it yields), then resumes the crasher ROUNDS+1 times; it
# yields ROUNDS times.
expect_eq "the program's switch count" $((2 * ROUNDS + 3)) "$made"
pid=$(q cr '.[] | select(.type == "process") | .pid')

expect_eq "every switch before the crash is in the trace" "$made" \
	"$(q cr '[.[] | select(.type == "switch")] | length')"
expect_eq "nothing lost" 0 "$(q cr '[.[] | select(.type == "loss") | .count] | add // 0')"
crasher=$(q cr '.[] | select(.type == "coro" and .entry == "crasher") | .coro')
bystander=$(q cr '.[] | select(.type == "coro" and .entry == "bystander") | .coro')
main=$(q cr '.[] | select(.type == "coro" and .kind == "thread") | .coro')
check "the crasher was announced" [ -n "$crasher" ]
expect_eq "the last switch resumed the crasher" "$main>$crasher" \
	"$(q cr '[.[] | select(.type == "switch")] | last | "\(.from)>\(.to)"')"

expect_eq "exit line: signal 11, the crashing thread and coroutine" "$pid:11:$pid:$crasher:null" \
	"$(q cr '.[] | select(.type == "exit") | "\(.pid):\(.signal):\(.tid):\(.coro):\(.status)"')"
expect_eq "the crasher was running" running \
	"$(q cr ".[] | select(.type == \"state\" and .coro == $crasher) | .state")"
expect_eq "the bystander is suspended, with its stack" "suspended:true" \
	"$(q cr ".[] | select(.type == \"state\" and .coro == $bystander) | \"\(.state):\(.stack != null)\"")"
expect_eq "main is suspended in its resume of the crasher" "suspended:true" \
	"$(q cr "([.[] | select(.type == \"switch\")] | last | .stack) as \$s
		| .[] | select(.type == \"state\" and .coro == $main) | \"\(.state):\(.stack == \$s)\"")"
expect_eq "the crasher was resumed ROUNDS+1 times" $((ROUNDS + 1)) \
	"$(q cr ".[] | select(.type == \"state\" and .coro == $crasher) | .switches")"
expect_eq "the process's record ends with its exit" exit \
	"$(q cr '[.[] | select(.pid != null)] | last | .type')"

finish
