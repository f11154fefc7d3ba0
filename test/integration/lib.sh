# Shared helpers of the integration tests: each test is a bash script that traces a real program
# with the real binaries and asserts on the trace's content. Sourced; expects from ctest:
#   CTP_BUILD_DIR   the build tree (ctp-run, ctp-cat, test programs)
set -euo pipefail

CTP_RUN=$CTP_BUILD_DIR/collector/ctp-run
CTP_CAT=$CTP_BUILD_DIR/cat/ctp-cat
PROGRAMS=$CTP_BUILD_DIR/test/programs
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ctp-test.XXXXXX")
failures=0
checks=0
finished=no
exit_commands=()

# at_exit COMMAND...: runs COMMAND when the test exits, however it exits (before $WORK goes).
at_exit() {
	exit_commands+=("$(printf '%q ' "$@")")
}

# A test that stops before `finish` (set -e stopped it at a failing command) has failed, and
# says so in the same words as a failed check, so that no failure goes unreported.
on_exit() {
	local status=$?
	if [ "$finished" != yes ]; then
		failures=$((failures + 1))
		echo "FAIL: the test stopped before its end (status $status${failed_at:+, at $failed_at})" >&2
		echo "$((checks - failures + 1)) passed, $failures failed"
		[ "$status" -ne 0 ] || status=1
	elif [ "$checks" -ne "$checks_at_finish" ]; then
		# Checks after `finish` would count for nothing: the status is already decided.
		echo "FAIL: $((checks - checks_at_finish)) checks ran after finish" >&2
		status=1
	fi
	local c
	for c in "${exit_commands[@]}"; do
		eval "$c" || true
	done
	rm -rf "$WORK"
	exit "$status"
}
trap on_exit EXIT
# Where set -e stopped the script, for the message above (commands in functions included).
set -o errtrace
trap 'failed_at="line $LINENO: $BASH_COMMAND"' ERR

# check "what" COMMAND...: runs COMMAND; counts a failure, with what, when it fails.
check() {
	local what=$1
	shift
	checks=$((checks + 1))
	if "$@"; then
		echo "ok: $what"
	else
		echo "FAIL: $what" >&2
		failures=$((failures + 1))
	fi
}

# expect_eq "what" EXPECTED ACTUAL
expect_eq() {
	checks=$((checks + 1))
	if [ "$2" == "$3" ]; then
		echo "ok: $1 ($3)"
	else
		echo "FAIL: $1: expected '$2', got '$3'" >&2
		failures=$((failures + 1))
	fi
}

# trace NAME [ctp-run options] -- PROGRAM ARGS: traces into $WORK/NAME.jsonl.zst, decodes it to
# $WORK/NAME.jsonl with ctp-cat; the app's exit status is in $status.
trace() {
	local name=$1
	shift
	status=0
	"$CTP_RUN" -o "$WORK/$name.jsonl.zst" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" || status=$?
	local cat_status=0
	"$CTP_CAT" "$WORK/$name.jsonl.zst" >"$WORK/$name.jsonl" || cat_status=$?
	expect_eq "($name) ctp-cat reads the trace whole" 0 "$cat_status"
}

# plain_run NAME [--env K=V]... -- PROGRAM ARGS: the plain form (LD_PRELOAD, no ctp-run) in
# $WORK, tracing into $WORK/NAME.jsonl.zst (an --env CTP_OUTPUT= of the caller's wins). It
# returns once the collector the preload started has ended too (tp_run.py is a child subreaper:
# no polling). $status is how the program ended ("exit N", "signal NAME"); its stdout and stderr
# are in $WORK/NAME.out and .err.
plain_run() {
	local name=$1
	shift
	local opts=()
	while [ "$1" != "--" ]; do
		opts+=("$1")
		shift
	done
	shift
	/usr/bin/python3 "$CTP_SOURCE_DIR/test/transparency/tp_run.py" --out "$WORK/$name.out" \
		--err "$WORK/$name.err" --status "$WORK/$name.status" --cwd "$WORK" \
		--unset CTP_SOCKET --unset CTP_COLLECTOR \
		--env "LD_PRELOAD=$CTP_BUILD_DIR/preload/libctp_preload.so" \
		--env "CTP_OUTPUT=$WORK/$name.jsonl.zst" "${opts[@]}" -- "$@"
	status=$(head -n 1 "$WORK/$name.status")
}

# plain_trace NAME [--env K=V]... -- PROGRAM ARGS: plain_run, then decodes the trace like trace.
plain_trace() {
	plain_run "$@"
	local cat_status=0
	"$CTP_CAT" "$WORK/$1.jsonl.zst" >"$WORK/$1.jsonl" || cat_status=$?
	expect_eq "($1) ctp-cat reads the plain form's trace whole" 0 "$cat_status"
}

# free_port: a TCP port of 127.0.0.1 that nothing listens on now.
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# stop_server NAME PID: SIGTERM to PID, as a service manager stops a server; waits for it, and
# writes how it ended (its status) into $WORK/NAME.status.
stop_server() {
	kill -TERM "$2"
	local st=0
	wait "$2" || st=$?
	echo "$st" >"$WORK/$1.status"
}

# wait_until SECONDS COMMAND...: polls COMMAND every 50 ms until it succeeds; false after
# SECONDS.
wait_until() {
	local deadline=$((SECONDS + $1))
	shift
	until "$@"; do
		[ "$SECONDS" -lt "$deadline" ] || return 1
		sleep 0.05
	done
}

# within MAX A B: A and B differ by at most MAX.
within() {
	local d=$(($2 - $3))
	[ "${d#-}" -le "$1" ]
}

# lines GREP-ARGS...: grep, where "no line matched" (status 1) is an answer, not a failure; a
# real error (status 2: no such file, bad pattern) still fails.
lines() {
	grep "$@" || [ $? -eq 1 ]
}

# q NAME JQ-FILTER: runs jq over the whole decoded trace as one array (-s), raw output.
q() {
	jq -r -s "$2" "$WORK/$1.jsonl"
}

# segment_blocks PID: the blocks the process's segment (a memfd) holds. A reader of a live
# segment (ctp-pstack, gdb) that touched a slot the program never wrote would have added a
# page of zeros to it.
segment_blocks() {
	local fd
	fd=$(find "/proc/$1/fd" -lname '/memfd:ctp-segment*' -printf '%f\n' | head -n 1)
	stat -L -c %b "/proc/$1/fd/$fd"
}

# finish: the summary line ctest shows, and the exit status.
finish() {
	finished=yes
	checks_at_finish=$checks
	echo "$((checks - failures)) passed, $failures failed"
	[ "$failures" -eq 0 ]
}
