# The longjmp hooks push a frame of the caller's registers before they jump (the suspended
# side's saved context): jumps keep their value, the saved signal mask, the callee-saved
# registers, and work from a signal handler on an alternate stack; plain and -D_FORTIFY_SOURCE=2
# (__longjmp_chk).
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
for build in longjmp_frames longjmp_frames_fortify; do
	compare "$build" --expect "exit 0" -- "$TP_BIN/$build"
	check "$build: untraced, every jump as the C library makes it" \
		grep -qx "longjmp(0) returns 1, registers kept" "$WORK/$build.native.out"
done
check "longjmp_frames_fortify goes through __longjmp_chk" \
	bash -c "nm -D '$TP_BIN/longjmp_frames_fortify' | grep -q __longjmp_chk"
finish
