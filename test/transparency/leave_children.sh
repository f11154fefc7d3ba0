# A process that starts another and exits before that one has said hello: by fork, and by
# posix_spawn, vfork + exec and exec through an untraced static program that waits 200 ms
# before it execs the child (which makes sure the parent has gone first). The preload tells the
# collector of each child and exec as it is made, so the collector, with a grace period of a
# minute, ends as soon as the child has, with the child in the trace: ending when the parent
# went would lose the child, and waiting out the grace period would leave the collector running
# (the harness fails a descendant left behind).
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
step=("$CTP_BUILD_DIR/test/programs/static_exec" --sleep-ms 200 --exec)
for how in fork spawn vfork exec; do
	args=("$how")
	[ "$how" = fork ] || args+=("${step[@]}")
	compare "leave_$how" --expect "exit 0" --env CTP_GRACE_MS=60000 -- \
		"$TP_BIN/leave_children" "${args[@]}"
	want="parent leaves ($how)"
	[ "$how" = fork ] || want+=$'\nstatic_exec runs'
	want+=$'\nchild done'
	expect_eq "leave_$how: untraced, the child ran after its parent left" "$want" \
		"$(cat "$WORK/leave_$how.native.out")"
	exits=2
	[ "$how" = exec ] && exits=1
	for mode in "${TP_MODES[@]}"; do
		# Tracer correctness: both images said hello, made their 2 switches each, and ended
		# (the exec'd one under its parent's pid).
		expect_eq "leave_$how $mode (tracer correctness): images, switches, exits with 0" \
			"2 4 $exits" \
			"$(tq "leave_$how" "$mode" '[([.[] | select(.type == "process")] | length),
				([.[] | select(.type == "switch")] | length),
				([.[] | select(.type == "exit" and .status == 0)] | length)]
				| map(tostring) | join(" ")')"
	done
done
# A fork child names the process that forked it.
for mode in "${TP_MODES[@]}"; do
	expect_eq "leave_fork $mode (tracer correctness): the fork child's ppid is its parent" \
		true "$(tq leave_fork "$mode" '[.[] | select(.type == "process")] |
			.[0].pid as $parent | map(select(.pid != $parent))[0].ppid == $parent')"
done
finish
