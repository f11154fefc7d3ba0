# A coroutine that suspends again and again at one call site and at one stack depth, reached
# alternately through two callers whose frames are alike (read_header, read_body). The process
# unwinds its stack only the first time at a place; the collector unwinds the suspends that
# last from their saved contexts, and when a coroutine comes back to a place it unwound before,
# it checks the return addresses in memory instead of walking again. Same place, other caller:
# each suspend must still name its own caller.
source "$(dirname "$0")/lib.sh"

trace sp -- "$PROGRAMS/same_place_callers" 8 300
expect_eq "ctp-run exits as the program did" 0 "$status"
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
check "the collector unwound read_body suspends ($bodies of 4)" [ "$bodies" -ge 2 ]
check "and read_header ones again after them ($headers of 3)" [ "$headers" -ge 2 ]

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
