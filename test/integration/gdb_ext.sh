# The gdb extension (gdb/ctp.py) in batch mode, on the lost-wakeup server left hanging by its
# client: attached to the live process, then on a core gcore made of it. `ctp coroutines` must
# list the 47 stranded coroutines with their fd and operation, `ctp bt N` unwind one from its
# saved context to sched_wait_readable <- conn_read_line <- conn_main, `ctp switch N` make gdb's
# own bt, frame and info locals show it, and `ctp restore` give back the thread's frames. The
# server must then run on as if gdb had never looked: same registers, same end, same output.
# Then a Boost.Fiber program run under gdb: its fcontext coroutines listed with their C++ names
# shortened (--full-names keeps them), and `ctp bt` / `ctp switch` on the fiber waiting in
# condition_variable::wait unwound from the frame Boost.Context saved.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/report_lib.sh"

CTP_PY=$CTP_SOURCE_DIR/gdb/ctp.py
K=47

if ! command -v gdb >/dev/null || ! command -v gcore >/dev/null; then
	echo "FAIL: gdb and gcore are needed (scripts/deps installs the gdb package)" >&2
	exit 1
fi
# gdb -p needs ptrace: Yama's scope 3 forbids it to all, 1 and 2 to all but CAP_SYS_PTRACE.
scope=$(cat /proc/sys/kernel/yama/ptrace_scope 2>/dev/null || echo 0)
if [ "$scope" -ge 3 ] || { [ "$scope" -ge 1 ] && [ "$(id -u)" -ne 0 ]; }; then
	echo "FAIL: Yama's ptrace_scope is $scope: gdb cannot attach (run as root, or lower" \
		"/proc/sys/kernel/yama/ptrace_scope)" >&2
	exit 1
fi

# gdbx NAME GDB-ARGS...: gdb in batch mode with ctp.py sourced, no init files; its stdout in
# $WORK/NAME.out, stderr in $WORK/NAME.err, its status in $gdb_status.
gdbx() {
	local name=$1
	shift
	gdb_status=0
	timeout 120 gdb -batch -nx -ex "source $CTP_PY" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" ||
		gdb_status=$?
}

# section NAME MARK: the lines of $WORK/NAME.out between `echo @MARK` and the next `@` mark.
section() {
	awk -v m="@$2" '$0 == m {on = 1; next} /^@/ {on = 0} on' "$WORK/$1.out"
}

# functions [N]: the function names of the first N (3) `#N  0x... in NAME (...)` / `#N  NAME (...)`
# lines, joined; C++ template arguments taken out, since they hold spaces and parentheses
# (`wait<std::unique_lock<...> > (this=...`).
functions() {
	grep -E '^#[0-9]+ ' | sed -E 's/^#[0-9]+ +(0x[0-9a-f]+ in )?//; :a; s/<[^<>]*>//; ta; s/[ (].*//' |
		sed -n "1,${1:-3}p" | tr '\n' ' ' | sed 's/ $//'
}

# registers PID: rip and rsp of each thread of PID, as gdb reads them.
registers() {
	timeout 120 gdb -batch -nx -p "$1" -ex 'thread apply all info registers rip rsp orig_rax' \
		2>/dev/null | grep -E '^(Thread|rip|rsp|orig_rax)' | awk '{print $1, $2}'
}

# A coroutine line of `ctp coroutines` stranded on a closed fd.
STRANDED='^#[0-9]+ +ucontext +suspended +[0-9]+ \(LWP [0-9]+\) +read fd [0-9]+ \(closed\) +coro_entry +sched_wait_readable\+0x[0-9a-f]+ \(sched\.c:[0-9]+\)$'

