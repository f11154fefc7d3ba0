# The largest environment execve and posix_spawn take (exec_env_limit.c), traced and not: the
# same. Before, the tracer's variables (LD_PRELOAD, CTP_SOCKET, CTP_CORO_BASE), put back into an
# environment the program made, took a few hundred bytes of the kernel's limit, and an exec
# that starts untraced failed with E2BIG traced; now it is made again with the program's own
# environment, untraced, and ctp says so.
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
compare exec_env_limit --expect "exit 0" -- "$TP_BIN/exec_env_limit"
check "exec_env_limit: untraced, both limits found" \
	test "$(grep -c '^[a-z_]*: largest environment [0-9]* bytes$' "$WORK/exec_env_limit.native.out")" = 2
for mode in "${TP_MODES[@]}"; do
	check "exec_env_limit $mode: ctp says when it starts one with the program's environment" \
		grep -q "^ctp: the tracer's variables make the environment too large to start /bin/true (E2BIG): trying again with the program's own, untraced$" \
		"$WORK/exec_env_limit.$mode.err"
done
finish
