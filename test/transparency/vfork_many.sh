# vfork 8b: 300 vfork+exec of /bin/true leave the program's own VmSize where it was.
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
compare vfork_many --expect "exit 0" --timeout 60 -- "$TP_BIN/vfork_many"
check "vfork_many: untraced, VmSize stable" grep -qx "VmSize stable" "$WORK/vfork_many.native.out"
finish