# check_session NAME WHERE FIRST-FRAME: the checks shared by the live and the core session.
# FIRST-FRAME is the number of the coroutine's innermost frame after `ctp switch`: 0 live, where
# the thread's registers are the coroutine's; 1 in a core, whose registers cannot be written.
check_session() {
	local name=$1 where=$2 first=$3
	expect_eq "($where) gdb exits 0" 0 "$gdb_status"
	section "$name" list >"$WORK/$name.list"
	expect_eq "($where) ctp coroutines: the process and its counts" \
		"ctp: process $server, 52 coroutines and threads (4 running, 48 suspended)" \
		"$(head -1 "$WORK/$name.list" | sed 's/; [0-9]* ended, not listed$//')"
	expect_eq "($where) $K coroutines read closed fds in sched_wait_readable, entry coro_entry" \
		$K "$(grep -Ec "$STRANDED" "$WORK/$name.list")"
	expect_eq "($where) the control connection's coroutine reads a live fd" 1 \
		"$(grep -Ec '^#[0-9]+ +ucontext +suspended .* read fd [0-9]+ +coro_entry +sched_wait_readable' "$WORK/$name.list")"
	expect_eq "($where) the main thread and three workers run" \
		"thread running thread running thread running thread running" \
		"$(grep -E '^#[0-9]+ +thread ' "$WORK/$name.list" | awk '{print $2, $3}' | tr '\n' ' ' | sed 's/ $//')"
	expect_eq "($where) the fds it names are those of the first session" "$closed_fds" \
		"$(grep -E "$STRANDED" "$WORK/$name.list" | sed -E 's/.* read fd ([0-9]+) .*/\1/' | sort -n | tr '\n' ' ')"

	section "$name" bt >"$WORK/$name.bt"
	expect_eq "($where) ctp bt $coro: unwound from its saved context" \
		"sched_wait_readable conn_read_line conn_main" "$(functions 3 <"$WORK/$name.bt")"
	check "($where) ctp bt $coro: its frame #0 has sched.c and a line" \
		grep -Eq '^#0 +0x[0-9a-f]+ in sched_wait_readable \(.*\) at .*sched\.c:[0-9]+$' "$WORK/$name.bt"
	expect_eq "($where) ctp bt $coro 2: two frames" 2 \
		"$(section "$name" bt2 | grep -c '^#')"

	section "$name" switched >"$WORK/$name.switched"
	check "($where) ctp switch says so" \
		grep -q "^ctp: switched to coroutine $coro: " "$WORK/$name.switched"
	section "$name" switched_bt >"$WORK/$name.switched_bt"
	expect_eq "($where) then gdb's bt: the coroutine's frames from #$first" \
		"sched_wait_readable conn_read_line conn_main" \
		"$(grep -E "^#([$first-9]|[1-9][0-9])" "$WORK/$name.switched_bt" | functions 3)"
	expect_eq "($where) gdb's frame $((first + 2)) is conn_main" conn_main \
		"$(section "$name" frame | functions 1)"
	check "($where) info locals there shows conn_main's line buffer" \
		grep -q '^line = "' <(section "$name" locals)

	section "$name" restored >"$WORK/$name.restored"
	check "($where) ctp restore says so" \
		grep -q "^ctp: back from coroutine $coro to thread 1's own frames" "$WORK/$name.restored"
	section "$name" restored_bt >"$WORK/$name.restored_bt"
	expect_eq "($where) then bt is the main thread's own: epoll_wait in its poll loop in main" \
		"epoll_wait epoll_wait sched_poll main" "$(functions 4 <"$WORK/$name.restored_bt")"
	check "($where) no coroutine frame is left in it" \
		bash -c "! grep -q sched_wait_readable '$WORK/$name.restored_bt'"
}

hang_example
server=$(pgrep -P $run_pid -x server)
regs_before=$(registers "$server")
check "gdb reads the server's registers" grep -q '^rsp 0x' <<<"$regs_before"

# --- Live: attached with gdb -p ------------------------------------------------------------------
blocks_before=$(segment_blocks "$server")
gdbx probe -p "$server" -ex 'echo @list\n' -ex 'ctp coroutines'
expect_eq "ctp coroutines added no memory to the server's segment (blocks)" "$blocks_before" \
	"$(segment_blocks "$server")"
closed_fds=$(section probe list | grep -E "$STRANDED" | sed -E 's/.* read fd ([0-9]+) .*/\1/' |
	sort -n | tr '\n' ' ')
