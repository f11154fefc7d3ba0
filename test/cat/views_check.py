#!/usr/bin/env python3
"""Checks of ctp-cat's views that jq cannot say briefly.

  views_check.py selfcontained FILE.jsonl
      every pid, coroutine (coro/from/to/parent) and stack a line refers to is defined by an
      earlier line; every definition kept is referred to or kept for itself (prints counts)
  views_check.py csv FILE.csv
      parses as RFC 4180 with Python's csv module; prints the data row count
  views_check.py corotracer FILE.jsonl
      each probe's records alternate is_active and number seq 0, 1, 2, ...; prints the count
"""
import csv
import json
import sys


def selfcontained(path):
    procs, coros, stacks = set(), set(), set()
    problems = 0
    with open(path) as f:
        for n, text in enumerate(f, 1):
            line = json.loads(text)
            t, pid = line.get("type"), line.get("pid")
            if t == "process":
                procs.add(pid)
            if pid is not None and t not in ("trace", "process") and pid not in procs:
                print(f"line {n}: pid {pid} not defined before"); problems += 1
            if t == "coro":
                coros.add((pid, line["coro"]))
            if t == "stack":
                stacks.add((pid, line["id"]))
            for key in ("coro", "from", "to", "parent"):
                v = line.get(key)
                if isinstance(v, int) and (pid, v) not in coros:
                    print(f"line {n}: {key} {v} not defined before"); problems += 1
            v = line.get("stack")
            if t != "stack" and isinstance(v, int) and (pid, v) not in stacks:
                print(f"line {n}: stack {v} not defined before"); problems += 1
    print(f"processes {len(procs)} coros {len(coros)} stacks {len(stacks)} problems {problems}")
    return 1 if problems else 0


def csv_rows(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f, strict=True))
    header = "ts,pid,tid,from,to,how,from_entry,to_entry,stack".split(",")
    if rows[0] != header:
        print(f"bad header {rows[0]}"); return 1
    if any(len(r) != len(header) for r in rows):
        print("a row with a wrong field count"); return 1
    print(len(rows) - 1)
    return 0


def corotracer(path):
    last = {}
    n = 0
    keys = ["probe_id", "tid", "addr", "seq", "is_active", "ts"]
    with open(path) as f:
        for text in f:
            r = json.loads(text)
            n += 1
            if list(r) != keys or not r["addr"].startswith("0x") or len(r["addr"]) != 18:
                print(f"record {n}: bad shape {r}"); return 1
            p = r["probe_id"]
            if p in last:
                seq, active = last[p]
                if r["seq"] != seq + 1 or r["is_active"] == active:
                    print(f"record {n}: probe {p} seq/is_active out of turn"); return 1
            elif r["seq"] != 0:
                print(f"record {n}: probe {p} starts at seq {r['seq']}"); return 1
            last[p] = (r["seq"], r["is_active"])
    print(n)
    return 0


if __name__ == "__main__":
    sys.exit({"selfcontained": selfcontained, "csv": csv_rows, "corotracer": corotracer}[sys.argv[1]](sys.argv[2]))
