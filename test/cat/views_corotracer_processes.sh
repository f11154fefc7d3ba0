# ctp-cat --format=corotracer across processes: a process's seq counts end with it. A later
# process given the same pid (pids are reused) numbers its probes from 0 again, and a trace of
# many processes one after another needs the memory of one, not of all. The traces are made
# here, so that the pids and ids are exactly these.
set -euo pipefail
CAT=$1
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ctp-views-corotracer.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# process PID COROS: a process that makes COROS coroutines, switches to each and back, exits.
process() {
	awk -v pid="$1" -v n="$2" -v t0="$3" 'BEGIN {
		printf "{\"type\":\"process\",\"pid\":%d,\"ppid\":1,\"exe\":\"/bin/x\",\"argv\":[\"x\"]}\n", pid
		printf "{\"type\":\"coro\",\"pid\":%d,\"coro\":1,\"kind\":\"thread\",\"entry\":null,\"entry_addr\":null,\"parent\":null,\"tid\":%d,\"ts\":%d,\"stack\":null}\n", pid, pid, t0
		for (i = 2; i <= n + 1; i++) {
			ts = t0 + 10 * i
			printf "{\"type\":\"coro\",\"pid\":%d,\"coro\":%d,\"kind\":\"fcontext\",\"entry\":\"f\",\"entry_addr\":\"0x10\",\"parent\":1,\"tid\":%d,\"ts\":%d,\"stack\":null}\n", pid, i, pid, ts
			printf "{\"type\":\"switch\",\"pid\":%d,\"tid\":%d,\"ts\":%d,\"from\":1,\"to\":%d,\"how\":\"jump_fcontext\",\"stack\":null}\n", pid, pid, ts + 1, i
			printf "{\"type\":\"switch\",\"pid\":%d,\"tid\":%d,\"ts\":%d,\"from\":%d,\"to\":1,\"how\":\"jump_fcontext\",\"stack\":null}\n", pid, pid, ts + 2, i
		}
		printf "{\"type\":\"exit\",\"pid\":%d,\"status\":0}\n", pid
	}'
}
trace() { # OUT then (PID COROS)...: the processes one after another
	local out=$1 t0=1000
	shift
	{
		echo '{"type":"trace","format":"ctp-trace","version":2,"tool":"test","start":1000}'
		while [ $# -gt 0 ]; do
			process "$1" "$2" "$t0"
			t0=$((t0 + 10 * ($2 + 2)))
			shift 2
		done
	} | awk '{print} END {printf "{\"type\":\"end\",\"lines\":%d,\"lost\":0}\n", NR}' |
		zstd -q -o "$out"
}

# The same pid twice: the second process's records start at seq 0, each probe's alternating.
trace "$WORK/reuse.zst" 7 2 7 2
"$CAT" --format=corotracer "$WORK/reuse.zst" >"$WORK/reuse.jsonl"
python3 - "$WORK/reuse.jsonl" <<'PY'
import json, sys
records = [json.loads(line) for line in open(sys.argv[1])]
assert len(records) == 16, f"{len(records)} records, 16 expected"
for half in (records[:8], records[8:]):
    seqs = {}
    for r in half:
        want = seqs.get(r["probe_id"], -1) + 1
        assert r["seq"] == want, f"probe {r['probe_id']}: seq {r['seq']}, {want} expected"
        seqs[r["probe_id"]] = r["seq"]
    assert seqs == {1: 3, 2: 1, 3: 1}, seqs
print("ok: a reused pid's probes count from 0")
PY

# 60 processes of 10,000 coroutines one after another: the corotracer view's peak memory stays
# within 8 MB of the text view's, whose names are forgotten at each exit. Counts kept for every
# probe of the trace (600,000) took 40 MB and more.
args=()
for pid in $(seq 100 159); do args+=("$pid" 10000); done
trace "$WORK/many.zst" "${args[@]}"
peak_kb() {
	/usr/bin/time -f "%M" -o "$WORK/maxrss" "$CAT" "$@" "$WORK/many.zst" >"$WORK/out" 2>/dev/null
	tail -n 1 "$WORK/maxrss"
}
text_kb=$(peak_kb --format=text)
coro_kb=$(peak_kb --format=corotracer)
records=$(wc -l <"$WORK/out")
[ "$records" = $((4 * 600000)) ] || fail "corotracer wrote $records records, 2400000 expected"
echo "peak RSS: text view ${text_kb} kB, corotracer view ${coro_kb} kB"
[ "$coro_kb" -le $((text_kb + 8192)) ] ||
	fail "the corotracer view peaked at $coro_kb kB, over the text view's $text_kb kB + 8 MB"
echo "ok: the corotracer view's memory follows the live process"
