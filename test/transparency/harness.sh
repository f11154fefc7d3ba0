# The transparency suite ("do no harm"): a traced program must behave exactly as untraced.
#
# Each case is a bash script that sources this file and calls
#
#   compare NAME [options] -- PROGRAM ARGS...
#
# which runs PROGRAM three ways at once (they are independent), each in a fresh working
# directory:
#   native   untraced (no CTP_* variables, no LD_PRELOAD)
#   ctp-run  ctp-run -o $WORK/NAME.jsonl.zst -- PROGRAM ARGS
#   plain    LD_PRELOAD=libctp_preload.so CTP_OUTPUT=$WORK/NAME-plain.jsonl.zst PROGRAM ARGS
#            (the preload starts its own collector, found beside it)
# and checks, for each traced way against native:
#   - how it ended: exit status, or the terminating signal and whether a core was dumped
#     (ctp-run dies of the app's signal but dumps no core of its own: with --core the app's core
#     file in its working directory stands for the core-dumped bit);
#   - stdout, byte for byte;
#   - stderr without the tracer's own lines (those starting "ctp: " or "ctp-collector: ");
#   - no descendant left running 10 s after the program ended (a wedged collector);
#   - the trace is readable: ctp-cat exits 0, or 1 (documented: readable but cut off), decoded
#     into $WORK/NAME.ctp-run.jsonl and $WORK/NAME.plain.jsonl for the case's own checks (tq).
# Options:
#   --expect STATUS     the native run must end so ("exit 0", "signal INT", "signal SEGV core"):
#                       a case whose untraced run does not show the pattern proves nothing
#   --pty               the program runs as the foreground job of a new pseudo-terminal
#   --after-ready ACT   once it printed "ready": intr (^C on the terminal), kill:SIG, vm:PROG
#                       (records VmSize/VmRSS of PROG into $WORK/NAME.MODE.vm, then closes its
#                       stdin), trace:REGEX (waits until a line of the run's trace, as ctp-cat
#                       prints it while it is written, matches REGEX, then closes its stdin;
#                       untraced, closes it at once)
#   --job-control       the program runs as the foreground job of a pseudo-terminal whose
#                       session the runner leads, as an interactive shell does; its stops are
#                       answered with SIGCONT and compared (tp_run.py; --after-ready susp: ^Z
#                       on the terminal, and fg)
#   --sigchld-ignored   the run's first program (ctp-run, or the program) starts with SIGCHLD
#                       ignored
#   --core              ulimit -c unlimited (else 0) and compare the core-dumped bit
#   --nofile N          ulimit -n N: the run starts with that limit of open files (ctp-run's
#                       collector, the plain form's and the program all under it)
#   --as-kb N           ulimit -v N: the same with that address-space limit
#   --timeout S         bound on each run (default 10)
#   --stack-kb N        ulimit -s N (soft and hard) from the run's first program on: ctp-run
#                       and its collector, the plain form's collector and the program
#   --env K=V           extra environment for all three ways (repeatable)
# The runs go through tp_run.py (pseudo-terminal, "ready" handshake, exact wait status, and a
# child subreaper that waits for every descendant, so traces are complete when it returns).
# Results: ok:/FAIL: lines and a final "N passed, N failed" line (from integration/lib.sh).
# Expects CTP_BUILD_DIR and CTP_SOURCE_DIR from ctest.

# shellcheck source=../integration/lib.sh
source "$CTP_SOURCE_DIR/test/integration/lib.sh"

TP_SRC=$CTP_SOURCE_DIR/test/transparency
TP_BIN=$CTP_BUILD_DIR/test/transparency
TP_PRELOAD=$CTP_BUILD_DIR/preload/libctp_preload.so
TP_PYTHON=/usr/bin/python3
TP_MODES=(ctp-run plain)
TP_NOFILE= # compare --nofile
TP_AS_KB=  # compare --as-kb

# tp_run_one NAME MODE CORE RUNNER-OPTIONS... -- PROGRAM ARGS: one run; results in
# $WORK/NAME.MODE.{out,err,status} and its working directory $WORK/NAME.MODE.d.
tp_run_one() {
	local name=$1 mode=$2 core=$3
	shift 3
	local base=$WORK/$name.$mode
	local opts=() cmd=()
	while [ "$1" != "--" ]; do
		opts+=("$1")
		shift
	done
	shift
	case $mode in
	ctp-run) cmd=("$CTP_RUN" -o "$(tp_trace_of "$name" "$mode")" -- "$@") ;;
	plain)
		opts+=(--env "LD_PRELOAD=$TP_PRELOAD" --env "CTP_OUTPUT=$(tp_trace_of "$name" "$mode")")
		cmd=("$@")
		;;
	*) cmd=("$@") ;; # native, or a case's own way (its environment in the options)
	esac
	mkdir -p "$base.d"
	(
		if [ "$core" = 1 ]; then ulimit -c unlimited; else ulimit -c 0; fi
		if [ -n "$TP_NOFILE" ]; then ulimit -n "$TP_NOFILE"; fi
		if [ -n "$TP_AS_KB" ]; then ulimit -v "$TP_AS_KB"; fi
		exec "$TP_PYTHON" "$TP_SRC/tp_run.py" --out "$base.out" --err "$base.err" \
			--status "$base.status" --cwd "$base.d" \
			--unset LD_PRELOAD --unset CTP_SOCKET --unset CTP_OUTPUT --unset CTP_COLLECTOR \
			--unset CTP_CORO_BASE "${opts[@]}" -- "${cmd[@]}"
	)
}

