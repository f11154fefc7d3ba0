# Whole process trees: fork, posix_spawn, vfork + exec with a bare environment, and exec, each
# traced into the same trace with its own pid and a process line naming its parent; the
# preload's own fds survive a program that closes every fd and dup2s over the high ones; and
# the plain LD_PRELOAD form writes ctp-<pid>.jsonl.zst by itself, or where CTP_OUTPUT says.
source "$(dirname "$0")/lib.sh"

cd "$WORK"
trace tree -- "$PROGRAMS/tree_parent" "$PROGRAMS/tree_child"
expect_eq "ctp-run exits as the last image did (tree_child exec 2)" 2 "$status"
pid_of() { sed -n "s/^pid $1 //p" "$WORK/tree.out"; }
parent=$(pid_of exec)

# switches of one pid (all its images)
switches() { q tree "[.[] | select(.type == \"switch\" and .pid == $1)] | length"; }
expect_eq "the parent's switches, made after it closed every fd: 10, plus 4 by its exec'd image" \
	14 "$(switches "$parent")"
expect_eq "the fork child is its own process, child of the parent" "$parent" \
	"$(q tree ".[] | select(.type == \"process\" and .pid == $(pid_of fork)) | .ppid")"
expect_eq "the fork child's own 6 switches are under its pid" 6 "$(switches "$(pid_of fork)")"
expect_eq "the fork child's exit status" 4 \
	"$(q tree ".[] | select(.type == \"exit\" and .pid == $(pid_of fork)) | .status")"
expect_eq "the posix_spawn child is traced: 14 switches" 14 "$(switches "$(pid_of spawn)")"
expect_eq "the posix_spawn child's exe and parent" "$PROGRAMS/tree_child $parent" \
	"$(q tree ".[] | select(.type == \"process\" and .pid == $(pid_of spawn)) | \"\(.exe) \(.ppid)\"")"
expect_eq "the vfork child, exec'd with an environment without LD_PRELOAD, is traced: 18" 18 \
	"$(switches "$(pid_of vfork)")"
expect_eq "the exec'd image says hello under the same pid" 2 \
	"$(q tree "[.[] | select(.type == \"process\" and .pid == $parent)] | length")"
expect_eq "coroutine ids stay unique within the pid across exec" 0 \
	"$(q tree "[.[] | select(.type == \"coro\" and .pid == $parent) | .coro] | (length - (unique | length))")"
expect_eq "the vfork child wrote nothing into its parent's trace (each pid, one exit line)" 4 \
	"$(q tree "[.[] | select(.type == \"exit\")] | length")"
expect_eq "no loss" 0 "$(q tree '[.[] | select(.type == "loss") | .count] | add // 0')"
# The report: the parent's first image was replaced by its exec, though its children's lines
# came between its two process lines; every process ended.
report_status=0
"$CTP_CAT" --report "$WORK/tree.jsonl.zst" >"$WORK/tree.report" || report_status=$?
ended=$(grep -c '^  5 processes (4 ended, 0 by a signal)' "$WORK/tree.report" || true)
no_exit=$(grep -c 'has no exit' "$WORK/tree.report" || true)
expect_eq "the report reads the tree, every process ended, none said to have no exit" \
	"0 1 0" "$report_status $ended $no_exit"

# The plain form: no ctp-run, the preload starts its own collector.
plain_run plain --env CTP_OUTPUT= -- "$PROGRAMS/tree_child" plain 3
expect_eq "the plain form leaves the app's status alone" "exit 3" "$status"
plain=$(ls "$WORK"/ctp-*.jsonl.zst 2>/dev/null | head -n 1)
check "the plain form wrote ctp-<pid>.jsonl.zst in the working directory" [ -n "$plain" ]
st=0
"$CTP_CAT" "${plain:-none}" >"$WORK/plain.jsonl" || st=$?
expect_eq "its trace reads whole" 0 "$st"
expect_eq "with every switch in it" 6 "$(lines -c '"type":"switch"' "$WORK/plain.jsonl")"
check "and said so on stderr" grep -q "tracing to ctp-" "$WORK/plain.err"
plain_trace named -- "$PROGRAMS/tree_child" named 1
expect_eq "the plain form with CTP_OUTPUT leaves the app's status alone" "exit 1" "$status"
expect_eq "with every switch in it" 2 "$(lines -c '"type":"switch"' "$WORK/named.jsonl")"
finish
