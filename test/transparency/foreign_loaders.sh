# A traced program starts programs for another dynamic loader, which cannot take the preload:
# one built for i386 (glibc's loader of the other ELF class prints "cannot be preloaded" into
# the program's stderr) and one built with musl (whose loader fails on the preload: the program
# never runs). It starts each by a fork child's execv and execvp, a vfork child's execve,
# posix_spawn, posix_spawnp and system(). Each must run as untraced: same output, no line on
# stderr, exit 7 every time, and LD_PRELOAD unset in it as it was untraced (the preload is taken
# out of it, and the variable with it when nothing else was in it). So must each run by its
# loader named on a shell's command line, as ldd runs programs. With a library of the user's
# in LD_PRELOAD too, under ctp-run, the i386 program gets that library alone, as untraced.
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
for kind in i386 musl; do
	name=foreign_$kind
	compare "$name" --expect "exit 0" -- "$TP_BIN/foreign_exec" "$TP_BIN/foreign_hello_$kind"
	expect_eq "$name: untraced, eight starts, each exit 7, each saw no LD_PRELOAD" "8 8" \
		"$(grep -c ': exit 7$' "$WORK/$name.native.out") $(grep -c ': LD_PRELOAD unset$' \
			"$WORK/$name.native.out")"
	for mode in "${TP_MODES[@]}"; do
		# Tracer correctness: the starting program and system()'s shell are traced.
		expect_eq "$name $mode (tracer correctness): foreign_exec and its shell are traced" \
			"true true" "$(tq "$name" "$mode" '[.[] | select(.type == "process") | .exe] |
				(.[0] | endswith("/foreign_exec") | tostring) + " " +
				(any(endswith("/dash") or endswith("/sh")) | tostring)')"
	done
done

# The loaders run as programs: each is known by its name.
compare loaders_direct --expect "exit 0" -- sh -c "/lib/ld-linux.so.2 $TP_BIN/foreign_hello_i386 i386
	/lib/ld-musl-x86_64.so.1 $TP_BIN/foreign_hello_musl musl; exit 0"
expect_eq "loaders_direct: untraced, both ran with no LD_PRELOAD" \
	$'foreign_hello i386: LD_PRELOAD unset\nforeign_hello musl: LD_PRELOAD unset' \
	"$(cat "$WORK/loaders_direct.native.out")"

user_preload() {
	LD_PRELOAD=libm.so.6 "$@" "$TP_BIN/foreign_exec" "$TP_BIN/foreign_hello_i386"
}
status=0
user_preload >"$WORK/user_preload.native.out" 2>"$WORK/user_preload.native.err" || status=$?
expect_eq "user_preload: untraced, exit 0, eight starts, each with libm.so.6 alone" "0 8" \
	"$status $(grep -c ': LD_PRELOAD libm.so.6$' "$WORK/user_preload.native.out")"
status=0
user_preload "$CTP_RUN" -o "$WORK/user_preload.jsonl.zst" -- >"$WORK/user_preload.out" \
	2>"$WORK/user_preload.err" || status=$?
expect_eq "user_preload: ctp-run, exit 0" 0 "$status"
same_file "user_preload: ctp-run, stdout" "$WORK/user_preload.native.out" "$WORK/user_preload.out"
grep -v '^ctp: ' "$WORK/user_preload.err" >"$WORK/user_preload.err.own" || true
same_file "user_preload: ctp-run, stderr (without ctp: lines)" "$WORK/user_preload.native.err" \
	"$WORK/user_preload.err.own"
finish
