# A server that drops root before it forks (fork_as_other_user.c): the program runs as untraced,
# and what it starts under its new user, whose user may not reach the collector's socket, is in
# the trace all the same, with no line on its stderr: the program it posix_spawns, the programs
# a shell runs for system() and popen(), its worker and the worker's helper (forked), the
# program the helper execs (a second image of its pid), the one the worker starts with
# posix_spawn and the one a vfork child of the worker execs, each under its parent, with its 20
# switches and its exit status. The worker, and before that a child of the main process that
# changed its effective user only, also start probes: programs that cannot load the preload (a
# static one, set-user-ID ones, one readable and one only executable, a script whose
# interpreter is static, one with file capabilities that a script starts through setpriv
# --no-new-privs, which stops set-ID bits but not the capabilities' secure execution; for the
# child, every one: its execs are all in secure-execution mode),
# which may get neither a connection's fd nor CTP_CONNECTION_FD (ctp/exec_image.c); the dynamic
# fd_probe, which could load it but not after the child's change of effective user, nor with an
# LD_PRELOAD too long to add the preload to (for both); and a FIFO, which must fail to start at
# once, as untraced.
#
# Twice. First with XDG_RUNTIME_DIR private to root, as a root login's is: the run directory
# goes to /tmp instead (ctp/run_dir_base.h), where the change of user grants the new user the
# socket (user_change_hooks.c) and the shells of system() and popen() connect by its path. Then
# with the socket's directory hidden from the program (--hide-socket), where no path reaches the
# socket: the hooks hand connections over (connection.c) and the program runs no shell; and
# that again under a limit of 64 open files, where the connections handed over must fit.
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"

# fork_user_check NAME EXPECTED-LINES EXPECTED-PROCESSES
fork_user_check() {
	local name=$1 lines=$2 procs=$3 mode
	expect_eq "$name: untraced, it ran as nobody and each child ended as it should" "$lines" \
		"$(cat "$WORK/$name.native.out")"
	for mode in "${TP_MODES[@]}"; do
		# Per pid of the program: its role (main or worker as forked, else named by its
		# last image's argument), its parent's, its images, switches and exit status.
		expect_eq "$name $mode (tracer correctness): each process whole, each image" "$procs" \
			"$(tq "$name" "$mode" '. as $all | [.[] | select(.type == "process" and
			(.exe | endswith("/fork_as_other_user")))] as $images
			| [$images | map(.pid) | unique[] as $pid
				| [$images[] | select(.pid == $pid)] as $mine
				| {pid: $pid, ppid: $mine[0].ppid, images: ($mine | length),
					status: [$all[] | select(.type == "exit" and .pid == $pid)][0].status,
					arg: ($mine[-1].argv[1] | if . as $a | ["execd", "spawned", "vforked",
						"shelled", "popened", "direct"] | index([$a]) then . else null
						end)}] as $procs
			| def role($p): if $p == null then "-" elif $p.arg == "execd" then "helper"
				elif $p.arg != null then $p.arg
				elif any($procs[]; .pid == $p.ppid) then
					(if $p.status == 0 then "seteuid" else "worker" end)
				else "main" end;
			[$procs[] | . as $p | {role: role($p), line: "\(role($p)):\(role(first($procs[]
				| select(.pid == $p.ppid)) // null)):\($p.images):\([$all[]
				| select(.type == "switch" and .pid == $p.pid)] | length):\([$all[]
				| select(.type == "exit" and .pid == $p.pid)][0].status)"}] as $lines
			| [("main", "seteuid", "direct", "shelled", "popened", "worker", "helper",
				"spawned", "vforked") as $r
				| $lines[] | select(.role == $r) | .line] | join(" ")')"
		check "$name $mode: nothing said it could not reach the collector" \
			bash -c '! grep -q "cannot reach the collector" "$1"' sh "$WORK/$name.$mode.err"
	done
}

