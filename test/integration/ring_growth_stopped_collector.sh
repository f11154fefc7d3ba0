# A collector that does not run for a while (stopped here; on a busy machine, one that waits for
# a CPU) loses no switch of a thread that fits its records in the biggest ring: the thread moves
# up from 256 KiB to 4 MiB to 16 MiB as each fills (half, then seven-eighths) unread. 100,000 ucontext round trips
# write ~9.6 MB, which a 4 MiB ring could not hold. The collector, stopped before the program
# starts switching and continued after it has exited, then writes every one of them.
source "$(dirname "$0")/lib.sh"

ROUNDS=100000
mkfifo "$WORK/go" "$WORK/done"
run_status=0
"$CTP_RUN" -o "$WORK/st.jsonl.zst" -- sh -c \
	'read go <"$1" && "$2" "$3"; echo "exit $?" >"$4"' sh \
	"$WORK/go" "$PROGRAMS/ucontext_pingpong" "$ROUNDS" "$WORK/done" \
	>"$WORK/st.out" 2>"$WORK/st.err" &
run_pid=$!
# Opening the fifo waits for the shell's read: by then ctp-run has its collector running.
exec 3>"$WORK/go"
collector=$(pgrep -P "$run_pid" -x ctp-collector)
kill -STOP "$collector"
at_exit kill -CONT "$collector"
echo go >&3
exec 3>&-
read -r program_exit <"$WORK/done"
expect_eq "the program ran to its end with the collector stopped" "exit 0" "$program_exit"
kill -CONT "$collector"
wait "$run_pid" || run_status=$?
expect_eq "ctp-run exits with the program's status" 0 "$run_status"
check "the program's output is its own" grep -qx "pings $((ROUNDS + 1)) pongs $ROUNDS" "$WORK/st.out"

cat_status=0
"$CTP_CAT" "$WORK/st.jsonl.zst" >"$WORK/st.jsonl" || cat_status=$?
expect_eq "ctp-cat reads the trace whole" 0 "$cat_status"
pid=$(jq -r 'select(.type == "process" and (.exe | endswith("/ucontext_pingpong"))) | .pid' \
	"$WORK/st.jsonl")
expect_eq "every switch recorded, none lost: 2 x (rounds + 1) switches, no loss line" \
	"$((2 * (ROUNDS + 1))):0" \
	"$(q st "[.[] | select(.pid == ${pid:-0})] |
		\"\([.[] | select(.type == \"switch\")] | length):\([.[] | select(.type == \"loss\")] | length)\"")"
finish