# The ending of a run as compared: the runner's status; for ctp-run, which dies of the app's
# signal without a core of its own, " core" is added when --core and the app left a core file.
# (An exit 128+N from ctp-run is not signal N: a shell script around it would run on after a
# Ctrl-C, where untraced it ends.)
tp_ending() {
	local name=$1 mode=$2 core=$3
	local st
	st=$(head -n 1 "$WORK/$name.$mode.status")
	if [ "$mode" = ctp-run ] && [ "$core" = 1 ] && [[ $st =~ ^signal\ [A-Z0-9]+$ ]] &&
		compgen -G "$WORK/$name.$mode.d/core*" >/dev/null; then
		st="$st core"
	fi
	echo "$st"
}

# same_file WHAT NATIVE-FILE TRACED-FILE: counts a check; shows the first differences.
same_file() {
	checks=$((checks + 1))
	if cmp -s "$2" "$3"; then
		echo "ok: $1"
	else
		echo "FAIL: $1 differs (untraced < > traced):" >&2
		{ diff "$2" "$3" | head -n 12 | sed 's/^/    /' >&2; } || true
		failures=$((failures + 1))
	fi
}

# compare NAME [options] -- PROGRAM ARGS...: see the header.
compare() {
	local name=$1
	shift
	local expect="" core=0 job_control=0 opts=()
	TP_NOFILE=
	TP_AS_KB=
	while [ $# -gt 0 ] && [ "$1" != "--" ]; do
		case $1 in
		--expect) expect=$2; shift 2 ;;
		--core) core=1; shift ;;
		--job-control) job_control=1; shift ;;
		--nofile) TP_NOFILE=$2; shift 2 ;;
		--as-kb) TP_AS_KB=$2; shift 2 ;;
		--pty | --stdin-pipe | --sigchld-ignored) opts+=("$1"); shift ;;
		--after-ready)
			local act=$2
			if [[ $act == vm:* || $act == trace:* ]]; then
				opts+=(--stdin-pipe)
			fi
			opts+=(--after-ready "$act")
			shift 2
			;;
		--timeout | --env | --stack-kb) opts+=("$1" "$2"); shift 2 ;;
		*) echo "compare: unknown option $1" >&2; exit 2 ;;
		esac
	done
	[ "${1:-}" = "--" ] || { echo "compare: missing -- PROGRAM" >&2; exit 2; }
	shift

	local mode mopts native st times="" pids=()
	for mode in native "${TP_MODES[@]}"; do
		mopts=("${opts[@]}")
		if [ "$job_control" = 1 ]; then
			mopts+=(--pty --job-control "$WORK/$name.$mode.stops")
		fi
		local i
		for i in "${!mopts[@]}"; do
			if [[ ${mopts[$i]} == vm:* ]]; then
				mopts[$i]="${mopts[$i]}:$WORK/$name.$mode.vm"
			elif [[ ${mopts[$i]} == trace:* ]]; then
				mopts[$i]="trace:$(tp_trace_of "$name" "$mode"):${mopts[$i]#trace:}"
			fi
		done
		tp_timed tp_run_one "$name" "$mode" "$core" "${mopts[@]}" -- "$@" \
			>"$WORK/$name.$mode.time" &
		pids+=($!)
	done
	for i in "${pids[@]}"; do
		wait "$i" || echo "    runner $i failed" >&2
	done
	for mode in native "${TP_MODES[@]}"; do
		times+="$mode $(cat "$WORK/$name.$mode.time") s, "
		grep -v '^ctp\(-collector\)\?: ' "$WORK/$name.$mode.err" >"$WORK/$name.$mode.err.app" || true
	done

	native=$(head -n 1 "$WORK/$name.native.status")
	echo "    $name: ${times%, } (each until its last descendant ended)"
	if [ -n "$expect" ]; then
		expect_eq "$name untraced ends as the case needs" "$expect" "$native"
	fi
	if [ -s "$WORK/$name.native.err.app" ]; then
		{ sed 's/^/    untraced stderr: /' "$WORK/$name.native.err.app" | head -n 5; } || true
	fi
	for mode in "${TP_MODES[@]}"; do
		st=$(tp_ending "$name" "$mode" "$core")
		expect_eq "$name $mode: ends as untraced" "$native" "$st"
		same_file "$name $mode: stdout" "$WORK/$name.native.out" "$WORK/$name.$mode.out"
		if [ "$job_control" = 1 ]; then
			same_file "$name $mode: stops, as its parent saw them" "$WORK/$name.native.stops" \
				"$WORK/$name.$mode.stops"
		fi
		same_file "$name $mode: stderr (without ctp: and ctp-collector: lines)" "$WORK/$name.native.err.app" \
			"$WORK/$name.$mode.err.app"
		expect_eq "$name $mode: no process left behind" "leftover 0" \
			"$(sed -n 2p "$WORK/$name.$mode.status")"
		tp_trace_readable "$name $mode" "$(tp_trace_of "$name" "$mode")" "$WORK/$name.$mode.jsonl"
		if [ -s "$WORK/$name.$mode.err" ] && grep -q '^ctp: ' "$WORK/$name.$mode.err"; then
			{ grep '^ctp: ' "$WORK/$name.$mode.err" | head -n 3 | sed "s/^/    $mode stderr: /"; } || true
		fi
	done
}

