#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A link emulator for benchmarks and fault tests: a TCP relay on loopback
that makes a connection to TARGET behave like a slower, longer link.

Each direction of each connection is a queue: a byte read at time t leaves
no earlier than t + DELAY (one-way), and the sender side of the queue is
paced to RATE bits per second, so the link carries at most RATE and every
round trip costs 2 x DELAY, as on Wi-Fi or a VPN. The queue holds at most
QUEUE bytes (default: the bandwidth-delay product plus 256 KiB, a router's
buffer); beyond that the relay stops reading and TCP's own flow control
pushes back on the sender, as a full link does.

Faults: --drop-after N closes both sides of a connection once N bytes (both
directions together) have crossed it, mid-stream, as a link that dies.
Bounded in time: the relay exits after --max-seconds (default 600).

  linkemu.py relay --listen PORT|0 --target HOST:PORT [--delay-ms D] [--rate-mbit R]
                   [--drop-after N] [--stats FILE] [--max-seconds S]
      prints "listening on 127.0.0.1:PORT" once ready; keeps "up BYTES down
      BYTES" in --stats (totals so far, rewritten within 0.2 s of a change;
      up: towards TARGET, down: back from it).
  linkemu.py raw FILE [--delay-ms D] [--rate-mbit R]
      sends FILE through an emulated link to a local sink and prints
      "raw BYTES bytes in SECONDS s" (the reference ceiling for a link).
