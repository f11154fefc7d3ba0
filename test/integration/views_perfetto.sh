#!/usr/bin/env bash
# ctp-cat --format=perfetto on real traces, decoded with protoc against cat/outputs/perfetto.proto
# and checked against the trace's lines by test/cat/views_perfetto_check.py: an M:N trace
# (ucontext coroutines migrating between 3 threads), a process tree, and the lost-wakeup
# example (flows from each close to the coroutine it stranded). It is several times smaller
# than the Chrome JSON of the same trace.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/report_lib.sh"

PROTO_DIR=$CTP_SOURCE_DIR/cat/outputs
CHECK="python3 $CTP_SOURCE_DIR/test/cat/views_perfetto_check.py"
command -v protoc >/dev/null || {
	echo "FAIL: protoc is missing (scripts/deps installs protobuf-compiler)" >&2
	exit 1
}

# perfetto NAME [--closes]: converts NAME's trace, decodes it, checks it.
perfetto() {
	local name=$1
	shift
	local st=0
	"$CTP_CAT" --format=perfetto "$WORK/$name.jsonl.zst" >"$WORK/$name.pftrace" || st=$?
	expect_eq "($name) ctp-cat --format=perfetto exits 0" 0 "$st"
	st=0
	protoc --decode=pftrace.Trace -I"$PROTO_DIR" "$PROTO_DIR/perfetto.proto" \
		<"$WORK/$name.pftrace" >"$WORK/$name.pftrace.txt" 2>"$WORK/$name.protoc.err" || st=$?
	expect_eq "($name) protoc decodes it as a Trace" 0 "$st"
	check "($name) tracks, slices and flows match the trace" \
		$CHECK "$WORK/$name.pftrace.txt" "$WORK/$name.jsonl" "$@"
}

trace mn -- "$PROGRAMS/ucontext_mn" 12 20
expect_eq "ctp-run exits as the app did" 0 "$status"
perfetto mn
"$CTP_CAT" --format=chrome "$WORK/mn.jsonl.zst" >"$WORK/mn.json"
pb=$(stat -c %s "$WORK/mn.pftrace")
js=$(stat -c %s "$WORK/mn.json")
echo "sizes: perfetto $pb bytes, chrome $js bytes"
check "the Perfetto trace is at least 5x smaller than the Chrome JSON ($pb vs $js bytes)" \
	test $((pb * 5)) -le "$js"

trace tree -- "$PROGRAMS/tree_parent" "$PROGRAMS/tree_child"
perfetto tree

example lw
expect_eq "the client ran to its end" 0 "$client_status"
perfetto lw --closes

# An empty output stays a valid (empty-state) Trace; a filtered trace converts too.
"$CTP_CAT" --format=perfetto --type=process "$WORK/mn.jsonl.zst" >"$WORK/proc.pftrace"
check "a trace filtered to its process lines decodes" bash -c "protoc --decode=pftrace.Trace \
	-I'$PROTO_DIR' '$PROTO_DIR/perfetto.proto' <'$WORK/proc.pftrace' | grep -q process_name"
st=0
"$CTP_CAT" --format=perfetto "$CTP_SOURCE_DIR/README.md" >/dev/null 2>&1 || st=$?
expect_eq "not a trace: exit 2" 2 "$st"
finish
