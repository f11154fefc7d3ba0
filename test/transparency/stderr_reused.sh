# A program that closes fd 2 and opens a data file there, then makes the preload say something
# (fork_in_sandbox.c stderr-reused: a fork child that cannot be traced). Before, the preload's
# message went into the program's data file; now it writes nothing once fd 2 is no longer the
# stderr the program started with.
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
compare stderr_reused --expect "exit 0" -- "$TP_BIN/fork_in_sandbox" stderr-reused
expect_eq "stderr_reused: untraced, the data file holds the program's line alone" \
	$'child: pipe 0, write 1\nchild: exit 3\nparent: switched\ndata file: data' \
	"$(cat "$WORK/stderr_reused.native.out")"
finish
