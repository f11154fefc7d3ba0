# ctp-cat's views on a real M:N trace (ucontext coroutines migrating between 3 threads):
# filters keep exactly what jq says they should and leave a self-contained trace; relative
# times mean what absolute ones do; text, CSV, coroTracer and Chrome outputs have one line,
# row, record pair or slice per event, switch or resume, and parse with the tools that read them.
source "$(dirname "$0")/lib.sh"
CHECK="python3 $CTP_SOURCE_DIR/test/cat/views_check.py"
CHROME_CHECK="python3 $CTP_SOURCE_DIR/test/cat/views_chrome_check.py"

trace mn -- "$PROGRAMS/ucontext_mn" 12 20
expect_eq "ctp-run exits as the app did" 0 "$status"
T=$WORK/mn.jsonl.zst
pid=$(q mn '.[] | select(.type == "process") | .pid')
start=$(q mn '.[0].start')
lines=$(q mn 'length')
switches=$(q mn '[.[] | select(.type == "switch")] | length')
check "the trace has switches" test "$switches" -gt 100

# count FILE JQ: how many lines of a JSONL file match.
count() { jq -s "[.[] | select($2)] | length" "$1"; }
# view NAME ARGS...: ctp-cat ARGS on the trace into $WORK/NAME.
view() {
	local name=$1
	shift
	"$CTP_CAT" "$@" "$T" >"$WORK/$name"
}

# --pid: the whole trace for its pid, only the header for another.
view pid.jsonl --pid="$pid"
expect_eq "--pid of the process keeps every line" "$lines" "$(wc -l <"$WORK/pid.jsonl")"
view nopid.jsonl --pid=1,2
expect_eq "--pid of no traced process keeps only the lines of no process (header, end)" \
	"$(q mn '[.[] | select(has("pid") | not)] | length')" "$(wc -l <"$WORK/nopid.jsonl")"
expect_eq "--pid: the end line counts the lines of the view" 1 \
	"$(count "$WORK/nopid.jsonl" '.type == "end" and .lines == 1')"

# --coro: the switches from or to it, its final state; definitions only as referred to.
coro=$(q mn '[.[] | select(.type == "coro" and .kind == "ucontext")][3].coro')
view coro.jsonl --coro="$coro"
expect_eq "--coro keeps its switches" \
	"$(q mn "[.[] | select(.type == \"switch\" and (.from == $coro or .to == $coro))] | length")" \
	"$(count "$WORK/coro.jsonl" '.type == "switch"')"
expect_eq "--coro keeps its state line" 1 "$(count "$WORK/coro.jsonl" ".type == \"state\"")"
expect_eq "--coro keeps no other coroutine's state" 0 \
	"$(count "$WORK/coro.jsonl" ".type == \"state\" and .coro != $coro")"
check "--coro output is self-contained" $CHECK selfcontained "$WORK/coro.jsonl"
expect_eq "--coro keeps the process line" 1 "$(count "$WORK/coro.jsonl" '.type == "process"')"

