# Debian's pdns-recursor traced as installed: MTasker runs each query's resolution in a
# Boost.Context coroutine (make_fcontext/jump_fcontext of libboost_context) that sends the query
# upstream on a fresh UDP socket, registers it with epoll, suspends until the answer, and ends.
# A small responder on loopback is the upstream; a few hundred queries go through; pdns is stopped
# cleanly. The answers must be the responder's, and the trace must show one coroutine per
# resolution, every switch, symbolized stacks inside the pdns module, the ends, and no loss.
#
# The binary is stripped and its own functions are not in .dynsym: frames inside it have no name,
# so stacks are checked by module and shape. MTasker ends a coroutine with a tail jump to
# jump_fcontext (its wrapper's frame is gone), then caches the stack: the tracer sees the end only
# when make_fcontext reuses that stack. A coroutine whose last suspend stack holds nothing but
# make_fcontext's trampoline has nothing left to run; such ones count as finished here.
source "$(dirname "$0")/lib.sh"

pdns=/usr/sbin/pdns_recursor
dns=$CTP_SOURCE_DIR/test/integration/dns_responder.py
zone=ctp.test
conf=$WORK/conf
mkdir -p "$conf"
pids=()
stop_all() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
}
at_exit stop_all

python3 "$dns" serve "$WORK/upstream.port" $zone >"$WORK/upstream.out" &
upstream=$!
pids+=($upstream)
check "the responder is up" wait_until 10 test -s "$WORK/upstream.port"
q_port=$(cat "$WORK/upstream.port")
port=$(python3 "$dns" freeport)

status=0
"$CTP_RUN" -o "$WORK/pdns.jsonl.zst" -- $pdns --daemon=no --local-address=127.0.0.1 \
	--local-port="$port" --config-dir="$conf" --socket-dir="$conf" \
	--forward-zones-recurse=.=127.0.0.1:"$q_port" --threads=1 --dnssec=off \
	--security-poll-suffix= >"$WORK/pdns.out" 2>&1 &
traced=$!
pids+=($traced)

answers() {
	[ "$(python3 "$dns" ask "$port" $zone 1 probe | cut -d' ' -f2)" == \
		"$(python3 "$dns" expect $zone probe | cut -d' ' -f2)" ] && return 0
	kill -0 $traced # gone: stop waiting
	return 1
}
check "pdns answers under the tracer" wait_until 30 answers

names=$(seq -f n%g 1 300)
python3 "$dns" ask "$port" $zone 20 $names >"$WORK/got"
python3 "$dns" expect $zone $names >"$WORK/expected"
expect_eq "300 resolutions answered with the responder's addresses" \
	"$(md5sum <"$WORK/expected")" "$(md5sum <"$WORK/got")"
again=$(seq -f n%g 1 100)
python3 "$dns" ask "$port" $zone 20 $again >"$WORK/got2"
expect_eq "100 repeated names answered the same (from pdns's cache)" \
	"$(python3 "$dns" expect $zone $again | md5sum)" "$(md5sum <"$WORK/got2")"

rec_control --socket-dir="$conf" quit-nicely >"$WORK/quit.out" 2>&1 || true
wait $traced || status=$?
kill $upstream
wait $upstream || true
cat_status=0
"$CTP_CAT" "$WORK/pdns.jsonl.zst" >"$WORK/pdns.jsonl" || cat_status=$?

expect_eq "pdns stopped on request" "Exiting on user request" \
	"$(grep -o 'Exiting on user request' "$WORK/pdns.out" | head -1)"
expect_eq "ctp-run exits as pdns did" 0 "$status"
expect_eq "the trace's exit line says the same" "$status" \
	"$(q pdns '.[] | select(.type == "exit") | .status')"
expect_eq "the trace reads whole" 0 "$cat_status"
expect_eq "one process, pdns" "$pdns" "$(q pdns '[.[] | select(.type == "process") | .exe] | join(",")')"
expect_eq "nothing lost" "0 0" \
	"$(q pdns '"\([.[] | select(.type == "loss")] | length) \(.[] | select(.type == "end") | .lost)"')"
upstream_queries=$(cat "$WORK/upstream.out")

