# Boost.Context coroutines whose stacks are local arrays in the frames of main and of a pthread,
# after warm-up switches between heap-stack coroutines: one array 8 KiB, one placed so that its
# coroutine's stack pointer lies on the very page of the thread's own when it switches, one
# reused by a second make_fcontext after its first coroutine finished. Then a late pthread, on
# the stack the first one left with coroutines suspended on its arrays, switches between heap
# coroutines from frames where those arrays were. The program runs as untraced; in the trace
# each coroutine is one of its own that all its switches name, never taken for the thread whose
# stack holds it, and those left behind end with their thread, not taken for the late one.
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
name=fcontext_on_thread_stack
compare "$name" --expect "exit 0" -- "$TP_BIN/$name"
out=$WORK/$name.native.out
# The layout the case is about, else it proves nothing.
expect_eq "$name: untraced, each same-page coroutine was resumed from its own page every time" 2 \
	"$(grep -c '^[a-z]* array on its switch page: resumed from its own page every time: yes$' \
		"$out")"
check "$name: untraced, the late thread switched from inside its predecessor's arrays" \
	grep -qx "late: switched from inside its predecessor's arrays every time: yes" "$out"

# who, the coroutine's name in the program's output, its entry function, how many coroutines
# have that entry, which of them it is (in the order they were made).
coroutines=(
	"main|local array|main_local|1|0"
	"main|array on its switch page|main_shared_page|1|0"
	"main|reused array, first|main_reused_first|1|0"
	"main|reused array, again|main_reused_again|1|0"
	"thread|local array|thread_local_stack|1|0"
	"thread|array on its switch page|thread_shared_page|1|0"
	"thread|reused array, first|thread_reused_first|1|0"
	"thread|reused array, again|thread_reused_again|1|0"
	"late|heap one|late_on_heap|2|0"
	"late|heap two|late_on_heap|2|1"
)

# What the trace says of coroutine number $4 of the $3 whose entry is $2: its kind, who made it,
# and its switches: to it from its thread's own coroutine, from it back to that one, and any
# other switch naming it.
coro_summary() {
	tq "$name" "$1" '. as $all | [.[] | select(.type == "coro" and .entry == "'"$2"'")] as $c |
		if ($c | length) != '"$3"' then "\($c | length) coro lines" else $c['"$4"'] as $x |
		([$all[] | select(.type == "coro" and .coro == $x.parent)][0]) as $p |
		[$all[] | select(.type == "switch" and (.from == $x.coro or .to == $x.coro))] as $s |
		"\($x.kind), made by its thread: \($p.kind == "thread" and $p.tid == $x.tid), " +
		"resumed \([$s[] | select(.to == $x.coro and .from == $x.parent)] | length), " +
		"suspended \([$s[] | select(.from == $x.coro and .to == $x.parent)] | length), " +
		"other switches \([$s[] | select(.from != $x.parent and .to != $x.parent)] | length)"
		end'
}

for mode in "${TP_MODES[@]}"; do
	for c in "${coroutines[@]}"; do
		IFS='|' read -r who what entry count k <<<"$c"
		line=$(grep -m 1 "^$who $what: resumed " "$out")
		[[ $line =~ resumed\ ([0-9]+),\ suspended\ ([0-9]+) ]] || {
			expect_eq "$name: untraced output has $who's $what" "a line" "${line:-none}"
			continue
		}
		expect_eq "$name $mode (tracer correctness): $entry is its own coroutine with all its switches" \
			"fcontext, made by its thread: true, resumed ${BASH_REMATCH[1]}, suspended ${BASH_REMATCH[2]}, other switches 0" \
			"$(coro_summary "$mode" "$entry" "$count" "$k")"
	done
	# Each thread's own coroutine: resumed once for every switch away from its coroutines.
	for who_entry in main:main_local thread:thread_local_stack late:late_on_heap; do
		who=${who_entry%%:*} entry=${who_entry#*:}
		expect_eq "$name $mode (tracer correctness): $who's own coroutine resumed once per suspend of its coroutines" \
			"$(grep "^$who " "$out" | sed -n 's/.*, suspended \([0-9]*\),.*/\1/p' |
				awk '{ n += $1 } END { print n + 0 }')" \
			"$(tq "$name" "$mode" '([.[] | select(.type == "coro" and
				.entry == "'"$entry"'")][0].parent) as $t |
				[.[] | select(.type == "switch" and .to == $t)] | length')"
	done
	# The reused array: the first coroutine ended (abandoned: a new one was made on its stack)
	# before the second appeared, and they are two.
	for who in main thread; do
		expect_eq "$name $mode (tracer correctness): $who's reused array, two coroutines, the first ended before the second began" \
			"two, abandoned, before" \
			"$(tq "$name" "$mode" '. as $all |
				[.[] | select(.type == "coro" and .entry == "'"$who"'_reused_first")][0] as $a |
				[.[] | select(.type == "coro" and .entry == "'"$who"'_reused_again")][0] as $b |
				[.[] | select(.type == "coro_end" and .coro == $a.coro)][0] as $gone |
				"\(if $a.coro != $b.coro then "two" else "one" end), \($gone.how), " +
				"\(if $gone.ts <= $b.ts then "before" else "after" end)"')"
	done
	# The first pthread's coroutines still suspended on its arrays when it exited.
	for entry in thread_local_stack thread_reused_again; do
		expect_eq "$name $mode (tracer correctness): $entry ended with its thread, before the late one began" \
			"abandoned, before" \
			"$(tq "$name" "$mode" '
				[.[] | select(.type == "coro" and .entry == "'"$entry"'")][0] as $a |
				[.[] | select(.type == "coro" and .entry == "late_on_heap")][0] as $late |
				[.[] | select(.type == "coro_end" and .coro == $a.coro)][0] as $gone |
				"\($gone.how), \(if $gone.ts < $late.ts then "before" else "after" end)"')"
	done
done
finish
