# Where ctp-run and the plain form write a trace: never through a symbolic link (a dangling one
# would create its target, a live one would truncate it), a new file of mode 0600 (a trace holds
# argv and paths), an earlier trace kept as FILE.old, a device written as it is. ctp-run's own
# failures exit 125, which no traced program's status 2 can be mistaken for.
source "$(dirname "$0")/lib.sh"

PINGPONG=$PROGRAMS/ucontext_pingpong
PRELOAD=$CTP_BUILD_DIR/preload/libctp_preload.so
cd "$WORK"

# run NAME ctp-run-args...: ctp-run's status in $st, its stderr in NAME.err.
run() {
	local name=$1
	shift
	st=0
	"$CTP_RUN" "$@" >"$name.out" 2>"$name.err" || st=$?
}

# A link to a file: refused, the file untouched, no FILE.old made of the link.
echo "not a trace" >victim
ln -s victim link
run a -o link "$PINGPONG" 3
expect_eq "a link to a file: ctp-run's own failure" 125 "$st"
check "a link to a file: says it refuses the link" \
	grep -q "link: is a symbolic link; refusing to write a trace through it" a.err
expect_eq "a link to a file: the file is untouched" "not a trace" "$(cat victim)"
check "a link to a file: the link is still there" test -L link
check "a link to a file: no .old made" test ! -e link.old

# A dangling link: refused, its target not created.
ln -s created-through-link dangling
run b -o dangling "$PINGPONG" 3
expect_eq "a dangling link: ctp-run's own failure" 125 "$st"
check "a dangling link: its target is not created" test ! -e created-through-link

# A new trace is private; an earlier one is kept as FILE.old (with its own mode).
umask 022
run c -o t.jsonl.zst "$PINGPONG" 3
expect_eq "a new trace: the run" 0 "$st"
expect_eq "a new trace: mode 0600 whatever the umask" 600 "$(stat -c %a t.jsonl.zst)"
run d -o t.jsonl.zst "$PINGPONG" 3
check "a second run: the first trace is kept as FILE.old" test -f t.jsonl.zst.old
expect_eq "a second run: the new trace is 0600 too" 600 "$(stat -c %a t.jsonl.zst)"
check "a second run: both are traces" "$CTP_CAT" t.jsonl.zst.old >/dev/null

# A device is written as it is: not moved, not replaced.
run e -o /dev/null "$PINGPONG" 3
expect_eq "/dev/null as output: the run" 0 "$st"
check "/dev/null is still a character device" test -c /dev/null

# The launcher's own failures: 125; the program's own 2 stays 2.
run f -o "$WORK/no-such-dir/t.jsonl.zst" "$PINGPONG" 3
expect_eq "an output that cannot be created: 125" 125 "$st"
check "an output that cannot be created: says why" grep -q "no-such-dir/t.jsonl.zst: No such file" f.err
run g --stack-depth=bogus "$PINGPONG" 3
expect_eq "a usage error: 125" 125 "$st"
run h -o h.jsonl.zst "$PINGPONG" 3 2
expect_eq "the program's own exit status 2 passes through" 2 "$st"

# The plain form (the collector the preload starts): the same rules for CTP_OUTPUT. The program
# runs on untraced, as it would without the tracer, with its own status.
echo "not a trace either" >victim2
ln -s victim2 plainlink
st=0
CTP_OUTPUT=$WORK/plainlink LD_PRELOAD=$PRELOAD "$PINGPONG" 3 4 >i.out 2>i.err || st=$?
expect_eq "plain form through a link: the program's own status" 4 "$st"
expect_eq "plain form through a link: the file is untouched" "not a trace either" "$(cat victim2)"
check "plain form through a link: the collector says why" \
	grep -q "plainlink: is a symbolic link; refusing to write a trace through it" i.err

finish
