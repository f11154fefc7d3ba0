"""Checks ctp-cat --format=perfetto output, decoded by `protoc --decode=pftrace.Trace`, against
the trace's JSON Lines: one packet sequence that starts by clearing its state; a process track
per process; a track per coroutine under its process, named entry#id; on each coroutine track
slices that begin and end in turn, one begin per resume of the coroutine (and its thread's start
for a thread's own one); one flow per switch from a run, leaving the end of the run that
switched and arriving at the begin of the run it resumed, at the switch's time; with
--closes, one flow per close that stranded a waiter, from a "close fd N" instant to a
"fd N closed while waiting" instant on the waiter's track.

Usage: views_perfetto_check.py DECODED.txt TRACE.jsonl [--closes]
Prints what it checked; exits 1 on the first wrong thing."""
import collections
import json
import re
import sys


def parse_text(text):
    """protoc's text format as nested dicts of lists: {"packet": [{...}, ...]}."""
    root = collections.defaultdict(list)
    stack = [root]
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        if line == "}":
            stack.pop()
            continue
        m = re.fullmatch(r"(\w+) \{", line)
        if m:
            child = collections.defaultdict(list)
            stack[-1][m.group(1)].append(child)
            stack.append(child)
            continue
        m = re.fullmatch(r"(\w+): (.*)", line)
        if not m:
            raise SystemExit(f"cannot parse protoc output line: {raw!r}")
        value = m.group(2)
        if value.startswith('"'):
            value = json.loads(value)
        elif re.fullmatch(r"-?\d+", value):
            value = int(value)
        stack[-1][m.group(1)].append(value)
    return root


