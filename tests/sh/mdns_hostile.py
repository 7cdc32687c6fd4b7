#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A hostile mDNS responder for tests/sh/mdns.sh: answers every query that
comes to 224.0.0.251:5353 with broken and abusive messages, sent by unicast
to the querier's port (as one-shot queries are answered), plus one valid
service, adb-GOOD-1._adb._tcp at HOST:PORT (the arguments), sent first.

  mdns_hostile.py IFADDR HOST_ADDR PORT
"""
import socket
import struct
import sys

ifaddr, good_addr, good_port = sys.argv[1], sys.argv[2], int(sys.argv[3])


def name(n):
    out = b""
    for label in n.split("."):
        out += bytes([len(label)]) + label.encode()
    return out + b"\0"


def rr(owner, rtype, rdata, ttl=120, cls=0x8001):
    return owner + struct.pack(">HHIH", rtype, cls, ttl, len(rdata)) + rdata


def msg(records, an=None, qd=b"", qdcount=0, flags=0x8400):
    if an is None:
        an = len(records)
    return struct.pack(">HHHHHH", 0, flags, qdcount, an, 0, 0) + qd + b"".join(records)


PTR, SRV, TXT, A, AAAA = 12, 33, 16, 1, 28
svc = "_adb._tcp.local"
good = "adb-GOOD-1." + svc
srv = struct.pack(">HHH", 0, 0, good_port) + name("good-host.local")


def packets():
    # The valid service first: PTR, SRV, TXT, A.
    yield msg([rr(name(svc), PTR, name(good)), rr(name(good), SRV, srv),
               rr(name(good), TXT, b"\x03v=1"),
               rr(name("good-host.local"), A, socket.inet_aton(good_addr))])
    # Services whose host is given as this machine's loopback or as the
    # unspecified address (v4 and v6): never connected to.
    for inst, host, rtype, addr in (
            ("adb-LOOP-1", "loop-host.local", A, socket.inet_aton("127.0.0.1")),
            ("adb-ZERO-1", "zero-host.local", A, socket.inet_aton("0.0.0.0")),
            ("adb-LOOP6-1", "loop6-host.local", AAAA, socket.inet_pton(socket.AF_INET6, "::1")),
            ("adb-ZERO6-1", "zero6-host.local", AAAA, bytes(16))):
        full = inst + "." + svc
        yield msg([rr(name(svc), PTR, name(full)),
                   rr(name(full), SRV, struct.pack(">HHH", 0, 0, 5555) + name(host)),
                   rr(name(host), rtype, addr)])
    # An instance name with an ESC sequence, BEL, a tab, a newline and a
    # byte that is not UTF-8, at a good address.
    evil = b"adb-\x1b]0;pwned\x07\tforged\nrow\xff"
    evil_full = bytes([len(evil)]) + evil + name(svc)
    yield msg([rr(name(svc), PTR, evil_full),
               rr(evil_full, SRV, struct.pack(">HHH", 0, 0, good_port) + name("good-host.local")),
               rr(name("good-host.local"), A, socket.inet_aton(good_addr))])
    # A record whose length runs past the end of the message.
    yield msg([name(svc) + struct.pack(">HHIH", PTR, 1, 120, 100) + b"\x03abc"])
    # Truncated in the middle of the fixed part.
    yield msg([name(svc) + b"\x00\x0c\x00"])
    # A compression pointer loop: a name at offset 12 pointing to itself,
    # and two names pointing at each other.
    yield msg([b"\xc0\x0c" + struct.pack(">HHIH", PTR, 1, 120, 2) + b"\xc0\x0c"])
    yield msg([b"\x03abc\xc0\x12" + b"\x03def\xc0\x0c" + struct.pack(">HHIH", A, 1, 1, 4) + b"\1\2\3\4"])
    # A forward pointer, and a pointer past the end.
    yield msg([b"\xc0\x40" + struct.pack(">HHIH", A, 1, 1, 4) + b"\1\2\3\4"])
    yield msg([b"\xc3\xff" + struct.pack(">HHIH", A, 1, 1, 4) + b"\1\2\3\4"])
    # 10,000 answers claimed, three present.
    three = [rr(name(svc), PTR, name("adb-CLAIM-%d.%s" % (i, svc))) for i in range(3)]
    yield msg(three, an=10000)
    # Wrong record lengths: an A of 3 bytes, an SRV of 2, an AAAA of 4.
    yield msg([rr(name("good-host.local"), A, b"\1\2\3")])
    yield msg([rr(name(good), SRV, b"\0\1")])
    yield msg([rr(name("good-host.local"), AAAA, b"\1\2\3\4")])
    # A label longer than 63 (reserved 0x40 type) and a name over 255 bytes.
    yield msg([b"\x45" + b"x" * 69 + b"\0" + struct.pack(">HHIH", A, 1, 1, 4) + b"\1\2\3\4"])
    long_name = b"".join(b"\x3f" + b"y" * 63 for _ in range(5)) + b"\0"
    yield msg([long_name + struct.pack(">HHIH", A, 1, 1, 4) + b"\1\2\3\4"])
    # A question count far past the data.
    yield struct.pack(">HHHHHH", 0, 0x8400, 5000, 0, 0, 0) + b"\x01a\0"
    # 10,000 distinct valid PTR answers, 50 a message.
    for base in range(0, 10000, 50):
        yield msg([rr(name(svc), PTR, b"\x0fadb-FLOOD-%05d\xc0\x0c" % (base + i))
                   for i in range(50)])
    # Garbage of every short length.
    for n in range(0, 12):
        yield b"\xff" * n


s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", 5353))
s.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP,
             socket.inet_aton("224.0.0.251") + socket.inet_aton(ifaddr))
print("ready", flush=True)
answered = set()
while True:
    data, peer = s.recvfrom(9000)
    if len(data) < 12 or data[2] & 0x80:
        continue  # not a query
    if peer in answered:
        continue  # one flood per querier socket is enough
    answered.add(peer)
    for p in packets():
        s.sendto(p, peer)
