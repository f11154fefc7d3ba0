# Boost.Asio's stackful coroutines (asio::spawn of Debian's Boost 1.74: Boost.Coroutine v1 over
# Boost.Context): an echo server, 50 clients and their sessions, every party a coroutine.
# Healthy, each of the 101 coroutines returns and its stack is freed by its owner: the trace
# must end every one of them, and the report must find nothing. With one socket closed behind
# Asio's back while its session waits (the planted bug), the report must name that one cause
# once: a lost wakeup on that fd in session_echo, closed in client_talk; not again as a stuck or
# leaked coroutine. C++ names are shortened in the text report, full in --json.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/report_lib.sh"

prog=$PROGRAMS/asio_echo
"$prog" >"$WORK/plain.out"
trace ok -- "$prog"
expect_eq "ctp-run exits as the program did" 0 "$status"
expect_eq "the same echoes traced as untraced" "$(cat "$WORK/plain.out")" "$(cat "$WORK/ok.out")"
expect_eq "and all of them" "echoed 1000 of 1000" "$(cat "$WORK/ok.out")"
expect_eq "101 fcontext coroutines and 1 thread" "fcontext:101 thread:1" \
	"$(q ok '[.[] | select(.type == "coro") | .kind] | group_by(.) |
		map("\(.[0]):\(length)") | join(" ")')"
expect_eq "ctp-run's summary counts them as the trace does" 1 \
	"$(grep -c '^ctp: 1 process, 101 coroutines and 1 thread, ' "$WORK/ok.err")"
expect_eq "every switch is a jump between known coroutines" 0 \
	"$(q ok '([.[] | select(.type == "coro") | .coro]) as $ids | [.[] | select(.type == "switch")
		| select(.how != "jump_fcontext" or ((.from as $f | $ids | index($f)) == null)
			or ((.to as $t | $ids | index($t)) == null))] | length')"
check "the sessions and clients switched (at least 4 per message)" \
	[ "$(q ok '[.[] | select(.type == "switch")] | length')" -ge 4000 ]
expect_eq "every coroutine ended: its owner freed its stack" 101 \
	"$(q ok '[.[] | select(.type == "coro_end" and .how == "abandoned")] | length')"
expect_eq "final states: 101 exited, the thread running" "exited:101 running:1" \
	"$(q ok '[.[] | select(.type == "state") | .state] | group_by(.) |
		map("\(.[0]):\(length)") | join(" ")')"
report ok
expect_eq "--report: nothing to fail on (exit 0)" 0 "$report_status"
expect_eq "--report: no finding at all on the healthy run" 0 "$(rq ok '.findings | length')"
expect_eq "--report counts what ctp-run counted" "101 1" \
	"$(rq ok '"\(.summary.coroutines) \(.summary.threads)"')"

# The planted bug.
"$prog" --lose-one >"$WORK/plain_lost.out"
trace lost -- "$prog" --lose-one
expect_eq "ctp-run exits as the program did" 0 "$status"
expect_eq "the same output traced as untraced, but the fd" \
	"$(head -1 "$WORK/plain_lost.out")" "$(head -1 "$WORK/lost.out")"
fd=$(sed -n 's/^closed fd \([0-9]*\) under a waiting session$/\1/p' "$WORK/lost.out")
check "the program says which fd it closed ($fd)" [ -n "$fd" ]
report lost
expect_eq "--report exits 3 on the lost wakeup" 3 "$report_status"
expect_eq "one finding, one incident" "1 1" \
	"$(rq lost '"\(.findings | length) \(.summary.incidents | add)"')"
expect_eq "a lost wakeup on the closed fd, reading" "lost_wakeup $fd read" \
	"$(rq lost '.findings[0] | "\(.kind) \(.fd) \(.op)"')"
check "it waits in session_echo's read" \
	[ "$(rq lost '.findings[0].stack | map(select(test("session_echo"))) | length')" -gt 0 ]
check "it was closed in client_talk" \
	[ "$(rq lost '.findings[0].close.stack | map(select(test("client_talk"))) | length')" -gt 0 ]
expect_eq "not listed again as stuck or leaked" "0 0" \
	"$(rq lost '"\(.summary.findings.stuck) \(.summary.findings.leak)"')"
check "--json keeps the full C++ names" \
	[ "$(rq lost '.findings[0].stack | map(select(test("any_executor<"))) | length')" -gt 0 ]

# The text report: the same one finding, with names people can read.
text_status=0
"$CTP_CAT" --report "$WORK/lost.jsonl.zst" >"$WORK/lost.txt" || text_status=$?
expect_eq "the text report exits 3 too" 3 "$text_status"
expect_eq "its summary counts one incident" 1 "$(grep -c '^Findings: 1 lost_wakeup$' "$WORK/lost.txt")"
expect_eq "and tells no other finding" 0 "$(lines -cE '^(STUCK|LEAK)' "$WORK/lost.txt")"
check "the waiting frame reads as people write it" \
	grep -q '^    (anonymous namespace)::session_echo((anonymous namespace)::server_state&, boost::asio::basic_stream_socket<...>, boost::asio::basic_yield_context<...>) (asio_echo.cpp:[0-9]*)$' \
	"$WORK/lost.txt"
longest=$(awk '{ if (length($0) > n) n = length($0) } END { print n }' "$WORK/lost.txt")
check "no line of the text report runs past 400 characters (longest: $longest)" [ "$longest" -le 400 ]
full_status=0
"$CTP_CAT" --report --full-names "$WORK/lost.jsonl.zst" >"$WORK/full.txt" || full_status=$?
expect_eq "--full-names: the same exit" 3 "$full_status"
check "--full-names: the template arguments are back" grep -q 'any_executor<' "$WORK/full.txt"
finish
