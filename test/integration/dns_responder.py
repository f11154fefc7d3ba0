#!/usr/bin/env python3
"""A tiny DNS server and client for the tests that trace a real DNS resolver.

serve PORTFILE ZONE
    Authoritative UDP responder on 127.0.0.1 (a free port, written to PORTFILE once bound).
    Answers an A query for NAME.ZONE with a fixed address derived from NAME (see address()),
    any other type under ZONE with an empty NOERROR, anything else with NXDOMAIN. Stops on
    SIGTERM or SIGINT and then prints how many queries it answered.
ask PORT ZONE WINDOW NAME...
    Sends an A query for each NAME.ZONE to 127.0.0.1:PORT, at most WINDOW in flight, and prints
    one line per name in the order given: "NAME ADDRESS" (the first A record), or "NAME -" when
    no answer came within 5 s, or "NAME rcode=N" for an answer without an address.
expect ZONE NAME...
    Prints what `ask` prints when every answer is this responder's.
freeport
    Prints a port of 127.0.0.1 that was free for UDP and TCP a moment ago.
"""
import hashlib
import os
import select
import signal
import socket
import struct
import sys
import time


def address(name):
    """The fixed address of NAME: 10.x.y.z from a hash of the lower-cased name."""
    h = hashlib.sha256(name.lower().encode()).digest()
    return "10.%d.%d.%d" % (h[0], h[1], h[2])


def encode_name(name):
    out = b""
    for label in name.rstrip(".").split("."):
        out += bytes([len(label)]) + label.encode()
    return out + b"\0"


def read_question(msg):
    """Returns (name, qtype, end of the question) of a query's first question."""
    pos = 12
    labels = []
    while msg[pos] != 0:
        n = msg[pos]
        labels.append(msg[pos + 1 : pos + 1 + n].decode("ascii", "replace"))
        pos += 1 + n
    qtype = struct.unpack("!H", msg[pos + 1 : pos + 3])[0]
    return ".".join(labels), qtype, pos + 5


def serve(portfile, zone):
    zone = zone.rstrip(".").lower()
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    with open(portfile + ".tmp", "w") as f:
        f.write("%d\n" % sock.getsockname()[1])
    # Renamed into place so that a reader never sees a half-written port.
    os.rename(portfile + ".tmp", portfile)
    answered = 0
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    while not stop:
        try:
            ready, _, _ = select.select([sock], [], [], 0.2)
        except InterruptedError:
            continue
        if not ready:
            continue
        msg, peer = sock.recvfrom(4096)
        if len(msg) < 17:
            continue
        qid, flags = struct.unpack("!HH", msg[:4])
        try:
            name, qtype, qend = read_question(msg)
        except (IndexError, struct.error):
            continue
        lname = name.lower()
        in_zone = lname == zone or lname.endswith("." + zone)
        answers = b""
        rcode = 0 if in_zone else 3
        if in_zone and qtype == 1 and lname != zone:
            rdata = socket.inet_aton(address(lname[: -len(zone) - 1]))
            answers = b"\xc0\x0c" + struct.pack("!HHIH", 1, 1, 3600, 4) + rdata
        # QR, AA, the query's RD; RA set: the tests forward to it as to a recursor.
        rflags = 0x8000 | 0x0400 | (flags & 0x0100) | 0x0080 | rcode
        head = struct.pack("!HHHHHH", qid, rflags, 1, 1 if answers else 0, 0, 0)
        sock.sendto(head + msg[12:qend] + answers, peer)
        answered += 1
    print(answered)


def ask(port, zone, window, names):
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.connect(("127.0.0.1", port))
    result = {}
    pending = {}  # id -> (name, deadline)
    todo = list(enumerate(names))
    while todo or pending:
        while todo and len(pending) < window:
            i, name = todo.pop(0)
            qid = (i * 7919 + 1) & 0xFFFF
            q = struct.pack("!HHHHHH", qid, 0x0100, 1, 0, 0, 0)
            q += encode_name(name + "." + zone) + struct.pack("!HH", 1, 1)
            sock.send(q)
            pending[qid] = (name, time.monotonic() + 5)
        wait = max(0, min(d for _, d in pending.values()) - time.monotonic())
        ready, _, _ = select.select([sock], [], [], wait)
        if ready:
            try:
                msg = sock.recv(4096)
            except ConnectionRefusedError:
                continue
            qid, flags, _, ancount = struct.unpack("!HHHH", msg[:8])
            if qid not in pending:
                continue
            name, _ = pending.pop(qid)
            result[name] = "rcode=%d" % (flags & 15)
            try:
                _, _, pos = read_question(msg)
                for _ in range(ancount):
                    pos += 2  # a compressed owner name (the responders here use one)
                    rtype, _, _, rdlen = struct.unpack("!HHIH", msg[pos : pos + 10])
                    pos += 10
                    if rtype == 1 and rdlen == 4:
                        result[name] = socket.inet_ntoa(msg[pos : pos + 4])
                        break
                    pos += rdlen
            except (IndexError, struct.error):
                pass
        now = time.monotonic()
        for qid in [q for q, (_, d) in pending.items() if d <= now]:
            result[pending.pop(qid)[0]] = "-"
    for name in names:
        print(name, result[name])


def main(argv):
    if len(argv) == 4 and argv[1] == "serve":
        serve(argv[2], argv[3])
    elif len(argv) >= 5 and argv[1] == "ask":
        ask(int(argv[2]), argv[3].rstrip("."), int(argv[4]), argv[5:])
    elif len(argv) >= 3 and argv[1] == "expect":
        for name in argv[3:]:
            print(name, address(name))
    elif len(argv) == 2 and argv[1] == "freeport":
        print(free_port())
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


def free_port():
    """A port of 127.0.0.1 free for UDP and for TCP a moment ago: pdns-recursor binds both, and
    a UDP port alone can be a TCP connection's ephemeral port of another test running beside."""
    for _ in range(100):
        udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        udp.bind(("127.0.0.1", 0))
        port = udp.getsockname()[1]
        tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            tcp.bind(("127.0.0.1", port))
            return port
        except OSError:
            continue
        finally:
            tcp.close()
            udp.close()
    raise SystemExit("freeport: no port free for both UDP and TCP in 100 tries")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