# The set-user-ID probe: root's, in a directory every user may enter.
probe_dir=$(mktemp -d /tmp/ctp-fd-probe.XXXXXX)
at_exit rm -rf "$probe_dir"
chmod 0755 "$probe_dir"
cp "$TP_BIN/fd_probe" "$probe_dir/fd_probe_setuid"
chmod 4755 "$probe_dir/fd_probe_setuid"
cp "$TP_BIN/fd_probe" "$probe_dir/fd_probe_setuid_xonly"
chmod 4711 "$probe_dir/fd_probe_setuid_xonly"
printf '#!%s\n' "$TP_BIN/fd_probe_static" >"$probe_dir/static_script"
chmod 0755 "$probe_dir/static_script"
cp "$TP_BIN/fd_probe" "$probe_dir/fd_probe_caps"
setcap cap_net_raw+ep "$probe_dir/fd_probe_caps"
printf '#!/bin/sh\nexec setpriv --no-new-privs %s\n' "$probe_dir/fd_probe_caps" \
	>"$probe_dir/caps_no_new_privs"
chmod 0755 "$probe_dir/caps_no_new_privs"
mkfifo -m 0666 "$probe_dir/fifo"
probes=("$TP_BIN/fd_probe_static" "$probe_dir/fd_probe_setuid"
	"$probe_dir/fd_probe_setuid_xonly" "$probe_dir/static_script"
	"$probe_dir/caps_no_new_privs" "$probe_dir/fifo")
# What the probes print: the five programs, then the FIFO, then the one with the long
# LD_PRELOAD; the child of the main process starts the dynamic fd_probe first.
one=$'\nfd_probe: fds above 2: none, CTP_CONNECTION_FD unset\nprobe: exit 0'
probed="$one$one$one$one$one"$'\nprobe: cannot start: Permission denied'

mkdir -m 0700 "$WORK/private"
compare fork_user --expect "exit 0" --env "XDG_RUNTIME_DIR=$WORK/private" --env TMPDIR= -- \
	"$TP_BIN/fork_as_other_user" "${probes[@]}"
fork_user_check fork_user \
	"${one#$'\n'}$probed$one"$'\nseteuid: exit 0\nrunning as uid 65534, gid 65534\ndirect: exit 9\nshelled: exit 7\npopen read: hello from popened\npopened: exit 8\nhelper: exit 4\nspawned: exit 5\nvforked: exit 6'"$probed$one"$'\nworker: exit 3' \
	"main:-:1:20:0 seteuid:main:1:0:0 direct:main:1:20:9 shelled:main:1:20:7 popened:main:1:20:8 worker:main:1:20:3 helper:worker:2:20:4 spawned:worker:1:20:5 vforked:worker:1:20:6"

compare fork_user_hidden --expect "exit 0" --env XDG_RUNTIME_DIR= --env TMPDIR= -- \
	"$TP_BIN/fork_as_other_user" --hide-socket
fork_user_check fork_user_hidden \
	$'running as uid 65534, gid 65534\ndirect: exit 9\nhelper: exit 4\nspawned: exit 5\nvforked: exit 6\nworker: exit 3' \
	"main:-:1:20:0 direct:main:1:20:9 worker:main:1:20:3 helper:worker:2:20:4 spawned:worker:1:20:5 vforked:worker:1:20:6"

# The same under a limit of 64 open files: each connection handed over finds a number under it.
compare fork_user_hidden_nofile --nofile 64 --expect "exit 0" --env XDG_RUNTIME_DIR= --env TMPDIR= \
	-- "$TP_BIN/fork_as_other_user" --hide-socket
fork_user_check fork_user_hidden_nofile \
	$'running as uid 65534, gid 65534\ndirect: exit 9\nhelper: exit 4\nspawned: exit 5\nvforked: exit 6\nworker: exit 3' \
	"main:-:1:20:0 direct:main:1:20:9 worker:main:1:20:3 helper:worker:2:20:4 spawned:worker:1:20:5 vforked:worker:1:20:6"
finish
