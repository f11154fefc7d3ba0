# A coroutine waiting at four places in turn (suspend_places.c): the program runs as untraced;
# the first suspend at each place has its whole stack, naming the place and its caller; and the
# later ones keep their call site alone, as a coroutine waiting again where it waited before
# does, but for the few the collector caught still suspended (unwound from the saved context):
# fewer than one in ten. A tracer that kept fewer places than four walked every one.
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
compare suspend_places --expect "exit 0" -- "$TP_BIN/suspend_places" 1000
check "suspend_places: untraced, each place suspended 1000 times" \
	grep -qx "suspends at a, b, c, d: 1000 1000 1000 1000" "$WORK/suspend_places.native.out"
frames="(map(select(.type == \"stack\") | {key: (.id | tostring), value: [.frames[].sym]})
	| from_entries) as \$s"
for mode in "${TP_MODES[@]}"; do
	pid=$(tp_app_pid suspend_places "$mode" suspend_places)
	suspends="$frames | (.[] | select(.type == \"coro\" and .pid == ${pid:-0} and
		.kind == \"ucontext\") | .coro) as \$c | [.[] | select(.type == \"switch\" and
		.from == \$c) | \$s[.stack | tostring]]"
	expect_eq "suspend_places $mode (tracer correctness): the first four suspends, whole" \
		"place_a body|place_b body|place_c body|place_d body" \
		"$(tq suspend_places "$mode" "$suspends | .[0:4] | map(.[0:2] | join(\" \")) |
			join(\"|\")")"
	whole=$(tq suspend_places "$mode" "$suspends | .[4:] | map(select(length > 1)) | length")
	check "suspend_places $mode (tracer correctness): later suspends whole, $whole of 3996" \
		[ "${whole:-3996}" -lt 400 ]
done
finish
