# Shared part of the export tests (export_sqlite.sh, export_postgres.sh, export_mysql.sh): the
# traces they export and the checks they make, the same for every database. Sourced after lib.sh
# by a script that defines:
#   DB_NAME           how the output names the database
#   export_to ARGS    runs ctp-cat with the export option and ARGS (FILE, --replace)
#   sql QUERY         prints the result rows, columns tab-separated, nothing else
#   hex EXPR          the SQL for EXPR's UTF-8 bytes as lower-case hex
# Every check compares the database with jq over the same trace.

# A name that needs every kind of quoting: quotes, a backslash, a tab, a newline, non-ASCII.
ODD=$'it\'s "odd" \\ tab\there\nnew line é'

# hexstr STRING: its bytes as lower-case hex, as the databases print them.
hexstr() {
	printf '%s' "$1" | od -An -tx1 -v | tr -d ' \n'
}

# The traces: a ping-pong run from a directory and with arguments named with $ODD (its exe and
# the module of its frames hold it), and a bigger one for the speed.
export_make_traces() {
	local dir="$WORK/$ODD"
	mkdir -p "$dir"
	cp "$PROGRAMS/ucontext_pingpong" "$dir/"
	ODD_EXE="$dir/ucontext_pingpong"
	trace odd -- "$ODD_EXE" 300 0 "$ODD" "a'b" 'c"d' 'e\f' $'g\th' $'i\nj'
	expect_eq "the odd program ran" 0 "$status"
	trace other -- "$PROGRAMS/ucontext_pingpong" 20
	# A live snapshot in the middle of a run (ctp-cat --snapshot): five coroutines parked on a
	# pipe, looked at while they wait; then the run ends, and the trace has their final states
	# too.
	mkfifo "$WORK/snap.hold"
	"$CTP_RUN" -o "$WORK/snap.jsonl.zst" -- "$PROGRAMS/pstack_parked" 5 <"$WORK/snap.hold" \
		>"$WORK/snap.out" 2>"$WORK/snap.err" &
	local parked=$!
	exec 8>"$WORK/snap.hold" # the program parks until this closes
	wait_line "$WORK/snap.out" '^parked 5'
	check "a snapshot of the parked run is asked for" "$CTP_CAT" --snapshot "$WORK/snap.jsonl.zst"
	check "and is in the live trace" wait_until 30 snapshot_written
	exec 8>&-
	local parked_status=0
	wait $parked || parked_status=$?
	expect_eq "the parked run ended by itself" 0 "$parked_status"
	"$CTP_CAT" "$WORK/snap.jsonl.zst" >"$WORK/snap.jsonl"
	# Findings: the lost-wakeup example (report_lib.sh), which strands coroutines.
	example lw
	report lw
	expect_eq "the lost-wakeup trace's report fails (exit 3)" 3 "$report_status"
	# About a million and a half switches (some may be counted as lost: the checks use what the trace
	# holds).
	"$CTP_RUN" -o "$WORK/big.jsonl.zst" -- "$PROGRAMS/ucontext_pingpong" "${BIG_ROUNDS:-750000}" \
		>/dev/null 2>&1
}

snapshot_written() {
	{ "$CTP_CAT" "$WORK/snap.jsonl.zst" 2>/dev/null || true; } | grep -q '^{"type":"snapshot"'
}

# count NAME TYPE: lines of TYPE in the decoded trace NAME.
count() {
	q "$1" "[.[] | select(.type == \"$2\")] | length"
}

