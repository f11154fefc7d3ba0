# missed_readiness on a hand-written trace (the real example resumes ready coroutines at once):
# coroutine 2 is resumed 1.5 s after its fd was reported ready, coroutine 3 never (it is still
# parked at the end, 2.8 s later), coroutine 4 within 10 ms. Loss in the process makes the
# findings uncertain, and the report says so.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/report_lib.sh"

S=1000000000 # one second in ns
cat >"$WORK/mr.jsonl" <<LINES
{"type":"trace","format":"ctp-trace","version":1,"tool":"ctp test","start":$S}
{"type":"process","pid":7,"ppid":1,"exe":"/bin/poller","argv":["poller"]}
{"type":"coro","pid":7,"coro":1,"kind":"thread","entry":null,"entry_addr":null,"parent":null,"tid":7,"ts":$S,"stack":null}
{"type":"stack","pid":7,"id":1,"frames":[{"addr":"0x1000","sym":"wait_readable","off":4,"module":"/bin/poller","file":"/src/poller.c","line":42}]}
{"type":"coro","pid":7,"coro":2,"kind":"ucontext","entry":"late","entry_addr":"0x2000","parent":1,"tid":7,"ts":$S,"stack":null}
{"type":"coro","pid":7,"coro":3,"kind":"ucontext","entry":"never","entry_addr":"0x3000","parent":1,"tid":7,"ts":$S,"stack":null}
{"type":"coro","pid":7,"coro":4,"kind":"ucontext","entry":"prompt","entry_addr":"0x4000","parent":1,"tid":7,"ts":$S,"stack":null}
{"type":"switch","pid":7,"tid":7,"ts":$((S + 100)),"from":1,"to":2,"how":"swapcontext","stack":null}
{"type":"fd","pid":7,"tid":7,"ts":$((S + 200)),"coro":2,"fd":5,"event":"would_block","op":"read","waiter":null,"stack":1}
{"type":"switch","pid":7,"tid":7,"ts":$((S + 300)),"from":2,"to":3,"how":"swapcontext","stack":1}
{"type":"fd","pid":7,"tid":7,"ts":$((S + 400)),"coro":3,"fd":6,"event":"would_block","op":"read","waiter":null,"stack":1}
{"type":"switch","pid":7,"tid":7,"ts":$((S + 500)),"from":3,"to":4,"how":"swapcontext","stack":1}
{"type":"fd","pid":7,"tid":7,"ts":$((S + 600)),"coro":4,"fd":7,"event":"would_block","op":"write","waiter":null,"stack":1}
{"type":"switch","pid":7,"tid":7,"ts":$((S + 700)),"from":4,"to":1,"how":"swapcontext","stack":1}
{"type":"fd","pid":7,"tid":7,"ts":$((S * 11 / 10)),"coro":1,"fd":5,"event":"ready","op":null,"waiter":2,"stack":null}
{"type":"fd","pid":7,"tid":7,"ts":$((S * 12 / 10)),"coro":1,"fd":6,"event":"ready","op":null,"waiter":null,"stack":null}
{"type":"fd","pid":7,"tid":7,"ts":$((S * 13 / 10)),"coro":1,"fd":7,"event":"ready","op":null,"waiter":4,"stack":null}
{"type":"switch","pid":7,"tid":7,"ts":$((S * 131 / 100)),"from":1,"to":4,"how":"swapcontext","stack":null}
{"type":"switch","pid":7,"tid":7,"ts":$((S * 132 / 100)),"from":4,"to":1,"how":"return","stack":null}
{"type":"switch","pid":7,"tid":7,"ts":$((S * 26 / 10)),"from":1,"to":2,"how":"swapcontext","stack":null}
{"type":"switch","pid":7,"tid":7,"ts":$((S * 27 / 10)),"from":2,"to":1,"how":"return","stack":null}
{"type":"loss","pid":7,"tid":7,"count":3}
{"type":"state","pid":7,"coro":1,"state":"running","tid":7,"since":$((S * 27 / 10)),"stack":null,"switches":3}
{"type":"state","pid":7,"coro":2,"state":"exited","tid":7,"since":$((S * 27 / 10)),"stack":null,"switches":2}
{"type":"state","pid":7,"coro":3,"state":"suspended","tid":7,"since":$((S + 500)),"stack":1,"switches":1,"wait":{"fd":6,"op":"read","closed":false}}
{"type":"state","pid":7,"coro":4,"state":"exited","tid":7,"since":$((S * 132 / 100)),"stack":null,"switches":2}
{"type":"exit","pid":7,"status":0,"ts":$((S * 4))}
{"type":"end"}
LINES
zstd -q -f "$WORK/mr.jsonl" -o "$WORK/mr.jsonl.zst"

report mr
expect_eq "--report exits 3 on missed readiness" 3 "$report_status"
expect_eq "two findings of missed readiness: the late one and the never-resumed one" \
	"late:5:read:true:1500000000 never:6:read:false:2800000000" \
	"$(rq mr '[.findings[] | select(.kind == "missed_readiness") | "\(.entry):\(.fd):\(.op):\(.resumed):\(.delay_ns)"] | sort | join(" ")')"
expect_eq "the parked one's stack" "wait_readable" \
	"$(rq mr '.findings[] | select(.kind == "missed_readiness" and .coro == 3) | .stack[0]')"
expect_eq "loss makes them uncertain" "true:true" \
	"$(rq mr '"\(.summary.uncertain):\([.findings[] | .uncertain] | all)"')"
report mr --missed-after 2s
expect_eq "with --missed-after 2s only the never-resumed one" "never" \
	"$(rq mr '[.findings[] | select(.kind == "missed_readiness") | .entry] | join(" ")')"
text_status=0
"$CTP_CAT" --report "$WORK/mr.jsonl.zst" >"$WORK/mr.txt" || text_status=$?
expect_eq "the text report exits 3 too" 3 "$text_status"
check "the text report warns about the loss" grep -q "WARNING: 3 events were lost" "$WORK/mr.txt"
check "and says which readiness was missed" \
	grep -q "^MISSED READINESS: coroutine #3 (never) in pid 7 (poller): fd 6 (read) was reported ready and it was not resumed by the end" "$WORK/mr.txt"
finish
