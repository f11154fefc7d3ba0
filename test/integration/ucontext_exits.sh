# Coroutines that end by returning (uc_link), by setcontext to another coroutine or to main, one
# left suspended for good and one never run: their switches and final states must say exactly
# that. An ended coroutine is `exited`, never `suspended`.
source "$(dirname "$0")/lib.sh"

trace ex -- "$PROGRAMS/ucontext_exits"
expect_eq "ctp-run exits as the app did" 0 "$status"
expect_eq "the app's output" done "$(cat "$WORK/ex.out")"

# Names for the ids: the entry function of each coroutine, "main" for the thread.
names='(map(select(.type == "coro") | {key: (.coro | tostring),
	value: (if .kind == "thread" then "main" else .entry end)}) | from_entries) as $n'
expect_eq "the coroutines" "by_return,by_setcontext,main,never_run,parked,resumed_by_setcontext,to_main_by_setcontext" \
	"$(q ex "[.[] | select(.type == \"coro\") | if .kind == \"thread\" then \"main\" else .entry end]
		| sort | join(\",\")")"

# The program's order of events (see ucontext_exits.c), one switch each.
expected="main>by_return:swapcontext
by_return>main:swapcontext
main>by_setcontext:swapcontext
by_setcontext>main:swapcontext
main>resumed_by_setcontext:swapcontext
resumed_by_setcontext>main:swapcontext
main>by_setcontext:swapcontext
by_setcontext>resumed_by_setcontext:setcontext
resumed_by_setcontext>main:swapcontext
main>by_return:swapcontext
by_return>main:return
main>resumed_by_setcontext:swapcontext
resumed_by_setcontext>main:return
main>parked:swapcontext
parked>main:swapcontext
main>to_main_by_setcontext:swapcontext
to_main_by_setcontext>main:setcontext"
expect_eq "every switch, in order, with how it was made" "$expected" \
	"$(q ex "$names | .[] | select(.type == \"switch\") | \"\(\$n[.from | tostring])>\(\$n[.to | tostring]):\(.how)\"")"
expect_eq "a coroutine that returned leaves no suspend stack" 0 \
	"$(q ex '[.[] | select(.type == "switch" and .how == "return" and .stack != null)] | length')"
# A setcontext away may be come back from (getcontext/setcontext schedulers): it records where the
# coroutine left; the final state says whether anything came back.
expect_eq "a setcontext away records where its coroutine left" 0 \
	"$(q ex '[.[] | select(.type == "switch" and .how == "setcontext" and .stack == null)] | length')"

# Final states.
states="by_return:exited:null
by_setcontext:exited:null
main:running:null
never_run:created:null
parked:suspended:stack
resumed_by_setcontext:exited:null
to_main_by_setcontext:exited:null"
expect_eq "final states" "$states" \
	"$(q ex "$names | [.[] | select(.type == \"state\")
		| \"\(\$n[.coro | tostring]):\(.state):\(if .stack == null then null else \"stack\" end)\"]
		| sort | .[]")"
# How each ended (trace format 2): one coro_end line per exited coroutine, saying how.
ends="by_return:returned
by_setcontext:left
resumed_by_setcontext:returned
to_main_by_setcontext:left"
expect_eq "coro_end lines: how each ended" "$ends" \
	"$(q ex "$names | [.[] | select(.type == \"coro_end\") | \"\(\$n[.coro | tostring]):\(.how)\"]
		| sort | .[]")"
expect_eq "a returned coroutine's end comes just before its return switch" 0 \
	"$(q ex '[range(1; length) as $i | select(.[$i].type == "switch" and .[$i].how == "return")
		| select(.[$i - 1].type != "coro_end" or .[$i - 1].coro != .[$i].from)] | length')"
expect_eq "the process line says stacks are on" 16 \
	"$(q ex '.[] | select(.type == "process") | .stack_depth')"
expect_eq "switch counts: resumes of each" "by_return:2 by_setcontext:2 never_run:0 parked:1 resumed_by_setcontext:3 to_main_by_setcontext:1" \
	"$(q ex "$names | [.[] | select(.type == \"state\" and .coro != 1 and \$n[.coro | tostring] != \"main\")
		| \"\(\$n[.coro | tostring]):\(.switches)\"] | sort | join(\" \")")"

# The parked coroutine's suspend stack: park_forever called from parked, from the trampoline.
parked_stack=$(q ex "$names | .[] | select(.type == \"state\" and \$n[.coro | tostring] == \"parked\") | .stack")
expect_eq "parked's suspend stack names yield < park_forever < parked" "yield,park_forever,parked" \
	"$(q ex "[.[] | select(.type == \"stack\" and .id == $parked_stack) | .frames[].sym
		| select(. == \"yield\" or . == \"park_forever\" or . == \"parked\")] | join(\",\")")"
expect_eq "it is the stack of parked's last switch" "$parked_stack" \
	"$(q ex "$names | [.[] | select(.type == \"switch\" and \$n[.from | tostring] == \"parked\")] | last | .stack")"
expect_eq "exit" 0 "$(q ex '.[] | select(.type == "exit") | .status')"

finish
