#!/usr/bin/env bash
# The bash completion of ctp-run, ctp-cat and ctp-pstack (completion/), sourced into a plain bash and into
# one with bash-completion loaded: options, --format and --type values, trace files, and the
# program ctp-run runs. Each case gives the words as bash splits them (at "=" too, as
# COMP_WORDBREAKS says) and checks COMPREPLY.
. "$(dirname "$0")/lib.sh"

COMPLETION=$CTP_SOURCE_DIR/completion
BASH_COMPLETION=/usr/share/bash-completion/bash_completion
check "bash-completion is installed (scripts/deps)" test -r "$BASH_COMPLETION"

mkdir -p "$WORK/dir/sub"
touch "$WORK/dir/a.jsonl.zst" "$WORK/dir/b.jsonl.zst" "$WORK/dir/notes.txt" "$WORK/dir/page.html" \
	"$WORK/dir/core.123"

# comp WITH_BASH_COMPLETION WORD...: COMPREPLY, sorted, one line, for the cursor at the end of
# the last WORD, completed in $WORK/dir.
comp() {
	local with=$1
	shift
	(
		cd "$WORK/dir"
		set +euo pipefail
		trap - ERR EXIT
		if [ "$with" = yes ]; then
			. "$BASH_COMPLETION"
		fi
		. "$COMPLETION/ctp-cat"
		. "$COMPLETION/ctp-run"
		. "$COMPLETION/ctp-pstack"
		COMP_WORDS=("$@")
		COMP_CWORD=$(($# - 1))
		COMP_LINE="$*"
		COMP_POINT=${#COMP_LINE}
		fn=$(complete -p "$1" | awk '{ print $(NF-1) }')
		"$fn" "$1" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
		printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' ' | sed 's/ $//'
	)
}

for with in no yes; do
	[ "$with" = no ] || [ -r "$BASH_COMPLETION" ] || continue
	w="(bash-completion loaded: $with)"
	expect_eq "$w ctp-cat --fo" "--follow --format=" "$(comp $with ctp-cat --fo)"
	expect_eq "$w ctp-cat --format=<TAB>" "chrome corotracer csv jsonl perfetto text" \
		"$(comp $with ctp-cat --format =)"
	expect_eq "$w ctp-cat --format=c" "chrome corotracer csv" "$(comp $with ctp-cat --format = c)"
	expect_eq "$w ctp-cat --format=te (no split at =)" "text" "$(comp $with ctp-cat --format=te)"
	expect_eq "$w ctp-cat --type=co" "coro coro_end" "$(comp $with ctp-cat --type = co)"
	expect_eq "$w ctp-cat --print-schema p" "postgres" "$(comp $with ctp-cat --print-schema p)"
	expect_eq "$w ctp-cat <TAB>: traces and directories" "a.jsonl.zst b.jsonl.zst sub" \
		"$(comp $with ctp-cat '')"
	expect_eq "$w ctp-cat --report a<TAB>" "a.jsonl.zst" "$(comp $with ctp-cat --report a)"
	expect_eq "$w ctp-cat --html <TAB>" "page.html sub" "$(comp $with ctp-cat --html '')"
	expect_eq "$w ctp-cat --pid <TAB>: nothing to offer" "" "$(comp $with ctp-cat --pid '')"
	expect_eq "$w ctp-run --s" "--stack-depth" "$(comp $with ctp-run --s)"
	expect_eq "$w ctp-run -o <TAB>" "a.jsonl.zst b.jsonl.zst sub" "$(comp $with ctp-run -o '')"
	expect_eq "$w ctp-run --output=b" "b.jsonl.zst" "$(comp $with ctp-run --output = b)"
	# After the options: the program (a command), then its own arguments.
	check "$w ctp-run -o t.jsonl.zst -- ctp-ca: a command" \
		grep -qw "ctp-cat" <<<"$(PATH=$CTP_BUILD_DIR/cat:$PATH comp $with ctp-run -o t.jsonl.zst -- ctp-ca)"
	check "$w ctp-run bas: a command" grep -qw "bash" <<<"$(comp $with ctp-run bas)"
	expect_eq "$w ctp-run -- ls no: the program's arguments" "notes.txt" \
		"$(comp $with ctp-run -- ls no)"
	expect_eq "$w ctp-run --stack-depth 8 ls -- no: not ctp-run's --" "notes.txt" \
		"$(comp $with ctp-run --stack-depth 8 ls -- no)"
	expect_eq "$w ctp-pstack --c" "--core" "$(comp $with ctp-pstack --c)"
	expect_eq "$w ctp-pstack --core co" "core.123" "$(comp $with ctp-pstack --core co)"
	expect_eq "$w ctp-pstack --core=co" "core.123" "$(comp $with ctp-pstack --core = co)"
	expect_eq "$w ctp-pstack --core core.123 no: the program" "notes.txt" \
		"$(comp $with ctp-pstack --core core.123 no)"
	expect_eq "$w ctp-pstack --trace <TAB>" "a.jsonl.zst b.jsonl.zst sub" \
		"$(comp $with ctp-pstack --trace '')"
	check "$w ctp-pstack <TAB>: running processes, this shell's among them" \
		grep -qw "$$" <<<"$(comp $with ctp-pstack '')"
done
finish
