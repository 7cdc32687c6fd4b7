#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# A protobuf reader for the adb server tests: adb's host services that answer
# in adb_host.proto (host:server-status, host:track-devices-proto-binary) are
# read by the wire format alone, not by adbc's encoder. Source it after lib.sh.
#
#   pb FILE          the fields of each frame of a server's answer in FILE
#                    ("OKAY", then 4-hex-digit-framed messages), a line
#                    "frame" before each, then NUMBER=VALUE lines (a nested
#                    Devices.device as NUMBER={...})

# pb FILE: the fields of a protobuf message (after OKAY and the 4-digit
# length), as NUMBER=VALUE lines (a nested message as NUMBER={...}); by
# the wire format alone, not by adbc's encoder.
pb()
{
    python3 - "$1" << 'PY'
import sys
data = open(sys.argv[1], "rb").read()
assert data[:4] == b"OKAY", data[:40]
body = data[4:]
frames = []
while body:
    n = int(body[:4], 16)
    frames.append(body[4:4 + n])
    assert len(body) >= 4 + n, "short frame"
    body = body[4 + n:]
def varint(b, i):
    v = s = 0
    while True:
        c = b[i]; i += 1; v |= (c & 0x7f) << s; s += 7
        if c < 0x80: return v, i
def fields(b):
    out, i = [], 0
    while i < len(b):
        tag, i = varint(b, i)
        num, wire = tag >> 3, tag & 7
        if wire == 0:
            v, i = varint(b, i); out.append((num, v))
        elif wire == 2:
            n, i = varint(b, i); out.append((num, b[i:i + n])); i += n
        else:
            raise SystemExit("wire type %d" % wire)
    return out
for f in frames:
    print("frame")
    for num, v in fields(f):
        if isinstance(v, bytes) and num == 1:  # Devices.device: a nested Device
            print("%d={%s}" % (num, " ".join("%d=%s" % (n, w.decode() if isinstance(w, bytes) else w) for n, w in fields(v))))
        else:
            print("%d=%s" % (num, v.decode() if isinstance(v, bytes) else v))
PY
}

# status_field PORT N: field N of host:server-status from the adb server on
# 127.0.0.1:PORT (hostproto_client.py, which never starts a server); empty
# when the field is absent. Fails the test when no status comes.
status_field()
{
    local f=$T_TMP/status.$1
    timeout 60 python3 "$ADBC_SOURCE_DIR/tests/sh/hostproto_client.py" --timeout 40 "$1" \
        host:server-status > "$f" || t_fail "host:server-status on port $1: no answer"
    pb "$f" > "$f.fields" || t_fail "host:server-status on port $1: $(od -c "$f" | head -3)"
    sed -n "s/^$2=//p" "$f.fields"
}
