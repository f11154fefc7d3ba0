# A server that drops root before it forks (fork_as_other_user.c): the program runs as untraced,
# and its worker and the worker's helper, whose user may not reach the collector's socket, are
# in the trace all the same: each a process of its own under its parent, with its 20 switches
# and its exit status.
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
compare fork_user --expect "exit 0" -- "$TP_BIN/fork_as_other_user"
expect_eq "fork_as_other_user: untraced, it ran as nobody and each child ended as it should" \
	$'running as uid 65534, gid 65534\nhelper: exit 4\nworker: exit 3' "$(cat "$WORK/fork_user.native.out")"
for mode in "${TP_MODES[@]}"; do
	# Each process of the program: pid, parent, switches and exit status, parents first.
	expect_eq "fork_as_other_user $mode (tracer correctness): the three processes, each whole" \
		"main:20:0 worker:main:20:3 helper:worker:20:4" \
		"$(tq fork_user "$mode" '[.[] | select(.type == "process" and
			(.exe | endswith("/fork_as_other_user")))] as $procs | . as $all
			| ($procs | map(.pid)) as $pids
			| [$procs[] | . as $p | ($pids | index($p.pid)) as $i
				| ([$all[] | select(.type == "switch" and .pid == $p.pid)] | length) as $n
				| ([$all[] | select(.type == "exit" and .pid == $p.pid)][0].status) as $st
				| (["main", "worker", "helper"][$i]) as $name
				| if $i == 0 then "\($name):\($n):\($st)"
				  else "\($name):\(["main", "worker"][$pids | index($p.ppid)]):\($n):\($st)"
				  end] | join(" ")')"
done
finish
