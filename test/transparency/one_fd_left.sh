# Programs started with one or two free fds (one_fd_left.c). With one, the preload's start takes
# it for its segment and finds none for the collector's socket: it must give every piece back
# and run the program as untraced, its one number free for the program's open. With two, it
# traces, and its dlopen of libunwind fails (EMFILE): that failure must not be left for the
# program's dlerror(), and stacks are off. Before, that failed dlopen made the next dlsym free
# its message while free() was not yet resolved, and the program crashed (SIGSEGV) in a
# recursion through dlsym.
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
compare one_fd_left --expect "exit 0" -- "$TP_BIN/one_fd_left"
expect_eq "one_fd_left: untraced, each child ran, the first opened its one free number" \
	"$(printf '%s\n' "child 1: dlerror: none" "child 1: switched" "child 1: opened fd 7" \
		"child 1: closed: 0" "child 1: exit 0" "child 2: dlerror: none" "child 2: switched" \
		"child 2: exit 0")" "$(cat "$WORK/one_fd_left.native.out")"
for mode in "${TP_MODES[@]}"; do
	err=$WORK/one_fd_left.$mode.err
	check "one_fd_left $mode: ctp says why the child with one fd runs untraced" \
		grep -q "^ctp: cannot reach the collector at .* (Too many open files): running untraced$" \
		"$err"
	check "one_fd_left $mode: ctp says why the child with two has no stacks" \
		grep -qx "ctp: suspend stacks are off: libunwind.so.8: .*Too many open files" "$err"
	# Tracer correctness: of the children's images only the one with two fds is traced (its
	# arguments named, read without an fd), with its switches.
	expect_eq "one_fd_left $mode (tracer correctness): the children traced, with switches" \
		'[["2"],["2"]]' "$(tq one_fd_left "$mode" '[.[] | select(.type == "process"
			and (.argv[1] // "") == "child") | .argv[2]] as $traced
			| [.[] | select(.type == "process" and .argv[2] == "2") | .pid] as $two
			| [$traced, [.[] | select(.type == "switch") | .pid as $p
			| select(any($two[]; . == $p)) | "2"] | unique] | tojson')"
done
finish
