#!/usr/bin/env bash
# The Debian package, as a user gets it: scripts/package builds it, `apt-get install ./ctp_*.deb`
# installs it, the installed ctp-run traces a program with the installed collector and preload
# (found from where they are installed, never from a build tree), the installed ctp-cat reads
# the trace, `man` finds the pages, bash-completion loads the completion; then `apt-get remove`
# takes every file away again. It must run as root (it installs a package: this machine and CI
# are root) and fails when it is not. The package is removed however the test ends.
. "$(dirname "$0")/lib.sh"

if [ "$(id -u)" -ne 0 ]; then
	echo "FAIL: this test installs a Debian package and must run as root" >&2
	exit 1
fi
if dpkg-query -W -f='${Status}' ctp 2>/dev/null | grep -q installed; then
	echo "FAIL: a ctp package is installed already; this test installs and removes its own:" \
		"remove it first (apt-get remove ctp)" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
APT=(apt-get -y -q -o DPkg::Lock::Timeout=600)
ARCH=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
PRELOAD=/usr/lib/$ARCH/ctp/libctp_preload.so
# The gdb extension, for `source`, and its copy that gdb auto-loads (default safe-path).
GDB_PY=/usr/share/ctp/gdb/ctp.py
GDB_AUTOLOAD=/usr/share/gdb/auto-load$PRELOAD-gdb.py

remove_package() {
	if dpkg-query -W -f='${Status}' ctp 2>/dev/null | grep -q installed; then
		dpkg --purge ctp >/dev/null || echo "FAIL: dpkg --purge ctp failed" >&2
	fi
}
at_exit remove_package

deb=$("$CTP_SOURCE_DIR/scripts/package" "$WORK/pkg" 2>"$WORK/package.err") || {
	tail -30 "$WORK/package.err" >&2
	false
}
check "scripts/package makes ctp_VERSION_ARCH.deb" test -f "$deb"
expect_eq "the .deb's name" "ctp_$("$CTP_CAT" --version | grep -o '[0-9][0-9.]*')_$(dpkg --print-architecture).deb" \
	"$(basename "$deb")"
depends=$(dpkg-deb -f "$deb" Depends)
for lib in libunwind8 libelf1 libdw1 libzstd1 libjansson4 libc6; do
	check "Depends names $lib ($depends)" grep -qw "$lib" <<<"$depends"
done

(cd "$(dirname "$deb")" && "${APT[@]}" install "./$(basename "$deb")") >"$WORK/install.out" 2>&1 || {
	cat "$WORK/install.out" >&2
	false
}
expect_eq "dpkg says ctp is installed" "install ok installed" \
	"$(dpkg-query -W -f='${Status}' ctp)"
dpkg -L ctp >"$WORK/files"
for f in /usr/bin/ctp-run /usr/bin/ctp-collector /usr/bin/ctp-cat /usr/bin/ctp-pstack "$PRELOAD" \
	/usr/share/man/man1/ctp-run.1.gz /usr/share/man/man1/ctp-cat.1.gz \
	/usr/share/man/man1/ctp-pstack.1.gz \
	/usr/share/man/man1/ctp-collector.1.gz /usr/share/man/man7/ctp.7.gz \
	/usr/share/bash-completion/completions/ctp-run /usr/share/bash-completion/completions/ctp-cat \
	/usr/share/bash-completion/completions/ctp-pstack \
	/usr/share/doc/ctp/README.md /usr/share/doc/ctp/docs/trace-format.md \
	/usr/share/doc/ctp/examples/lost_wakeup/server.c "$GDB_PY" "$GDB_AUTOLOAD"; do
	check "the package installs $f" test -f "$f"
	check "dpkg lists $f" grep -qxF "$f" "$WORK/files"
done
# The README's links to the project's documents lead to installed files.
for link in $(grep -o '](\(docs\|ctp\|examples\)/[^)#]*' /usr/share/doc/ctp/README.md | cut -c3- | sort -u); do
	check "README's link $link resolves where it is installed" test -f "/usr/share/doc/ctp/$link"
done
for f in /usr/bin/ctp-run /usr/bin/ctp-collector /usr/bin/ctp-cat "$PRELOAD"; do
	check "$f has no RPATH/RUNPATH" bash -c "! readelf -d '$f' | grep -qE 'R(UN)?PATH'"
	check "$f names no build tree" bash -c "! grep -qF '$WORK/pkg' '$f'"
done

# The installed tools, with a clean environment: nothing from the build tree on the way.
run() {
	env -i PATH=/usr/bin:/bin HOME="$WORK" "$@"
}
mkdir "$WORK/run"
cd "$WORK/run"
st=0
run ctp-run -o pp.jsonl.zst -- "$PROGRAMS/ucontext_pingpong" 50 >pp.out 2>pp.err || st=$?
expect_eq "the installed ctp-run exits as the app did" 0 "$st"
check "ctp-run's summary line" grep -q "^ctp: 1 process, 1 coroutine and 1 thread, 102 switches, 0 events lost" pp.err
st=0
run ctp-cat pp.jsonl.zst >pp.jsonl || st=$?
expect_eq "the installed ctp-cat reads the trace whole" 0 "$st"
expect_eq "the trace's coroutines" "thread:null,ucontext:pong" \
	"$(jq -r -s '[.[] | select(.type == "coro") | "\(.kind):\(.entry)"] | sort | join(",")' pp.jsonl)"
