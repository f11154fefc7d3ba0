# A main thread and one ucontext coroutine ping-pong ROUNDS times, then the coroutine returns
# through uc_link. The trace must show exactly these two contexts and every switch between them.
source "$(dirname "$0")/lib.sh"

ROUNDS=100
trace pp -- "$PROGRAMS/ucontext_pingpong" $ROUNDS
expect_eq "ctp-run exits as the app did" 0 "$status"
expect_eq "the app's output passes through" "pings $((ROUNDS + 1)) pongs $ROUNDS" \
	"$(cat "$WORK/pp.out")"
expect_eq "one process" 1 "$(q pp '[.[] | select(.type == "process")] | length')"
pid=$(q pp '.[] | select(.type == "process") | .pid')

# The contexts: the main thread and the coroutine, nothing else.
expect_eq "coro lines" 2 "$(q pp '[.[] | select(.type == "coro")] | length')"
expect_eq "kinds" "thread,ucontext" \
	"$(q pp '[.[] | select(.type == "coro") | .kind] | sort | join(",")')"
main=$(q pp '.[] | select(.type == "coro" and .kind == "thread") | .coro')
co=$(q pp '.[] | select(.type == "coro" and .kind == "ucontext") | .coro')
check "the two ids differ" [ "$main" != "$co" ]
expect_eq "the thread is the main thread" "$pid" \
	"$(q pp '.[] | select(.type == "coro" and .kind == "thread") | .tid')"
expect_eq "entry symbol" pong "$(q pp ".[] | select(.type == \"coro\" and .coro == $co) | .entry")"
expect_eq "the coroutine's parent" "$main" \
	"$(q pp ".[] | select(.type == \"coro\" and .coro == $co) | .parent")"

# The switches: ROUNDS+1 resumes by main, ROUNDS yields and one return by the coroutine.
sw='[.[] | select(.type == "switch")]'
expect_eq "switch lines" $((2 * (ROUNDS + 1))) "$(q pp "$sw | length")"
expect_eq "swapcontext switches" $((2 * ROUNDS + 1)) \
	"$(q pp "$sw | map(select(.how == \"swapcontext\")) | length")"
expect_eq "the last switch is the coroutine's return" "$co>$main:return:null" \
	"$(q pp "$sw | last | \"\(.from)>\(.to):\(.how):\(.stack)\"")"
expect_eq "from/to alternate main>coroutine, coroutine>main" 0 \
	"$(q pp "$sw | to_entries | map(select(
		(.key % 2 == 0 and (.value.from != $main or .value.to != $co)) or
		(.key % 2 == 1 and (.value.from != $co or .value.to != $main)))) | length")"
expect_eq "all on the main thread" "$pid" "$(q pp "$sw | map(.tid) | unique | join(\",\")")"
expect_eq "time never goes back" true \
	"$(q pp "$sw | map(.ts) | . == sort")"
expect_eq "every swapcontext has a stack that is defined before it" 0 \
	"$(q pp '. as $all | [to_entries[] | select(.value.type == "switch" and .value.how == "swapcontext")
		| .key as $k | .value.stack as $s
		| select($s == null or ([$all[0:$k][] | select(.type == "stack" and .id == $s)] | length) != 1)]
		| length')"

# The end: the coroutine exited, the main thread was still running; switches count resumes
# (the thread's start counts as its first).
expect_eq "state lines" 2 "$(q pp '[.[] | select(.type == "state")] | length')"
expect_eq "the coroutine exited" "exited:null:$((ROUNDS + 1))" \
	"$(q pp ".[] | select(.type == \"state\" and .coro == $co) | \"\(.state):\(.stack):\(.switches)\"")"
expect_eq "the main thread is running" "running:$((ROUNDS + 2))" \
	"$(q pp ".[] | select(.type == \"state\" and .coro == $main) | \"\(.state):\(.switches)\"")"
expect_eq "exit line" "$pid:0:null" \
	"$(q pp '.[] | select(.type == "exit") | "\(.pid):\(.status):\(.signal)"')"
expect_eq "the exit line is the process's last" exit \
	"$(q pp '[.[] | select(.pid != null)] | last | .type')"

# ctp-run's exit status is the app's.
trace pp7 -- "$PROGRAMS/ucontext_pingpong" 3 7
expect_eq "ctp-run exits with the app's status" 7 "$status"
expect_eq "exit line of a status-7 run" 7 "$(q pp7 '.[] | select(.type == "exit") | .status')"
expect_eq "a short run has 8 switches" 8 "$(q pp7 '[.[] | select(.type == "switch")] | length')"

finish