# One coroutine per resolution, on the thread that resolves (the one that made most of them).
fc='[.[] | select(.type == "coro" and .kind == "fcontext")]'
worker=$(q pdns "$fc | group_by(.tid) | max_by(length) | .[0].tid")
resolutions=$(q pdns "$fc | map(select(.tid == $worker)) | length")
check "a coroutine for each of the 300 resolutions ($resolutions)" [ "$resolutions" -ge 300 ]
check "one coroutine per upstream query, within 3: $resolutions coroutines, $upstream_queries queries" \
	within 3 "$resolutions" "$upstream_queries"
expect_eq "all coroutines start in one entry function (MTasker's wrapper)" 1 \
	"$(q pdns "$fc | map(.entry_addr) | unique | length")"
expect_eq "ids unique" "$(q pdns '[.[] | select(.type == "coro")] | length')" \
	"$(q pdns '[.[] | select(.type == "coro") | .coro] | unique | length')"
expect_eq "every switch is a jump_fcontext between known coroutines" 0 \
	"$(q pdns '([.[] | select(.type == "coro") | .coro]) as $ids | [.[] | select(.type == "switch")
		| select(.how != "jump_fcontext" or (.from as $f | $ids | index($f)) == null
			or (.to as $t | $ids | index($t)) == null)] | length')"
