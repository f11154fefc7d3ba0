"""Signals 1b: a Python program that catches KeyboardInterrupt (a terminal's Ctrl-C) and
prints it, then ends normally. "ready" is printed inside the try: the harness sends ^C as soon
as it reads it, and an interrupt between the print and the try would escape the handler. It
waits in short sleeps, not signal.pause(): a SIGINT that lands after the interpreter last
looked for one and before pause() is entered would leave pause() waiting for good (this hung
an untraced run once), where a sleep returns and the interrupt is raised."""
import sys
import time

try:
    print("ready", flush=True)
    while True:
        time.sleep(0.05)
except KeyboardInterrupt as e:
    print("caught", type(e).__name__, flush=True)
sys.exit(0)
