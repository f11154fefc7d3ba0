#!/usr/bin/env python3
"""Loads a ctp dashboard page in headless Chromium and checks it as a person would see it.

Fails (exit 1) when the page reports an error (its data-ctp-errors attribute), when Chromium
logs any console message (the page logs nothing when it works), when the page never says it is
ready, when it refers to anything outside itself, or when a number on it differs from the
expected one. Prints what it found, and how long the load took (not checked: machines differ).

  check_page.py PAGE.html [--expect NAME=VALUE]... [--screenshot OUT.png] [--absent ID]...
                [--text STRING]...

NAME is a summary card (processes, coroutines, threads, switches, lost, findings), `rows` (the
coroutine table's rows), `stuck` (coroutines in stuck groups), `groups` (stuck groups), or
`kind:KIND` (findings of that kind, counted through the cards that group them).
--absent ID: no element with this id may exist (markup smuggled in through trace data).
--text STRING: the page's text must contain STRING (HTML-escaped in the dumped DOM).
"""
import argparse
import html
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

CHROMIUM = os.environ.get("CHROMIUM", "chromium")
# As the machine's notes require: no sandbox as root, no network, nothing from a profile.
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars"]
TIMEOUT = 120


def run_chromium(args):
    profile = tempfile.mkdtemp(prefix="ctp-chromium-")
    try:
        start = time.monotonic()
        p = subprocess.run([CHROMIUM] + FLAGS + ["--user-data-dir=" + profile] + args,
                           capture_output=True, timeout=TIMEOUT)
        return p, time.monotonic() - start
    finally:
        shutil.rmtree(profile, ignore_errors=True)


def self_contained(page):
    """The page, its data block left out, may name nothing outside itself."""
    outside = re.sub(r'<script type="application/json" id="ctp-data">.*?</script>', "", page,
                     flags=re.S)
    bad = re.findall(r'(?:https?|ftp|wss?)://|\bsrc\s*=|\bhref\s*=|@import|url\(', outside)
    return bad


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("page")
    ap.add_argument("--expect", action="append", default=[])
    ap.add_argument("--screenshot")
    ap.add_argument("--absent", action="append", default=[])
    ap.add_argument("--text", action="append", default=[])
    a = ap.parse_args()

    failures = []
    with open(a.page, encoding="utf-8") as f:
        source = f.read()
    print("page: %s, %d bytes" % (a.page, os.path.getsize(a.page)))
    bad = self_contained(source)
    if bad:
        failures.append("the page refers outside itself: %s" % sorted(set(bad)))

    url = "file://" + os.path.abspath(a.page)
    p, took = run_chromium(["--enable-logging=stderr", "--v=0", "--dump-dom", url])
    dom = p.stdout.decode("utf-8", "replace")
    log = p.stderr.decode("utf-8", "replace")
    if p.returncode != 0:
        failures.append("chromium exited with %d" % p.returncode)
    console = [l for l in log.splitlines() if ":CONSOLE" in l]
    for l in console:
        failures.append("console: " + l)
    m = re.search(r'data-ctp-errors="(\d+)"', dom)
    if m:
        err = re.search(r'id="page-error"[^>]*>([^<]*)<', dom)
        failures.append("the page reported %s error(s): %s" %
                        (m.group(1), html.unescape(err.group(1)) if err else "?"))
    ready = re.search(r'<html[^>]*data-ctp-ready="1"', dom) is not None
    if not ready:
        failures.append("the page never became ready")
    init = re.search(r'data-ctp-init-ms="(\d+)"', dom)
    print("loaded in %.2f s (Chromium start included); the page's script took %s ms" %
          (took, init.group(1) if init else "?"))

    found = {}
    for name in ("processes", "coroutines", "threads", "switches", "lost", "findings",
                 "duration"):
        m = re.search(r'id="sum-%s" data-value="(\d+)"' % name, dom)
        found[name] = m.group(1) if m else None
    found["rows"] = str(len(re.findall(r'<tr class="coro-row', dom)))
    groups = re.findall(r'<div class="group" data-members="(\d+)"', dom)
    found["groups"] = str(len(groups))
    found["stuck"] = str(sum(int(g) for g in groups))
    for kind, count in re.findall(r'<div class="finding[^"]*" data-kind="(\w+)" data-count="(\d+)"',
                                  dom):
        found["kind:" + kind] = str(int(found.get("kind:" + kind, "0")) + int(count))
    print("found: " + " ".join("%s=%s" % kv for kv in found.items()))

    for e in a.expect:
        name, _, want = e.partition("=")
        if found.get(name) != want:
            failures.append("%s: expected %s, the page shows %s" % (name, want, found.get(name)))
    for ident in a.absent:
        # A real start tag; in text the same characters come escaped ("&lt;b id=...").
        if re.search(r'<[a-zA-Z][^<>]*\bid="%s"' % re.escape(ident), dom):
            failures.append("an element with id %s exists: trace data became markup" % ident)
    for t in a.text:
        if html.escape(t, quote=False) not in dom:
            failures.append("the page does not show the text %r" % t)

    if a.screenshot:
        shot, _ = run_chromium(["--window-size=1400,1700", "--screenshot=" +
                                os.path.abspath(a.screenshot), url])
        if shot.returncode != 0 or not os.path.exists(a.screenshot):
            failures.append("no screenshot was made")
        else:
            print("screenshot: %s" % a.screenshot)

    for f in failures:
        print("FAIL: " + f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
