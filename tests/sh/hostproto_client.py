#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A client of adb's server protocol, byte-level, for the requests Debian's
adb (29) has no command for. It connects to 127.0.0.1:PORT (never starts a
server), sends each REQUEST in adb's framing (4 hex digits of length, then
the request) and writes every byte the server answers to stdout, raw, until
the server closes (exit 0), FRAMES protocol strings have come after the
first OKAY (--frames, for trackers that never close; exit 0), or TIMEOUT
seconds pass (exit 3). The requests go out at once, one after the other, as
adb's server reads them in turn (a transport switch, then the service)."""
import socket
import sys
import time


def main():
    args = sys.argv[1:]
    timeout, frames = 30.0, None
    while args and args[0].startswith("--"):
        opt = args.pop(0)
        if opt == "--timeout":
            timeout = float(args.pop(0))
        elif opt == "--frames":
            frames = int(args.pop(0))
        else:
            sys.exit("unknown option " + opt)
    if len(args) < 2:
        sys.exit("usage: hostproto_client.py [--timeout S] [--frames N] PORT REQUEST...")
    port, reqs = int(args[0]), args[1:]
    end = time.monotonic() + timeout
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    got = bytearray()
    for r in reqs:
        b = r.encode()
        s.sendall(b"%04x" % len(b) + b)
    out = sys.stdout.buffer

    def done():
        if frames is None:
            return False
        rest, n = bytes(got), 0
        if not rest.startswith(b"OKAY"):
            return rest.startswith(b"FAIL")
        rest = rest[4:]
        while n < frames:
            if len(rest) < 4:
                return False
            k = int(rest[:4], 16)
            if len(rest) < 4 + k:
                return False
            rest, n = rest[4 + k:], n + 1
        return True

    while not done():
        left = end - time.monotonic()
        if left <= 0:
            out.write(got)
            sys.exit(3)
        s.settimeout(left)
        try:
            chunk = s.recv(65536)
        except socket.timeout:
            continue
        if not chunk:
            break
        got += chunk
    out.write(got)
    out.flush()


if __name__ == "__main__":
    main()
