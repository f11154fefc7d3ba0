# The dashboard on a trace of a million switches: the page stays small (the timeline is
# downsampled into buckets, histories are bounded) and loads in a browser. How long it takes to
# write and to load is printed, not checked: it depends on the machine. A cut-off copy of the
# trace gives a page that says so.
source "$(dirname "$0")/lib.sh"

CHECK=(python3 "$CTP_SOURCE_DIR/test/dashboard/check_page.py")
SWITCHES=1000000
MAX_BYTES=$((5 * 1024 * 1024))

python3 "$CTP_SOURCE_DIR/test/dashboard/make_trace.py" $SWITCHES 4 400 |
	zstd -q -1 -o "$WORK/big.jsonl.zst"
expect_eq "the trace has a million switch lines" $SWITCHES \
	"$("$CTP_CAT" "$WORK/big.jsonl.zst" | grep -c "^{\"type\":\"switch\"")"
coros=$("$CTP_CAT" "$WORK/big.jsonl.zst" | grep -c "^{\"type\":\"coro\"")

start=$(date +%s%N)
rc=0
"$CTP_CAT" --html "$WORK/big.html" "$WORK/big.jsonl.zst" || rc=$?
echo "ctp-cat --html took $((($(date +%s%N) - start) / 1000000)) ms"
expect_eq "ctp-cat --html exits 0" 0 "$rc"
size=$(stat -c %s "$WORK/big.html")
echo "page size: $size bytes (trace: $(stat -c %s "$WORK/big.jsonl.zst") bytes)"
check "the page is under $MAX_BYTES bytes" [ "$size" -lt $MAX_BYTES ]
check "the million-switch page loads cleanly and shows every switch and coroutine" \
	"${CHECK[@]}" "$WORK/big.html" --expect switches=$SWITCHES --expect coroutines="$coros" \
	--expect rows="$coros" --expect lost=0

# Half the trace, as if the collector had been killed: a page of what was read, saying so.
head -c $(($(stat -c %s "$WORK/big.jsonl.zst") / 2)) "$WORK/big.jsonl.zst" >"$WORK/cut.jsonl.zst"
rc=0
"$CTP_CAT" --html "$WORK/cut.html" "$WORK/cut.jsonl.zst" 2>/dev/null || rc=$?
expect_eq "a cut trace: exit 1" 1 "$rc"
check "the cut trace's page loads and says it was cut" \
	"${CHECK[@]}" "$WORK/cut.html" --text "The trace was cut off"

finish
