# Debian's Wesnoth server (wesnothd) traced as installed: a Boost.Asio server whose accept loop
# and connections run in Asio `spawn` coroutines (Boost.Coroutine v1 over Boost.Context). Twenty
# clients connect and each makes the protocol's handshake (four zero bytes; the server answers
# with four bytes), then all hang up, and once the server has closed every connection it is
# stopped with SIGTERM, as its service is. Untraced and traced, the server must answer every
# handshake, close every connection and end the same way (it catches SIGTERM and exits with
# 143). The trace must show the coroutines Asio makes for each client, each ended when
# Boost.Coroutine frees its stack, the accepts and reads they waited for, every close, and at the
# end only the listeners' coroutines still waiting to accept, which the report calls stuck:
# nothing lost, no lost wakeup, no missed readiness.
#
# The binary is stripped: its own frames read as wesnothd-1.16+0xOFF.
source "$(dirname "$0")/lib.sh"

server=/usr/games/wesnothd-1.16
clients=20
# handshakes PORT N: connects N times and shakes hands on each, then once more, and hangs up on
# all, the last one last; prints how many answers of four bytes came back. The last handshake
# is answered after the server has begun to wait for the others' next packet (one thread serves
# them all, in the order the kernel reported them), so it waits for each of their hang-ups.
handshakes() {
	python3 - "$1" "$2" <<'EOF'
import socket, sys
port, n = int(sys.argv[1]), int(sys.argv[2])
socks, answered = [], 0
for _ in range(n + 1):
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(b"\0\0\0\0")
    answer = b""
    while len(answer) < 4:
        part = s.recv(4 - len(answer))
        if not part:
            break
        answer += part
    answered += len(answer) == 4
    socks.append(s)
for s in socks:
    s.close()
print(answered)
EOF
}
listening() { python3 -c "import socket, sys; socket.create_connection(('127.0.0.1', $1), timeout=1)" 2>/dev/null; }
# all_closed PORT: no connection to PORT is left on the server's side (only its listeners): it
# has closed every one its clients hung up on.
all_closed() {
	awk -v port="$(printf '%04X' "$1")" 'FNR > 1 { split($2, local, ":")
		if (local[2] == port && $4 != "0A") open++ } END { exit open > 0 }' /proc/net/tcp /proc/net/tcp6
}

pids=()
stop_all() {
	local p
	for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
}
at_exit stop_all

# run NAME [ctp-run -o FILE --]: the server on a port of its own, the clients, then SIGTERM once
# it has closed their connections.
run() {
	local name=$1 port
	shift
	port=$(free_port)
	"$@" "$server" -p "$port" >"$WORK/$name.out" 2>&1 &
	local pid=$!
	pids+=("$pid")
	check "($name) the server listens" wait_until 30 listening "$port"
	handshakes "$port" "$clients" >"$WORK/$name.answered"
	check "($name) the server closes every connection its clients hung up on" \
		wait_until 30 all_closed "$port"
	stop_server "$name" "$pid"
}

run plain
run traced "$CTP_RUN" -o "$WORK/wes.jsonl.zst" --
expect_eq "untraced, every handshake is answered" $((clients + 1)) "$(cat "$WORK/plain.answered")"
expect_eq "traced, every handshake is answered" $((clients + 1)) "$(cat "$WORK/traced.answered")"
expect_eq "and the server ends as untraced (143: it catches SIGTERM and exits)" \
	"$(cat "$WORK/plain.status")" "$(cat "$WORK/traced.status")"
cat_status=0
"$CTP_CAT" "$WORK/wes.jsonl.zst" >"$WORK/wes.jsonl" || cat_status=$?
expect_eq "ctp-cat reads the trace whole" 0 "$cat_status"

expect_eq "nothing lost" "0 0" \
	"$(q wes '"\([.[] | select(.type == "loss")] | length) \(.[] | select(.type == "end") | .lost)"')"
expect_eq "its exit is in the trace" 143 "$(q wes '.[] | select(.type == "exit") | .status')"
fc='[.[] | select(.type == "coro" and .kind == "fcontext")]'
made=$(q wes "$fc | length")
ended=$(q wes '[.[] | select(.type == "coro_end" and .how == "abandoned")] | length')
check "Asio makes coroutines for each client ($made for $clients)" [ "$made" -ge $((clients + 1)) ]
expect_eq "each ends when Boost.Coroutine frees its stack, but the listeners'" \
	"$made" "$((ended + $(q wes '[.[] | select(.type == "state" and .state == "suspended")] | length')))"
expect_eq "every switch is a jump_fcontext" 0 \
	"$(q wes '[.[] | select(.type == "switch" and .how != "jump_fcontext")] | length')"
fds() { q wes "[.[] | select(.type == \"fd\" and .event == \"$1\" and .op == $2)] | length"; }
# Each of the clients' connections, and the last one's, was waited for and closed (the probes that
# wait for the server to listen connect too); each of the clients' hang-ups was waited for.
accepts=$(fds ready '"accept"') reads=$(fds ready '"read"') closes=$(fds close null)
check "each connection was waited for ($accepts accepts for $((clients + 1)))" \
	[ "$accepts" -ge $((clients + 1)) ]
check "each client's hang-up was waited for ($reads reads for $clients)" [ "$reads" -ge "$clients" ]
check "each connection's close is in the trace ($closes closes for $((clients + 1)))" \
	[ "$closes" -ge $((clients + 1)) ]
# Asio takes each socket out of its epoll set just before it closes it: whether the server had
# waited on it or not, the close is in the trace.
expect_eq "every socket taken out of the epoll set is closed in the trace" \
	"$(fds unregister null)" "$closes"
# The listeners (one per address family) wait to accept.
waits() { q wes "[.[] | select(.type == \"state\" and .state == \"suspended\") | .wait.op] | $1"; }
check "at the end, the listeners' coroutines wait to accept ($(waits 'map(select(. == "accept")) | length'))" \
	[ "$(waits 'map(select(. == "accept")) | length')" -ge 1 ]
expect_eq "and nothing else waits" 0 "$(waits 'map(select(. != "accept")) | length')"

report_status=0
"$CTP_CAT" --report --json "$WORK/wes.jsonl.zst" >"$WORK/report.json" || report_status=$?
expect_eq "ctp-cat --report: the stuck are the listeners only, and no failure" \
	"$(q wes '[.[] | select(.type == "state" and .state == "suspended")] | length') 0 0 0" \
	"$(jq -r '[([.findings[] | select(.kind == "stuck") | .count] | add // 0),
		.summary.findings.crash, .summary.findings.lost_wakeup,
		.summary.findings.missed_readiness] | map(tostring) | join(" ")' "$WORK/report.json")"
check "their stacks show the server's own frames as wesnothd-1.16+0xOFF" \
	jq -e '[.findings[] | select(.kind == "stuck") | .stack[]
		| select(test("^wesnothd-1\\.16\\+0x[0-9a-f]+$"))] | length > 0' "$WORK/report.json"
expect_eq "ctp-cat --report exits 0: stuck coroutines are no failure" 0 "$report_status"
finish
