# Debian's qemu-img traced as installed. QEMU's coroutines (coroutine-ucontext) start with
# makecontext and one swapcontext each, then switch with sigsetjmp + siglongjmp, the saved stack
# pointer mangled in the jmp_buf. A convert of a raw image with random data to qcow2 runs its
# I/O in coroutines: the image must come out identical to an untraced convert, and the trace
# must hold the siglongjmp switches, each leaving the coroutine the previous switch on that
# thread entered, between coroutines it announced.
#
# QEMU keeps finished coroutines in a pool for reuse: a healthy run ends with them suspended in
# the pool, which the report calls idle (pooled), never stuck or leaked. Each run (convert,
# check, qemu-io) must have no finding at all.
source "$(dirname "$0")/lib.sh"

# healthy NAME: the report on trace NAME finds nothing; every coroutine's final state is known:
# threads running or exited, and every QEMU coroutine suspended and idle in the pool (pooled)
# or exited; the station's switch count of each coroutine (counted in the process) equals the
# switch lines that resumed it (written through the rings).
healthy() {
	local name=$1 report_status=0
	"$CTP_CAT" --report --json "$WORK/$name.jsonl.zst" >"$WORK/$name.report.json" ||
		report_status=$?
	expect_eq "($name) --report exits 0" 0 "$report_status"
	expect_eq "($name) no finding" "[]" \
		"$(jq -c '[.findings[] | .kind] | unique' "$WORK/$name.report.json")"
	local idle
	idle=$(jq -c '[.summary.idle_coros[] | select(.why == "pooled") | .coro] | sort' \
		"$WORK/$name.report.json")
	expect_eq "($name) every thread ends running or exited" 0 \
		"$(q "$name" '[.[] | select(.type == "coro" and .kind == "thread") | .coro] as $t
			| [.[] | select(.type == "state" and (.coro as $c | $t | index($c)) and
				.state != "running" and .state != "exited")] | length')"
	expect_eq "($name) every coroutine ends idle in the pool (suspended) or exited" 0 \
		"$(q "$name" "$idle as \$idle | [.[] | select(.type == \"coro\" and .kind == \"ucontext\") | .coro]
			as \$u | [.[] | select(.type == \"state\" and (.coro as \$c | \$u | index(\$c)) and
				.state != \"exited\" and (.state != \"suspended\" or
					(.coro as \$c | \$idle | index(\$c)) == null))] | length")"
	check "($name) some coroutines are pooled ($idle)" [ "$idle" != "[]" ]
	expect_eq "($name) each coroutine's switch count is the switch lines that resumed it" 0 \
		"$(q "$name" '[.[] | select(.type == "coro" and .kind == "ucontext") | .coro] as $u
			| (map(select(.type == "switch")) | group_by(.to)
				| map({key: (.[0].to | tostring), value: length}) | from_entries) as $n
			| [.[] | select(.type == "state" and (.coro as $c | $u | index($c)))
				| select(.switches != ($n[.coro | tostring] // 0))] | length')"
}

img=$WORK/disk.raw
qemu-img create -q -f raw "$img" 64M
dd if=/dev/urandom of="$img" bs=1M count=16 conv=notrunc status=none
qemu-img convert -f raw -O qcow2 "$img" "$WORK/untraced.qcow2"

trace convert -- qemu-img convert -f raw -O qcow2 "$img" "$WORK/traced.qcow2"
expect_eq "ctp-run exits as qemu-img did" 0 "$status"
check "the converted images are identical" \
	qemu-img compare -q "$WORK/untraced.qcow2" "$WORK/traced.qcow2"
jumps=$(q convert '[.[] | select(.type == "switch" and .how == "siglongjmp")] | length')
check "switches by siglongjmp are traced ($jumps)" [ "$jumps" -ge 50 ]
expect_eq "on every thread, each switch leaves the coroutine the previous one entered" 0 \
	"$(q convert '[.[] | select(.type == "switch")] | group_by(.tid) | map(
		reduce .[] as $s ({prev: null, bad: 0}; {prev: $s.to,
			bad: (.bad + (if .prev != null and .prev != $s.from then 1 else 0 end))}) | .bad)
		| add // 0')"
expect_eq "every switch is between announced coroutines" 0 \
	"$(q convert '([.[] | select(.type == "coro") | .coro]) as $ids | [.[]
		| select(.type == "switch") | select((.from as $f | $ids | index($f)) == null
			or (.to as $t | $ids | index($t)) == null)] | length')"
healthy convert

# qemu-img check of the result: the same verdict traced and untraced.
untraced=0
qemu-img check -q "$WORK/untraced.qcow2" >"$WORK/check.native" 2>&1 || untraced=$?
trace check -- qemu-img check -q "$WORK/traced.qcow2"
expect_eq "qemu-img check ends as untraced" "$untraced" "$status"
expect_eq "qemu-img check says the same traced" "$(cat "$WORK/check.native")" "$(cat "$WORK/check.out")"
healthy check

# qemu-io: writes and reads back patterns (-P checks every byte read); the same results traced
# (the timing lines aside), and a healthy trace.
qemu-img create -q -f qcow2 "$WORK/io.qcow2" 32M
io=(qemu-io -f qcow2 -c 'write -P 0x5a 0 4M' -c 'aio_write -P 0x33 8M 2M' -c 'aio_flush'
	-c 'read -P 0x5a 0 4M' -c 'read -P 0x33 8M 2M' "$WORK/io.qcow2")
"${io[@]}" >"$WORK/io.raw"
grep -v ' ops; ' "$WORK/io.raw" >"$WORK/io.native"
trace qemu_io -- "${io[@]}"
expect_eq "ctp-run exits as qemu-io did" 0 "$status"
expect_eq "qemu-io reads back what it wrote, as untraced" "$(cat "$WORK/io.native")" \
	"$(grep -v ' ops; ' "$WORK/qemu_io.out")"
check "qemu-io checked its patterns" grep -q "^read 2097152/2097152 bytes at offset 8388608" \
	"$WORK/qemu_io.out"
check "qemu-io switches by siglongjmp" \
	[ "$(q qemu_io '[.[] | select(.type == "switch" and .how == "siglongjmp")] | length')" -ge 10 ]
healthy qemu_io
finish
