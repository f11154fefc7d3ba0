# A file size limit (ulimit -f 2048 KiB): the program writes a 512 KiB file and makes and switches
# enough coroutines for the tracer's segment to want more than the limit. It must run as
# untraced; the tracer stays under the limit (it may run untraced, or count what it dropped).
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
compare fsize_limit --expect "exit 0" -- \
	bash -c 'ulimit -f 2048 && exec "$0" "$1"' "$TP_BIN/fsize_limit" "$WORK/fsize_limit.file"
check "fsize_limit: untraced, the file was written" \
	grep -qx "wrote 524288 bytes" "$WORK/fsize_limit.native.out"
finish
