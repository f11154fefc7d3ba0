# Programs the dynamic loader keeps the preload out of: statically linked ones (also as a
# script's interpreter), set-user-ID and set-group-ID ones, and ones with file capabilities run
# by a user other than root. ctp-run warns before it starts them; they run as they do untraced
# (same output, same exit status); what they start is traced, and a traced program that execs
# one ends in the trace with the status ctp-run saw. Programs for another dynamic loader (i386
# glibc's, musl's), which cannot load the preload, are warned of too, and started without it:
# nothing else on stderr, LD_PRELOAD as untraced. Programs that only look alike
# (set-user-ID of the user who runs them, capabilities run by root, a dynamic program) are
# traced without a warning.
source "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || {
	echo "FAIL: this test makes files of another user (set-ID bits, capabilities): run it as root" >&2
	exit 1
}
findmnt -n -o OPTIONS -T "$WORK" | tr ',' '\n' | grep -qx nosuid && {
	echo "FAIL: $WORK is on a nosuid file system, where set-ID bits do nothing; set TMPDIR" >&2
	exit 1
}

cd "$WORK"
processes() { q "$1" '[.[] | select(.type == "process")] | length'; }
warned() { grep -c 'ctp-run: warning: .*it runs untraced (programs it starts are traced if LD_PRELOAD reaches them)' "$WORK/$1.err" || true; }

# untraced_vs NAME PROGRAM ARGS: runs the program untraced, then under ctp-run as NAME, and
# compares stdout and exit status.
untraced_vs() {
	local name=$1
	shift
	local plain_status=0
	"$@" >"$WORK/$name.plain" 2>/dev/null || plain_status=$?
	trace "$name" -- "$@"
	expect_eq "($name) exit status as untraced" "$plain_status" "$status"
	check "($name) stdout as untraced" cmp -s "$WORK/$name.plain" "$WORK/$name.out"
}

# A static program: warned, nothing traced.
untraced_vs static "$PROGRAMS/static_exec"
expect_eq "(static) the warning names it, statically linked" 1 \
	"$(grep -c "^ctp-run: warning: $PROGRAMS/static_exec is statically linked" static.err || true)"
expect_eq "(static) no process in the trace" 0 "$(processes static)"

# What a static program starts is traced: the environment carries the preload on.
untraced_vs static_child "$PROGRAMS/static_exec" --exec "$PROGRAMS/tree_child" child 4
expect_eq "(static_child) warned about the static parent" 1 "$(warned static_child)"
expect_eq "(static_child) the exec'd dynamic program is traced, 8 switches" \
	"$PROGRAMS/tree_child 8" \
	"$(q static_child '(.[] | select(.type == "process") | .exe) + " " +
		([.[] | select(.type == "switch")] | length | tostring)')"

# A traced program that execs a static one: the trace ends the traced image's pid with the
# status ctp-run saw, rather than leaving it without an end.
untraced_vs exec_static env "$PROGRAMS/static_exec"
expect_eq "(exec_static) no warning: env itself is traced" 0 "$(warned exec_static)"
expect_eq "(exec_static) env's pid ends with the static program's status" "1 3" \
	"$(q exec_static '[.[] | select(.type == "process")] as $p | ($p | length | tostring)
		+ " " + ([.[] | select(.type == "exit" and .pid == $p[0].pid) | .status | tostring]
		| join(","))')"
report_status=0
"$CTP_CAT" --report "$WORK/exec_static.jsonl.zst" >exec_static.report || report_status=$?
expect_eq "(exec_static) the report reads the trace, and its process ended, not still running" \
	"0 1 0" "$report_status $(grep -c '1 process (1 ended' exec_static.report) $(grep -c 'has no exit' exec_static.report)"
# The same below the program ctp-run started: that process's status is nobody's to tell, but
# it has ended.
untraced_vs exec_static_child sh -c "env '$PROGRAMS/static_exec'; exit 5"
expect_eq "(exec_static_child) each pid, one exit: sh's 5, its fork child's (env) unknown" \
	"5 null" \
	"$(q exec_static_child '. as $all | [.[] | select(.type == "process") | .pid] | unique
		| map(. as $pid | [$all[] | select(.type == "exit" and .pid == $pid) | .status
		| tostring] | join(",")) | sort | join(" ")')"

# A script whose interpreter is static: the interpreter is named.
printf '#!%s\n' "$PROGRAMS/static_exec" >static_script
chmod +x static_script
untraced_vs script ./static_script
expect_eq "(script) the warning names the script and its static interpreter" 1 \
	"$(grep -c "^ctp-run: warning: ./static_script runs in $PROGRAMS/static_exec, which is statically linked" script.err || true)"

