# Symbols for stripped programs from a debuginfod server. A copy of a test program is stripped of
# every symbol (as Debian ships its binaries) and its debug file is served by a real debuginfod
# (elfutils' server, started here on loopback). Traced without DEBUGINFOD_URLS, its functions
# have no names; with DEBUGINFOD_URLS naming the server, the collector fetches the debug file by
# the build-id and the trace names every function with its file:line, as for the unstripped
# program. And later: ctp-cat, given DEBUGINFOD_URLS, names the frames of the trace made
# without it, from the trace's module lines (path, build-id, load bias).
source "$(dirname "$0")/lib.sh"

cp "$PROGRAMS/ucontext_stacks" "$WORK/prog"
mkdir -p "$WORK/served"
objcopy --only-keep-debug "$WORK/prog" "$WORK/served/prog.debug"
strip --strip-all "$WORK/prog"
build_id=$(readelf -n "$WORK/prog" | sed -n 's/^ *Build ID: //p')
check "the stripped program keeps its build-id ($build_id)" [ -n "$build_id" ]
check "and has no symbol table" bash -c "! readelf -S '$WORK/prog' | grep -q '\.symtab'"

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
debuginfod -d "$WORK/index.sqlite" -p "$port" -F "$WORK/served" >"$WORK/debuginfod.log" 2>&1 &
server=$!
stop_server() { kill "$server" 2>/dev/null || true; }
at_exit stop_server
export DEBUGINFOD_CACHE_PATH=$WORK/client-cache
url=http://127.0.0.1:$port
# The server scans its directory after it starts: ask until it serves the file (30 s at most).
# Each try gets a cache of its own, since the client remembers a miss for ten minutes.
served() {
	local try
	for try in $(seq 60); do
		DEBUGINFOD_URLS=$url DEBUGINFOD_CACHE_PATH=$WORK/probe$try \
			debuginfod-find debuginfo "$build_id" >/dev/null 2>&1 && return 0
		kill -0 "$server" || return 1
		sleep 0.5
	done
	return 1
}
check "debuginfod serves the debug file" served

# entries NAME: the coroutines' entry functions, sorted.
entries() { q "$1" '[.[] | select(.type == "coro" and .kind != "thread") | .entry] | map(tostring) | sort | join(" ")'; }

unset DEBUGINFOD_URLS
trace bare -- "$WORK/prog"
expect_eq "the stripped program runs traced" "0 all suspended" "$status $(cat "$WORK/bare.out")"
expect_eq "without debuginfod its functions have no names" "null null null" "$(entries bare)"

DEBUGINFOD_URLS=$url trace fetched -- "$WORK/prog"
expect_eq "with DEBUGINFOD_URLS it runs the same" "0 all suspended" \
	"$status $(cat "$WORK/fetched.out")"
expect_eq "the entries are named from the fetched debug file" "locker reader sleeper" \
	"$(entries fetched)"
check "the collector said what it fetched" grep -q "^ctp: asking debuginfod for the debug info of $WORK/prog" \
	"$WORK/fetched.err"
expect_eq "the reader's suspend stack names its wait, with the source file" \
	"yield:ucontext_stacks.c wait_for_input:ucontext_stacks.c" \
	"$(q fetched '(map(select(.type == "stack") | {key: (.id | tostring), value: .frames}) | from_entries) as $s
		| (.[] | select(.type == "coro" and .entry == "reader") | .coro) as $c
		| .[] | select(.type == "state" and .coro == $c) | $s[.stack | tostring][0:2]
		| map("\(.sym):\(.file | split("/") | last)") | join(" ")')"
check "the fetched file is in the client's cache" \
	test -s "$DEBUGINFOD_CACHE_PATH/$build_id/debuginfo"

# Later, in ctp-cat: the trace made without debuginfod names the program's module by build-id.
expect_eq "the bare trace names the program's module with its build-id" "$build_id" \
	"$(q bare ".[] | select(.type == \"module\" and .path == \"$WORK/prog\") | .build_id")"
export DEBUGINFOD_CACHE_PATH=$WORK/cat-cache
st=0
"$CTP_CAT" --report --json "$WORK/bare.jsonl.zst" >"$WORK/bare.report" 2>"$WORK/bare.report.err" || st=$?
expect_eq "ctp-cat --report without debuginfod: frames still unnamed" "0 null" \
	"$st $(jq -r '[.findings[] | select(.kind == "stuck") | .frames[0].sym] | unique | map(tostring) | join(",")' "$WORK/bare.report")"
# An unnamed frame reads as its place in its file, prog+0xOFF: the address less the module's load
# bias, which names the right function once debug info is at hand (addr2line, after the run).
bias=$(q bare ".[] | select(.type == \"module\" and .path == \"$WORK/prog\") | .bias")
offsets_match() { # every stuck coroutine's innermost frame: module_off == addr - bias
	python3 - "$WORK/bare.report" "$bias" <<'EOF'
import json, sys
report, bias = json.load(open(sys.argv[1])), int(sys.argv[2], 16)
frames = [f["frames"][0] for f in report["findings"] if f["kind"] == "stuck"]
ok = frames and all(int(f["module_off"], 16) == int(f["addr"], 16) - bias for f in frames)
sys.exit(0 if ok else 1)
EOF
}
check "each unnamed frame's module_off is its address less the program's load bias" offsets_match
places=$(jq -r '[.findings[] | select(.kind == "stuck") | .stack[0]] | unique | join(" ")' "$WORK/bare.report")
check "and the report's stacks show it as prog+0xOFF ($places)" \
	bash -c "[ -n '$places' ] && ! printf '%s\n' $places | grep -vq '^prog+0x[0-9a-f]*$'"
named_at() { # the functions addr2line finds at the places, from the debug file
	local p
	for p in $places; do addr2line -f -e "$WORK/served/prog.debug" "${p#prog+}" | head -1; done |
		sort -u | tr '\n' ' ' | sed 's/ $//'
}
expect_eq "addr2line names the place's function from the debug file" "yield" "$(named_at)"
"$CTP_CAT" --format=text "$WORK/bare.jsonl.zst" >"$WORK/bare.txt" 2>/dev/null
check "the text view shows switches at prog+0xOFF" grep -q ' at prog+0x[0-9a-f]*$' "$WORK/bare.txt"
check "and no frame of the program as a bare address" bash -c "! grep -q ' at 0x' '$WORK/bare.txt'"
st=0
DEBUGINFOD_URLS=$url "$CTP_CAT" --report --json "$WORK/bare.jsonl.zst" >"$WORK/named.report" \
	2>"$WORK/named.report.err" || st=$?
expect_eq "with DEBUGINFOD_URLS, ctp-cat names the stuck coroutines' waits" \
	"0 wait_for_input,wait_for_lock,wait_for_timer" \
	"$st $(jq -r '[.findings[] | select(.kind == "stuck") | .stack[1]] | sort | join(",")' "$WORK/named.report")"
DEBUGINFOD_URLS=$url "$CTP_CAT" --format=text "$WORK/bare.jsonl.zst" >"$WORK/named.txt" 2>/dev/null
expect_eq "and the views name the coroutines by their entries" "locker#4 reader#2 sleeper#3" \
	"$(grep -o '[a-z]*#[0-9]* (ucontext)' "$WORK/named.txt" | cut -d' ' -f1 | sort -u | tr '\n' ' ' | sed 's/ $//')"
check "ctp-cat said what it fetched" grep -q "^ctp: asking debuginfod for the debug info of $WORK/prog" \
	"$WORK/named.report.err"
finish
