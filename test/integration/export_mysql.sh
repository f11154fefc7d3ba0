# ctp-cat --mysql: a trace exported into MariaDB matches the trace
# (test/integration/export_lib.sh). The test runs its own server: a data directory made by
# mariadb-install-db, a private socket, no network, as an unprivileged user when run as root.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/report_lib.sh"
source "$(dirname "$0")/export_lib.sh"

DBDIR=$(mktemp -d /tmp/ctp-my.XXXXXX) # short: a socket path has at most 107 bytes
SOCK=$DBDIR/server.sock
as_server=()
if [ "$(id -u)" -eq 0 ]; then
	chown nobody: "$DBDIR"
	as_server=(runuser -u nobody --)
fi
server_pid=
stop_server() {
	if [ -n "$server_pid" ]; then
		mariadb-admin --no-defaults --socket="$SOCK" -u root shutdown >/dev/null 2>&1 ||
			kill "$server_pid" 2>/dev/null || true
		wait "$server_pid" 2>/dev/null || true
	fi
	rm -rf "$DBDIR"
}
at_exit stop_server

"${as_server[@]}" mariadb-install-db --no-defaults --datadir="$DBDIR/data" \
	--auth-root-authentication-method=normal --skip-test-db >"$DBDIR/install.log" 2>&1
"${as_server[@]}" /usr/sbin/mariadbd --no-defaults --datadir="$DBDIR/data" --socket="$SOCK" \
	--skip-networking --pid-file="$DBDIR/server.pid" --log-error="$DBDIR/server.err" \
	--innodb-buffer-pool-size=128M --innodb-flush-log-at-trx-commit=2 &
server_pid=$!
# Wait for the server to answer, at most 60 s.
for _ in $(seq 300); do
	mariadb-admin --no-defaults --socket="$SOCK" -u root ping >/dev/null 2>&1 && break
	kill -0 "$server_pid" 2>/dev/null || break
	sleep 0.2
done
mariadb --no-defaults --socket="$SOCK" -u root -e "CREATE DATABASE ctp"
URI="mysql://root@localhost/ctp?socket=$SOCK"

DB_NAME=mysql
export_to() { "$CTP_CAT" --mysql "$URI" "$@"; }
sql() { mariadb --no-defaults --socket="$SOCK" -u root -N -B -r ctp -e "$1"; }
hex() { echo "lower(hex($1))"; }

export_make_traces
export_checks

rc=0
"$CTP_CAT" --mysql "mysql://root@localhost/nosuchdb?socket=$SOCK" "$WORK/other.jsonl.zst" \
	2>"$WORK/nodb.err" || rc=$?
expect_eq "no such database: exit 2" 2 "$rc"
check "no such database: said so" grep -q "mysql: cannot open" "$WORK/nodb.err"
finish
