# Coroutines resumed by one thread, then the other, in turn (an M:N scheduler): traced, each
# still runs on the thread whose turn it is and switches back to that thread's scheduler, and
# the trace puts each switch on the thread that made it.
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
compare thread_hop --expect "exit 0" -- "$TP_BIN/thread_hop"
line() { echo "coroutine $1: resumed $2 times on worker 0, $3 on worker 1, 0 on the wrong thread"; }
expect_eq "thread_hop: untraced, each coroutine hops between the workers, never astray" \
	"$(line 0 1001 1000; line 1 1000 1001; line 2 1001 1000)" \
	"$(cat "$WORK/thread_hop.native.out")"
for mode in ctp-run plain; do
	# Resumes of the three coroutines: 2001 each, by two threads, and each coroutine's runs
	# alternate between them (a coroutine suspended on one thread is resumed on the other).
	expect_eq "thread_hop $mode: the trace has every resume, on alternating threads" \
		"6003 2 0" "$(tq thread_hop "$mode" '
		(map(select(.type == "coro" and .kind != "thread") | .coro)) as $cs
		| [.[] | select(.type == "switch" and (.to as $t | $cs | index($t)))] as $r
		| [$r | length, ([$r[].tid] | unique | length),
		   ([$cs[] as $c | [$r[] | select(.to == $c) | .tid] | . as $t
		     | range(1; length) | select($t[.] == $t[. - 1])] | length)] | join(" ")')"
done
finish
