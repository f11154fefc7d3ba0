# Debian's Icinga 2 (icinga2-bin), the monitoring daemon, traced as installed: it starts as root,
# changes to user nagios, and then forks the worker that serves its REST API in Asio coroutines
# (Boost.Coroutine, on a pool of threads), which forks a helper in turn; the helper runs the
# check plugins (fork, then exec). Its configuration is a private one (an API listener on a port
# of its own, a self-signed certificate, its state in a directory of its own, one host checked
# every second by a plugin that writes a line to stdout and one to stderr). Untraced and traced,
# every API request is answered, the check's output is the same, and SIGTERM ends it as its
# service manager ends it (exit 0). The trace must hold the worker, the helper and the plugins,
# each a process under its parent although their user cannot reach the collector's socket, the
# worker's coroutines and their switches, nothing lost; and the report names the API listener's
# coroutine, waiting to accept, among those suspended at the end.
source "$(dirname "$0")/lib.sh"

[ "$(id -u)" -eq 0 ] || {
	echo "FAIL: integ_real_icinga2 runs as root: icinga2 changes its user" >&2
	exit 1
}
requests=20

# Its directories, which the user nagios must reach: not under $WORK (root's alone).
DIR=$(mktemp -d /tmp/ctp-icinga.XXXXXX)
at_exit rm -rf "$DIR"
chmod 755 "$DIR"
mkdir -p "$DIR"/data/certs "$DIR"/log "$DIR"/cache "$DIR"/run "$DIR"/spool
chown -R nagios: "$DIR"
defines=(-DDataDir="$DIR/data" -DLogDir="$DIR/log" -DCacheDir="$DIR/cache" -DInitRunDir="$DIR/run"
	-DSpoolDir="$DIR/spool" -DNodeName=ctp-test)
icinga2 pki new-cert --cn ctp-test --key "$DIR/data/certs/ctp-test.key" \
	--cert "$DIR/data/certs/ctp-test.crt" >"$WORK/pki.out" 2>&1
cp "$DIR/data/certs/ctp-test.crt" "$DIR/data/certs/ca.crt"
chown -R nagios: "$DIR"

# check_output PORT: the output of the host's last check, as the API tells it (JSON; null before
# the first check).
check_output() {
	curl -sk -u test:secret "https://127.0.0.1:$1/v1/objects/hosts/ctp-test?attrs=last_check_result" |
		jq -c '.results[0].attrs.last_check_result.output'
}
checked() { [ "$(check_output "$1")" != null ]; }