# Programs for another dynamic loader: the i386 one's would print an error into the program's
# stderr, musl's would not start it at all (exit 127).
for kind in i386 musl; do
	untraced_vs "foreign_$kind" "$CTP_BUILD_DIR/test/transparency/foreign_hello_$kind" top
	expect_eq "(foreign_$kind) warned: another loader; it and what it starts run untraced" 1 \
		"$(grep -c "^ctp-run: warning: .*/foreign_hello_$kind is a program of another ELF class, machine or C library, whose dynamic loader cannot load the preload; it runs untraced, and so do the programs it starts" "foreign_$kind.err" || true)"
	expect_eq "(foreign_$kind) nothing else on stderr but ctp's summary" 0 \
		"$(grep -vc '^ctp-run: warning: \|^ctp: ' "foreign_$kind.err" || true)"
	expect_eq "(foreign_$kind) LD_PRELOAD as untraced" "foreign_hello top: LD_PRELOAD unset" \
		"$(cat "foreign_$kind.out")"
done
printf '#!%s\n' "$CTP_BUILD_DIR/test/transparency/foreign_hello_musl" >musl_script
chmod +x musl_script
untraced_vs musl_script ./musl_script
expect_eq "(musl_script) the warning names the script and its musl interpreter" 1 \
	"$(grep -c "^ctp-run: warning: ./musl_script runs in .*/foreign_hello_musl, which is a program of another" musl_script.err || true)"

# A dynamic program: traced, no warning.
untraced_vs dynamic "$PROGRAMS/tree_child" dynamic 2
expect_eq "(dynamic) no warning" 0 "$(warned dynamic)"
expect_eq "(dynamic) traced" 1 "$(processes dynamic)"

# Set-user-ID and set-group-ID copies of the dynamic program. root runs them: one that makes
# it nobody is a privileged exec, one that makes it root again is not.
install -m 4755 -o nobody "$PROGRAMS/tree_child" suid_nobody
install -m 4755 -o root "$PROGRAMS/tree_child" suid_root
install -m 2755 -g nogroup "$PROGRAMS/tree_child" sgid_nogroup
untraced_vs suid ./suid_nobody suid 5
expect_eq "(suid) the warning says set-user-ID" 1 \
	"$(grep -c '^ctp-run: warning: ./suid_nobody is set-user-ID, and the dynamic loader ignores LD_PRELOAD' suid.err || true)"
expect_eq "(suid) no process in the trace" 0 "$(processes suid)"
untraced_vs suid_self ./suid_root suid_self 5
expect_eq "(suid_self) set-user-ID of the user who runs it: no warning" 0 "$(warned suid_self)"
expect_eq "(suid_self) traced" 1 "$(processes suid_self)"
untraced_vs sgid ./sgid_nogroup sgid 6
expect_eq "(sgid) the warning says set-group-ID" 1 "$(grep -c 'sgid_nogroup is set-group-ID' sgid.err || true)"
expect_eq "(sgid) no process in the trace" 0 "$(processes sgid)"

# File capabilities: a privileged exec for a user other than root. nobody runs ctp-run, from
# copies of its parts where nobody can reach them (the build tree may be under a private home).
install -m 755 "$PROGRAMS/tree_child" caps
setcap cap_net_raw+ep caps
mkdir -p nobody/bin nobody/preload nobody/tmp
cp "$CTP_BUILD_DIR/collector/ctp-run" "$CTP_BUILD_DIR/collector/ctp-collector" nobody/bin/
cp "$CTP_BUILD_DIR/preload/libctp_preload.so" nobody/preload/
install -m 755 "$PROGRAMS/tree_child" nobody/plain
chown -R nobody:nogroup nobody
chmod 755 "$WORK"
as_nobody() {
	local name=$1
	shift
	status=0
	TMPDIR=$WORK/nobody/tmp setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$WORK/nobody/bin/ctp-run" -o "$WORK/nobody/$name.jsonl.zst" -- "$@" \
		>"$WORK/$name.out" 2>"$WORK/$name.err" || status=$?
	"$CTP_CAT" "$WORK/nobody/$name.jsonl.zst" >"$WORK/$name.jsonl"
}
as_nobody caps "$WORK/caps" caps 7
expect_eq "(caps) run by nobody: the program's own exit status" 7 "$status"
expect_eq "(caps) the warning says file capabilities" 1 \
	"$(grep -c "^ctp-run: warning: $WORK/caps is given file capabilities" caps.err || true)"
expect_eq "(caps) no process in the trace" 0 "$(processes caps)"
as_nobody nobody_plain "$WORK/nobody/plain" plain 7
expect_eq "(nobody_plain) the same program without capabilities, run by nobody: traced" "7 0 1" \
	"$status $(warned nobody_plain) $(processes nobody_plain)"
untraced_vs caps_root ./caps caps_root 7
expect_eq "(caps_root) capabilities run by root: no warning" 0 "$(warned caps_root)"
expect_eq "(caps_root) traced" 1 "$(processes caps_root)"

finish
