"""Signals 1b: a Python program that catches KeyboardInterrupt (a terminal's Ctrl-C) and
prints it, then ends normally."""
import signal
import sys

print("ready", flush=True)
try:
    while True:
        signal.pause()
except KeyboardInterrupt as e:
    print("caught", type(e).__name__, flush=True)
sys.exit(0)
