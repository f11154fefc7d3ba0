# Shared helpers of the integration tests: each test is a bash script that traces a real program
# with the real binaries and asserts on the trace's content. Sourced; expects from ctest:
#   CTP_BUILD_DIR   the build tree (ctp-run, ctp-cat, test programs)
set -euo pipefail

CTP_RUN=$CTP_BUILD_DIR/collector/ctp-run
CTP_CAT=$CTP_BUILD_DIR/cat/ctp-cat
PROGRAMS=$CTP_BUILD_DIR/test/programs
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ctp-test.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
failures=0
checks=0

# check "what" COMMAND...: runs COMMAND; counts a failure, with what, when it fails.
check() {
	local what=$1
	shift
	checks=$((checks + 1))
	if "$@"; then
		echo "ok: $what"
	else
		echo "FAIL: $what" >&2
		failures=$((failures + 1))
	fi
}

# expect_eq "what" EXPECTED ACTUAL
expect_eq() {
	checks=$((checks + 1))
	if [ "$2" == "$3" ]; then
		echo "ok: $1 ($3)"
	else
		echo "FAIL: $1: expected '$2', got '$3'" >&2
		failures=$((failures + 1))
	fi
}

# trace NAME [ctp-run options] -- PROGRAM ARGS: traces into $WORK/NAME.jsonl.zst, decodes it to
# $WORK/NAME.jsonl with ctp-cat; the app's exit status is in $status.
trace() {
	local name=$1
	shift
	status=0
	"$CTP_RUN" -o "$WORK/$name.jsonl.zst" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" || status=$?
	"$CTP_CAT" "$WORK/$name.jsonl.zst" >"$WORK/$name.jsonl"
}

# q NAME JQ-FILTER: runs jq over the whole decoded trace as one array (-s), raw output.
q() {
	jq -r -s "$2" "$WORK/$1.jsonl"
}

# finish: the summary line ctest shows, and the exit status.
finish() {
	echo "$((checks - failures)) passed, $failures failed"
	[ "$failures" -eq 0 ]
}
