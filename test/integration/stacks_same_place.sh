# A coroutine that suspends again and again at one call site and at one stack depth, reached
# alternately through two callers whose frames are alike (read_header, read_body). The process
# unwinds its stack only the first time at a place; the collector unwinds the suspends that
# last from their saved contexts, and when a coroutine comes back to a place it unwound before,
# it checks the return addresses in memory instead of walking again. Same place, other caller:
# each suspend must still name its own caller.
source "$(dirname "$0")/lib.sh"

# Each round the coroutine suspends and the program waits for a byte on its standard input (a
# fifo the test holds): the test sends it once the suspend's switch line is in the live trace,
# so that every suspend lasts until the collector has dealt with it, however slow it is.
mkfifo "$WORK/sp.hold"
"$CTP_RUN" -o "$WORK/sp.jsonl.zst" -- "$PROGRAMS/same_place_callers" 8 0 <"$WORK/sp.hold" \
	>"$WORK/sp.out" 2>"$WORK/sp.err" &
sp_pid=$!
exec 8>"$WORK/sp.hold"
# suspends_written N: the live trace has N switch lines of the coroutine suspending.
suspends_written() {
	local n
	n=$({ "$CTP_CAT" "$WORK/sp.jsonl.zst" 2>/dev/null || true; } | jq -s '[.[] |
		select(.type == "coro" and .kind == "ucontext") | .coro][0] as $c | [.[] |
		select(.type == "switch" and $c != null and .from == $c)] | length')
	[ "${n:-0}" -ge "$1" ]
}
for round in $(seq 8); do
	check "suspend $round is in the live trace while it lasts" wait_until 60 suspends_written "$round"
	echo >&8
done
exec 8>&-
status=0
wait "$sp_pid" || status=$?
expect_eq "ctp-run exits as the program did" 0 "$status"
cat_status=0
"$CTP_CAT" "$WORK/sp.jsonl.zst" >"$WORK/sp.jsonl" || cat_status=$?
expect_eq "ctp-cat reads the trace whole" 0 "$cat_status"
expect_eq "the program's output" "rounds=8" "$(cat "$WORK/sp.out")"

# The caller (second frame) of each suspend of the coroutine, in order; "-" when its switch
# line kept only the call site.
callers=$(q sp '(map(select(.type == "stack") | {key: (.id | tostring), value: .frames}) | from_entries) as $s
	| (.[] | select(.type == "coro" and .kind == "ucontext") | .coro) as $c
	| [.[] | select(.type == "switch" and .from == $c) | $s[.stack | tostring]
		| if length > 1 then .[1].sym else "-" end] | join(" ")')
echo "callers: $callers"
expect_eq "the first suspend, unwound by the process, names read_header" read_header \
	"$(echo "$callers" | cut -d' ' -f1)"
wrong=0 headers=0 bodies=0 i=0
for caller in $callers; do
	want=$([ $((i % 2)) -eq 0 ] && echo read_header || echo read_body)
	if [ "$caller" != - ] && [ "$caller" != "$want" ]; then wrong=$((wrong + 1)); fi
	if [ $i -ge 1 ] && [ "$caller" = read_header ]; then headers=$((headers + 1)); fi
	if [ "$caller" = read_body ]; then bodies=$((bodies + 1)); fi
	i=$((i + 1))
done
expect_eq "8 suspends" 8 "$i"
expect_eq "no suspend is given the other caller's stack" 0 "$wrong"
# Each suspend lasted until its line was written: the collector unwound every one.
expect_eq "the collector unwound every read_body suspend" 4 "$bodies"
expect_eq "and every read_header one after them" 3 "$headers"

# Many coroutines made alike, each suspending once at that place and depth, in groups of ten
# through read_header, then read_body, and so on: each suspend is a first at its place, unwound
# by the process, which may serve a stack it remembered from an earlier coroutine only where
# memory still holds it. Each must have its whole stack, through its own caller.
N=60 GROUP=10
trace many -- "$PROGRAMS/same_place_many" $N $GROUP
expect_eq "ctp-run exits as the program did" 0 "$status"
expect_eq "the program's output" "coroutines=$N group=$GROUP" "$(cat "$WORK/many.out")"
# Per coroutine in the order made: the functions of the stack of its first suspend.
q many '(map(select(.type == "stack") | {key: (.id | tostring), value: [.frames[].sym]})
		| from_entries) as $s
	| .[] as $l | select($l.type == "coro" and $l.kind == "ucontext") | $l.coro as $c
	| [$s[([.[] | select(.type == "switch" and .from == $c)][0].stack | tostring)] // [] | .[]]
	| join(" ")' >"$WORK/many.stacks"
expected=$(for i in $(seq 0 $((N - 1))); do
	caller=$([ $(((i / GROUP) % 2)) -eq 0 ] && echo read_header || echo read_body)
	echo "wait_io $caller connection entry __start_context"
done)
expect_eq "all $N suspends have their whole stack, through their own caller" "$expected" \
	"$(cat "$WORK/many.stacks")"
finish