coro=$(section probe list | grep -E "$STRANDED" | sed -n 1p | sed -E 's/^#([0-9]+) .*/\1/')
check "a stranded coroutine to look at ($coro)" test -n "$coro"

session() {
	gdbx "$1" "${@:2}" \
		-ex 'echo @list\n' -ex 'ctp coroutines' \
		-ex 'echo @bt\n' -ex "ctp bt $coro" \
		-ex 'echo @bt2\n' -ex "ctp bt $coro 2" \
		-ex 'echo @switched\n' -ex "ctp switch $coro" -ex 'echo @switched_bt\n' -ex 'bt' \
		-ex 'echo @frame\n' -ex "frame $((first + 2))" \
		-ex 'echo @locals\n' -ex 'info locals' \
		-ex 'echo @restored\n' -ex 'ctp restore' -ex 'echo @restored_bt\n' -ex 'bt'
}
first=0
session live -p "$server"
check_session live live 0
expect_eq "the server's registers are its own again" "$regs_before" "$(registers "$server")"

# gdb leaving while switched (no ctp restore) puts the registers back before it detaches.
gdbx leave -p "$server" -ex "ctp switch $coro"
check "(leave) switched" grep -q "^ctp: switched to coroutine $coro" "$WORK/leave.out"
expect_eq "(leave) the registers are the server's own after gdb left" "$regs_before" \
	"$(registers "$server")"

# Auto-load: gdb loads the copy beside the preload once its directory is a safe path.
st=0
timeout 120 gdb -batch -nx -iex "add-auto-load-safe-path $CTP_BUILD_DIR/preload" -p "$server" \
	-ex 'ctp coroutines' >"$WORK/auto.out" 2>"$WORK/auto.err" || st=$?
expect_eq "(auto-load) gdb exits 0" 0 "$st"
expect_eq "(auto-load) ctp coroutines works without source" $K \
	"$(grep -Ec "$STRANDED" "$WORK/auto.out")"

# --- Errors --------------------------------------------------------------------------------------
gdbx errors -p "$server" -ex 'ctp bt 999999' -ex 'ctp bt 1' -ex 'ctp restore' -ex 'ctp bt x' \
	-ex 'ctp switch'
check "(errors) an unknown id" grep -q '^ctp: no coroutine 999999 in this process' "$WORK/errors.err"
check "(errors) a running coroutine: its thread's stack" \
	grep -q "^ctp: coroutine 1 is running on thread 1 (LWP $server): its stack is the thread's (\`thread 1\`, then \`bt\`)" \
	"$WORK/errors.err"
check "(errors) restore without a switch" grep -q '^ctp: not switched to a coroutine' "$WORK/errors.err"
check "(errors) not an id" grep -q '^not a coroutine id: x' "$WORK/errors.err"
check "(errors) usage" grep -q '^usage: ctp switch N' "$WORK/errors.err"
sleep 60 &
untraced=$!
at_exit kill $untraced
gdbx untraced -p $untraced -ex 'ctp coroutines'
check "(errors) an untraced process" \
	grep -q "^ctp: process $untraced is not traced by ctp (no /memfd:ctp-segment mapping)" \
	"$WORK/untraced.err"

# --- A core of the hanging server --------------------------------------------------------------
gcore_status=0
gcore -o "$WORK/core" "$server" >"$WORK/gcore.out" 2>&1 || gcore_status=$?
expect_eq "gcore dumps the hanging server" 0 "$gcore_status"
first=1
session core "$EXAMPLE/server" "$WORK/core.$server"
check_session core core 1
check "(core) ctp switch says frame #0 stays the thread's" \
	grep -q "cannot be written here (a core file): frame #0 stays thread 1's" "$WORK/core.switched"
check "(core) and bt names it so" \
	grep -Eq "^#0 +0x[0-9a-f]+ in \[thread 1's own frame; coroutine $coro starts at #1\]" \
	"$WORK/core.switched_bt"
expect_eq "the server's registers are still its own after gcore" "$regs_before" \
	"$(registers "$server")"

