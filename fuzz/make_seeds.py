#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the seed corpora in fixtures/fuzz/<harness>/ (the regression inputs
found by fuzzing live there too, named crash-*/regress-*, and are not
touched). Seeds are real exchanges: a device's CNXN and AUTH, streams, shell
v2 output, sync replies, small uiautomator dumps."""
import os, struct, shutil, sys

top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
out = os.path.join(top, "fixtures", "fuzz")

def cmd(s): return struct.unpack("<I", s.encode())[0]

def pkt(c, a0, a1, data=b"", check=True):
    c = cmd(c)
    return struct.pack("<6I", c, a0, a1, len(data), sum(data) & 0xffffffff if check else 0,
                       c ^ 0xffffffff) + data

V1, V2, MAXP = 0x01000000, 0x01000001, 1 << 20
DEV_BANNER = b"device::ro.product.name=sdk_gphone64;ro.product.model=sdk_gphone64_x86_64;" \
             b"ro.product.device=emu64x;features=shell_v2,cmd,stat_v2,ls_v2,fixed_push_mkdir,delayed_ack\0"
HOST_BANNER = b"host::features=shell_v2,cmd,stat_v2,ls_v2,fixed_push_mkdir,delayed_ack\0"

def put(harness, name, data):
    if harness == "pair":
        put1("pair_machine", name, data)
    put1(harness, name, data)

def put1(harness, name, data):
    d = os.path.join(out, harness)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "seed-" + name), "wb") as f:
        f.write(data)

def shv2(i, data): return struct.pack("<BI", i, len(data)) + data

# ---- session, host role: what a device sends. Prefix: flags, split.
token = bytes(range(0x10, 0x24))
online = pkt("CNXN", V2, MAXP, DEV_BANNER)
stream = pkt("OKAY", 7, 1, struct.pack("<I", 65536)) + pkt("WRTE", 7, 1, shv2(1, b"hello\n")) + \
         pkt("WRTE", 7, 1, shv2(3, b"\0")) + pkt("CLSE", 7, 1)
for flags, split, body, name in [
    (0x00, 0, online, "cnxn"),
    (0x00, 0, online + stream, "cnxn-shell"),
    (0x07, 0, pkt("AUTH", 1, 0, token) + pkt("AUTH", 1, 0, token) + online + stream, "auth-tokens"),
    (0x10, 5, pkt("CNXN", V1, 4096, DEV_BANNER.replace(b"delayed_ack", b"x")) + stream, "v1-split5"),
    (0x00, 0, pkt("STLS", V1, 0) + b"\x16\x03\x01", "stls"),
    (0x40, 0, online + pkt("OKAY", 9, 1) + pkt("WRTE", 9, 1, b"x" * 300) + pkt("WRTE", 9, 1, b"y"), "legacy-flow"),
    (0x00, 1, online + pkt("CLSE", 0, 1), "refused-split1"),
]:
    put("session_host", name, bytes([flags, split]) + body)

# ---- session, device role: what a host sends.
host_cnxn = pkt("CNXN", V2, MAXP, HOST_BANNER)
opens = pkt("OPEN", 1, 65536, b"shell,v2,raw:ls\0") + pkt("OKAY", 1, 1, struct.pack("<I", 1000)) + \
        pkt("WRTE", 1, 1, shv2(0, b"in")) + pkt("CLSE", 1, 1) + pkt("OPEN", 2, 0, b"xnope\0")
for flags, split, body, name in [
    (0x00, 0, host_cnxn + opens, "cnxn-open"),
    (0x01, 0, host_cnxn + pkt("AUTH", 2, 0, b"\x5a" * 256) + opens, "auth-sig"),
    (0x09, 0, host_cnxn + pkt("AUTH", 2, 0, b"\0" * 256) + pkt("AUTH", 3, 0, b"QUFBQUFBQUE= me@host\0") + opens, "auth-offer"),
    (0x30, 7, pkt("CNXN", V1, 4096, b"host::\0") + pkt("OPEN", 1, 0, b"sync:\0") + pkt("WRTE", 1, 1, b"STAT\x04\0\0\0/sdc"), "v1-sync"),
]:
    put("session_device", name, bytes([flags, split]) + body)

# ---- AUTH exchange records: [kind][len][bytes]; first byte flags.
def rec(kind, data): return bytes([kind, len(data)]) + data
put("auth", "host-tokens", bytes([0x40 | 2]) + rec(0, token) + rec(0, token) + rec(0, token) + rec(4, DEV_BANNER[:200]))
put("auth", "host-token-forever", bytes([0x20]) + rec(0, token) * 20)
put("auth", "device-sig", bytes([0x05]) + rec(1, b"\x5a" * 200) + rec(5, b"shell:\0"))
put("auth", "device-key", bytes([0x09]) + rec(1, b"\0" * 100) + rec(2, b"QUFBQUFBQUE= me@host\0") + rec(0x87, b""))

# ---- banner
for name, b in [("device", DEV_BANNER), ("host", HOST_BANNER), ("recovery", b"recovery::ro.product.name=x;features=cmd"),
                ("sideload", b"sideload::"), ("old", b"device::"), ("bad", b"device:x")]:
    put("banner", name, b)

# ---- shell v2 stream: first byte split.
put("shellv2", "out-err-exit", b"\0" + shv2(1, b"stdout\n") + shv2(2, b"stderr\n") + shv2(3, b"\x02"))
put("shellv2", "split3", b"\x03" + shv2(1, b"a" * 100) + shv2(5, b"") + shv2(1, b""))
put("shellv2", "unknown-id", b"\0" + shv2(9, b"zz"))

# ---- sync replies: [split][expect byte] + stream.
def sh(i, n): return i.encode() + struct.pack("<I", n)
stat1 = b"STAT" + struct.pack("<III", 0o100644, 5, 1700000000)
sta2 = b"STA2" + struct.pack("<IQQIIIIQqqq", 0, 1, 2, 0o100644, 1, 0, 0, 5, 1, 2, 3)
dent = b"DENT" + struct.pack("<IIII", 0o100644, 5, 1, 3) + b"abc"
dnt2 = b"DNT2" + struct.pack("<IQQIIIIQqqq", 0, 1, 2, 0o40755, 1, 0, 0, 5, 1, 2, 3) + struct.pack("<I", 1) + b"."
end1 = b"DONE" + b"\0" * 16
end2 = b"DONE" + b"\0" * 72
# expect = 1 + b % 6: STAT_V1=0, STAT_V2=1, LIST_V1=2, LIST_V2=3, RECV=4, STATUS=5
put("sync_reply", "stat-v1", bytes([0, 0]) + stat1)
put("sync_reply", "stat-v2", bytes([0, 1]) + sta2)
put("sync_reply", "list-v1", bytes([0, 2]) + dent + dent + end1)
put("sync_reply", "list-v2", bytes([4, 3]) + dnt2 + end2)
put("sync_reply", "recv", bytes([0, 4]) + sh("DATA", 5) + b"hello" + sh("DATA", 0) + sh("DONE", 0))
put("sync_reply", "recv-fail", bytes([1, 4]) + sh("FAIL", 14) + b"No such file.")
put("sync_reply", "status", bytes([0, 5]) + sh("OKAY", 0))
put("sync_reply", "huge-len", bytes([0, 4]) + sh("DATA", 0xffffffff) + b"x" * 8)

# ---- sync requests: [split] + stream.
def req(i, p): return sh(i, len(p)) + p
put("sync_request", "stat-list", b"\0" + req("STAT", b"/sdcard") + req("LIS2", b"/") + req("QUIT", b""))
put("sync_request", "send", b"\x02" + req("SEND", b"/sdcard/x,33188") + sh("DATA", 3) + b"abc" + sh("DONE", 1700000000))
put("sync_request", "recv", b"\0" + req("RECV", b"/sdcard/x") + req("STA2", b"/x"))
put("sync_request", "bad-spec", b"\0" + req("SEND", b"noComma") + req("SEND", b"/a,0x1ff"))

# ---- UI dumps: small real ones, and hand-made edge cases.
snap = os.path.join(top, "fixtures", "snapshot")
for f in ["009-settings-small.xml", "016-wework-dialog.xml", "026-game-marvel.xml", "043-vn-bank-empty.xml"]:
    with open(os.path.join(snap, f), "rb") as fh:
        put("ui", f, fh.read())
put("ui", "tiny", b"<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">"
    b"<node index=\"0\" text=\"OK &amp; &#x4e2d;\" resource-id=\"a:id/b\" class=\"android.widget.Button\" "
    b"package=\"p\" content-desc=\"\" checkable=\"false\" checked=\"false\" clickable=\"true\" enabled=\"true\" "
    b"focusable=\"true\" focused=\"false\" scrollable=\"false\" long-clickable=\"false\" password=\"false\" "
    b"selected=\"false\" bounds=\"[0,0][100,50]\" /></hierarchy>")
put("ui", "cut", b"<hierarchy><node text=\"a\" clickable=\"true\" bounds=\"[0,0][1,1]\"><node text=\"")

# ---- pairing: [mode] + peer bytes (header + SPAKE2 message, then PeerInfo).
put("pair", "spake-msg", b"\x00" + bytes([1, 0, 0, 0, 0, 32]) + bytes(range(32)))
put("pair", "spake-then-info", b"\x01" + bytes([1, 0, 0, 0, 0, 32]) + bytes(range(32)) +
    bytes([1, 1, 0, 0, 0x20, 0x10]) + b"\x11" * 64)
put("pair", "peerinfo", b"\x00" + b"\x01" + b"adb-guid-1234\0")
put("pair", "bad-header", b"\x04" + bytes([2, 9, 0xff, 0xff, 0xff, 0xff]))

# ---- DNS (mDNS answers): what avahi and Android's responder send, and broken ones.
def dname(n): return b"".join(bytes([len(l)]) + l.encode() for l in n.split(".")) + b"\0"
def drr(owner, t, rd, cls=0x8001): return owner + struct.pack(">HHIH", t, cls, 120, len(rd)) + rd
def dmsg(rrs, an=None, flags=0x8400, qd=b"", nq=0):
    return struct.pack(">6H", 0, flags, nq, len(rrs) if an is None else an, 0, 0) + qd + b"".join(rrs)
svc, inst = "_adb-tls-connect._tcp.local", "adb-R5CT1234567-aBcDeF._adb-tls-connect._tcp.local"
srv = struct.pack(">3H", 0, 0, 37099) + dname("Android-2.local")
put("dns", "avahi-answer", dmsg([drr(dname(svc), 12, dname(inst), 1), drr(dname(inst), 33, srv),
    drr(dname(inst), 16, b"\x1ev=ADB_SECURE_SERVICE_VERSION"),
    drr(dname("Android-2.local"), 1, bytes([192, 168, 1, 23])),
    drr(dname("Android-2.local"), 28, bytes([0xfe, 0x80] + [0] * 13 + [1]))]))
# Compressed: the PTR target and SRV owner point back at earlier names.
put("dns", "compressed", dmsg([drr(dname(svc), 12, b"\x16adb-R5CT1234567-aBcDeF\xc0\x0c"),
    drr(b"\xc0\x33", 33, struct.pack(">3H", 0, 0, 5555) + b"\x09Android-2\xc0\x22")]))
put("dns", "query", dmsg([], flags=0, qd=dname("_adb._tcp.local") + struct.pack(">HH", 12, 1), nq=1))
put("dns", "pointer-loop", dmsg([b"\xc0\x0c" + struct.pack(">HHIH", 12, 1, 1, 2) + b"\xc0\x0c"]))
put("dns", "count-too-big", dmsg([drr(dname(svc), 12, dname(inst))], an=10000))
put("dns", "rdlen-past-end", dmsg([dname(svc) + struct.pack(">HHIH", 12, 1, 1, 200) + b"\x01a"]))
