# Threads with 16 KiB stacks, each using 7 KiB of it, each with a coroutine left suspended
# (small_thread_stacks.c). Before, a traced thread died of SIGSEGV at its start: the preload's
# 6.5 KiB of TLS (a thread's lookup hints, in its walk area now) came out of the thread's stack,
# and reading /proc/self/maps for the thread's stack range took 8 KiB more of it.
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
compare small_thread_stacks --expect "exit 0" -- "$TP_BIN/small_thread_stacks"
expect_eq "small_thread_stacks: untraced, every thread did its work" \
	"$(for i in 0 1 2 3 4 5 6 7; do echo "thread $i: done"; done)" \
	"$(cat "$WORK/small_thread_stacks.native.out")"
# A jq filter: "THREADS COROUTINES [[SWITCHES, STATE, FIRST FUNCTION]...]", the last over the
# ucontext coroutines' states at the end.
suspended_in='([.[] | select(.type == "stack") | {key: (.id | tostring), value: .frames[0].sym}]
	| from_entries) as $sym
	| [.[] | select(.type == "coro" and .kind == "ucontext") | .coro] as $coros
	| [.[] | select(.type == "state") | .coro as $c | select(any($coros[]; . == $c))
	| [.switches, .state, $sym[.stack | tostring]]] as $states
	| "\([.[] | select(.type == "coro" and .kind == "thread")] | length) \($coros | length) "
	+ ($states | unique | tojson)'
for mode in "${TP_MODES[@]}"; do
	# Tracer correctness: the main thread and the eight, eight coroutines, each resumed
	# once and left suspended in its body.
	expect_eq "small_thread_stacks $mode (tracer correctness): 9 threads, 8 coroutines suspended in their body" \
		'9 8 [[1,"suspended","thread_coro_body"]]' "$(tq small_thread_stacks "$mode" "$suspended_in")"
done
finish