expect_eq "switch lines" 102 "$(jq -s '[.[] | select(.type == "switch")] | length' pp.jsonl)"
check "stacks are symbolized by the installed collector (pong in a frame)" \
	jq -e -s 'any(.[] | select(.type == "stack") | .frames[]; .sym == "pong")' pp.jsonl >/dev/null
st=0
run ctp-cat --report pp.jsonl.zst >pp.report || st=$?
expect_eq "ctp-cat --report on it" 0 "$st"
check "the report's summary says each count in the right number" grep -q \
	"^  1 process (1 ended, 0 by a signal), 1 coroutine and 1 thread, 102 switches, 0 fd events, 0 events lost, " \
	pp.report
# The program traced sees the installed preload.
run ctp-run -o maps.jsonl.zst -- grep -m1 -o '/[^ ]*libctp_preload\.so' /proc/self/maps >maps.out 2>maps.err
expect_eq "ctp-run preloads the installed library" "$PRELOAD" "$(cat maps.out)"
# The plain form: the installed preload starts the installed collector.
st=0
run LD_PRELOAD="$PRELOAD" CTP_OUTPUT="$WORK/run/plain.jsonl.zst" "$PROGRAMS/ucontext_pingpong" 50 \
	>plain.out 2>plain.err || st=$?
expect_eq "the plain LD_PRELOAD form runs" 0 "$st"
st=0
run timeout 60 ctp-cat -f plain.jsonl.zst >plain.jsonl || st=$?
expect_eq "the plain form's collector (found from the preload) wrote a whole trace" 0 "$st"
expect_eq "its switch lines" 102 "$(jq -s '[.[] | select(.type == "switch")] | length' plain.jsonl)"

# gdb loads the extension by itself for a program that maps the installed preload: its
# auto-load directory is on gdb's default safe-path (-nx: no init file says otherwise).
mkfifo "$WORK/run/hold"
(exec env -i PATH=/usr/bin:/bin LD_PRELOAD="$PRELOAD" CTP_OUTPUT="$WORK/run/parked.jsonl.zst" \
	"$PROGRAMS/pstack_parked" 5 <"$WORK/run/hold" >parked.out 2>parked.err) &
parked=$!
at_exit kill $parked
exec 4>"$WORK/run/hold"
for _ in $(seq 600); do
	grep -q '^parked 5 fd ' parked.out && break
	sleep 0.05
done
st=0
timeout 120 gdb -batch -nx -p $parked -ex 'ctp coroutines' -ex 'ctp bt 2' >gdb.out 2>gdb.err || st=$?
expect_eq "gdb with the auto-loaded extension exits 0" 0 "$st"
expect_eq "ctp coroutines lists the 5 parked coroutines" 5 \
	"$(grep -Ec '^#[0-9]+ +ucontext +suspended .* read fd [0-9]+ +coro_body +park_on_pipe\+0x' gdb.out)"
expect_eq "ctp bt 2 unwinds one in the installed preload's program" "park_on_pipe coro_body" \
	"$(sed -En 's/^#[0-9]+ +0x[0-9a-f]+ in ([^ ]+) .*/\1/p' gdb.out | sed -n 1,2p | tr '\n' ' ' | sed 's/ $//')"
exec 4>&-
st=0
wait $parked || st=$?
expect_eq "the program ends as it would have" "0:parked 5 fd" \
	"$st:$(sed -n 's/ [0-9]*$//p' parked.out)"

# man and bash completion find what the package installed.
expect_eq "man -w ctp-cat" /usr/share/man/man1/ctp-cat.1.gz "$(man -w ctp-cat)"
expect_eq "man -w ctp-run" /usr/share/man/man1/ctp-run.1.gz "$(man -w ctp-run)"
expect_eq "man -w ctp-collector" /usr/share/man/man1/ctp-collector.1.gz "$(man -w ctp-collector)"
expect_eq "man -w 7 ctp" /usr/share/man/man7/ctp.7.gz "$(man -w 7 ctp)"
check "man ctp-cat shows its options" bash -c "MANPAGER=cat MANWIDTH=120 man ctp-cat 2>/dev/null | grep -q 'format=FMT'"
for c in ctp-run ctp-cat; do
	expect_eq "bash-completion loads the completion of $c" "complete -F _${c//-/_} $c" \
		"$(bash -c ". /usr/share/bash-completion/bash_completion; _completion_loader $c; complete -p $c" 2>&1)"
done

# Removing the package takes every file away.
cd "$WORK"
"${APT[@]}" remove ctp >"$WORK/remove.out" 2>&1 || cat "$WORK/remove.out" >&2
expect_eq "dpkg says ctp is gone" "" "$(dpkg-query -W -f='${Status}' ctp 2>/dev/null | grep ' installed' || true)"
left=$(while read -r f; do if [ -f "$f" ]; then echo "$f"; fi; done <"$WORK/files" | tr '\n' ' ')
expect_eq "no file of the package is left" "" "$left"
check "the preload's directory is gone" test ! -e "/usr/lib/$ARCH/ctp"
check "man -w ctp-cat finds nothing any more" bash -c '! man -w ctp-cat 2>/dev/null'
finish
