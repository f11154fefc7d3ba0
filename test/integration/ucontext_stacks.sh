# Coroutines suspended inside distinct named functions: their final suspend stacks must name
# those functions, innermost first, with file:line pointing at the calls in the program's source
# (the source marks each such line with a comment the test looks for).
source "$(dirname "$0")/lib.sh"

SRC_NAME=test/programs/ucontext_stacks.c
trace st -- "$PROGRAMS/ucontext_stacks"
expect_eq "ctp-run exits as the app did" 0 "$status"
expect_eq "the app's output" "all suspended" "$(cat "$WORK/st.out")"
exe=$(q st '.[] | select(.type == "process") | .exe')

# frames ENTRY: the first three frames of the final suspend stack of the coroutine whose entry
# is ENTRY, one per line: "sym file line module".
frames() {
	q st "(map(select(.type == \"stack\") | {key: (.id | tostring), value: .frames}) | from_entries) as \$s
		| (.[] | select(.type == \"coro\" and .entry == \"$1\") | .coro) as \$c
		| .[] | select(.type == \"state\" and .coro == \$c) | \$s[.stack | tostring][0:3][]
		| \"\(.sym) \(.file) \(.line) \(.module)\""
}

# marker_ok FILE LINE MARKER: the source line FILE:LINE carries MARKER.
marker_ok() {
	[ -f "$1" ] && sed -n "${2}p" "$1" | grep -qF "$3"
}

for pair in reader:wait_for_input sleeper:wait_for_timer locker:wait_for_lock; do
	entry=${pair%%:*}
	waits=${pair#*:}
	expect_eq "$entry is suspended" suspended \
		"$(q st "(.[] | select(.type == \"coro\" and .entry == \"$entry\") | .coro) as \$c
			| .[] | select(.type == \"state\" and .coro == \$c) | .state")"
	mapfile -t f < <(frames "$entry")
	expect_eq "$entry's stack: yield < $waits < $entry" "yield $waits $entry" \
		"$(for l in "${f[@]}"; do printf '%s ' "${l%% *}"; done | sed 's/ $//')"
	i=0
	for marker in SUSPEND:yield "SUSPEND:$waits" "CALL:$entry"; do
		read -r sym file line module <<<"${f[$i]:-x x x x}"
		check "$sym: file is the program's source ($file)" [ "${file%"$SRC_NAME"}" != "$file" ]
		check "$sym: line $line is the call marked $marker" marker_ok "$file" "$line" "$marker"
		expect_eq "$sym: module" "$exe" "$module"
		i=$((i + 1))
	done
done

# Stacks read as the program's own: the trampoline that sees an entry function return is the
# tracer's, and untraced the frame below the entry is glibc's __start_context.
expect_eq "no frame of any stack is in the tracer" 0 \
	"$(q st '[.[] | select(.type == "stack") | .frames[] | select(.module // "" | test("libctp"))] | length')"
expect_eq "each coroutine's stack ends in __start_context, as untraced" \
	"locker:__start_context reader:__start_context sleeper:__start_context" \
	"$(q st '(map(select(.type == "stack") | {key: (.id | tostring), value: .frames}) | from_entries) as $s
		| . as $all | [$all[] | select(.type == "coro" and .kind == "ucontext") | .coro as $c
		| ([$all[] | select(.type == "state" and .coro == $c)][0].stack | tostring) as $id
		| "\(.entry):\($s[$id][-1].sym)"] | sort | join(" ")')"

# The state's stack is the one recorded at the coroutine's last suspend.
expect_eq "state stacks are the stacks of the last switches away" 0 \
	"$(q st '. as $all | [$all[] | select(.type == "state" and .stack != null) as $st
		| [$all[] | select(.type == "switch" and .from == $st.coro)] | last
		| select(.stack != $st.stack)] | length')"

finish
