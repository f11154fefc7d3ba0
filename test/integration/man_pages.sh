#!/usr/bin/env bash
# The man pages (man/*.scd, built into BUILD/man by scdoc) against the tools' own --help: every
# long option a tool's --help prints is in its rendered man page, and every option the page
# defines (a term line of its one source) is one the --help knows. --help and --version exit 0,
# print on stdout, and leave stderr empty. A missing page (scdoc not installed: scripts/deps
# installs it) fails the test.
. "$(dirname "$0")/lib.sh"

MAN=$CTP_BUILD_DIR/man
SRC=$CTP_SOURCE_DIR/man
declare -A TOOL=([ctp-run]=$CTP_RUN [ctp-cat]=$CTP_CAT
	[ctp-collector]=$CTP_BUILD_DIR/collector/ctp-collector [ctp-pstack]=$CTP_BUILD_DIR/pstack/ctp-pstack)

long_options() {
	grep -o -- '--[a-z][a-z0-9-]*' | sort -u
}

# A page as man shows it, on one very wide terminal so that no option is broken, with groff's
# hyphen and minus signs turned back into ASCII.
rendered() {
	MANWIDTH=400 man -l "$1" 2>"$WORK/man.err" | col -b | sed 's/\xe2\x80\x90/-/g; s/\xe2\x88\x92/-/g'
	[ ! -s "$WORK/man.err" ] || {
		echo "man -l $1 says: $(cat "$WORK/man.err")" >&2
		return 1
	}
}

for name in ctp-run ctp-cat ctp-collector ctp-pstack; do
	tool=${TOOL[$name]}
	for opt in --help --version; do
		st=0
		"$tool" "$opt" >"$WORK/$name.out" 2>"$WORK/$name.err" || st=$?
		expect_eq "$name $opt exits 0" 0 "$st"
		check "$name $opt prints on stdout" test -s "$WORK/$name.out"
		check "$name $opt leaves stderr empty" test ! -s "$WORK/$name.err"
	done
	"$tool" --help | long_options >"$WORK/$name.help-options"
	check "$name --help names its options" test -s "$WORK/$name.help-options"

	page=$MAN/$name.1
	check "$name.1 was built (scdoc installed? scripts/deps)" test -s "$page"
	[ -s "$page" ] || continue
	rendered "$page" >"$WORK/$name.txt"
	check "man -l renders $name.1" test -s "$WORK/$name.txt"
	check "$name.1 starts with its NAME section" grep -q "^NAME" "$WORK/$name.txt"
	long_options <"$WORK/$name.txt" >"$WORK/$name.man-options"
	missing=$(comm -23 "$WORK/$name.help-options" "$WORK/$name.man-options" | tr '\n' ' ')
	expect_eq "every option of $name --help is in $name(1)" "" "$missing"

	# The options the page defines: its term lines ("*-o*, *--output* _FILE_").
	grep -- '^\*-' "$SRC/$name.1.scd" | long_options >"$WORK/$name.defined"
	check "$name(1) defines options" test -s "$WORK/$name.defined"
	extra=$(comm -13 "$WORK/$name.help-options" "$WORK/$name.defined" | tr '\n' ' ')
	expect_eq "every option $name(1) defines is in $name --help" "" "$extra"
done

check "ctp.7 was built" test -s "$MAN/ctp.7"
if [ -s "$MAN/ctp.7" ]; then
	rendered "$MAN/ctp.7" >"$WORK/ctp.txt"
	# The overview names every line type of the trace format (docs/trace-format.md).
	for t in $(grep -o '^### `[a-z_]*`' "$CTP_SOURCE_DIR/docs/trace-format.md" | tr -d '#` '); do
		check "ctp(7) describes the '$t' line" grep -qE "^ {7}$t\$" "$WORK/ctp.txt"
	done
	for v in $(grep -o '`CTP_[A-Z_]*`' "$CTP_SOURCE_DIR/README.md" | tr -d '`' | sort -u); do
		check "ctp(7) describes $v" grep -qE "^ {7}$v\$" "$WORK/ctp.txt"
	done
fi
# Every page is installed compressed.
for page in ctp-run.1 ctp-cat.1 ctp-collector.1 ctp.7; do
	check "$page.gz is the same page" cmp -s <(gzip -dc "$MAN/$page.gz") "$MAN/$page"
done
finish
