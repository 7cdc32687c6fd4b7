#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A small misbehaving adbd for adbc-snap's tool tests (tests/sh/snap_hostile.sh).

Listens on 127.0.0.1 (port written to the file given with --port-file), takes
connections one after another, and behaves as the scenario says:

  endless-pull   sync: every path is a 1 GiB regular file whose contents never end
  silent         accepts every stream, then says nothing
  shell-noexit   shell v2: prints "hi", then closes without an exit packet
  shell-emptyexit  shell v2: an exit packet with no status byte
  shell-exit3    shell v2: exit packet [3, 0, 0] (status in the first byte, as adbd)
  names          sync: a directory whose entries carry invalid UTF-8 and ESC sequences;
                 the banner carries bytes 0xFF 0xFE

It speaks legacy flow control (one WRTE in flight each way). Runs at most
--lifetime seconds. Test code only: it trusts the host.
"""
import argparse
import socket
import struct
import sys
import threading
import time

A_CNXN, A_OPEN, A_OKAY, A_CLSE, A_WRTE = (
    0x4E584E43, 0x4E45504F, 0x59414B4F, 0x45534C43, 0x45545257)
MAXDATA = 256 * 1024
FEATURES = b"shell_v2,cmd,stat_v2,ls_v2"


class Closed(Exception):
    pass


class Conn:
    def __init__(self, sock):
        self.sock = sock
        self.buf = b""
        self.local = None
        self.credit = True
        self.inbuf = b""
        self.next_id = 100

    def recv_exact(self, n):
        while len(self.buf) < n:
            d = self.sock.recv(1 << 16)
            if not d:
                raise Closed()
            self.buf += d
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def read(self):
        cmd, a0, a1, n, _chk, _magic = struct.unpack("<6I", self.recv_exact(24))
        return cmd, a0, a1, self.recv_exact(n) if n else b""

    def pkt(self, cmd, a0, a1, data=b""):
        hdr = struct.pack("<6I", cmd, a0, a1, len(data), sum(data) & 0xFFFFFFFF,
                          cmd ^ 0xFFFFFFFF)
        self.sock.sendall(hdr + data)

    def pump(self):
        cmd, a0, a1, data = self.read()
        if cmd == A_WRTE:
            self.inbuf += data
            self.pkt(A_OKAY, self.sid, a0)
        elif cmd == A_OKAY:
            self.credit = True
        elif cmd == A_CLSE:
            raise Closed()
        return cmd, a0, a1, data

    def send(self, data):
        while data:
            while not self.credit:
                self.pump()
            chunk, data = data[:MAXDATA], data[MAXDATA:]
            self.pkt(A_WRTE, self.sid, self.local, chunk)
            self.credit = False

    def need(self, n):
        while len(self.inbuf) < n:
            self.pump()
        out, self.inbuf = self.inbuf[:n], self.inbuf[n:]
        return out

    def online(self, banner):
        while True:
            cmd, _a0, _a1, _d = self.read()
            if cmd == A_CNXN:
                break
        self.pkt(A_CNXN, 0x01000001, MAXDATA, banner)

    def accept_open(self):
        """Wait for an OPEN, accept it, return the service name."""
        while True:
            cmd, a0, _a1, data = self.read()
            if cmd == A_OPEN:
                self.local = a0
                self.sid = self.next_id
                self.next_id += 1
                self.credit = True
                self.inbuf = b""
                self.pkt(A_OKAY, self.sid, a0)
                return data.rstrip(b"\0").decode("latin-1")


def st2(rid, mode, size, namelen=None):
    b = struct.pack("<4sIQQIIIIQqqq", rid, 0, 1, 2, mode, 1, 0, 0, size,
                    1700000000, 1700000000, 1700000000)
    if namelen is not None:
        b += struct.pack("<I", namelen)
    return b


def sync_requests(c):
    while True:
        rid, n = struct.unpack("<4sI", c.need(8))
        if rid in (b"QUIT",):
            return
        path = c.need(n) if rid not in (b"DONE", b"DATA") else b""
        yield rid, path


def endless_pull(c):
    c.online(b"device::ro.product.name=hostile;features=" + FEATURES)
    c.accept_open()
    chunk = b"DATA" + struct.pack("<I", 65536) + b"x" * 65536
    for rid, _path in sync_requests(c):
        if rid in (b"STA2", b"LST2"):
            c.send(st2(rid, 0o100644, 1 << 30))
        elif rid == b"RECV":
            while True:
                c.send(chunk)
                time.sleep(0.002)


def silent(c):
    c.online(b"device::ro.product.name=hostile;features=" + FEATURES)
    while True:
        cmd, a0, _a1, _d = c.read()
        if cmd == A_OPEN:
            c.pkt(A_OKAY, c.next_id, a0)
            c.next_id += 1


def shell(c, exit_payload):
    c.online(b"device::ro.product.name=hostile;features=" + FEATURES)
    c.accept_open()
    c.send(bytes([1]) + struct.pack("<I", 3) + b"hi\n")
    if exit_payload is not None:
        c.send(bytes([3]) + struct.pack("<I", len(exit_payload)) + exit_payload)
    c.pkt(A_CLSE, c.sid, c.local)
    try:
        while True:
            c.read()
    except Closed:
        pass


NAMES = [b"caf\xe9", b"\x1b[31mred\x1b[0m", b"ok", b"bell\x07", b"\xff\xfe"]


def names(c):
    c.online(b"device::ro.product.name=host\xff\xfeile;ro.product.model=M\x1b[2J;features="
             + FEATURES)
    while True:
        c.accept_open()
        try:
            for rid, _path in sync_requests(c):
                if rid in (b"STA2", b"LST2"):
                    c.send(st2(rid, 0o40755, 4096))
                elif rid == b"LIS2":
                    for n in NAMES:
                        c.send(st2(b"DNT2", 0o100644, 1, len(n)) + n)
                    c.send(st2(b"DONE", 0, 0, 0))
        except Closed:
            pass


SCENARIOS = {
    "endless-pull": endless_pull,
    "silent": silent,
    "shell-noexit": lambda c: shell(c, None),
    "shell-emptyexit": lambda c: shell(c, b""),
    "shell-exit3": lambda c: shell(c, b"\x03\x00\x00"),
    "names": names,
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("scenario", choices=sorted(SCENARIOS))
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--lifetime", type=float, default=120)
    a = ap.parse_args()
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    with open(a.port_file + ".tmp", "w") as f:
        f.write(str(srv.getsockname()[1]))
    import os
    os.rename(a.port_file + ".tmp", a.port_file)
    threading.Timer(a.lifetime, lambda: os._exit(0)).start()
    while True:
        s, _ = srv.accept()
        c = Conn(s)
        try:
            SCENARIOS[a.scenario](c)
        except (Closed, OSError):
            pass
        finally:
            s.close()


if __name__ == "__main__":
    sys.exit(main())