def one(d, key, default=None):
    v = d.get(key)
    return v[0] if v else default


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def main():
    decoded = parse_text(open(sys.argv[1]).read())
    lines = [json.loads(l) for l in open(sys.argv[2])]
    closes = "--closes" in sys.argv
    start = lines[0]["start"]
    packets = decoded["packet"]
    if not packets:
        fail("no packets")
    if {one(p, "trusted_packet_sequence_id") for p in packets} != {1}:
        fail("every packet is on sequence 1")
    if one(packets[0], "sequence_flags") != 1:
        fail("the first packet clears the incremental state")
    print("ok: %d packets on one sequence, the first clears its state" % len(packets))

    # Tracks.
    procs = {}
    tracks = {}
    for p in packets:
        for td in p.get("track_descriptor", []):
            uuid = one(td, "uuid")
            if "process" in td:
                procs[uuid] = one(td["process"][0], "pid")
            else:
                tracks[uuid] = (one(td, "parent_uuid"), one(td, "name"))
    want_pids = {l["pid"] for l in lines if l["type"] == "process"}
    if set(procs.values()) != want_pids:
        fail(f"process tracks {sorted(procs.values())}, processes {sorted(want_pids)}")
    print("ok: a process track per process (%d)" % len(procs))
    coros = {(l["pid"], l["coro"]): l for l in lines if l["type"] == "coro"}
    by_name = {}
    for uuid, (parent, name) in tracks.items():
        if parent not in procs:
            fail(f"track {name} is not under a process track")
        m = re.fullmatch(r"(.+)#(\d+)", name)
        if not m:
            fail(f"track name {name!r} is not entry#id")
        key = (procs[parent], int(m.group(2)))
        c = coros.get(key)
        if c is None:
            fail(f"track {name} of pid {key[0]} names no coroutine of the trace")
        want = c.get("entry") or c.get("kind")
        if m.group(1) != want:
            fail(f"track {name}: the coroutine's entry is {want}")
        by_name[uuid] = key
    if set(by_name.values()) != set(coros):
        fail(f"{len(coros)} coroutines, {len(by_name)} coroutine tracks")
    print("ok: a track per coroutine under its process, named entry#id (%d)" % len(by_name))

    # Slices: begins and ends alternate per track, in time order (stable for equal times).
    events = []
    for i, p in enumerate(packets):
        for te in p.get("track_event", []):
            events.append((one(p, "timestamp"), i, te))
    per_track = collections.defaultdict(list)
    for ts, i, te in sorted(events, key=lambda e: (e[0], e[1])):
        per_track[one(te, "track_uuid")].append((ts, te))
    begins = collections.Counter()
    for uuid, evs in per_track.items():
        depth = 0
        for ts, te in evs:
            kind = one(te, "type")
            if kind == "TYPE_SLICE_BEGIN":
                depth += 1
                begins[by_name[uuid]] += 1
            elif kind == "TYPE_SLICE_END":
                depth -= 1
            if depth not in (0, 1):
                fail(f"slices of track {tracks[uuid][1]} overlap or end unbegun at {ts}")
    switches = [l for l in lines if l["type"] == "switch"]
    want_begins = collections.Counter((s["pid"], s["to"]) for s in switches)
    for key, c in coros.items():
        if c["kind"] == "thread":
            want_begins[key] += 1
    if begins != want_begins:
        diff = (begins - want_begins) + (want_begins - begins)
        fail(f"runs per coroutine differ from the resumes: {dict(list(diff.items())[:5])}")
    print("ok: slices begin and end in turn, one run per resume (%d)" % sum(begins.values()))

    # Flows between runs: from an END to a BEGIN at the same time.
    out, into = {}, {}
    for ts, i, te in events:
        for f in te.get("flow_ids", []):
            if f in out:
                fail(f"flow {f} leaves twice")
            out[f] = (ts, one(te, "type"), one(te, "track_uuid"))
        for f in te.get("terminating_flow_ids", []):
            if f in into:
                fail(f"flow {f} arrives twice")
            into[f] = (ts, one(te, "type"), one(te, "track_uuid"))
    if set(out) != set(into):
        fail("flows that leave and never arrive, or arrive from nowhere")
    got = collections.Counter()
    for f, (ts, kind, uuid) in out.items():
        ts2, kind2, uuid2 = into[f]
        if kind == "TYPE_SLICE_END":
            if kind2 != "TYPE_SLICE_BEGIN" or ts != ts2:
                fail(f"flow {f} does not go from a run's end to the next run's begin")
            got[(ts + start, by_name[uuid][0], by_name[uuid][1], by_name[uuid2][1])] += 1
    want = collections.Counter((s["ts"], s["pid"], s["from"], s["to"]) for s in switches)
    if got != want:
        diff = (got - want) + (want - got)
        fail(f"resume flows differ from the switches: {list(diff.items())[:5]}")
    print("ok: a flow per switch, from the run that switched to the run it resumed (%d)"
          % sum(got.values()))

    # Where each run ended: the suspend stack of the switch that ended it, as one interned
    # string ("f <- g <- ..."), the annotation "suspended at" on the run's end.
    strings = {}
    for p in packets:
        for interned in p.get("interned_data", []):
            for sv in interned.get("debug_annotation_string_values", []):
                strings[one(sv, "iid")] = one(sv, "str")
    # A stack id means the stack last defined under it (an exec starts the ids of its pid anew).
    frames, want = {}, collections.Counter()
    for l in lines:
        if l["type"] == "stack":
            frames[(l["pid"], l["id"])] = l["frames"]
        elif l["type"] == "switch":
            fr = frames.get((l["pid"], l.get("stack"))) if l.get("stack") else None
            text = " <- ".join(f.get("sym") or f["addr"] for f in fr[:8]) if fr else None
            want[(l["ts"], l["pid"], l["from"], text)] += 1

    got = collections.Counter()
    for ts, i, te in events:
        if one(te, "type") != "TYPE_SLICE_END" or not te.get("flow_ids"):
            continue
        text = None
        for ann in te.get("debug_annotations", []):
            if one(ann, "name_iid") == 2:
                text = strings.get(one(ann, "string_value_iid"))
                if text is None:
                    fail(f"a run's end refers to string {one(ann, 'string_value_iid')}, not interned")
        got[(ts + start, by_name[one(te, "track_uuid")][0], by_name[one(te, "track_uuid")][1],
             text)] += 1
    if got != want:
        diff = (got - want) + (want - got)
        fail(f"where runs ended differs from the switches' stacks: {list(diff.items())[:3]}")
    print("ok: each run's end says where it suspended, an interned stack (%d strings, %d ends)"
          % (len(strings), sum(1 for k in got.elements() if k[3])))

    if closes:
        stranded = [l for l in lines if l["type"] == "fd" and l["event"] == "close"
                    and l.get("waiter")]
        got = collections.Counter()
        for f, (ts, kind, uuid) in out.items():
            if kind != "TYPE_INSTANT":
                continue
            ts2, kind2, uuid2 = into[f]
            if kind2 != "TYPE_INSTANT" or ts != ts2:
                fail(f"close flow {f} does not join two instants at one time")
            got[(ts + start, by_name[uuid][0], by_name[uuid][1], by_name[uuid2][1])] += 1
        want = collections.Counter((l["ts"], l["pid"], l["coro"], l["waiter"]) for l in stranded)
        if got != want or not want:
            fail(f"close flows {sum(got.values())}, closes with a waiter {sum(want.values())}")
        print("ok: a flow per close that stranded a waiter, closer to waiter (%d)"
              % sum(got.values()))


main()