export_checks() {
	# A database an earlier version made: its process_exits has no ts column yet.
	sql "CREATE TABLE process_exits (trace_id BIGINT NOT NULL, pid BIGINT, status BIGINT,
		signo BIGINT, tid BIGINT, coro BIGINT, addr TEXT)"
	# Speed first, into the otherwise empty database: the indexes are built after the rows.
	local err="$WORK/big.export.err"
	check "$DB_NAME: export of the big trace succeeds" export_to "$WORK/big.jsonl.zst" 2>"$err"
	echo "speed: $DB_NAME: $(grep -o 'exported as.*' "$err")"
	check "$DB_NAME: the table an earlier version made gets the column added since, and says so" \
		grep -q "added column process_exits.ts (the table was made by an earlier version)" "$err"
	expect_eq "$DB_NAME: big trace switch rows" \
		"$(zstd -dc "$WORK/big.jsonl.zst" | grep -c '^{"type":"switch"')" \
		"$(sql 'SELECT COUNT(*) FROM switches WHERE trace_id = 1')"

	check "$DB_NAME: export of the odd trace succeeds" export_to "$WORK/odd.jsonl.zst" \
		2>"$WORK/odd.export.err"
	check "$DB_NAME: and adds no column again" \
		bash -c '! grep -q "added column" "$1"' sh "$WORK/odd.export.err"
	local id
	id=$(sql "SELECT trace_id FROM traces WHERE file = '$WORK/odd.jsonl.zst'")
	expect_eq "$DB_NAME: the odd trace is trace 2" 2 "$id"
	local t="trace_id = $id"

	# Row counts against the trace.
	expect_eq "$DB_NAME: processes" "$(count odd process)" \
		"$(sql "SELECT COUNT(*) FROM processes WHERE $t")"
	expect_eq "$DB_NAME: coroutines" "$(count odd coro)" \
		"$(sql "SELECT COUNT(*) FROM coroutines WHERE $t")"
	expect_eq "$DB_NAME: switches" "$(count odd switch)" \
		"$(sql "SELECT COUNT(*) FROM switches WHERE $t")"
	expect_eq "$DB_NAME: stacks" "$(count odd stack)" \
		"$(sql "SELECT COUNT(*) FROM stacks WHERE $t")"
	expect_eq "$DB_NAME: frames" "$(q odd '[.[] | select(.type == "stack") | .frames[]] | length')" \
		"$(sql "SELECT COUNT(*) FROM frames WHERE $t")"
	expect_eq "$DB_NAME: fd events" "$(count odd fd)" \
		"$(sql "SELECT COUNT(*) FROM fd_events WHERE $t")"
	expect_eq "$DB_NAME: final states" "$(count odd state)" \
		"$(sql "SELECT COUNT(*) FROM final_states WHERE $t")"
	expect_eq "$DB_NAME: coroutine ends, by how they ended" \
		"$(q odd '[.[] | select(.type == "coro_end") | "\(.how) \(.switch // "")"] | group_by(.)
			| map("\(.[0]) \(length)") | .[]' | sed 's/  / /')" \
		"$(sql "SELECT how, switch_how, COUNT(*) FROM coro_ends WHERE $t GROUP BY how, switch_how
			ORDER BY how" | tr '\t' ' ' | sed 's/ NULL / /; s/ \\N / /; s/  / /')"
	expect_eq "$DB_NAME: process exits" "$(count odd exit)" \
		"$(sql "SELECT COUNT(*) FROM process_exits WHERE $t")"
	expect_eq "$DB_NAME: each exit with its status and time" \
		"$(q odd '.[] | select(.type == "exit") | "\(.pid) \(.status) \(.ts)"')" \
		"$(sql "SELECT pid, status, ts FROM process_exits WHERE $t" | tr '\t' ' ')"
	expect_eq "$DB_NAME: argv entries" "$(q odd '[.[] | select(.type == "process") | .argv[]] | length')" \
		"$(sql "SELECT COUNT(*) FROM process_args WHERE $t")"
	expect_eq "$DB_NAME: the trace's line count" "$(q odd length)" \
		"$(sql "SELECT line_count FROM traces WHERE $t")"

	# Names that need quoting come back byte for byte.
	expect_eq "$DB_NAME: exe round-trips" "$(q odd '.[] | select(.type == "process") | .exe | @base64' |
		base64 -d | od -An -tx1 -v | tr -d ' \n')" \
		"$(sql "SELECT $(hex exe) FROM processes WHERE $t")"
	local i arg
	for i in 3 4 5 6 7 8; do
		arg=$(q odd ".[] | select(.type == \"process\") | .argv[$i] | @base64" | base64 -d | od -An -tx1 -v | tr -d ' \n')
		expect_eq "$DB_NAME: argv[$i] round-trips" "$arg" \
			"$(sql "SELECT $(hex arg) FROM process_args WHERE $t AND idx = $i")"
	done
	expect_eq "$DB_NAME: frames in the odd module" \
		"$(q odd "[.[] | select(.type == \"stack\") | .frames[] | select(.module == $(jq -n --arg m "$ODD_EXE" '$m'))] | length")" \
		"$(sql "SELECT COUNT(*) FROM frames WHERE $t AND $(hex module) = '$(hexstr "$ODD_EXE")'")"
	# The module lines, which place a frame in its file after the run (addr - bias).
	expect_eq "$DB_NAME: modules" "$(count odd module)" \
		"$(sql "SELECT COUNT(*) FROM modules WHERE $t")"
	expect_eq "$DB_NAME: the odd program's module: its build-id, bias and range" \
		"$(q odd ".[] | select(.type == \"module\" and .path == $(jq -n --arg m "$ODD_EXE" '$m'))
			| \"\(.build_id) \(.bias) \(.lo) \(.hi)\"")" \
		"$(sql "SELECT build_id, bias, lo, hi FROM modules WHERE $t AND $(hex path) = '$(hexstr "$ODD_EXE")'" |
			tr '\t' ' ')"

	# The questions the indexes are for.
	local co pid
	co=$(q odd '.[] | select(.type == "coro" and .kind == "ucontext") | .coro')
	pid=$(q odd '.[] | select(.type == "process") | .pid')
	expect_eq "$DB_NAME: one coroutine's switches in order" \
		"$(q odd "[.[] | select(.type == \"switch\" and (.from == $co or .to == $co))
			| \"\(.ts) \(.from) \(.to) \(.how)\"] | join(\"\n\")" | md5sum)" \
		"$(sql "SELECT ts, from_coro, to_coro, how FROM switches
			WHERE $t AND pid = $pid AND (from_coro = $co OR to_coro = $co) ORDER BY ts" |
			tr '\t' ' ' | md5sum)"
	expect_eq "$DB_NAME: the coroutine's final state" \
		"$(q odd ".[] | select(.type == \"state\" and .coro == $co) | \"\(.state) \(.switches)\"")" \
		"$(sql "SELECT state, switches FROM final_states WHERE $t AND pid = $pid AND coro = $co" |
			tr '\t' ' ')"
	local st
	st=$(q odd '[.[] | select(.type == "switch" and .stack != null)][0].stack')
	expect_eq "$DB_NAME: the frames of stack $st" \
		"$(q odd ".[] | select(.type == \"stack\" and .id == $st) | .frames[] | \"\(.addr) \(.sym // \"\")\"" |
			sed 's/ $//' | md5sum)" \
		"$(sql "SELECT addr, sym FROM frames WHERE $t AND pid = $pid AND stack = $st ORDER BY idx" |
			tr '\t' ' ' | sed 's/ $//; s/ NULL$//; s/ \\N$//' | md5sum)"

	# Exporting the same trace again is refused and changes nothing; --replace replaces it.
	local before
	before=$(sql "SELECT COUNT(*) FROM switches")
	local rc=0
	export_to "$WORK/odd.jsonl.zst" 2>"$WORK/again.err" || rc=$?
	expect_eq "$DB_NAME: re-export exits with 2" 2 "$rc"
	check "$DB_NAME: re-export says why" grep -q "exported before, as trace_id $id" \
		"$WORK/again.err"
	expect_eq "$DB_NAME: re-export added nothing" "$before" "$(sql "SELECT COUNT(*) FROM switches")"
	check "$DB_NAME: --replace succeeds" export_to "$WORK/odd.jsonl.zst" --replace
	expect_eq "$DB_NAME: --replace keeps the trace_id and one row per trace" "2 $id" \
		"$(sql "SELECT COUNT(*) FROM traces" | tr -d ' ') $(sql "SELECT trace_id FROM traces WHERE $t")"
	expect_eq "$DB_NAME: --replace leaves the same rows" "$before" \
		"$(sql "SELECT COUNT(*) FROM switches")"

	# Another trace gets its own id and its own rows.
	check "$DB_NAME: a second trace exports" export_to "$WORK/other.jsonl.zst"
	expect_eq "$DB_NAME: its switches" "$(count other switch)" \
		"$(sql "SELECT COUNT(*) FROM switches WHERE trace_id = 3")"

	# The findings are the report's.
	check "$DB_NAME: the lost-wakeup trace exports" export_to "$WORK/lw.jsonl.zst"
	expect_eq "$DB_NAME: fd events of the lost-wakeup trace" "$(count lw fd)" \
		"$(sql "SELECT COUNT(*) FROM fd_events WHERE trace_id = 4")"
	local fpid ffd
	read -r fpid ffd < <(q lw '[.[] | select(.type == "fd")][0] | "\(.pid) \(.fd)"')
	expect_eq "$DB_NAME: one fd's history in order" \
		"$(q lw "[.[] | select(.type == \"fd\" and .pid == $fpid and .fd == $ffd)] | sort_by(.ts) | .[] | \"\(.ts) \(.event)\"" | md5sum)" \
		"$(sql "SELECT ts, event FROM fd_events WHERE trace_id = 4 AND pid = $fpid AND fd = $ffd
			ORDER BY ts" | tr '\t' ' ' | md5sum)"
	expect_eq "$DB_NAME: findings by kind" \
		"$(jq -r '.findings | group_by(.kind) | map("\(.[0].kind) \(length)") | .[]' "$WORK/lw.json")" \
		"$(sql "SELECT kind, COUNT(*) FROM findings WHERE trace_id = 4 GROUP BY kind ORDER BY kind" |
			tr '\t' ' ')"
	expect_eq "$DB_NAME: the fds of the lost wakeups" \
		"$(jq -r '[.findings[] | select(.kind == "lost_wakeup") | .fd] | sort | .[]' "$WORK/lw.json")" \
		"$(sql "SELECT fd FROM findings WHERE trace_id = 4 AND kind = 'lost_wakeup' ORDER BY fd")"
	expect_eq "$DB_NAME: group members" \
		"$(jq '[.findings[] | select(.kind == "stuck" or .kind == "leak") | .count] | add // 0' "$WORK/lw.json")" \
		"$(sql "SELECT COUNT(*) FROM finding_members WHERE trace_id = 4")"

	# A live snapshot's states are kept apart from the final ones.
	check "$DB_NAME: export of the trace with a snapshot succeeds" export_to "$WORK/snap.jsonl.zst"
	local ts="trace_id = $(sql "SELECT trace_id FROM traces WHERE file = '$WORK/snap.jsonl.zst'")"
	expect_eq "$DB_NAME: the snapshot, with its process, time and count of states" \
		"$(q snap '.[] | select(.type == "snapshot") | "0 \(.pid) \(.ts) \(.states)"')" \
		"$(sql "SELECT snapshot, pid, ts, states FROM snapshots WHERE $ts" | tr '\t' ' ')"
	expect_eq "$DB_NAME: its states, each coroutine's as it was then" \
		"$(q snap '.[] | select(.type == "snapshot") | .states') suspended:read:5" \
		"$(sql "SELECT COUNT(*) FROM snapshot_states WHERE $ts") $(sql "SELECT state, wait_op,
			COUNT(*) FROM snapshot_states WHERE $ts AND state = 'suspended' GROUP BY state, wait_op" |
			tr '\t' ':')"
	expect_eq "$DB_NAME: and one final state for each coroutine, not two" \
		"$(count snap coro) 1" \
		"$(sql "SELECT COUNT(*) FROM final_states WHERE $ts") $(sql "SELECT MAX(n) FROM (SELECT COUNT(*) AS n
			FROM final_states WHERE $ts GROUP BY pid, coro) AS per_coro")"
}