"""
import argparse
import collections
import os
import signal
import socket
import sys
import threading
import time

CHUNK = 64 * 1024


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.up = 0
        self.down = 0


class Pipe(threading.Thread):
    """One direction: read src, hold each piece DELAY, pace it to RATE, write dst."""

    def __init__(self, src, dst, delay, rate, queue_max, conn, up):
        super().__init__(daemon=True)
        self.src, self.dst = src, dst
        self.delay, self.rate = delay, rate
        self.queue_max = queue_max
        self.conn, self.up = conn, up
        self.q = collections.deque()
        self.qbytes = 0
        self.cv = threading.Condition()
        self.eof = False
        self.reader = threading.Thread(target=self.read_loop, daemon=True)

    def read_loop(self):
        try:
            while True:
                with self.cv:
                    while self.qbytes >= self.queue_max and not self.conn.dead:
                        self.cv.wait(0.1)
                if self.conn.dead:
                    break
                data = self.src.recv(CHUNK)
                if not data:
                    break
                with self.cv:
                    self.q.append((time.monotonic() + self.delay, data))
                    self.qbytes += len(data)
                    self.cv.notify_all()
        except OSError:
            pass
        with self.cv:
            self.eof = True
            self.cv.notify_all()

    def run(self):
        self.reader.start()
        free_at = time.monotonic()  # when the paced link is free again
        try:
            while True:
                with self.cv:
                    while not self.q and not self.eof and not self.conn.dead:
                        self.cv.wait(0.1)
                    if self.conn.dead or (not self.q and self.eof):
                        break
                    due, data = self.q.popleft()
                    self.qbytes -= len(data)
                    self.cv.notify_all()
                # the piece goes onto the link when it is free (not before
                # it was read), takes len/RATE to serialise, then DELAY to
                # travel; it is written out when it would arrive
                start = max(free_at, due - self.delay)
                free_at = start + (len(data) * 8 / self.rate if self.rate else 0)
                arrive = free_at + self.delay
                wait = arrive - time.monotonic()
                if wait > 0:
                    time.sleep(wait)
                if not self.conn.account(len(data), self.up):
                    # drop mid-piece: what the link carried before it died
                    break
                self.dst.sendall(data)
        except OSError:
            pass
        if self.conn.dead:
            self.conn.kill()
        else:
            try:
                self.dst.shutdown(socket.SHUT_WR)
            except OSError:
                pass


class Conn:
    def __init__(self, a, b, args, stats):
        self.a, self.b = a, b
        self.args, self.stats = args, stats
        self.dead = False
        self.moved = 0
        self.lock = threading.Lock()
        delay = args.delay_ms / 1000.0
        rate = args.rate_mbit * 1e6
        qmax = args.queue or int(rate / 8 * delay * 2) + 256 * 1024
        self.pipes = [Pipe(a, b, delay, rate, qmax, self, True),
                      Pipe(b, a, delay, rate, qmax, self, False)]

    def account(self, n, up):
        with self.lock:
            if self.dead:
                return False
            if self.args.drop_after and self.moved + n > self.args.drop_after:
                self.dead = True
                return False
            self.moved += n
        with self.stats.lock:
            if up:
                self.stats.up += n
            else:
                self.stats.down += n
        return True

    def kill(self):
        self.dead = True
        for s in (self.a, self.b):
            try:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def start(self):
        for p in self.pipes:
            p.start()
        threading.Thread(target=self.reap, daemon=True).start()

    def reap(self):
        for p in self.pipes:
            p.join()
        for s in (self.a, self.b):
            try:
                s.close()
            except OSError:
                pass


def relay(args):
    stats = Stats()
    host, port = args.target.rsplit(":", 1)
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", args.listen))
    ls.listen(64)
    ls.settimeout(0.2)
    print("listening on 127.0.0.1:%d" % ls.getsockname()[1], flush=True)
    stop = threading.Event()

    def on_term(*_):
        stop.set()

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)
    deadline = time.monotonic() + args.max_seconds
    last = None
    while not stop.is_set() and time.monotonic() < deadline:
        if args.stats:
            with stats.lock:
                now = (stats.up, stats.down)
            if now != last:
                write_stats(args.stats, *now)
                last = now
        try:
            a, _ = ls.accept()
        except socket.timeout:
            continue
        try:
            b = socket.create_connection((host, int(port)), timeout=10)
            b.settimeout(None)
        except OSError as e:
            print("linkemu: cannot reach %s: %s" % (args.target, e), file=sys.stderr)
            a.close()
            continue
        for s in (a, b):
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        Conn(a, b, args, stats).start()
    if args.stats:
        write_stats(args.stats, stats.up, stats.down)
    return 0


def write_stats(path, up, down):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write("up %d down %d\n" % (up, down))
    os.replace(tmp, path)


def raw(args):
    """FILE through the link to a sink; the time from the first byte sent to
    the last byte received."""
    size = os.path.getsize(args.file)
    sink = socket.socket()
    sink.bind(("127.0.0.1", 0))
    sink.listen(1)
    got = {}

    def drain():
        c, _ = sink.accept()
        n = 0
        while True:
            d = c.recv(1 << 20)
            if not d:
                break
            n += len(d)
        got["n"], got["t"] = n, time.monotonic()
        c.close()

    th = threading.Thread(target=drain, daemon=True)
    th.start()
    rargs = argparse.Namespace(delay_ms=args.delay_ms, rate_mbit=args.rate_mbit, queue=0,
                               drop_after=0)
    stats = Stats()
    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen(1)
    out = socket.create_connection(ls.getsockname())
    a, _ = ls.accept()
    b = socket.create_connection(sink.getsockname())
    for s in (a, b, out):
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    Conn(a, b, rargs, stats).start()
    t0 = time.monotonic()
    with open(args.file, "rb") as f:
        while True:
            d = f.read(1 << 20)
            if not d:
                break
            out.sendall(d)
    out.shutdown(socket.SHUT_WR)
    th.join(args.max_seconds)
    if got.get("n") != size:
        print("raw: %s of %d bytes arrived" % (got.get("n"), size), file=sys.stderr)
        return 1
    print("raw %d bytes in %.3f s" % (size, got["t"] - t0))
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("relay")
    r.add_argument("--listen", type=int, default=0)
    r.add_argument("--target", required=True)
    r.add_argument("--stats")
    r.add_argument("--drop-after", type=int, default=0)
    r.add_argument("--queue", type=int, default=0)
    w = sub.add_parser("raw")
    w.add_argument("file")
    for q in (r, w):
        q.add_argument("--delay-ms", type=float, default=0.0)
        q.add_argument("--rate-mbit", type=float, default=0.0)
        q.add_argument("--max-seconds", type=float, default=600.0)
    args = p.parse_args()
    return relay(args) if args.cmd == "relay" else raw(args)


if __name__ == "__main__":
    sys.exit(main())
