# ctp-cat --format=csv quotes per RFC 4180: a C++ entry symbol with a comma and a symbol with a
# quote come back unchanged through Python's csv module and sqlite3 .import. The trace is made
# here (zstd), not traced, so that the symbols are exactly these.
set -euo pipefail
CAT=$1
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ctp-views-csv.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
cat >"$WORK/t.jsonl" <<'JSONL'
{"type":"trace","format":"ctp-trace","version":1,"tool":"test","start":1000}
{"type":"process","pid":7,"ppid":1,"exe":"/bin/x","argv":["x"]}
{"type":"coro","pid":7,"coro":1,"kind":"thread","entry":null,"entry_addr":null,"parent":null,"tid":7,"ts":1100,"stack":null}
{"type":"coro","pid":7,"coro":2,"kind":"fcontext","entry":"ns::f(int, char)","entry_addr":"0x10","parent":1,"tid":7,"ts":1200,"stack":null}
{"type":"stack","pid":7,"id":1,"frames":[{"addr":"0x20","sym":"operator\"\"_x","off":4,"module":"/bin/x","file":null,"line":null}]}
{"type":"switch","pid":7,"tid":7,"ts":1300,"from":1,"to":2,"how":"jump_fcontext","stack":1}
{"type":"switch","pid":7,"tid":7,"ts":1400,"from":2,"to":1,"how":"jump_fcontext","stack":null}
{"type":"end","lines":7,"lost":0}
JSONL
zstd -q -c "$WORK/t.jsonl" >"$WORK/t.jsonl.zst"
"$CAT" --format=csv "$WORK/t.jsonl.zst" >"$WORK/t.csv"
python3 - "$WORK/t.csv" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline=""), strict=True))
assert rows[1][7] == "ns::f(int, char)", rows
assert rows[1][8] == 'operator""_x+0x4', rows
assert rows[2][6] == "ns::f(int, char)" and rows[2][8] == "", rows
assert open(sys.argv[1], "rb").read().count(b"\r\n") == 3
print("ok: python csv reads the quoted fields back")
PY
sqlite3 "$WORK/t.db" ".import --csv $WORK/t.csv sw"
got=$(sqlite3 "$WORK/t.db" "select to_entry || '|' || stack from sw where ts = '1300'")
[ "$got" = 'ns::f(int, char)|operator""_x+0x4' ] || { echo "FAIL: sqlite3 read '$got'"; exit 1; }
echo "ok: sqlite3 .import reads the quoted fields back"
