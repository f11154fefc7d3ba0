# libpcl from Debian (Portable Coroutine Library over makecontext/swapcontext): main co_calls
# four generators until they return; each hands back 250 values with co_resume. A generator's
# return goes through co_exit_to, which switches to PCL's delete helper, a context PCL keeps on a
# 4 KiB stack of its own; the helper frees the generator and switches back to main. The program
# counts its own co_calls: the trace must have exactly that many switches into the generators,
# the resumes back, the two switches of each end, and nothing else.
#
# libpcl is stripped: its makecontext entry (a static runner) has an address but no name; the
# generator function is the frame right above it. PCL frees an ended coroutine's stack in the
# helper (the preload sees the free and ends the generator there). The helper itself lives on
# for the whole run: every resume it gets is a generator's last switch, so the report calls it
# idle (an end helper), not stuck or leaked: a healthy run has no finding.
source "$(dirname "$0")/lib.sh"

prog=$PROGRAMS/pcl_generators
"$prog" >"$WORK/plain.out"
trace pcl -- "$prog"
expect_eq "ctp-run exits as the program did" 0 "$status"
expect_eq "the program computes the same traced" "$(cat "$WORK/plain.out")" "$(cat "$WORK/pcl.out")"
read -r _ calls _ resumes _ sum <"$WORK/plain.out"
expect_eq "and right: 4 generators, 250 values each" "1004 1000 150124500" "$calls $resumes $sum"
expect_eq "nothing lost" "0 0" \
	"$(q pcl '"\([.[] | select(.type == "loss")] | length) \(.[] | select(.type == "end") | .lost)"')"

uc='[.[] | select(.type == "coro" and .kind == "ucontext")]'
expect_eq "one thread" 1 "$(q pcl '[.[] | select(.type == "coro" and .kind == "thread")] | length')"
expect_eq "five ucontext coroutines: four generators and PCL's delete helper" 5 "$(q pcl "$uc | length")"
main=$(q pcl '.[] | select(.type == "coro" and .kind == "thread") | .coro')
gens=$(q pcl "$uc | map(select(.parent == $main) | .coro) | join(\" \")")
helper=$(q pcl "$uc | map(select(.parent != $main) | .coro) | join(\" \")")
expect_eq "main made four, one generator made the helper (in its co_exit_to)" "4 1" \
	"$(echo "$gens" | wc -w) $(echo "$helper" | wc -w)"
