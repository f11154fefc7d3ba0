# Threads starting while the program opens files (after it installed an SA_ONSTACK handler):
# every open gets the lowest free number, traced as untraced (the preload used to open a file
# of /proc at each thread's start, whose fd took that number meanwhile).
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
compare thread_start_fds --timeout 60 --expect "exit 0" -- "$TP_BIN/thread_start_fds"
expect_eq "thread_start_fds: untraced, every open got fd 3" "opens that did not get fd 3: 0" \
	"$(cat "$WORK/thread_start_fds.native.out")"
for mode in "${TP_MODES[@]}"; do
	expect_eq "thread_start_fds $mode (tracer correctness): 5001 threads traced, each a coroutine of kind thread" 5001 \
		"$(tq thread_start_fds "$mode" '[.[] | select(.type == "coro" and .kind == "thread")] | length')"
done
finish
