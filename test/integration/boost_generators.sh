# Boost.Coroutine2 generators (jump_fcontext and ontop_fcontext of libboost_context): a drained
# pipeline, generators destroyed before they finish (forced unwind), one leaked, exceptions
# inside coroutines. Each coroutine keeps one id for its whole life; the ended ones are exited,
# the leaked one suspended in its generator function.
source "$(dirname "$0")/lib.sh"

prog=$PROGRAMS/boost_generators
"$prog" >"$WORK/plain.out"
trace gen -- "$prog"
expect_eq "ctp-run exits as the app did" 0 "$status"
expect_eq "the app computes the same with the tracer (exceptions included)" \
	"$(cat "$WORK/plain.out")" "$(cat "$WORK/gen.out")"
expect_eq "and what it computes is right" \
	"pipeline sum 385|taken 7 unwound 3|leaked at 101|caught 1008, rethrown 'out of the generator'" \
	"$(paste -sd'|' "$WORK/gen.out")"

# The contexts: the main thread and nine generators.
fc='[.[] | select(.type == "coro" and .kind == "fcontext")]'
expect_eq "one thread" 1 "$(q gen '[.[] | select(.type == "coro" and .kind == "thread")] | length')"
expect_eq "nine fcontext coroutines" 9 "$(q gen "$fc | length")"
expect_eq "ids unique" 10 "$(q gen '[.[] | select(.type == "coro") | .coro] | unique | length')"
expect_eq "every entry is symbolized as Boost's fiber entry" 9 \
	"$(q gen "$fc | map(select(.entry != null and (.entry | contains(\"fiber_entry<\")))) | length")"
main=$(q gen '.[] | select(.type == "coro" and .kind == "thread") | .coro')
expect_eq "all made by the main thread" "$main" "$(q gen "$fc | map(.parent) | unique | join(\",\")")"
expect_eq "switches name known coroutines only" 0 \
	"$(q gen '([.[] | select(.type == "coro") | .coro]) as $ids | [.[] | select(.type == "switch")
		| select((.from as $f | $ids | index($f)) == null or (.to as $t | $ids | index($t)) == null)]
		| length')"

# One id for a whole life: the resumes counted in the station equal the switches to that id.
expect_eq "every coroutine's switch count matches the switches to its id" 0 \
	"$(q gen '[.[] | select(.type == "switch") | .to] as $to | [.[] | select(.type == "state")
		| .coro as $c | select(.switches != ([$to[] | select(. == $c)] | length)
			+ (if .coro == '"$main"' then 1 else 0 end))] | length')"

# Where each coroutine suspended, by the generator functions its suspend stacks name.
gens='(reduce (.[] | select(.type == "stack")) as $s ({};
		.[$s.id | tostring] = [$s.frames[].sym // "" | capture("^(?<g>gen_[a-z]+)\\(").g]))
	as $syms | [.[] | select(.type == "switch" and .stack != null)
		| {coro: .from, g: $syms[.stack | tostring][]}] | group_by(.g)
	| map({key: .[0].g, value: (map(.coro) | unique)}) | from_entries'
expect_eq "generator functions seen suspended" "gen_catches,gen_forever,gen_leaked,gen_numbers,gen_squares,gen_throws" \
	"$(q gen "$gens | keys | join(\",\")")"
expect_eq "three gen_forever coroutines" 3 "$(q gen "$gens | .gen_forever | length")"
expect_eq "two gen_squares coroutines" 2 "$(q gen "$gens | .gen_squares | length")"
leaked=$(q gen "$gens | .gen_leaked // [] | join(\",\")")
expect_eq "one leaked coroutine ($leaked)" 1 "$(q gen "$gens | .gen_leaked | length")"

# The end states: all but the leaked one exited, through Boost's last ontop switch.
st='[.[] | select(.type == "state")]'
expect_eq "ten state lines" 10 "$(q gen "$st | length")"
expect_eq "eight generators exited" 8 \
	"$(q gen "$st | map(select(.state == \"exited\" and .coro != $main)) | length")"
expect_eq "the leaked generator is suspended" suspended \
	"$(q gen ".[] | select(.type == \"state\" and .coro == $leaked) | .state")"
lstack=$(q gen ".[] | select(.type == \"state\" and .coro == $leaked) | .stack")
expect_eq "its suspend stack names its generator function" 1 \
	"$(q gen "[.[] | select(.type == \"stack\" and .id == $lstack) | .frames[]
		| select(.sym != null and (.sym | startswith(\"gen_leaked(\")))] | length")"
expect_eq "each exited one left by an ontop switch without a stack, once" 0 \
	"$(q gen "[.[] | select(.type == \"switch\")] as \$sw
		| $st | map(select(.state == \"exited\" and .coro != $main) | .coro) | [.[] as \$c
		| [\$sw[] | select(.from == \$c and .stack == null)] | select(length != 1
			or .[0].how != \"ontop_fcontext\")] | length")"
expect_eq "each exited one has one coro_end: ended by ontop_fcontext" 0 \
	"$(q gen "[.[] | select(.type == \"coro_end\")] as \$ends
		| $st | map(select(.state == \"exited\" and .coro != $main) | .coro) | [.[] as \$c
		| [\$ends[] | select(.coro == \$c)] | select(length != 1 or .[0].how != \"ended\"
			or .[0].switch != \"ontop_fcontext\")] | length")"
expect_eq "destroyed generators are unwound by an ontop switch into them" 0 \
	"$(q gen "($gens | .gen_forever) as \$fe | [.[] | select(.type == \"switch\")] as \$sw
		| [\$fe[] as \$c | [\$sw[] | select(.to == \$c)] | last
			| select(.how != \"ontop_fcontext\")] | length")"
expect_eq "the main thread is running" running \
	"$(q gen ".[] | select(.type == \"state\" and .coro == $main) | .state")"
expect_eq "nothing lost" 0 "$(q gen '[.[] | select(.type == "loss")] | length')"

finish
