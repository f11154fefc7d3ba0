# The fixed lost-wakeup server (hang-ups resume the parked reader with an error) under the same
# load: the report finds no lost wakeup and no missed readiness, and exits 0.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/report_lib.sh"

example fx --fixed
expect_eq "the client ran to its end" 0 "$client_status"
expect_eq "the server stopped by itself, status 0" 0 "$status"
expect_eq "the server stranded nothing" 0 "$(lines -c '^stranded fd' "$WORK/fx.out")"
report fx
expect_eq "--report exits 0" 0 "$report_status"
check "the trace saw the hang-ups' fd events" \
	[ "$(rq fx '.summary.fd_events')" -gt 100 ]
expect_eq "no lost wakeup, no missed readiness, no crash" "0:0:0" \
	"$(rq fx '.summary.findings | "\(.lost_wakeup):\(.missed_readiness):\(.crash)"')"
expect_eq "no coroutine is left stuck" 0 "$(rq fx '.summary.findings.stuck')"
finish