# --tid (a comma list of one worker and a bogus tid) and repeated --coro.
tid=$(q mn '[.[] | select(.type == "switch") | .tid] | unique | .[0]')
view tid.jsonl --tid="$tid,1"
expect_eq "--tid keeps that thread's switches" \
	"$(q mn "[.[] | select(.type == \"switch\" and .tid == $tid)] | length")" \
	"$(count "$WORK/tid.jsonl" '.type == "switch"')"
check "--tid output is self-contained" $CHECK selfcontained "$WORK/tid.jsonl"
coro2=$((coro + 1))
view coros.jsonl --coro="$coro" --coro="$coro2" --type=switch
expect_eq "--coro repeated keeps the switches of both" \
	"$(q mn "[.[] | select(.type == \"switch\" and ([.from, .to] | index($coro) or index($coro2)))] | length")" \
	"$(count "$WORK/coros.jsonl" '.type == "switch"')"

# --type: only the types listed, plus the definitions they refer to.
view type.jsonl --type=switch,state
expect_eq "--type keeps the types listed" \
	"$(q mn '[.[] | select(.type == "switch" or .type == "state")] | length')" \
	"$(count "$WORK/type.jsonl" '.type == "switch" or .type == "state"')"
expect_eq "--type keeps nothing else but definitions" 0 \
	"$(count "$WORK/type.jsonl" '.type == "exit" or .type == "loss"')"
check "--type output is self-contained" $CHECK selfcontained "$WORK/type.jsonl"

# --since/--until: absolute ns, and the same instant relative to the start in ns and in us.
mid=$(q mn '[.[] | select(.type == "switch") | .ts] | sort | .[length / 2 | floor]')
late=$(q mn '[.[] | select(.type == "switch") | .ts] | sort | .[length * 3 / 4 | floor]')
rel=$((mid - start))
want=$(q mn "[.[] | select(.type == \"switch\" and .ts >= $mid and .ts <= $late)] | length")
view abs.jsonl --since="$mid" --until="$late" --type=switch
expect_eq "--since/--until absolute" "$want" "$(count "$WORK/abs.jsonl" '.type == "switch"')"
view relns.jsonl --since="${rel}ns" --until="$late" --type=switch
expect_eq "--since relative in ns" "$want" "$(count "$WORK/relns.jsonl" '.type == "switch"')"
relus=$(printf '%d.%03dus' $((rel / 1000)) $((rel % 1000)))
view relus.jsonl --since="$relus" --until="$late" --type=switch
expect_eq "--since relative as fractional us ($relus)" "$want" \
	"$(count "$WORK/relus.jsonl" '.type == "switch"')"
view none.jsonl --until=1ns
expect_eq "--until 1ns after the start keeps no switch" 0 "$(count "$WORK/none.jsonl" '.type == "switch"')"
view all.jsonl --since=0s --until=1000s
expect_eq "--since 0s --until 1000s keeps every switch" "$switches" \
	"$(count "$WORK/all.jsonl" '.type == "switch"')"

# Combined: one thread, after the middle, switches only.
view comb.jsonl --tid="$tid" --since="$mid" --type=switch
expect_eq "filters combine" \
	"$(q mn "[.[] | select(.type == \"switch\" and .tid == $tid and .ts >= $mid)] | length")" \
	"$(count "$WORK/comb.jsonl" '.type == "switch"')"
zstd -q -c "$WORK/comb.jsonl" >"$WORK/comb.jsonl.zst"
check "a filtered trace reads as a trace again" bash -c "'$CTP_CAT' '$WORK/comb.jsonl.zst' >/dev/null"

# Unknown options and values are usage errors (exit 2).
s=0; "$CTP_CAT" --since=soon "$T" >/dev/null 2>&1 || s=$?
expect_eq "--since with no unit or number is a usage error" 2 "$s"
s=0; "$CTP_CAT" --format=xml "$T" >/dev/null 2>&1 || s=$?
expect_eq "--format=xml is a usage error" 2 "$s"

# Text: one line per event (every line but the header and the definitions: stacks show inline,
# modules in the names).
view text.txt --format=text
expect_eq "text: one line per event" \
	"$(q mn '[.[] | select(.type != "stack" and .type != "module" and .type != "trace")] | length')" \
	"$(grep -vc '^#' "$WORK/text.txt")"
expect_eq "text: switches read 'who -> whom'" "$switches" "$(grep -c ' switch .* -> ' "$WORK/text.txt")"
check "text: coroutines named by entry#id" grep -q ' work#' "$WORK/text.txt"
check "text: no colour when not a terminal" bash -c "! grep -q $'\033' '$WORK/text.txt'"

# CSV: a header and one row per switch; Python's csv and sqlite3 .import read it.
view sw.csv --format=csv
expect_eq "csv: rows (Python csv) = switches" "$switches" "$($CHECK csv "$WORK/sw.csv")"
sqlite3 "$WORK/sw.db" ".import --csv $WORK/sw.csv sw"
expect_eq "csv: rows (sqlite3 .import) = switches" "$switches" "$(sqlite3 "$WORK/sw.db" 'select count(*) from sw')"
expect_eq "csv: sqlite3 sees the switches of one thread" \
	"$(q mn "[.[] | select(.type == \"switch\" and .tid == $tid)] | length")" \
	"$(sqlite3 "$WORK/sw.db" "select count(*) from sw where tid = '$tid'")"

# coroTracer: two records per switch, each probe alternating suspend and resume.
view ct.jsonl --format=corotracer
expect_eq "corotracer: records = 2 x switches, alternating per probe" $((2 * switches)) \
	"$($CHECK corotracer "$WORK/ct.jsonl")"

# Chrome: passes the strict checker; one X per resume on the coroutine tracks, except runs still
# open at the end (B) and the threads' first runs, which no resume began ("how":"start").
view chrome.json --format=chrome
check "chrome: the checker accepts it" $CHROME_CHECK "$WORK/chrome.json"
base=1073741824
x=$(jq "[.traceEvents[] | select(.ph == \"X\" and .tid >= $base and .args.how != \"start\")] | length" "$WORK/chrome.json")
b=$(jq "[.traceEvents[] | select(.ph == \"B\" and .tid >= $base and .args.how != \"start\")] | length" "$WORK/chrome.json")
expect_eq "chrome: one X per resume, minus the still running ones" "$switches" $((x + b))
expect_eq "chrome: one flow per resume of a run it saw start" \
	"$(jq '[.traceEvents[] | select(.ph == "s")] | length' "$WORK/chrome.json")" \
	"$(jq '[.traceEvents[] | select(.ph == "f")] | length' "$WORK/chrome.json")"
expect_eq "chrome: a named track per coroutine" "$(q mn '[.[] | select(.type == "coro")] | length')" \
	"$(jq "[.traceEvents[] | select(.ph == \"M\" and .tid >= $base)] | length" "$WORK/chrome.json")"
view chrome_f.json --format=chrome --tid="$tid"
check "chrome of a filtered trace passes the checker" $CHROME_CHECK "$WORK/chrome_f.json"

# The report's findings as instant events: a lost wakeup on the waiting coroutine's track.
trace lost -- "$PROGRAMS/io_attribution" lost
"$CTP_CAT" --format=chrome "$WORK/lost.jsonl.zst" >"$WORK/lost.json"
check "chrome with findings: the checker accepts it" $CHROME_CHECK "$WORK/lost.json"
expect_eq "chrome: the lost wakeup is an instant event on a coroutine's track" 1 \
	"$(jq "[.traceEvents[] | select(.ph == \"i\" and .name == \"lost_wakeup\" and .tid >= $base)] | length" "$WORK/lost.json")"

finish
