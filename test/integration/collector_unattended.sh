# A collector that was started for a program (given --ready-fd, as ctp-run and the preload start
# it) and that no process comes to ends by itself, with a whole trace of no process, and takes
# its socket away: when whoever started it stopped waiting before it was ready (the preload
# gives up after 2 s), and when nobody connected within the grace period after "ready" (the
# program died in between). Started by hand, without --ready-fd, it waits for its first process.
source "$(dirname "$0")/lib.sh"
COLLECTOR=$CTP_BUILD_DIR/collector/ctp-collector
mkdir -m 700 "$WORK/s"

# collector_with_ready NAME HOW ARGS...: runs the collector (bounded: 20 s) with --ready-fd on a
# pipe whose reader is gone (HOW=closed) or on a file (HOW=file); its status in $status.
collector_with_ready() {
	local name=$1 how=$2
	shift 2
	status=0
	timeout 20 /usr/bin/python3 -c '
import os, subprocess, sys
how, ready_file, args = sys.argv[1], sys.argv[2], sys.argv[3:]
if how == "closed":
    r, w = os.pipe()
    os.close(r)
else:
    w = os.open(ready_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
sys.exit(subprocess.call(args + ["--ready-fd", str(w)], pass_fds=(w,)))
' "$how" "$WORK/$name.ready" "$COLLECTOR" --socket "$WORK/s/$name.sock" \
		--output "$WORK/$name.jsonl.zst" "$@" 2>"$WORK/$name.err" || status=$?
}

collector_with_ready gave_up closed
expect_eq "(gave_up) the collector nobody waits for ends at once, cleanly" 0 "$status"
"$CTP_CAT" "$WORK/gave_up.jsonl.zst" >"$WORK/gave_up.jsonl"
expect_eq "(gave_up) its trace is whole: a header and the end line" "trace end" \
	"$(jq -r .type "$WORK/gave_up.jsonl" | tr '\n' ' ' | sed 's/ $//')"
check "(gave_up) its socket is gone" [ ! -e "$WORK/s/gave_up.sock" ]

collector_with_ready nobody file --grace-ms 300
expect_eq "(nobody) ready, and no process came: it ends after the grace period" 0 "$status"
expect_eq "(nobody) it said ready" "ready" "$(cat "$WORK/nobody.ready")"
"$CTP_CAT" "$WORK/nobody.jsonl.zst" >"$WORK/nobody.jsonl"
expect_eq "(nobody) its trace is whole, with no process" "trace end" \
	"$(jq -r .type "$WORK/nobody.jsonl" | tr '\n' ' ' | sed 's/ $//')"
check "(nobody) its socket is gone" [ ! -e "$WORK/s/nobody.sock" ]

# By hand: still there after many grace periods; then a process comes and is traced.
"$COLLECTOR" --socket "$WORK/s/hand.sock" --output "$WORK/hand.jsonl.zst" --grace-ms 100 \
	2>"$WORK/hand.err" &
collector=$!
check "(hand) the collector listens" wait_until 10 test -S "$WORK/s/hand.sock"
sleep 1 # ten grace periods with no process: a collector started by hand must not end
check "(hand) without --ready-fd it waits for its first process" kill -0 "$collector"
CTP_SOCKET=$WORK/s/hand.sock LD_PRELOAD=$CTP_BUILD_DIR/preload/libctp_preload.so \
	"$PROGRAMS/bench_pingpong" 5 >/dev/null
st=0
wait "$collector" || st=$?
expect_eq "(hand) it ends after the process" 0 "$st"
"$CTP_CAT" "$WORK/hand.jsonl.zst" >"$WORK/hand.jsonl"
expect_eq "(hand) with the process's switches" 12 "$(lines -c '"type":"switch"' "$WORK/hand.jsonl")"
finish