# --- The server ends as it would have ----------------------------------------------------------
end_hung_example
expect_eq "gdb named exactly the fds the server stranded" "$stranded" "$closed_fds"
check "the server's last line is unchanged" grep -q "^server: stopped; $K coroutines stranded$" \
	"$WORK/lw.out"

# --- Boost.Fiber: fcontext coroutines, under gdb from the start --------------------------------
# boost_fiber_channels under the plain LD_PRELOAD, stopped where it leaves (_Exit) with two
# fibers suspended: the waiter in condition_variable::wait and the scheduler's dispatcher. Their
# registers are in the frames Boost.Context saved (CTP.md "Saved contexts"), so `ctp bt` on the
# waiter is the real-runtime check of that layout. Boost names are mostly template arguments:
# the table shortens them, and --full-names keeps them.
CTP_OUTPUT=$WORK/fib.zst gdbx fib -iex 'set auto-load off' -ex 'set breakpoint pending on' \
	-ex "set environment LD_PRELOAD=$CTP_BUILD_DIR/preload/libctp_preload.so" \
	-ex 'break _Exit' -ex run \
	-ex 'echo @list\n' -ex 'ctp coroutines' \
	-ex 'echo @full\n' -ex 'ctp coroutines --full-names' -ex kill \
	"$PROGRAMS/boost_fiber_channels"
expect_eq "(fiber) gdb exits 0" 0 "$gdb_status"
WAITER='^#[0-9]+ +fcontext +suspended +1 \(LWP [0-9]+\) +- +boost::context::detail::fiber_entry<\.\.\.>\(boost::context::detail::transfer_t\) +boost::fibers::context::resume\(std::unique_lock<\.\.\.>&\)\+0x[0-9a-f]+$'
section fib list >"$WORK/fib.list"
expect_eq "(fiber) ctp coroutines: the waiter, its names shortened" 1 \
	"$(grep -Ec "$WAITER" "$WORK/fib.list")"
expect_eq "(fiber) and two fcontext coroutines suspended in all" 2 \
	"$(grep -Ec '^#[0-9]+ +fcontext +suspended ' "$WORK/fib.list")"
expect_eq "(fiber) --full-names: the entry function with its template arguments" 1 \
	"$(section fib full | grep -c 'fiber_entry<boost::context::detail::fiber_record<boost::context::fiber, ')"
waiter=$(grep -E "$WAITER" "$WORK/fib.list" | sed -E 's/^#([0-9]+) .*/\1/')
check "(fiber) the waiter's id ($waiter)" test -n "$waiter"

CTP_OUTPUT=$WORK/fib2.zst gdbx fibbt -iex 'set auto-load off' -ex 'set breakpoint pending on' \
	-ex "set environment LD_PRELOAD=$CTP_BUILD_DIR/preload/libctp_preload.so" \
	-ex 'break _Exit' -ex run \
	-ex 'echo @bt\n' -ex "ctp bt $waiter 6" \
	-ex "ctp switch $waiter" -ex 'echo @switched_bt\n' -ex 'bt 6' \
	-ex 'echo @restored_bt\n' -ex 'ctp restore' -ex 'bt 1' -ex kill \
	"$PROGRAMS/boost_fiber_channels"
expect_eq "(fiber) gdb exits 0 (bt)" 0 "$gdb_status"
# From the saved fcontext frame: the resume that switched away, Boost's three wait templates,
# then the fiber's own function.
expect_eq "(fiber) ctp bt: unwound from the saved fcontext to wait_forever" \
	"boost::fibers::context::resume boost::fibers::condition_variable_any::wait boost::fibers::condition_variable_any::wait boost::fibers::condition_variable::wait wait_forever std::__invoke_impl" \
	"$(section fibbt bt | functions 6)"
expect_eq "(fiber) ctp switch, then gdb's bt: the same frames" \
	"$(section fibbt bt | functions 6)" "$(section fibbt switched_bt | functions 6)"
expect_eq "(fiber) ctp restore: the thread's own frame again" _Exit \
	"$(section fibbt restored_bt | functions 1)"
finish
