# GNU Pth from Debian (libpth20: makecontext/swapcontext, a select() scheduler in a context of
# its own): two producer/consumer pairs on pipes and one thread blocked forever in pth_read on a
# silent pipe; the program exits with it still blocked. The trace must show the scheduler and the
# five Pth threads as ucontext coroutines, each thread's user function in its stacks, the waits
# on the pipes and their readiness, the forever-blocked thread suspended in pth_read waiting on
# its fd, and ctp-cat --report must call that one stuck on that fd.
#
# libpth is stripped and its makecontext entry (a static trampoline) is not in .dynsym: the entry
# has an address but no name; the thread functions are the frames right above it. Pth ends a
# thread by switching away in pth_exit for good and frees its stack at pth_join, which no hook
# sees: a finished thread stays suspended in pth_exit.
source "$(dirname "$0")/lib.sh"

prog=$PROGRAMS/pth_pipes
"$prog" >"$WORK/plain.out"
trace pth -- "$prog"
expect_eq "ctp-run exits as the program did" 0 "$status"
expect_eq "the program computes the same traced" "$(head -1 "$WORK/plain.out")" \
	"$(head -1 "$WORK/pth.out")"
expect_eq "and right: 1 + ... + 20000 per pair" "sums 200010000 200010000" "$(head -1 "$WORK/pth.out")"
silent=$(sed -n 's/^silent fd //p' "$WORK/pth.out")
check "the silent pipe's fd is known ($silent)" [ -n "$silent" ]
expect_eq "nothing lost" "0 0" \
	"$(q pth '"\([.[] | select(.type == "loss")] | length) \(.[] | select(.type == "end") | .lost)"')"