expect_eq "each coroutine's resume count equals the switches to its id" 0 \
	"$(q pdns '([.[] | select(.type == "switch") | .to] | group_by(.) | map({key: (.[0] | tostring),
		value: length}) | from_entries) as $to | [.[] | select(.type == "coro" and .kind == "fcontext")
		| .coro] as $ids | [.[] | select(.type == "state" and (.coro as $c | $ids | index($c)))
		| select(.switches != ($to[.coro | tostring] // 0))] | length')"

# Stacks: no frame of the tracer's own; frames inside pdns name its module.
stacks='(map(select(.type == "stack") | {key: (.id | tostring), value: .frames}) | from_entries)'
expect_eq "no stack holds a frame of the tracer" 0 \
	"$(q pdns '[.[] | select(.type == "stack") | .frames[] | select(.module // ""
		| test("libctp_preload|libunwind"))] | length')"
# The first suspend of each: the wrapper hands control back to make_fcontext's caller.
first=$(q pdns "$stacks as \$s | ($fc | map(.coro)) as \$ids | [.[] | select(.type == \"switch\"
	and .stack != null)] | group_by(.from) | map(select(.[0].from as \$f | \$ids | index(\$f)))
	| map(\$s[.[0].stack | tostring] | map(\"\(.sym)@\(.module)\") | join(\" < \")) | unique | .[]")
expect_eq "every first suspend is in the entry function, over make_fcontext" \
	"null@$pdns < make_fcontext@/lib/x86_64-linux-gnu/libboost_context.so.1.74.0" "$first"
hex='def hex: ltrimstr("0x") | ascii_downcase | explode
	| reduce .[] as $c (0; . * 16 + (if $c >= 97 then $c - 87 else $c - 48 end));'
expect_eq "and that frame lies within 256 bytes of the entry address" 0 \
	"$(q pdns "$hex $stacks as \$s | ($fc[0].entry_addr | hex) as \$e | ($fc | map(.coro)) as \$ids
		| [.[] | select(.type == \"switch\" and .stack != null and (.from as \$f | \$ids | index(\$f)))]
		| group_by(.from) | map(\$s[.[0].stack | tostring][0].addr | hex - \$e)
		| map(select(. <= 0 or . >= 256)) | length")"
# Waiting for the upstream answer: deep in pdns, down to make_fcontext.
waits=$(q pdns "$stacks as \$s | ($fc | map(.coro)) as \$ids | [.[] | select(.type == \"switch\"
	and .stack != null and (.from as \$f | \$ids | index(\$f))) | \$s[.stack | tostring]
	| select(length >= 6 and .[-1].sym == \"make_fcontext\"
		and (.[:-1] | all(.module == \"$pdns\")))] | length")
check "at least 300 suspends wait deep inside pdns ($waits)" [ "$waits" -ge 300 ]
registered=$(q pdns "$fc as \$fcs | [.[] | select(.type == \"fd\" and .event == \"register\"
	and .tid == $worker)] | map(.coro) | unique | map(select(. as \$c | \$fcs | map(.coro)
	| index(\$c))) | length")
check "at least 300 coroutines register a socket with epoll ($registered)" [ "$registered" -ge 300 ]
check "a coroutine per upstream query registers its socket, within 3: $registered coroutines, $upstream_queries queries" \
	within 3 "$registered" "$upstream_queries"
closes=$(q pdns '[.[] | select(.type == "fd" and .event == "close")] | length')
check "and close it after the answer ($closes closes)" [ "$closes" -ge 300 ]

# The ends. MTasker ends a coroutine by a tail jump out of its function: the preload sees that
# its only frame left returns into make_fcontext's exit path, and records the jump as its end.
# A coroutine still suspended when pdns frees its stack (at shutdown) ends there instead
# (`coro_end` how "abandoned"), its last switch an ordinary suspend.
last_out="(reduce (.[] | select(.type == \"switch\")) as \$w ({}; .[\$w.from | tostring] = \$w))"
abandoned="([.[] | select(.type == \"coro_end\" and .how == \"abandoned\") | .coro])"
expect_eq "every other exited coroutine left last by a jump_fcontext without a suspend stack" 0 \
	"$(q pdns "$last_out as \$l | $abandoned as \$ab | ($fc | map(.coro)) as \$ids |
		[.[] | select(.type == \"state\" and .state == \"exited\"
			and (.coro as \$c | \$ids | index(\$c)) and (.coro as \$c | \$ab | index(\$c) | not))
		| \$l[.coro | tostring] | select(.how != \"jump_fcontext\" or .stack != null)] | length")"
expect_eq "no coroutine is resumed after its end" 0 \
	"$(q pdns "reduce (.[] | select(.type == \"switch\")) as \$w ({ended: {}, n: 0};
		if .ended[\$w.to | tostring] then .n += 1 else . end
		| if \$w.stack == null then .ended[\$w.from | tostring] = true else . end) | .n")"
exited=$(q pdns "($fc | map(.coro)) as \$ids | [.[] | select(.type == \"state\"
	and .state == \"exited\" and (.coro as \$c | \$ids | index(\$c)))] | length")
check "most ends are seen as exits ($exited of $(q pdns "$fc | length"))" \
	[ $((exited * 5)) -ge $((resolutions * 4)) ]
# What ctp-cat --report makes of it: no failure (a crash, a lost wakeup, a missed readiness).
report_status=0
"$CTP_CAT" --report --json "$WORK/pdns.jsonl.zst" >"$WORK/report.json" || report_status=$?
expect_eq "ctp-cat --report finds nothing that fails (exit 0)" 0 "$report_status"
stuck=$(jq '[.findings[] | select(.kind == "stuck") | .count] | add // 0' "$WORK/report.json")
check "finished coroutines are not reported stuck ($stuck stuck)" [ "$stuck" -le 3 ]
main=$(q pdns ".[] | select(.type == \"coro\" and .kind == \"thread\" and .tid == $worker) | .coro")
expect_eq "the resolving thread (pdns's main thread) is running at the end" running \
	"$(q pdns ".[] | select(.type == \"state\" and .coro == $main) | .state")"
expect_eq "the report finds no failure in pdns" "0 0 0" \
	"$(jq -r '.summary.findings | "\(.crash) \(.lost_wakeup) \(.missed_readiness)"' \
		"$WORK/report.json")"
# The views show pdns's unnamed frames by their place in the binary, as addr2line takes them
# once the process is gone: pdns_recursor+0xOFF, never the process's own address.
"$CTP_CAT" --format=text "$WORK/pdns.jsonl.zst" >"$WORK/pdns.txt"
placed=$(grep -c ' at pdns_recursor+0x[0-9a-f]*$' "$WORK/pdns.txt")
check "switches inside pdns read as pdns_recursor+0xOFF in the text view ($placed)" \
	[ "$placed" -ge 300 ]
check "and none as a bare address" bash -c "! grep -q ' at 0x' '$WORK/pdns.txt'"

finish
