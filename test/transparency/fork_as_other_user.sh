# A server that drops root before it forks (fork_as_other_user.c): the program runs as untraced,
# and what it starts under its new user, whose user may not reach the collector's socket, is in
# the trace all the same, with no line on its stderr: its worker and the worker's helper
# (forked), the program the helper execs (a second image of its pid), the one the worker starts
# with posix_spawn and the one a vfork child of the worker execs, each under its parent, with its
# 20 switches and its exit status.
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
compare fork_user --expect "exit 0" -- "$TP_BIN/fork_as_other_user"
expect_eq "fork_as_other_user: untraced, it ran as nobody and each child ended as it should" \
	$'running as uid 65534, gid 65534\nhelper: exit 4\nspawned: exit 5\nvforked: exit 6\nworker: exit 3' \
	"$(cat "$WORK/fork_user.native.out")"
for mode in "${TP_MODES[@]}"; do
	# Per pid of the program: its role (main or worker as forked, else named by its last
	# image's argument), its parent's, its images, switches and exit status; by role.
	expect_eq "fork_as_other_user $mode (tracer correctness): each process whole, each image" \
		"main:-:1:20:0 worker:main:1:20:3 helper:worker:2:20:4 spawned:worker:1:20:5 vforked:worker:1:20:6" \
		"$(tq fork_user "$mode" '. as $all | [.[] | select(.type == "process" and
			(.exe | endswith("/fork_as_other_user")))] as $images
			| [$images | map(.pid) | unique[] as $pid
				| [$images[] | select(.pid == $pid)] as $mine
				| {pid: $pid, ppid: $mine[0].ppid, images: ($mine | length),
					arg: $mine[-1].argv[1]}] as $procs
			| def role($p): if $p == null then "-" elif $p.arg == "execd" then "helper"
				elif $p.arg != null then $p.arg
				elif any($procs[]; .pid == $p.ppid) then "worker" else "main" end;
			[$procs[] | . as $p | {role: role($p), line: "\(role($p)):\(role(first($procs[]
				| select(.pid == $p.ppid)) // null)):\($p.images):\([$all[]
				| select(.type == "switch" and .pid == $p.pid)] | length):\([$all[]
				| select(.type == "exit" and .pid == $p.pid)][0].status)"}] as $lines
			| [("main", "worker", "helper", "spawned", "vforked") as $r
				| $lines[] | select(.role == $r) | .line] | join(" ")')"
	check "fork_as_other_user $mode: nothing said it could not reach the collector" \
		bash -c '! grep -q "cannot reach the collector" "$1"' sh "$WORK/fork_user.$mode.err"
done
finish
