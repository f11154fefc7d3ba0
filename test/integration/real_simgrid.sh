# SimGrid from Debian (libsimgrid): an s4u simulation of two actors exchanging 200 messages, run
# under each context factory SimGrid offers, as a user would pick with --cfg: raw (its default on
# x86-64: raw_makecontext/raw_swapcontext, its own assembly, reached through its PLT), ucontext,
# boost (Boost.Context) and thread. In each, the trace has the two actors as coroutines of the
# factory's kind, every exchange as switches, each actor ended (abandoned) when SimGrid freed its
# stack (a block with a guard page before it, or three with contexts/guard-size:3), their
# suspends named in the actor functions, and --report finds nothing in this healthy run. Under
# thread, actors are threads: no coroutine.
source "$(dirname "$0")/lib.sh"

prog=$PROGRAMS/simgrid_pingpong
rounds=200
"$prog" $rounds --cfg=contexts/factory:raw >"$WORK/plain.out" 2>/dev/null
check "untraced, the simulation runs to its end" \
	grep -q "^pings $rounds pongs $rounds simulated " "$WORK/plain.out"
stacks='(map(select(.type == "stack") | {key: (.id | tostring), value: [.frames[].sym]})
	| from_entries) as $s'
# NAME KIND FACTORY [OPTION]: raw_guard3 has guards of three pages (contexts/guard-size), a
# block that begins three pages before the stack.
while read -r name kind factory option <&3; do
	trace "$name" -- "$prog" $rounds --cfg=contexts/factory:$factory $option
	expect_eq "($name) ctp-run exits as the program did" 0 "$status"
	expect_eq "($name) the program's output is unchanged" "$(cat "$WORK/plain.out")" \
		"$(cat "$WORK/$name.out")"
	coros="[.[] | select(.type == \"coro\" and .kind == \"$kind\")]"
	expect_eq "($name) two $kind coroutines: the actors" 2 "$(q "$name" "$coros | length")"
	# Each exchange suspends each actor at least once (put and get wait for the other side),
	# and SimGrid's scheduler switches from one actor straight into the next.
	switches=$(q "$name" "$coros as \$c | [.[] | select(.type == \"switch\" and
		(.to as \$t | [\$c[].coro] | index(\$t)))] | length")
	check "($name) at least $((2 * rounds)) switches into the actors ($switches)" \
		test "$switches" -ge $((2 * rounds))
	expect_eq "($name) nothing lost" 0 "$(q "$name" '.[] | select(.type == "end") | .lost')"
	expect_eq "($name) both actors ended when SimGrid freed their stacks" "abandoned abandoned" \
		"$(q "$name" "$coros as \$c | [.[] | select(.type == \"coro_end\" and
			(.coro as \$k | [\$c[].coro] | index(\$k))) | .how] | join(\" \")")"
	expect_eq "($name) their whole suspend stacks name both actor functions" "pinger ponger" \
		"$(q "$name" "$stacks | $coros as \$c | [.[] | select(.type == \"switch\" and
			(.from as \$f | [\$c[].coro] | index(\$f))) | \$s[.stack | tostring][]
			| select(. != null) | capture(\"(?<f>pinger|ponger)\").f] | unique | join(\" \")")"
	report_status=0
	"$CTP_CAT" --report "$WORK/$name.jsonl.zst" >"$WORK/$name.report" || report_status=$?
	expect_eq "($name) --report: a healthy run, no finding" "0:1" \
		"$report_status:$(grep -c '^No findings' "$WORK/$name.report")"
done 3<<'EOF'
raw simgrid_raw raw
ucontext ucontext ucontext
boost fcontext boost
raw_guard3 simgrid_raw raw --cfg=contexts/guard-size:3
EOF

trace thread -- "$prog" $rounds --cfg=contexts/factory:thread
expect_eq "(thread) ctp-run exits as the program did, output unchanged" \
	"0:$(cat "$WORK/plain.out")" "$status:$(cat "$WORK/thread.out")"
expect_eq "(thread) the actors are threads: three, no coroutine" "3:0" \
	"$(q thread '"\([.[] | select(.type == "coro" and .kind == "thread")] | length):\([.[] |
		select(.type == "coro" and .kind != "thread")] | length)"')"
finish