# The coroutines: the main thread, the scheduler, five Pth threads; all made from main.
uc='[.[] | select(.type == "coro" and .kind == "ucontext")]'
expect_eq "one thread" 1 "$(q pth '[.[] | select(.type == "coro" and .kind == "thread")] | length')"
expect_eq "six ucontext coroutines" 6 "$(q pth "$uc | length")"
main=$(q pth '.[] | select(.type == "coro" and .kind == "thread") | .coro')
expect_eq "all made by the main thread" "$main" "$(q pth "$uc | map(.parent) | unique | join(\",\")")"
expect_eq "all enter at one address (Pth's trampoline)" 1 "$(q pth "$uc | map(.entry_addr) | unique | length")"
stacks='(map(select(.type == "stack") | {key: (.id | tostring), value: .frames}) | from_entries)'
expect_eq "made by pth_spawn: the scheduler from pth_init, the threads from spawn()" \
	"pth_init pth_init spawn spawn spawn spawn spawn" \
	"$(q pth "$stacks as \$s | $uc | map(\$s[.stack | tostring] | map(.sym)
		| .[index(\"pth_spawn\") + 1]) | sort | join(\" \") | \"pth_init \" + .")"
expect_eq "every switch is a swapcontext between known coroutines" 0 \
	"$(q pth '([.[] | select(.type == "coro") | .coro]) as $ids | [.[] | select(.type == "switch")
		| select(.how != "swapcontext" or (.from as $f | $ids | index($f)) == null
			or (.to as $t | $ids | index($t)) == null)] | length')"
expect_eq "each coroutine's resume count equals the switches to its id" 0 \
	"$(q pth "([.[] | select(.type == \"switch\") | .to] | group_by(.) | map({key: (.[0]
		| tostring), value: length}) | from_entries) as \$to | [.[] | select(.type == \"state\"
		and .coro != $main) | select(.switches != (\$to[.coro | tostring] // 0))] | length")"

# Who is who, by the function right above Pth's trampoline in its suspend stacks that reach the
# coroutine's start (whose outermost frame is glibc's __start_context, as untraced).
starts='(map(select(.type == "stack") | {key: (.id | tostring), value: .}) | from_entries)'
roles="($starts as \$s | [.[] | select(.type == \"switch\" and .stack != null)
	| {coro: .from, f: (\$s[.stack | tostring] | if .reaches_start
		then (.frames | map(.sym) | .[length - 3]) else null end)}]
	| map(select(.f != null))
	| group_by(.coro) | map({key: (.[0].coro | tostring), value: (map(.f) | unique
		| map(select(. != \"pth_exit\")) | join(\",\"))}) | from_entries)"
expect_eq "suspended in: the scheduler, two consumers, two producers, forever" \
	"__pth_scheduler consumer consumer forever producer producer" \
	"$(q pth "$roles | [.[]] | sort | join(\" \")")"
role() { q pth "$roles | to_entries | map(select(.value == \"$1\") | .key) | join(\" \")"; }
sched=$(role __pth_scheduler)
forever=$(role forever)
consumers=$(role consumer)
producers=$(role producer)

# The pipes: each consumer and producer found its pipe not ready (Pth polls with a zero-timeout
# select before it waits), and the scheduler's select reported it ready for that one.
for c in $consumers $producers; do
	expect_eq "coroutine $c waited on its pipe and the scheduler saw it ready" "poll poll" \
		"$(q pth "[.[] | select(.type == \"fd\" and .event == \"would_block\" and .coro == $c)
			| .fd] as \$w | [.[] | select(.type == \"fd\" and .event == \"ready\"
			and .waiter == $c and .coro == $sched and (.fd as \$f | \$w | index(\$f)))]
			| \"\(.[0].op) \(\$w | length | if . > 0 then \"poll\" else \"none\" end)\"")"
done
for c in $consumers $producers; do
	expect_eq "coroutine $c finished: exited, or suspended in pth_exit" ok \
		"$(q pth "$stacks as \$s | .[] | select(.type == \"state\" and .coro == $c)
			| if .state == \"exited\" or (.state == \"suspended\"
				and \$s[.stack | tostring][0].sym == \"pth_exit\") then \"ok\" else tojson end")"
done

# The forever-blocked thread.
expect_eq "forever: its pth_read found fd $silent not ready" "poll pth_read_ev forever" \
	"$(q pth "$stacks as \$s | .[] | select(.type == \"fd\" and .event == \"would_block\"
		and .coro == $forever and .fd == $silent)
		| \"\\(.op) \\(\$s[.stack | tostring][0:2] | map(.sym) | join(\" \"))\"")"
expect_eq "forever: suspended at the end, waiting on fd $silent" \
	"suspended {\"fd\":$silent,\"op\":\"poll\",\"closed\":false}" \
	"$(q pth ".[] | select(.type == \"state\" and .coro == $forever) | \"\(.state) \(.wait | tojson)\"")"
expect_eq "forever: its stack runs through pth_read's wait into forever()" \
	"pth_yield pth_wait pth_read_ev forever" \
	"$(q pth "$stacks as \$s | .[] | select(.type == \"state\" and .coro == $forever)
		| \$s[.stack | tostring][0:4] | map(.sym) | join(\" \")")"
expect_eq "forever: with the line of its pth_read call" "pth_pipes.c" \
	"$(q pth "$stacks as \$s | .[] | select(.type == \"state\" and .coro == $forever)
		| \$s[.stack | tostring][3].file | split(\"/\") | last")"

# The report: forever is stuck on its fd; nothing failed.
report_status=0
"$CTP_CAT" --report --json "$WORK/pth.jsonl.zst" >"$WORK/report.json" || report_status=$?
expect_eq "ctp-cat --report finds nothing that fails (exit 0)" 0 "$report_status"
expect_eq "the report names forever stuck on fd $silent (poll), in forever()" \
	"$silent poll true" \
	"$(jq -r ".findings[] | select(.kind == \"stuck\" and (.coros | index($forever)))
		| \"\(.fds[.coros | index($forever)]) \(.op) \(.stack | index(\"forever\") != null)\"" \
		"$WORK/report.json")"
expect_eq "the report finds no failure" 0 "$(jq -r '.summary.failures' "$WORK/report.json")"

finish
