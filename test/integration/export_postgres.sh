# ctp-cat --postgres: a trace exported into PostgreSQL matches the trace
# (test/integration/export_lib.sh). The test runs its own server: initdb into a private
# directory, listening on a Unix socket there only, as an unprivileged user when run as root.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/report_lib.sh"
source "$(dirname "$0")/export_lib.sh"

PG_BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
PATH=$PG_BIN:$PATH
DBDIR=$(mktemp -d /tmp/ctp-pg.XXXXXX) # short: a socket path has at most 107 bytes
as_server=()
if [ "$(id -u)" -eq 0 ]; then
	chown nobody: "$DBDIR" # PostgreSQL refuses to run as root
	as_server=(runuser -u nobody --)
fi
stop_server() {
	"${as_server[@]}" pg_ctl -D "$DBDIR/data" -m immediate stop >/dev/null 2>&1 || true
	rm -rf "$DBDIR"
}
at_exit stop_server

"${as_server[@]}" initdb -D "$DBDIR/data" -U ctp --auth=trust -E UTF8 --no-locale >"$DBDIR/initdb.log"
"${as_server[@]}" pg_ctl -D "$DBDIR/data" -w -t 60 -l "$DBDIR/server.log" \
	-o "-k $DBDIR -c listen_addresses= -c fsync=off" start >/dev/null
URI="postgresql:///postgres?host=$DBDIR&user=ctp"

DB_NAME=postgres
export_to() { "$CTP_CAT" --postgres "$URI" "$@"; }
sql() { psql -X -q -At -F $'\t' -v ON_ERROR_STOP=1 "$URI" -c "$1"; }
hex() { echo "encode(convert_to($1, 'UTF8'), 'hex')"; }

export_make_traces
export_checks

rc=0
"$CTP_CAT" --postgres "postgresql:///postgres?host=$DBDIR/nowhere" "$WORK/other.jsonl.zst" \
	2>"$WORK/noserver.err" || rc=$?
expect_eq "no server: exit 2" 2 "$rc"
check "no server: said so" grep -q "postgres: cannot open" "$WORK/noserver.err"
finish
