# errno when memory runs out (RLIMIT_AS at what the program has mapped plus 32 KiB): a thread
# making a coroutine and switching to it and back, which traced wants a walk stack that cannot
# be mapped, keeps errno; the program's own 64 MiB allocation fails alike; and the trace still
# has the thread's switches (with their call sites, without whole stacks).
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
compare errno_no_memory --expect "exit 0" -- "$TP_BIN/errno_no_memory"
expect_eq "errno_no_memory: untraced, errno kept by every call, the big allocation refused" \
	"$(printf '%s\n' start 'makecontext: errno 4242' 'switch 1: 0, errno 4242' \
		'switch 2: 0, errno 4242' 'switch 3: 0, errno 4242' '64 MiB malloc: failed')" \
	"$(cat "$WORK/errno_no_memory.native.out")"
for mode in ctp-run plain; do
	expect_eq "errno_no_memory $mode: the worker thread's 6 switches are in the trace" 6 \
		"$(tq errno_no_memory "$mode" '[.[] | select(.type == "switch" and .tid != .pid)] | length')"
done
finish
