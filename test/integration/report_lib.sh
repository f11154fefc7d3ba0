# Helpers of the report tests (sourced after lib.sh).

EXAMPLE=$CTP_BUILD_DIR/examples/lost_wakeup

# example NAME [SERVER OPTIONS]: traces the lost-wakeup server under the example's client into
# $WORK/NAME.jsonl.zst (decoded into $WORK/NAME.jsonl for q); the server's output is in $WORK/NAME.out, the client's exit status in
# $client_status, ctp-run's in $status.
example() {
	local name=$1
	shift
	local port_file=$WORK/$name.port
	"$CTP_RUN" -o "$WORK/$name.jsonl.zst" "$EXAMPLE/server" --port-file "$port_file" "$@" \
		>"$WORK/$name.out" 2>"$WORK/$name.err" &
	local server=$!
	# The server writes its port once it listens (bounded wait: 20 s).
	for _ in $(seq 400); do
		[ -s "$port_file" ] && break
		kill -0 $server 2>/dev/null || break
		sleep 0.05
	done
	client_status=0
	if [ -s "$port_file" ]; then
		timeout 60 "$EXAMPLE/client" "$(cat "$port_file")" >"$WORK/$name.client" 2>&1 ||
			client_status=$?
	else
		client_status=no-port
		kill $server 2>/dev/null || true
	fi
	status=0
	wait $server || status=$?
	local cat_status=0
	"$CTP_CAT" "$WORK/$name.jsonl.zst" >"$WORK/$name.jsonl" || cat_status=$?
	expect_eq "($name) ctp-cat reads the trace whole" 0 "$cat_status"
}

# report NAME [OPTIONS]: `ctp-cat --report --json` of $WORK/NAME.jsonl.zst into $WORK/NAME.json,
# its exit status in $report_status.
report() {
	local name=$1
	shift
	report_status=0
	"$CTP_CAT" --report --json "$@" "$WORK/$name.jsonl.zst" >"$WORK/$name.json" ||
		report_status=$?
}

# rq NAME JQ-FILTER: jq over the JSON report, raw output.
rq() {
	jq -r "$2" "$WORK/$1.json"
}

# wait_line FILE PATTERN: waits (bounded: 30 s) until FILE has a line matching PATTERN.
wait_line() {
	for _ in $(seq 600); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.05
	done
	echo "no line '$2' in $1:" >&2
	cat "$1" >&2 || true
	return 1
}

# hang_example: the lost-wakeup server under ctp-run (trace $WORK/lw.jsonl.zst, output
# $WORK/lw.out), hanging with its 47 stranded coroutines while the example's client holds on
# (until fd 3, a fifo it reads, is closed: exec 3>&-). Sets run_pid (ctp-run) and client_pid.
hang_example() {
	"$CTP_RUN" -o "$WORK/lw.jsonl.zst" "$EXAMPLE/server" --port-file "$WORK/lw.port" \
		>"$WORK/lw.out" 2>"$WORK/lw.err" &
	run_pid=$!
	at_exit kill $run_pid
	wait_line "$WORK/lw.port" '^[0-9]'
	mkfifo "$WORK/hold"
	"$EXAMPLE/client" --hold "$(cat "$WORK/lw.port")" <"$WORK/hold" >"$WORK/client.out" 2>&1 &
	client_pid=$!
	exec 3>"$WORK/hold" # the client holds until this closes
	wait_line "$WORK/client.out" '^client: holding'
}

# end_hung_example: lets the server hang_example left hanging end as it would have (the client
# goes on and tells it to quit), checks that both ended by themselves with status 0, and sets
# `stranded` to the fds the server says it stranded, sorted, each followed by a space.
end_hung_example() {
	exec 3>&-
	local client_status=0 server_status=0
	wait $client_pid || client_status=$?
	wait $run_pid || server_status=$?
	expect_eq "the client ran to its end" 0 "$client_status"
	expect_eq "the server stopped by itself, status 0" 0 "$server_status"
	stranded=$(sed -n 's/^stranded fd //p' "$WORK/lw.out" | sort -n | tr '\n' ' ')
}