expect_eq "all enter at one address (PCL's runner)" 1 "$(q pcl "$uc | map(.entry_addr) | unique | length")"
stacks='(map(select(.type == "stack") | {key: (.id | tostring), value: .frames}) | from_entries)'
expect_eq "the generators are made by co_create in main" "co_create main" \
	"$(q pcl "$stacks as \$s | $uc | map(select(.parent == $main) | \$s[.stack | tostring]
		| map(.sym) | .[index(\"co_create\"):index(\"co_create\") + 2] | join(\" \")) | unique | .[]")"
expect_eq "the helper by co_create in co_exit_to" "co_create co_exit_to" \
	"$(q pcl "$stacks as \$s | $uc | map(select(.parent != $main) | \$s[.stack | tostring]
		| map(.sym) | .[index(\"co_create\"):index(\"co_create\") + 2] | join(\" \")) | unique | .[]")"

# Every switch, counted against the program's own count.
sw() { q pcl "[.[] | select(.type == \"switch\" and $1)] | length"; }
gsel="(.to as \$t | [$(echo "$gens" | tr ' ' ',')] | index(\$t))"
gfrom="(.from as \$f | [$(echo "$gens" | tr ' ' ',')] | index(\$f))"
expect_eq "switches from main into the generators == the program's co_calls" "$calls" \
	"$(sw ".from == $main and $gsel")"
expect_eq "switches back to main == the program's resumes" "$resumes" "$(sw "$gfrom and .to == $main")"
expect_eq "each generator ends once into the helper" 4 "$(sw "$gfrom and .to == $helper")"
expect_eq "the helper goes back to main after each" 4 "$(sw ".from == $helper and .to == $main")"
expect_eq "nothing else" "$((calls + resumes + 8))" "$(sw "true")"
expect_eq "all of them swapcontext" 0 "$(sw ".how != \"swapcontext\"")"

# Where they suspend: a resume inside generate(), an end inside co_exit_to. By default a switch
# has its whole stack the first time a coroutine suspends at a place, and its call site after:
# each generator's resumes show the whole stack once, and every one the call site.
expect_eq "every resume suspends in co_call (its call site)" "co_call" \
	"$(q pcl "$stacks as \$s | [.[] | select(.type == \"switch\" and $gfrom and .to == $main)
		| \$s[.stack | tostring][0].sym] | unique | .[]")"
expect_eq "each generator's first resume: in co_resume inside generate(), above PCL's runner" \
	"co_call co_resume generate" \
	"$(q pcl "$stacks as \$s | [.[] | select(.type == \"switch\" and $gfrom and .to == $main)]
		| group_by(.from) | map(.[0] | \$s[.stack | tostring][0:3] | map(.sym) | join(\" \"))
		| unique | .[]")"
# With --stacks every-switch, every switch has its whole stack.
trace pcl_every --stacks every-switch -- "$prog"
expect_eq "(every-switch) ctp-run exits as the program did" 0 "$status"
gens_every=$(q pcl_every "$uc | map(select(.parent == $(q pcl_every '.[] | select(.type == "coro" and .kind == "thread") | .coro')) | .coro) | join(\",\")")
main_every=$(q pcl_every '.[] | select(.type == "coro" and .kind == "thread") | .coro')
expect_eq "(every-switch) every resume suspends in co_resume inside generate(), above PCL's runner" \
	"co_call co_resume generate" \
	"$(q pcl_every "$stacks as \$s | [.[] | select(.type == \"switch\" and
		(.from as \$f | [$gens_every] | index(\$f)) and .to == $main_every)
		| \$s[.stack | tostring][0:3] | map(.sym) | join(\" \")] | unique | .[]")"
expect_eq "every end suspends in co_exit_to" "co_call co_exit_to" \
	"$(q pcl "$stacks as \$s | [.[] | select(.type == \"switch\" and $gfrom and .to == $helper)
		| \$s[.stack | tostring][0:2] | map(.sym) | join(\" \")] | unique | .[]")"
expect_eq "every generator ended: exited, or suspended in co_exit_to" 0 \
	"$(q pcl "$stacks as \$s | [.[] | select(.type == \"state\" and $(echo "$gfrom" |
		sed 's/\.from/.coro/'))
		| select(.state != \"exited\" and (\$s[.stack | tostring] | map(.sym) | index(\"co_exit_to\"))
			== null)] | length")"
expect_eq "each generator was resumed 251 times" "251" \
	"$(q pcl "[.[] | select(.type == \"state\" and $(echo "$gfrom" | sed 's/\.from/.coro/'))
		| .switches] | unique | join(\",\")")"

# The report: no finding; the helper idle as an end helper, nothing else idle.
report_status=0
"$CTP_CAT" --report --json "$WORK/pcl.jsonl.zst" >"$WORK/pcl.report.json" || report_status=$?
expect_eq "--report exits 0" 0 "$report_status"
expect_eq "no finding" "[]" "$(jq -c '[.findings[] | .kind]' "$WORK/pcl.report.json")"
expect_eq "the helper is idle, an end helper, and nothing else is" "$helper:end_helper" \
	"$(jq -r '[.summary.idle_coros[] | "\(.coro):\(.why)"] | join(" ")' "$WORK/pcl.report.json")"
expect_eq "every generator exited, the helper is suspended, main runs" \
	"$gens:exited $helper:suspended $main:running" \
	"$(q pcl '[.[] | select(.type == "state")] | group_by(.state)
		| map("\(map(.coro) | sort | map(tostring) | join(" ")):\(.[0].state)")
		| sort_by(.|length) | reverse | join(" ")')"
finish
