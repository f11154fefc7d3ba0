# ctp-cat --sqlite: a trace exported into SQLite matches the trace (test/integration/export_lib.sh).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/report_lib.sh"
source "$(dirname "$0")/export_lib.sh"

DB_NAME=sqlite
DB=$WORK/trace.db
export_to() { "$CTP_CAT" --sqlite "$DB" "$@"; }
sql() { sqlite3 -batch -noheader -separator $'\t' "$DB" "$1"; }
hex() { echo "lower(hex($1))"; }

export_make_traces
export_checks

# The file is an SQLite database that other tools can read, and not something else.
echo "not a database" >"$WORK/text.db"
rc=0
"$CTP_CAT" --sqlite "$WORK/text.db" "$WORK/other.jsonl.zst" 2>"$WORK/text.err" || rc=$?
expect_eq "a file that is not a database is refused" 2 "$rc"
check "and said so" grep -q "text.db" "$WORK/text.err"
finish
