# A program started with a limit of 64 open files: the plain form's preload starts its collector
# (the pipe that says it is ready passes at a number under the limit): the program runs as
# untraced, and it, its forked child's new image and the child it posix_spawns are each in the
# trace with their switches. (A connection handed over across an exec under such a limit, where
# the new image could not reach the socket by its path: fork_as_other_user.sh.)
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
compare fd_limit --nofile 64 --expect "exit 0" -- "$TP_BIN/fd_limit"
expect_eq "fd_limit: untraced, both children ran" $'forked: exit 3\nspawned: exit 3' \
	"$(cat "$WORK/fd_limit.native.out")"
for mode in "${TP_MODES[@]}"; do
	expect_eq "fd_limit $mode (tracer correctness): three processes with switches, two children" \
		"3 2" "$(tq fd_limit "$mode" '([.[] | select(.type == "switch") | .pid] | unique) as $p
			| ([.[] | select(.type == "process" and (.argv[1] // "") == "child")
			| .pid] | unique) as $children
			| "\($p | length) \([$children[] | select(. as $c | any($p[]; . == $c))]
			| length)"')"
done
finish
