# An M:N scheduler: 30 ucontext coroutines on 3 worker threads that share a run queue, so that
# coroutines migrate between threads. Every switch the program made must be in the trace (or
# counted as lost), every coroutine must be announced once, with what created it, and end
# `exited`.
source "$(dirname "$0")/lib.sh"

COROS=30
YIELDS=200
trace mn -- "$PROGRAMS/ucontext_mn" $COROS $YIELDS
expect_eq "ctp-run exits as the app did" 0 "$status"
made=$(sed -n 's/^switches //p' "$WORK/mn.out")
migrated=$(sed -n 's/^migrated //p' "$WORK/mn.out")
# Each coroutine: YIELDS+1 resumes, YIELDS yields, one setcontext at its end.
expect_eq "the program's own switch count" $((COROS * (2 * YIELDS + 2))) "$made"
pid=$(q mn '.[] | select(.type == "process") | .pid')

# Nothing lost without saying so: switch lines plus loss counts are the switches made.
switches=$(q mn '[.[] | select(.type == "switch")] | length')
lost=$(q mn '[.[] | select(.type == "loss") | .count] | add // 0')
expect_eq "switch lines + loss counts = switches made" "$made" $((switches + lost))

# The contexts: the main thread, 3 workers, 30 coroutines; each announced exactly once.
expect_eq "thread coro lines" 4 "$(q mn '[.[] | select(.type == "coro" and .kind == "thread")] | length')"
expect_eq "ucontext coro lines" $COROS \
	"$(q mn '[.[] | select(.type == "coro" and .kind == "ucontext")] | length')"
expect_eq "no coroutine announced twice (ids unique)" 0 \
	"$(q mn '[.[] | select(.type == "coro") | .coro] | length - (unique | length)')"
expect_eq "no line names a coroutine it never announced" 0 \
	"$(q mn '([.[] | select(.type == "coro") | .coro]) as $known
		| [.[] | select(.type == "switch" or .type == "state") | .from?, .to?, .coro?
		   | select(. != null and (. as $c | $known | index([$c]) | not))] | length')"
expect_eq "every thread is one of the process's threads" 4 \
	"$(q mn '[.[] | select(.type == "coro" and .kind == "thread") | .tid] | unique | length')"
main=$(q mn ".[] | select(.type == \"coro\" and .kind == \"thread\" and .tid == $pid) | .coro")
expect_eq "every coroutine's entry is work" work \
	"$(q mn '[.[] | select(.type == "coro" and .kind != "thread") | .entry] | unique | join(",")')"
expect_eq "every coroutine was made by the main thread (parent, tid)" "$main:$pid" \
	"$(q mn '[.[] | select(.type == "coro" and .kind != "thread") | "\(.parent):\(.tid)"]
		| unique | join(",")')"
expect_eq "every coroutine has a creation stack" 0 \
	"$(q mn '[.[] | select(.type == "coro" and .kind == "ucontext" and .stack == null)] | length')"

# Migration: coroutines resumed on more than one thread (the program never resumes one on the
# worker that ran it last, so all of them are).
seen=$(q mn '[.[] | select(.type == "switch" and .to != null)] | group_by(.to)
	| map(select((map(.tid) | unique | length) > 1)) | length')
expect_eq "the program saw every coroutine migrate" $COROS "$migrated"
check "the trace shows coroutines on more than one thread ($seen)" [ "$seen" -ge 1 ]
if [ "$lost" -eq 0 ]; then
	expect_eq "as many migrated coroutines as the program counted" "$migrated" "$seen"
	expect_eq "every coroutine ended with setcontext" $COROS \
		"$(q mn '[.[] | select(.type == "switch" and .how == "setcontext")] | length')"
	# A setcontext away is a switch the program may come back from (getcontext/setcontext
	# schedulers): it records where the coroutine left, like any suspend.
	expect_eq "each setcontext away records where its coroutine left" 0 \
		"$(q mn '[.[] | select(.type == "switch" and .how == "setcontext" and .stack == null)] | length')"
fi

# The end: one state per coroutine; the coroutines exited, resumed YIELDS+1 times each.
expect_eq "one state line per coroutine" \
	"$(q mn '[.[] | select(.type == "coro") | .coro] | sort | map(tostring) | join(",")')" \
	"$(q mn '[.[] | select(.type == "state") | .coro] | sort | map(tostring) | join(",")')"
expect_eq "every coroutine exited, resumed $((YIELDS + 1)) times" "exited:$((YIELDS + 1))" \
	"$(q mn '[.[] | select(.type == "coro" and .kind == "ucontext") | .coro] as $u
		| [.[] | select(.type == "state" and (.coro as $c | $u | index([$c])))
		   | "\(.state):\(.switches)"] | unique | join(",")')"
expect_eq "the main thread is running" running \
	"$(q mn ".[] | select(.type == \"state\" and .coro == $main) | .state")"
expect_eq "exit status" 0 "$(q mn '.[] | select(.type == "exit") | .status')"

# Trace format 2: the worker threads' own coroutines end with their threads, and say so.
expect_eq "worker threads end by thread_exit" "thread_exit" \
	"$(q mn '[.[] | select(.type == "coro" and .kind == "thread") | .coro] as $threads
		| [.[] | select(.type == "coro_end" and (.coro as $c | $threads | index($c)))
		| .how] | unique | join(",")')"
# Their state lines count their start among their resumes, as a live thread's do (the main
# thread's 1 above): whether the line comes from a station or, once they ended, from what the
# collector kept of them.
expect_eq "worker threads' switches: their start and every switch to them" "1" \
	"$(q mn '[.[] | select(.type == "coro" and .kind == "thread") | .coro] as $threads
		| [.[] | select(.type == "switch") | .to] as $tos
		| [.[] | select(.type == "state" and .state == "exited" and (.coro as $c | $threads | index($c)))
		   | .switches - (.coro as $c | [$tos[] | select(. == $c)] | length)]
		| unique | map(tostring) | join(",")')"
finish
