# A coroutine that spins 700 ms without yielding next to one that yields every millisecond:
# with --never-yielded-after 500ms only the spinner is named; with the default 1 s, nobody.
# Neither makes the report fail.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/report_lib.sh"

trace hog -- "$PROGRAMS/report_hog" 700
expect_eq "the program ran" 0 "$status"
report hog --never-yielded-after 500ms
expect_eq "--report exits 0 on a hog" 0 "$report_status"
expect_eq "one never_yielded finding, for the hog" "1:hog" \
	"$(rq hog '[.findings[] | select(.kind == "never_yielded")] | "\(length):\(.[0].entry)"')"
check "it ran about 700 ms (ms clock: at least 690)" [ "$(rq hog '.findings[] | select(.kind == "never_yielded") | .ran_ns')" -ge 690000000 ]
expect_eq "it switched away in hog (not still running)" "false:hog" \
	"$(rq hog '.findings[] | select(.kind == "never_yielded") | "\(.still_running):\(.stack[0])"')"
expect_eq "the threshold is in the summary" 500000000 "$(rq hog '.summary.never_yielded_after_ns')"
report hog
expect_eq "--report exits 0 with the default threshold" 0 "$report_status"
expect_eq "the default threshold (1 s) names nobody" 0 "$(rq hog '.summary.findings.never_yielded')"
bad_status=0
"$CTP_CAT" --report --never-yielded-after 5parsecs "$WORK/hog.jsonl.zst" >/dev/null 2>&1 ||
	bad_status=$?
expect_eq "a bad duration exits 2" 2 "$bad_status"
finish