# api_answers PORT: a request to the API gets 200.
api_answers() {
	[ "$(curl -sk -u test:secret -o /dev/null -w '%{http_code}' \
		"https://127.0.0.1:$1/v1/status/IcingaApplication")" = 200 ]
}

pids=()
stop_all() {
	local p
	for p in "${pids[@]}"; do pkill -KILL -P "$p" 2>/dev/null || true; done
	pkill -KILL -f "icinga2.*$DIR" 2>/dev/null || true
}
at_exit stop_all

# run NAME [ctp-run -o FILE --]: the daemon on a port of its own, the requests, then SIGTERM.
run() {
	local name=$1 port
	shift
	port=$(free_port)
	cat >"$DIR/$name.conf" <<EOF
object ApiListener "api" {
  bind_host = "127.0.0.1"
  bind_port = $port
}
object ApiUser "test" {
  password = "secret"
  permissions = [ "*" ]
}
object Endpoint "ctp-test" { }
object Zone "master" { endpoints = [ "ctp-test" ] }
object CheckerComponent "checker" { }
object CheckCommand "say" {
  command = [ "/bin/sh", "-c", "echo checked; echo warned >&2" ]
}
object Host "ctp-test" {
  check_command = "say"
  check_interval = 1s
  retry_interval = 1s
}
EOF
	"$@" icinga2 daemon -c "$DIR/$name.conf" "${defines[@]}" >"$WORK/$name.out" 2>&1 &
	local pid=$!
	pids+=("$pid")
	check "($name) the API answers" wait_until 60 api_answers "$port"
	local answered=0 i
	for i in $(seq $requests); do
		if api_answers "$port"; then answered=$((answered + 1)); fi
	done
	echo "$answered" >"$WORK/$name.answered"
	check "($name) the host has been checked" wait_until 60 checked "$port"
	check_output "$port" >"$WORK/$name.check"
	stop_server "$name" "$pid"
}

run plain
run traced "$CTP_RUN" -o "$WORK/ic.jsonl.zst" --
expect_eq "untraced, every request is answered" $requests "$(cat "$WORK/plain.answered")"
expect_eq "traced, every request is answered" $requests "$(cat "$WORK/traced.answered")"
expect_eq "and SIGTERM ends it as untraced" "$(cat "$WORK/plain.status")" \
	"$(cat "$WORK/traced.status")"
check "it ended as its service does (0)" [ "$(cat "$WORK/traced.status")" = 0 ]
expect_eq "untraced, the check's output is the plugin's" '"checked\nwarned"' \
	"$(cat "$WORK/plain.check")"
expect_eq "traced, the same" "$(cat "$WORK/plain.check")" "$(cat "$WORK/traced.check")"
check "ctp-run said nothing of a process it could not reach" \
	bash -c '! grep -q "cannot reach the collector" "$1"' sh "$WORK/traced.out"
cat_status=0
"$CTP_CAT" "$WORK/ic.jsonl.zst" >"$WORK/ic.jsonl" || cat_status=$?
expect_eq "ctp-cat reads the trace whole" 0 "$cat_status"
expect_eq "nothing lost" "0 0" \
	"$(q ic '"\([.[] | select(.type == "loss")] | length) \(.[] | select(.type == "end") | .lost)"')"

# The daemon's processes: the one started (its last image), the worker it forked, the helper
# the worker forked; each with an exit.
icinga='[.[] | select(.type == "process" and (.exe | endswith("/icinga2")))]'
main=$(q ic "$icinga[0].pid // 0")
worker=$(q ic "[$icinga[] | select(.ppid == ${main:-0}) | .pid][0] // 0")
helper=$(q ic "[$icinga[] | select(.ppid == $worker) | .pid][0] // 0")
check "the worker is in the trace, forked by the process started ($worker)" [ "$worker" -gt 0 ]
check "and the helper, forked by the worker ($helper)" [ "$helper" -gt 0 ]
expect_eq "each ended, with an exit line" "3" \
	"$(q ic "[.[] | select(.type == \"exit\" and (.pid == ${main:-0} or .pid == $worker or
		.pid == $helper))] | length")"
# The plugins: the helper's fork children, each a second image (the shell) of its pid.
plugins=$(q ic "[.[] | select(.type == \"process\" and .ppid == $helper and
	(.argv | join(\" \")) == \"/bin/sh -c echo checked; echo warned >&2\")] | length")
check "the check plugins, exec'd by the helper's children, are in the trace ($plugins)" \
	[ "$plugins" -gt 0 ]
made=$(q ic "[.[] | select(.type == \"coro\" and .pid == $worker and .kind == \"fcontext\")] | length")
switches=$(q ic "[.[] | select(.type == \"switch\" and .pid == $worker)] | length")
check "the worker's Asio coroutines ($made)" [ "$made" -gt 0 ]
check "and their switches ($switches)" [ "$switches" -gt 0 ]
expect_eq "every switch of the worker is a jump_fcontext" 0 \
	"$(q ic "[.[] | select(.type == \"switch\" and .pid == $worker and .how != \"jump_fcontext\")]
		| length")"

report_status=0
"$CTP_CAT" --report --json "$WORK/ic.jsonl.zst" >"$WORK/report.json" || report_status=$?
expect_eq "ctp-cat --report exits 0: no crash, no lost wakeup, no missed readiness" 0 \
	"$report_status"
check "the report names the API listener's coroutine among the suspended at the end" \
	jq -e '[.findings[] | select(.kind == "stuck") | .stack[]
		| select(test("ApiListener::ListenerCoroutineProc"))] | length > 0' "$WORK/report.json"
finish
