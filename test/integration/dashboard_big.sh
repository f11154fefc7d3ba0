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

# A trace of 25,000 coroutines that ended (a server that makes one per request): the page lists
# the first and the last 10,000 of them to end, and the one a finding names in between (a run of
# 2 s, never yielded; its history was not kept), and says how many it does not list. Whatever refers to one it does not list
# (the timeline, a history) says -2, never a row that is another coroutine; the last one is made
# by the one the finding names.
ENDED=25000 LONG=12502
awk -v n=$ENDED -v long=$LONG 'BEGIN {
	pid = 77; ts = 1000
	printf "{\"type\":\"trace\",\"format\":\"ctp-trace\",\"version\":2,\"tool\":\"test\",\"start\":%d}\n", ts
	printf "{\"type\":\"process\",\"pid\":%d,\"ppid\":1,\"exe\":\"/bin/server\",\"argv\":[\"server\"]}\n", pid
	printf "{\"type\":\"coro\",\"pid\":%d,\"coro\":1,\"kind\":\"thread\",\"entry\":null,\"entry_addr\":null,\"parent\":null,\"tid\":%d,\"ts\":%d,\"stack\":null}\n", pid, pid, ts
	for (c = 2; c <= n + 1; c++) {
		printf "{\"type\":\"coro\",\"pid\":%d,\"coro\":%d,\"kind\":\"fcontext\",\"entry\":\"handler\",\"entry_addr\":\"0x10\",\"parent\":%d,\"tid\":%d,\"ts\":%d,\"stack\":null}\n", pid, c, c == n + 1 ? long : 1, pid, ts++
		printf "{\"type\":\"switch\",\"pid\":%d,\"tid\":%d,\"ts\":%d,\"from\":1,\"to\":%d,\"how\":\"jump_fcontext\",\"stack\":null}\n", pid, pid, ts++, c
		ts += c == long ? 2000000000 : 10
		printf "{\"type\":\"coro_end\",\"pid\":%d,\"coro\":%d,\"tid\":%d,\"ts\":%d,\"how\":\"ended\",\"switch\":\"jump_fcontext\"}\n", pid, c, pid, ts
		printf "{\"type\":\"switch\",\"pid\":%d,\"tid\":%d,\"ts\":%d,\"from\":%d,\"to\":1,\"how\":\"jump_fcontext\",\"stack\":null}\n", pid, pid, ts++, c
	}
	printf "{\"type\":\"exit\",\"pid\":%d,\"status\":0}\n", pid
}' | awk '{print} END {printf "{\"type\":\"end\",\"lines\":%d,\"lost\":0}\n", NR}' |
	zstd -q -o "$WORK/ended.jsonl.zst"
rc=0
"$CTP_CAT" --html "$WORK/ended.html" "$WORK/ended.jsonl.zst" || rc=$?
expect_eq "ctp-cat --html of $ENDED ended coroutines exits 0" 0 "$rc"
unlisted=$((ENDED - 20000 - 1))
check "the page of $ENDED ended coroutines loads and says $unlisted are not listed" \
	"${CHECK[@]}" "$WORK/ended.html" --expect coroutines=$((ENDED + 1)) --expect kind:never_yielded=1 \
	--text "(20,002 of 25,001: 4,999 ended coroutines not listed"
check "its rows: the thread, the first and last 10,000, the one named by a finding" \
	python3 - "$WORK/ended.html" $LONG <<'PY'
import json, re, sys
page = open(sys.argv[1]).read()
data = json.loads(re.search(r'<script type="application/json" id="ctp-data">(.*?)</script>', page, re.S).group(1))
coros, long_id = data["coros"], int(sys.argv[2])
ids = [c[1] for c in coros]
want = [1] + list(range(2, 10002)) + [long_id] + list(range(15002, 25002))
assert ids == want, f"{len(ids)} rows; first {ids[:3]}, around the middle {ids[10000:10004]}"
assert data["coros_unlisted"] == 4999, data["coros_unlisted"]
refs = [s for th in data["threads"] for s in th["segs"][2::4]]
refs += [c[15][5 * k + 4] for c in coros for k in range(len(c[15]) // 5)]
assert all(-2 <= r < len(coros) for r in refs), "a reference past the rows"
assert -2 in refs, "nothing refers to a coroutine not listed"
f = [f for f in data["findings"] if f["kind"] == "never_yielded"][0]
assert coros[f["coro"]][1] == long_id, f["coro"]
# Its history was not kept (it was not among the first or last 10,000 to end): its 3 events
# (made, resumed, ended) are counted instead. The last one's were kept.
assert coros[f["coro"]][15:18] == [[], 0, 3], coros[f["coro"]][15:18]
assert len(coros[-1][15]) == 3 * 5 and coros[-1][17] == 0, coros[-1][15:18]
# What names a listed coroutine names that one: the last was made by the long-running one.
last = coros[-1]
assert coros[last[4]][1] == long_id, f"parent: row {last[4]}"
assert last[15][1] == 0 and coros[last[15][4]][1] == long_id, f"created by: row {last[15][4]}"
print("ok:", len(coros), "rows")
PY

# The same trace garbled: a switch away from a coroutine whose history was handed back, long
# after its end. The page is made all the same, and counts that event.
zstd -dc "$WORK/ended.jsonl.zst" | grep -v '"type":"end"' |
	awk '/"type":"exit"/ {print "{\"type\":\"switch\",\"pid\":77,\"tid\":77,\"ts\":3000000000,\"from\":12000,\"to\":1,\"how\":\"jump_fcontext\",\"stack\":null}"} {print}' |
	awk '{print} END {printf "{\"type\":\"end\",\"lines\":%d,\"lost\":0}\n", NR}' |
	zstd -q -o "$WORK/garbled.jsonl.zst"
rc=0
"$CTP_CAT" --html "$WORK/garbled.html" "$WORK/garbled.jsonl.zst" 2>"$WORK/garbled.err" || rc=$?
check "a switch away from a coroutine ended long before: the page is made (exit $rc, not a signal)" \
	test "$rc" -lt 2
check "that page loads cleanly" "${CHECK[@]}" "$WORK/garbled.html" --expect coroutines=$((ENDED + 1))

finish
