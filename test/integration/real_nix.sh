# Debian's nix traced as installed: `nix-store --add` serializes a directory (its NAR) in a
# Boost.Coroutine2 coroutine of libnixutil (nix's sinkToSource: the coroutine writes, the store
# reads what it wrote) and hashes what it reads. Into a store of its own under $WORK (a chroot
# store: nothing outside the test directory is written). The store path depends on the content
# alone, so the traced run must print the very path the untraced one did and store the same
# files. The trace must show the one coroutine, made by the main thread inside nix's
# addToStore, switching with jump_fcontext as it hands over each piece, ending by Coroutine2's
# last ontop_fcontext, and suspending where nix's sink writes.
#
# libnixutil is stripped of its local symbols: frames inside its static functions have no name,
# and the text view shows them by their place in the file (libnixutil.so+0xOFF).
source "$(dirname "$0")/lib.sh"

mkdir -p "$WORK/src/sub"
head -c 4000000 /dev/urandom >"$WORK/src/sub/blob"
printf 'hello from a file nix hashes\n' >"$WORK/src/note"
add() { nix-store --store "local?root=$WORK/$1" --add "$WORK/src"; }

status=0
add plain >"$WORK/plain.out" 2>"$WORK/plain.err" || status=$?
expect_eq "untraced, nix-store --add stores the directory" "0 1" \
	"$status $(grep -c '^/nix/store/[a-z0-9]*-src$' "$WORK/plain.out")"
trace nix -- nix-store --store "local?root=$WORK/traced" --add "$WORK/src"
expect_eq "traced, it exits the same" 0 "$status"
expect_eq "and prints the same store path" "$(cat "$WORK/plain.out")" "$(cat "$WORK/nix.out")"
expect_eq "with nothing else on stderr but ctp's own lines" "$(cat "$WORK/plain.err")" \
	"$(grep -v '^ctp: ' "$WORK/nix.err")"
path=$(cat "$WORK/plain.out")
check "and stores the same files" diff -r "$WORK/plain$path" "$WORK/traced$path"

expect_eq "nothing lost" "0 0" \
	"$(q nix '"\([.[] | select(.type == "loss")] | length) \(.[] | select(.type == "end") | .lost)"')"
fc='[.[] | select(.type == "coro" and .kind == "fcontext")]'
expect_eq "one fcontext coroutine" 1 "$(q nix "$fc | length")"
main=$(q nix ".[] | select(.type == \"coro\" and .kind == \"thread\" and .tid == $(q nix '.[] | select(.type == "process") | .pid')) | .coro")
coro=$(q nix "$fc[0].coro")
expect_eq "made by the main thread" "$main" "$(q nix "$fc[0].parent")"
stacks='(map(select(.type == "stack") | {key: (.id | tostring), value: .frames}) | from_entries)'
expect_eq "inside nix's addToStore" true \
	"$(q nix "$stacks as \$s | \$s[$fc[0].stack | tostring] | map(.sym // \"\")
		| any(startswith(\"nix::Store::addToStore(\"))")"

sw() { q nix "[.[] | select(.type == \"switch\" and $1)] | length"; }
into=$(sw ".from == $main and .to == $coro")
back=$(sw ".from == $coro and .to == $main")
check "the coroutine hands over the 4 MB in many pieces ($into resumes)" [ "$into" -ge 100 ]
expect_eq "every resume is answered by a switch back" "$into" "$back"
expect_eq "and nothing else switches" "$((into + back))" "$(sw true)"
expect_eq "all by jump_fcontext but Coroutine2's first and last ontop_fcontext" \
	"$((into + back - 2)) 2" "$(sw '.how == "jump_fcontext"') $(sw '.how == "ontop_fcontext"')"
expect_eq "it ended by that last ontop_fcontext" "ended ontop_fcontext" \
	"$(q nix ".[] | select(.type == \"coro_end\" and .coro == $coro) | \"\(.how) \(.switch)\"")"
expect_eq "and its final state says exited" exited \
	"$(q nix ".[] | select(.type == \"state\" and .coro == $coro) | .state")"
sinks=$(q nix "$stacks as \$s | [.[] | select(.type == \"switch\" and .from == $coro
	and .stack != null) | \$s[.stack | tostring] | map(.sym // \"\")
	| select(any(startswith(\"nix::LambdaSink::operator()\")))] | length")
check "its suspends with a whole stack are in nix's sink ($sinks)" [ "$sinks" -ge 1 ]

"$CTP_CAT" --format=text "$WORK/nix.jsonl.zst" >"$WORK/nix.txt"
check "the text view shows libnixutil's unnamed frames as libnixutil.so+0xOFF" \
	grep -q ' at libnixutil\.so+0x[0-9a-f]*$' "$WORK/nix.txt"
report_status=0
"$CTP_CAT" --report --json "$WORK/nix.jsonl.zst" >"$WORK/report.json" || report_status=$?
expect_eq "ctp-cat --report: exit 0, no finding in a healthy run" "0 0" \
	"$report_status $(jq '.findings | length' "$WORK/report.json")"
finish