# tp_trace_of NAME MODE: the trace file of case NAME's run in MODE (none untraced).
tp_trace_of() {
	case $2 in
	ctp-run) echo "$WORK/$1.jsonl.zst" ;;
	plain) echo "$WORK/$1-plain.jsonl.zst" ;;
	esac
}

# tp_timed COMMAND...: runs COMMAND, then prints its run time in seconds, one decimal.
tp_timed() {
	local t0=${EPOCHREALTIME/./}
	"$@"
	local ms=$(((${EPOCHREALTIME/./} - t0) / 1000))
	printf '%d.%d' $((ms / 1000)) $((ms % 1000 / 100))
}

# tp_trace_readable WHAT TRACE DECODED: ctp-cat reads TRACE whole (0) or as documented cut (1).
tp_trace_readable() {
	local rc=0
	checks=$((checks + 1))
	if [ ! -s "$2" ]; then
		echo "FAIL: $1: no trace written ($2)" >&2
		failures=$((failures + 1))
		: >"$3"
		return
	fi
	"$CTP_CAT" "$2" >"$3" 2>"$3.err" || rc=$?
	case $rc in
	0) echo "ok: $1: trace readable" ;;
	1) echo "ok: $1: trace readable but cut (ctp-cat 1: $(head -c 200 "$3.err"))" ;;
	*)
		echo "FAIL: $1: trace unreadable, ctp-cat $rc: $(head -c 200 "$3.err")" >&2
		failures=$((failures + 1))
		;;
	esac
}

# tq NAME MODE JQ-FILTER: jq over the decoded trace of one traced way, as one array (-s).
tq() {
	jq -r -s "$3" "$WORK/$1.$2.jsonl"
}

# tp_app_pid NAME MODE PROGRAM-BASENAME: the pid of the first process whose exe ends so.
tp_app_pid() {
	tq "$1" "$2" "[.[] | select(.type == \"process\" and (.exe | endswith(\"/$3\")))][0].pid // empty"
}

# The ucontext coroutines of process PID, in the order the trace made them (a jq filter).
tp_ucontext_coros() {
	echo "[.[] | select(.type == \"coro\" and .pid == ${1:-0} and .kind == \"ucontext\")]"
}

# tp_switch_counts NAME MODE PID: for each ucontext coroutine of PID, [switches to it, switches
# from it], as one JSON array.
tp_switch_counts() {
	# Counted in one pass over the trace, not one per coroutine: cases run hundreds of them.
	tq "$1" "$2" "(reduce (.[] | select(.type == \"switch\")) as \$s ({};
			.[\"to \\(\$s.to)\"] += 1 | .[\"from \\(\$s.from)\"] += 1)) as \$n |
		[$(tp_ucontext_coros "$3")[] | .coro as \$c |
		 [\$n[\"to \\(\$c)\"] // 0, \$n[\"from \\(\$c)\"] // 0]] | tojson"
}

# tp_end_hows NAME MODE PID: for each ucontext coroutine of PID, how it ended (its coro_end
# lines' "how", joined by "+"), as one JSON array.
tp_end_hows() {
	tq "$1" "$2" "(reduce (.[] | select(.type == \"coro_end\")) as \$e ({};
			.[\"\\(\$e.coro)\"] += [\$e.how])) as \$h |
		[$(tp_ucontext_coros "$3")[] | .coro as \$c | \$h[\"\\(\$c)\"] // [] | join(\"+\")] |
		tojson"
}
