# The dashboard (ctp-cat --html) on real traces, loaded in headless Chromium: the page must load
# without a single console message or page error, show the trace's own counts (checked against
# jq over the same trace), list every coroutine, group the stuck ones, and keep trace strings as
# text even when they hold markup. A screenshot of each page is kept in the build tree.
source "$(dirname "$0")/lib.sh"

CHECK=(python3 "$CTP_SOURCE_DIR/test/dashboard/check_page.py")
ARTIFACTS=$CTP_BUILD_DIR/test/dashboard
mkdir -p "$ARTIFACTS"
if ! command -v "${CHROMIUM:-chromium}" >/dev/null; then
	echo "FAIL: chromium is not installed (scripts/deps installs it)" >&2
	exit 1
fi

# counts NAME: the --expect arguments for the counts jq finds in trace NAME.
counts() {
	local coros
	coros=$(q "$1" '[.[] | select(.type == "coro")] | length')
	echo "--expect processes=$(q "$1" '[.[] | select(.type == "process")] | length')" \
		"--expect coroutines=$coros --expect rows=$coros" \
		"--expect threads=$(q "$1" '[.[] | select(.type == "coro" and .kind == "thread")] | length')" \
		"--expect switches=$(q "$1" '[.[] | select(.type == "switch")] | length')" \
		"--expect lost=$(q "$1" '[.[] | select(.type == "loss") | .count] | add // 0')"
}

# An M:N scheduler on two threads with three coroutines that wait forever in wait_for_reply.
# Its last argument, which the program ignores, tries to end the page's data block and smuggle
# in an element: it must show up as text, and no element may come of it.
EVIL='</script><b id="injected">x</b><!-- <script>'
trace mn -- "$PROGRAMS/mn_stuck" 12 20 "$EVIL"
expect_eq "mn_stuck ran" "stuck 3 finished 9" "$(cat "$WORK/mn.out")"
rc=0
"$CTP_CAT" --html "$WORK/mn.html" "$WORK/mn.jsonl.zst" || rc=$?
expect_eq "ctp-cat --html exits 0" 0 "$rc"
# shellcheck disable=SC2046 # counts gives separate words on purpose
check "the M:N page loads cleanly and shows the trace's counts and its one stuck group of 3" \
	"${CHECK[@]}" "$WORK/mn.html" $(counts mn) --expect stuck=3 --expect groups=1 \
	--absent injected --text "$EVIL" --text wait_for_reply \
	--screenshot "$ARTIFACTS/mn_stuck.png"

# The same program stripped, as distributions ship programs: its frames have no names, and the
# stuck group's stack shows them by their place in the file (mn_stripped+0xOFF, what addr2line
# takes), not by addresses of a process that is gone.
cp "$PROGRAMS/mn_stuck" "$WORK/mn_stripped"
strip --strip-all "$WORK/mn_stripped"
trace mns -- "$WORK/mn_stripped" 12 20 x
"$CTP_CAT" --html "$WORK/mns.html" "$WORK/mns.jsonl.zst"
# shellcheck disable=SC2046
check "the stripped program's page shows its frames as mn_stripped+0xOFF" \
	"${CHECK[@]}" "$WORK/mns.html" $(counts mns) --expect stuck=3 --expect groups=1 \
	--text "mn_stripped+0x"

# A ping-pong: one thread, one coroutine, nothing stuck.
trace pp -- "$PROGRAMS/ucontext_pingpong" 50
"$CTP_CAT" --html "$WORK/pp.html" "$WORK/pp.jsonl.zst"
# shellcheck disable=SC2046
check "the ping-pong page loads cleanly and shows the trace's counts, no stuck group" \
	"${CHECK[@]}" "$WORK/pp.html" $(counts pp) --expect stuck=0 --expect groups=0 \
	--screenshot "$ARTIFACTS/pingpong.png"

# The lost-wakeup example (examples/lost_wakeup): its 47 stranded readers must show as one card of
# 47 lost wakeups, and not again as a stuck group (one cause, one finding). The page's screenshot
# opens one of them (the address picks it).
source "$(dirname "$0")/report_lib.sh"
example lw
expect_eq "the example's client ran to its end" 0 "$client_status"
"$CTP_CAT" --html "$WORK/lw.html" "$WORK/lw.jsonl.zst"
# shellcheck disable=SC2046
check "the lost-wakeup page shows one card of 47 lost wakeups and no stuck group" \
	"${CHECK[@]}" "$WORK/lw.html" $(counts lw) --expect kind:lost_wakeup=47 --expect stuck=0 \
	--expect groups=0 --text "lost_wakeup × 47" --text poller_drop_connection \
	--text sched_wait_readable \
	--screenshot "$ARTIFACTS/lost_wakeup.png"

# The checks can fail: a page whose script throws, and one that only logs an error.
sed 's|</body>|<script>null.property;</script></body>|' "$WORK/pp.html" >"$WORK/throws.html"
check "a page error fails the check" \
	bash -c '! "$@" >/dev/null 2>&1' _ "${CHECK[@]}" "$WORK/throws.html"
sed 's|</body>|<script>console.error("broken");</script></body>|' "$WORK/pp.html" \
	>"$WORK/logs.html"
check "a console message fails the check" \
	bash -c '! "$@" >/dev/null 2>&1' _ "${CHECK[@]}" "$WORK/logs.html"
sed 's|</body>|<img src="http://example.invalid/x.png"></body>|' "$WORK/pp.html" \
	>"$WORK/remote.html"
check "a reference outside the page fails the check" \
	bash -c '! "$@" >/dev/null 2>&1' _ "${CHECK[@]}" "$WORK/remote.html"
check "a wrong count fails the check" \
	bash -c '! "$@" >/dev/null 2>&1' _ "${CHECK[@]}" "$WORK/pp.html" --expect switches=1

# Nothing is written for something that is not a trace.
echo "not a trace" >"$WORK/junk"
rc=0
"$CTP_CAT" --html "$WORK/junk.html" "$WORK/junk" 2>/dev/null || rc=$?
expect_eq "not a trace: exit 2" 2 "$rc"
check "not a trace: no page" test ! -e "$WORK/junk.html"

# A page already there stays as it was when the input turns out not to be a trace, and so does
# a device node given as the page; a good trace replaces the page whole, nothing left beside it.
echo "an earlier page" >"$WORK/kept.html"
chmod 640 "$WORK/kept.html"
rc=0
"$CTP_CAT" --html "$WORK/kept.html" "$WORK/junk" 2>/dev/null || rc=$?
expect_eq "not a trace over an existing page: exit 2" 2 "$rc"
expect_eq "not a trace: the existing page is untouched" "an earlier page" "$(cat "$WORK/kept.html")"
mknod "$WORK/null" c 1 3
rc=0
"$CTP_CAT" --html "$WORK/null" "$WORK/junk" 2>/dev/null || rc=$?
expect_eq "not a trace into a device node: exit 2" 2 "$rc"
check "not a trace: the device node is still there" test -c "$WORK/null"
"$CTP_CAT" --html "$WORK/null" "$WORK/pp.jsonl.zst"
check "a trace into a device node: the node is still there" test -c "$WORK/null"
"$CTP_CAT" --html "$WORK/kept.html" "$WORK/pp.jsonl.zst"
check "a trace replaces the page" grep -q "<html" "$WORK/kept.html"
expect_eq "the replaced page keeps its mode" 640 "$(stat -c %a "$WORK/kept.html")"
expect_eq "no temporary file is left beside the page" "" \
	"$(find "$WORK" -maxdepth 1 -name '.kept.html.*')"

finish
