# Debian's qemu-img traced as installed. QEMU's coroutines (coroutine-ucontext) start with
# makecontext and one swapcontext each, then switch with sigsetjmp + siglongjmp, the saved stack
# pointer mangled in the jmp_buf. A convert of a raw image with random data to qcow2 runs its
# I/O in coroutines: the image must come out identical to an untraced convert, and the trace
# must hold the siglongjmp switches, each leaving the coroutine the previous switch on that
# thread entered, between coroutines it announced.
source "$(dirname "$0")/lib.sh"

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

# qemu-img check of the result: the same verdict traced and untraced.
untraced=0
qemu-img check -q "$WORK/untraced.qcow2" >"$WORK/check.native" 2>&1 || untraced=$?
trace check -- qemu-img check -q "$WORK/traced.qcow2"
expect_eq "qemu-img check ends as untraced" "$untraced" "$status"
finish
