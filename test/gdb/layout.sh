# gdb/ctp.py reads the segment with its own copy of the layout (Python cannot include
# ctp/segment.h): the offsets, sizes and enum values it uses must be those the C compiler gives.
# Both sides print `name value` lines of the same names; any difference, a missing or an extra
# line fails. Usage: layout.sh CTP_PY_LAYOUT_PROGRAM CTP_PY
set -euo pipefail
c=$("$1")
py=$(python3 "$2" --layout)
if [ "$c" != "$py" ]; then
	echo "FAIL: gdb/ctp.py's layout differs from the C structs (< C, > ctp.py):" >&2
	diff <(echo "$c") <(echo "$py") >&2 || true
	exit 1
fi
echo "ok: gdb/ctp.py agrees with ctp/segment.h and ucontext_t on $(wc -l <<<"$c") values"
