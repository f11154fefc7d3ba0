"""A collector that has stalled: a Unix SOCK_SEQPACKET socket listening at argv[1] with a
backlog of 1 that never accepts. Prints "ready" once listening; ends when its stdin closes."""
import socket
import sys

s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.bind(sys.argv[1])
s.listen(1)
print("ready", flush=True)
sys.stdin.read()
