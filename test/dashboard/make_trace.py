#!/usr/bin/env python3
"""Writes a large, valid ctp trace (docs/trace-format.md) as JSON Lines on stdout, for the
dashboard's size and load-time test: SWITCHES switch lines over THREADS threads of one process,
COROS coroutines taking turns, one suspend stack per coroutine group, every 50th coroutine left
suspended at the end (stuck), the others exited. Deterministic: the same arguments give the
same trace.

  make_trace.py SWITCHES [THREADS [COROS]]   (defaults 1000000, 4, 400)
"""
import sys


def main():
    switches = int(sys.argv[1]) if len(sys.argv) > 1 else 1000000
    threads = int(sys.argv[2]) if len(sys.argv) > 2 else 4
    coros = int(sys.argv[3]) if len(sys.argv) > 3 else 400
    pid, stacks = 4242, 8
    out = sys.stdout
    written = [0]

    def w(text):
        written[0] += text.count("\n")
        out.write(text)
    w('{"type":"trace","format":"ctp-trace","version":1,"tool":"ctp test","start":1000}\n')
    w('{"type":"process","pid":%d,"ppid":1,"exe":"/usr/bin/big","argv":["big"]}\n' % pid)
    for s in range(1, stacks + 1):
        w('{"type":"stack","pid":%d,"id":%d,"frames":[{"addr":"0x4010%02x","sym":"wait_%d",'
          '"off":16,"module":"/usr/bin/big","file":"big.c","line":%d},{"addr":"0x401200",'
          '"sym":"serve","off":40,"module":"/usr/bin/big","file":"big.c","line":90}]}\n'
          % (pid, s, s, s, 10 + s))
    t = 2000
    for k in range(threads):
        w('{"type":"coro","pid":%d,"coro":%d,"kind":"thread","entry":null,"entry_addr":null,'
          '"parent":null,"tid":%d,"ts":%d,"stack":null}\n' % (pid, k + 1, pid + k, t))
    first = threads + 1
    for c in range(first, first + coros):
        t += 100
        w('{"type":"coro","pid":%d,"coro":%d,"kind":"ucontext","entry":"serve",'
          '"entry_addr":"0x401200","parent":1,"tid":%d,"ts":%d,"stack":null}\n' % (pid, c, pid, t))
    resumes = {}
    last = {}
    # Each thread alternates: its own context resumes a coroutine, which suspends back.
    running = [None] * threads
    lines = []
    for i in range(switches):
        k = i % threads
        t += 250 + (i * 7919) % 400
        me = k + 1
        if running[k] is None:
            c = first + (i // threads * threads + k * 7) % coros
            lines.append('{"type":"switch","pid":%d,"tid":%d,"ts":%d,"from":%d,"to":%d,'
                         '"how":"swapcontext","stack":null}\n' % (pid, pid + k, t, me, c))
            running[k] = c
            resumes[c] = resumes.get(c, 0) + 1
        else:
            c = running[k]
            lines.append('{"type":"switch","pid":%d,"tid":%d,"ts":%d,"from":%d,"to":%d,'
                         '"how":"swapcontext","stack":%d}\n'
                         % (pid, pid + k, t, c, me, 1 + c % stacks))
            running[k] = None
            last[c] = (t, k)
        if len(lines) >= 10000:
            w("".join(lines))
            lines = []
    w("".join(lines))
    for c in range(first, first + coros):
        since, k = last.get(c, (t, 0))
        stuck = c % 50 == 0
        w('{"type":"state","pid":%d,"coro":%d,"state":"%s","tid":%d,"since":%d,"stack":%s,'
          '"switches":%d}\n' % (pid, c, "suspended" if stuck else "exited", pid + k, since,
                                1 + c % stacks if stuck else "null", resumes.get(c, 0)))
    for k in range(threads):
        w('{"type":"state","pid":%d,"coro":%d,"state":"running","tid":%d,"since":%d,'
          '"stack":null,"switches":1}\n' % (pid, k + 1, pid + k, t))
    w('{"type":"exit","pid":%d,"status":0}\n' % pid)
    # A complete trace: the collector's last line.
    w('{"type":"end","lines":%d,"lost":0}\n' % written[0])


if __name__ == "__main__":
    main()
