# The C and C++ sources are as clang-format (.clang-format) lays them out: the files git knows,
# or, outside a git checkout (a source package), every .c, .h and .cpp outside build trees.
set -u
cd "$1" || exit 2
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	mapfile -t files < <(git ls-files '*.c' '*.h' '*.cpp')
else
	mapfile -t files < <(find . -path './build*' -prune -o \
		\( -name '*.c' -o -name '*.h' -o -name '*.cpp' \) -print)
fi
[ "${#files[@]}" -gt 0 ] || { echo "FAIL: no source file found under $1" >&2; exit 1; }
status=0
out=$(clang-format --dry-run -Werror "${files[@]}" 2>&1) || status=$?
if [ "$status" -ne 0 ]; then
	echo "FAIL: not as clang-format lays them out (clang-format -i FILE... mends them):" >&2
	sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: error: .*/\1/p' <<<"$out" | sort -u >&2
	head -n 5 <<<"$out" >&2
	exit 1
fi
echo "ok: ${#files[@]} files as clang-format lays them out"
