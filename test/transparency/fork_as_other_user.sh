# A server that drops root before it forks (fork_as_other_user.c): the program runs as untraced,
# and what it starts under its new user, whose user may not reach the collector's socket, is in
# the trace all the same, with no line on its stderr: its worker and the worker's helper
# (forked), the program the helper execs (a second image of its pid) and the one the worker
# starts with posix_spawn, each under its parent, with its 20 switches and its exit status.
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
compare fork_user --expect "exit 0" -- "$TP_BIN/fork_as_other_user"
expect_eq "fork_as_other_user: untraced, it ran as nobody and each child ended as it should" \
	$'running as uid 65534, gid 65534\nhelper: exit 4\nspawned: exit 5\nworker: exit 3' \
	"$(cat "$WORK/fork_user.native.out")"
for mode in "${TP_MODES[@]}"; do
	# Per pid of the program, in the order they came: its role, its parent's, its images,
	# switches and exit status.
	expect_eq "fork_as_other_user $mode (tracer correctness): each process whole, each image" \
		"main:-:1:20:0 worker:main:1:20:3 helper:worker:2:20:4 spawned:worker:1:20:5" \
		"$(tq fork_user "$mode" '. as $all | [.[] | select(.type == "process" and
			(.exe | endswith("/fork_as_other_user")))] as $images
			| ($images | map(.pid) | reduce .[] as $p ([]; if index([$p]) then . else
				. + [$p] end)) as $pids
			| ["main", "worker", "helper", "spawned"] as $roles
			| [$pids | to_entries[] | .key as $i | .value as $pid
				| ([$images[] | select(.pid == $pid)]) as $mine
				| ($pids | index([$mine[0].ppid])) as $parent
				| "\($roles[$i]):\(if $parent == null then "-" else $roles[$parent] end):\($mine
				| length):\([$all[] | select(.type == "switch" and .pid == $pid)]
				| length):\([$all[] | select(.type == "exit" and .pid == $pid)][0].status)"]
			| join(" ")')"
	check "fork_as_other_user $mode: nothing said it could not reach the collector" \
		bash -c '! grep -q "cannot reach the collector" "$1"' sh "$WORK/fork_user.$mode.err"
done
finish
