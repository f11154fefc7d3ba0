#!/usr/bin/env python3
"""Strict checker of Chrome Trace Event JSON as ui.perfetto.dev reads it (the rules ctp-cat's
--format=chrome promises, docs/ctp-cat.md). Perfetto's own trace processor is not packaged in
Debian, so the rules are checked here:

  - the file is valid JSON: an object with a "traceEvents" list (or a bare list);
  - every event has "ph", "pid" and "tid" (integers); events with a time have a numeric "ts"
    (microseconds, fractions allowed);
  - every "X" has a numeric "dur" >= 0;
  - slices of one track (pid, tid) nest strictly: X slices and B/E pairs never partly overlap;
    an E closes the innermost B; a B left open must be the last slice begun on its track;
  - flow events "s"/"t"/"f" carry an "id"; every "f" has an "s" with the same id (and cat), an
    "s" at or before it; each flow start binds inside a slice of its track, and each "f" with
    bp "e" binds inside a slice of its track;
  - "M" events are only "thread_name" or "process_name", with args.name a string;
  - "i"/"I" instant events have a scope "s" of "g", "p" or "t" when given.

Prints a summary (counts per phase) and exits 1 with the first problems on failure.
Usage: views_chrome_check.py FILE [--count-x-tid-min N]  (prints X slices on tids >= N too)"""
import json
from decimal import Decimal
import math
import sys
from collections import defaultdict

TIMED = set("XBEisftnbeCOPNDI")


def main():
    path = sys.argv[1]
    tid_min = int(sys.argv[3]) if len(sys.argv) > 3 and sys.argv[2] == "--count-x-tid-min" else None
    problems = []

    def bad(msg):
        if len(problems) < 20:
            problems.append(msg)

    with open(path, "rb") as f:
        raw = f.read()
    try:
        # Numbers exactly (Decimal), so that touching slices do not overlap by float error.
        doc = json.loads(raw, parse_float=Decimal,
                         parse_constant=lambda c: bad(f"non-JSON constant {c}"))
    except ValueError as e:
        print(f"FAIL: not valid JSON: {e}")
        return 1
    events = doc.get("traceEvents") if isinstance(doc, dict) else doc
    if not isinstance(events, list):
        print("FAIL: no traceEvents list")
        return 1

    counts = defaultdict(int)
    slices = defaultdict(list)  # (pid, tid) -> [(start, end or None, index)]
    begins = defaultdict(list)  # (pid, tid) -> stack of open B (ts, index)
    flow_starts = {}
    flow_ends = []
    flow_points = []  # (pid, tid, ts, kind, index)

    def num(ev, key, i):
        v = ev.get(key)
        if isinstance(v, bool) or not isinstance(v, (int, Decimal)) or not math.isfinite(v):
            bad(f"event {i}: '{key}' is not a number: {v!r}")
            return None
        return v

    for i, ev in enumerate(events):
        if not isinstance(ev, dict):
            bad(f"event {i}: not an object")
            continue
        ph = ev.get("ph")
        counts[ph] += 1
        if not isinstance(ph, str) or len(ph) != 1:
            bad(f"event {i}: bad ph {ph!r}")
            continue
        for key in ("pid", "tid"):
            if isinstance(ev.get(key), bool) or not isinstance(ev.get(key), int):
                bad(f"event {i} ({ph}): '{key}' missing or not an integer")
        track = (ev.get("pid"), ev.get("tid"))
        ts = num(ev, "ts", i) if ph in TIMED else None
        if ph == "M":
            if ev.get("name") not in ("thread_name", "process_name"):
                bad(f"event {i}: metadata {ev.get('name')!r} is not honoured by Perfetto")
            if not isinstance(ev.get("args", {}).get("name"), str):
                bad(f"event {i}: metadata without args.name")
        elif ph == "X":
            dur = num(ev, "dur", i)
            if dur is not None and dur < 0:
                bad(f"event {i}: negative dur {dur}")
            if ts is not None and dur is not None:
                slices[track].append((ts, ts + dur, i))
        elif ph == "B":
            if ts is not None:
                begins[track].append((ts, i))
        elif ph == "E":
            if not begins[track]:
                bad(f"event {i}: E without B on {track}")
            elif ts is not None:
                start, j = begins[track].pop()
                if ts < start:
                    bad(f"event {i}: E before its B")
                slices[track].append((start, ts, j))
        elif ph in "sft":
            if "id" not in ev:
                bad(f"event {i}: flow '{ph}' without id")
                continue
            key = (ev.get("cat"), ev["id"])
            if ph == "s":
                if key in flow_starts:
                    bad(f"event {i}: flow id {key} started twice")
                flow_starts[key] = (ts, i)
                flow_points.append((track, ts, "s", i))
            elif ph == "f":
                flow_ends.append((key, ts, i))
                if ev.get("bp") == "e":
                    flow_points.append((track, ts, "f", i))
        elif ph in "iI":
            if ev.get("s", "t") not in ("g", "p", "t"):
                bad(f"event {i}: instant scope {ev.get('s')!r}")
        if "name" in ev and not isinstance(ev["name"], str):
            bad(f"event {i}: name is not a string")

    # Slices still open (B without E) last to the end of the trace.
    for track, stack in begins.items():
        for start, j in stack:
            slices[track].append((start, math.inf, j))

    # Strict nesting per track: sorted by start (longest first on ties), every slice must end
    # inside the one enclosing it or begin after it ended.
    for track, ss in slices.items():
        ss.sort(key=lambda s: (s[0], -s[1]))
        stack = []
        for start, end, j in ss:
            while stack and stack[-1][1] <= start:
                stack.pop()
            if stack and end > stack[-1][1]:
                bad(f"track {track}: slice (event {j}) [{start}, {end}] overlaps "
                    f"(event {stack[-1][2]}) [{stack[-1][0]}, {stack[-1][1]}]")
            stack.append((start, end, j))

    for key, ts, i in flow_ends:
        if key not in flow_starts:
            bad(f"event {i}: flow end {key} without a start")
        elif ts is not None and flow_starts[key][0] is not None and ts < flow_starts[key][0]:
            bad(f"event {i}: flow end before its start")

    # Each bound flow point lies inside a slice of its track.
    for track, ts, kind, i in flow_points:
        if ts is None:
            continue
        if not any(s <= ts <= e for s, e, _ in slices.get(track, [])):
            bad(f"event {i}: flow '{kind}' at {ts} is in no slice of {track}")

    summary = " ".join(f"{k}={v}" for k, v in sorted(counts.items(), key=lambda kv: str(kv[0])))
    print(f"events {len(events)}: {summary}")
    if tid_min is not None:
        n = sum(1 for ev in events if isinstance(ev, dict) and ev.get("ph") == "X"
                and isinstance(ev.get("tid"), int) and ev["tid"] >= tid_min)
        print(f"x_on_tids_from {n}")
    if problems:
        for p in problems:
            print(f"FAIL: {p}")
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
