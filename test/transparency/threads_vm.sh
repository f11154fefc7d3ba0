# 200 threads blocked on a barrier: the harness reads VmSize/VmRSS of the untraced and the
# traced program while they wait. Traced, VmSize may grow by at most 300 MB (a resource bound,
# not a timing one: rings and stacks the tracer reserves per thread).
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
compare threads_vm --expect "exit 0" --after-ready "vm:$TP_BIN/threads_vm" -- "$TP_BIN/threads_vm"
read -r _ native_size _ native_rss _ native_threads <"$WORK/threads_vm.native.vm" || true
echo "    untraced: VmSize ${native_size:-?} kB, VmRSS ${native_rss:-?} kB, ${native_threads:-?} threads"
check "threads_vm: untraced, 201 threads seen" [ "${native_threads:-0}" = 201 ]
for mode in "${TP_MODES[@]}"; do
	read -r _ size _ rss _ threads <"$WORK/threads_vm.$mode.vm" || true
	echo "    $mode: VmSize ${size:-?} kB, VmRSS ${rss:-?} kB, ${threads:-?} threads"
	grow=$(((${size:-0} - ${native_size:-0}) / 1024))
	check "threads_vm $mode: the app was measured" [ -n "${size:-}" ]
	check "threads_vm $mode: VmSize grows by at most 300 MB (got ${grow} MB)" \
		[ -n "${size:-}" -a "$grow" -le 300 ]
done
finish
