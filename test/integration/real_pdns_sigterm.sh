# pdns-recursor stopped the usual way, with SIGTERM (what systemd and `kill` send), untraced and
# traced: it ends the same way both times, and the trace makes an end of it, not a crash (no
# fault address in its exit line, no CRASH in --report, which does not exit 3).
source "$(dirname "$0")/lib.sh"

pdns=/usr/sbin/pdns_recursor
dns=$CTP_SOURCE_DIR/test/integration/dns_responder.py
zone=ctp.test
pids=()
stop_all() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
}
at_exit stop_all

python3 "$dns" serve "$WORK/upstream.port" $zone >"$WORK/upstream.out" &
pids+=($!)
for _ in $(seq 100); do [ -s "$WORK/upstream.port" ] && break; sleep 0.1; done
check "the responder is up" test -s "$WORK/upstream.port"
q_port=$(cat "$WORK/upstream.port")

# run NAME [ctp-run -o TRACE --]: starts pdns, waits until it answers, asks 20 names, sends
# SIGTERM to the process started (pdns itself, or ctp-run, which forwards it) and records how it
# ended in $WORK/NAME.status.
run() {
	local name=$1
	shift
	local conf=$WORK/$name.conf port
	mkdir -p "$conf"
	port=$(python3 "$dns" freeport)
	"$@" $pdns --daemon=no --local-address=127.0.0.1 --local-port="$port" \
		--config-dir="$conf" --socket-dir="$conf" \
		--forward-zones-recurse=.=127.0.0.1:"$q_port" --threads=1 --dnssec=off \
		--security-poll-suffix= >"$WORK/$name.out" 2>&1 &
	local p=$! up=no
	pids+=($p)
	for _ in $(seq 300); do
		if [ "$(python3 "$dns" ask "$port" $zone 1 probe | cut -d' ' -f2)" == \
			"$(python3 "$dns" expect $zone probe | cut -d' ' -f2)" ]; then
			up=yes
			break
		fi
		kill -0 $p 2>/dev/null || break
		sleep 0.1
	done
	check "$name: pdns answers" [ $up = yes ]
	[ $up = yes ] || sed 's/^/    pdns: /' "$WORK/$name.out" >&2
	python3 "$dns" ask "$port" $zone 20 $(seq -f n%g 1 20) >"$WORK/$name.got"
	kill -TERM $p
	local status=0
	wait $p || status=$?
	echo $status >"$WORK/$name.status"
}

run untraced
run traced "$CTP_RUN" -o "$WORK/pdns.jsonl.zst" --
expect_eq "traced, pdns ends as untraced on SIGTERM" "$(cat "$WORK/untraced.status")" \
	"$(cat "$WORK/traced.status")"
expect_eq "both answered the same" "$(md5sum <"$WORK/untraced.got")" "$(md5sum <"$WORK/traced.got")"

"$CTP_CAT" "$WORK/pdns.jsonl.zst" >"$WORK/pdns.jsonl"
pid=$(q pdns '[.[] | select(.type == "process" and (.exe | endswith("pdns_recursor")))][0].pid')
expect_eq "its exit line carries no fault address" "null" \
	"$(q pdns "[.[] | select(.type == \"exit\" and .pid == $pid)][0].addr")"
report_status=0
"$CTP_CAT" --report "$WORK/pdns.jsonl.zst" >"$WORK/report.txt" 2>&1 || report_status=$?
check "--report does not exit 3 (got $report_status)" [ "$report_status" -ne 3 ]
check "--report prints no CRASH" bash -c "! grep -q CRASH '$WORK/report.txt'"
finish
