"""gdb/ctp.py's copy of the rule for a thread stopped inside a switch hook (finish_switches), on
the cases test/unit/test_unfinished_switch.c gives the C rule the collector and ctp-pstack use:
the two must name the same coroutine running. Run outside gdb: python3 finish_switches.py CTP_PY
"""
import importlib.util
import sys
from types import SimpleNamespace

spec = importlib.util.spec_from_file_location("ctp", sys.argv[1])
ctp = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ctp)

THREAD, UCONTEXT = ctp.KIND_THREAD, 2  # the kinds: KINDS in ctp.py
CREATED, RUNNING, SUSPENDED, EXITED = (ctp.STATE_CREATED, ctp.STATE_RUNNING,
                                       ctp.STATE_SUSPENDED, ctp.STATE_EXITED)


def station(kind, state, tid, last_switch, ended_to=0, torn=False):
    return SimpleNamespace(kind=kind, state=state, tid=tid, last_switch=last_switch,
                           ended_to=ended_to, torn=torn, mid_switch=False)


def ended(tid, last_switch, next_index, torn=False):
    return station(UCONTEXT, EXITED, tid, last_switch, ended_to=next_index + 1, torn=torn)


def running(stations):
    """{index: tid} of the stations finish_switches marks running."""
    for i, s in enumerate(stations):
        s.index = i
    ctp.finish_switches(stations)
    return {s.index: s.tid for s in stations if s.mid_switch}


CASES = {
    "stopped between the updates": ([
        station(THREAD, SUSPENDED, 10, 100),
        station(UCONTEXT, SUSPENDED, 10, 300),  # was leaving
        station(UCONTEXT, SUSPENDED, 10, 200),  # was to resume
        station(UCONTEXT, CREATED, 10, 0),
        station(THREAD, RUNNING, 11, 50),  # another thread, whole
        station(UCONTEXT, SUSPENDED, 11, 400),
    ], {1: 10}),
    "a whole thread is left alone": ([
        station(THREAD, SUSPENDED, 10, 100),
        station(UCONTEXT, RUNNING, 10, 300),
        station(UCONTEXT, SUSPENDED, 10, 300),
    ], {}),
    "an ended thread is left alone": ([
        station(THREAD, EXITED, 10, 500),
        station(UCONTEXT, SUSPENDED, 10, 300),
    ], {}),
    "stopped after an end, before the resume it named": ([
        station(THREAD, SUSPENDED, 10, 100),
        ended(10, 300, 2),
        station(UCONTEXT, CREATED, 10, 0),  # named next, never run
    ], {2: 10}),
    "torn mid-suspend or mid-end": ([
        station(THREAD, SUSPENDED, 10, 100),
        station(UCONTEXT, SUSPENDED, 10, 300, torn=True),  # was leaving
        station(UCONTEXT, SUSPENDED, 10, 300),  # resumed it
        station(THREAD, SUSPENDED, 11, 100),
        ended(11, 300, 6, torn=True),  # was ending
        station(UCONTEXT, SUSPENDED, 11, 300),  # resumed it
        station(UCONTEXT, SUSPENDED, 11, 200),  # named next
    ], {1: 10, 6: 11}),
}

failed = 0
for name, (stations, want) in CASES.items():
    got = running(stations)
    if got == want:
        print("ok: %s (%s)" % (name, got))
    else:
        print("FAIL: %s: expected %s, got %s" % (name, want, got))
        failed += 1
sys.exit(1 if failed else 0)
