#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# adbc-serve --adb-server --adb-server-sync engine: a client's sync session
# served by adbc's own sync engine (tools/adbc-serve/adbsync.c), with
# Debian's adb as the client, side by side with Debian's own adb server on
# the same test device. The features the client sees have no sendrecv_v2*
# (the client sends with v1 SEND and RECV, which the engine serves, and its
# queries reach the device as they are); push and pull of a
# tree (a large file, an empty one, a link) come back whole with their
# mtimes; push, pull and ls give the same output and exit status as
# through adb's server, failures included; the engine, not a relay, served
# them (adbc-serve's request log); and a client that breaks the protocol
# gets adbd's FAIL, leaves no file behind and does not stop the server.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
t_need_adb
SERVE=${ADBC_SERVE:-$ADBC_BUILD_DIR/tools/adbc-serve}
t_need_built SERVE "adbc-serve needs cJSON and libmicrohttpd"
t_init
interop_start
LOG=$T_TMP/serve.log
P=$(_t_free_port) || t_fail "no free port"
adbsrv_start "$LOG" "$P" --until "connected to $DEV" -t "$DEV" --adb-server-sync engine
SB=${TD_SANDBOX[dev]}

mkdir -p "$T_TMP/bhome"
B() { HOME=$T_TMP/bhome TMPDIR=$T_TMP/adb-a/tmp timeout "$ADB_TIMEOUT" "$ADB_BIN" -P "$P" "$@"; }
# run WHO OUT ARGS...: a (adb's own server) or b (adbc's); OUT.out, OUT.err, RC.
run()
{
    local who=$1 out=$2
    shift 2
    if [ "$who" = a ]; then
        adb_run a -s "$DEV" "$@" > "$T_TMP/$out.out" 2> "$T_TMP/$out.err"
    else
        B -s "$DEV" "$@" > "$T_TMP/$out.out" 2> "$T_TMP/$out.err"
    fi
    RC=$?
}
norm() { sed -E 's/[0-9.]+ MB\/s \([0-9]+ bytes in [0-9.]+s\)/RATE/' "$1"; }
# same ARGS...: the same stdout, stderr and exit status through both servers.
same()
{
    t_check "adb $*: the same output and status through the engine"
    run a a "$@"
    local ra=$RC
    run b b "$@"
    [ "$ra" = "$RC" ] || t_fail "exit $ra with adb's server, $RC with the engine ($(cat "$T_TMP/b.err"))"
    for f in out err; do
        norm "$T_TMP/a.$f" > "$T_TMP/a.norm"
        norm "$T_TMP/b.$f" > "$T_TMP/b.norm"
        diff "$T_TMP/a.norm" "$T_TMP/b.norm" > "$T_TMP/diff" ||
            t_fail "std$f differs (< adb's server, > the engine): $(cat "$T_TMP/diff")"
    done
}
# served KIND PATH: the engine's log has a KIND request for PATH since mark.
mark() { MARK=$(wc -l < "$LOG"); }
served()
{
    tail -n +"$((MARK + 1))" "$LOG" | grep -qF "sync engine: $1 $2" ||
        t_fail "the engine served no $1 of $2: $(tail -n 5 "$LOG")"
}

# features PORT: the device's features as that server answers
# host-serial:DEV:features (adb 29's `features` lists only those it knows).
features()
{
    python3 - "$1" "$DEV" << 'EOF' | tr ',' '\n' | sort
import socket, sys
c = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=30)
q = ("host-serial:%s:features" % sys.argv[2]).encode()
c.sendall(b"%04x%s" % (len(q), q))
r = b""
while len(r) < 8 or len(r) < 8 + int(r[4:8], 16):
    k = c.recv(4096)
    if not k:
        break
    r += k
assert r[:4] == b"OKAY", r
print(r[8:8 + int(r[4:8], 16)].decode())
EOF
}
t_check "features: the device's without sendrecv_v2*"
features "${ADB_PORT[a]}" > "$T_TMP/fa.all"
grep -qx sendrecv_v2 "$T_TMP/fa.all" || t_fail "the test device lists no sendrecv_v2: nothing to strip"
grep -vE '^sendrecv_v2' "$T_TMP/fa.all" > "$T_TMP/fa"
features "$P" > "$T_TMP/fb"
diff "$T_TMP/fa" "$T_TMP/fb" || t_fail "features through the engine differ from the device's less sendrecv_v2*"

t_check "push a tree (24 MiB, empty, a link, nested) through the engine: the device's copy is whole"
mkdir -p "$T_TMP/tree/a/b"
printf 'one\n' > "$T_TMP/tree/a/f1"
printf 'two\n' > "$T_TMP/tree/a/b/f2"
: > "$T_TMP/tree/empty"
ln -s f1 "$T_TMP/tree/a/link"
head -c $((24 << 20)) /dev/urandom > "$T_TMP/tree/big"
touch -d '2021-03-04 05:06:07' "$T_TMP/tree/big"
mark
run b b push "$T_TMP/tree" /data/local/tmp/tree
[ $RC = 0 ] || t_fail "push: $(cat "$T_TMP/b.err")"
served SEND /data/local/tmp/tree/big
cmp "$T_TMP/tree/big" "$SB/data/local/tmp/tree/big" || t_fail "the device's copy of big differs"
[ -e "$SB/data/local/tmp/tree/empty" ] && [ ! -s "$SB/data/local/tmp/tree/empty" ] ||
    t_fail "the empty file did not arrive empty"
[ "$(readlink "$SB/data/local/tmp/tree/a/link")" = f1 ] || t_fail "the link did not arrive as a link"
[ "$(stat -c %Y "$SB/data/local/tmp/tree/big")" = "$(stat -c %Y "$T_TMP/tree/big")" ] ||
    t_fail "big's mtime on the device: $(stat -c %Y "$SB/data/local/tmp/tree/big")"

t_check "pull the tree back through the engine: the same files, mtimes kept with -a"
mark
run b b pull -a /data/local/tmp/tree "$T_TMP/back"
[ $RC = 0 ] || t_fail "pull: $(cat "$T_TMP/b.err")"
served RECV /data/local/tmp/tree/big
diff -r "$T_TMP/tree" "$T_TMP/back/tree" 2> /dev/null || diff -r "$T_TMP/tree" "$T_TMP/back" ||
    t_fail "the tree pulled back differs"
back=$T_TMP/back/tree
[ -d "$back" ] || back=$T_TMP/back
[ "$(stat -c %Y "$back/big")" = "$(stat -c %Y "$T_TMP/tree/big")" ] || t_fail "pull -a lost big's mtime"

same push "$T_TMP/tree/a/f1" /data/local/tmp/f1
same pull /data/local/tmp/f1 "$T_TMP/f1.back"
same pull /data/local/tmp/nonexistent "$T_TMP/nothing"
same ls /data/local/tmp/tree/a
same ls /data/local/tmp/nonexistent
same push "$T_TMP/tree/a/f1" /proc/adbc-no-such-dir/f1
same shell cat /data/local/tmp/tree/a/f1

# raw SERVICE-REQUESTS...: a client of adbc's server that speaks sync:
# itself (python); prints what the server answered, as text.
raw()
{
    python3 - "$P" "$DEV" "$@" << 'EOF'
import socket, struct, sys
port, dev, script = int(sys.argv[1]), sys.argv[2], sys.argv[3]
c = socket.create_connection(("127.0.0.1", port), timeout=30)
def req(s):
    c.sendall(b"%04x%s" % (len(s), s.encode()))
    a = c.recv(4)
    assert a == b"OKAY", a
req("host:transport:" + dev)
req("sync:")
def hdr(i, n): return i.encode() + struct.pack("<I", n)
if script == "unknown":
    c.sendall(hdr("XXXX", 0))
elif script == "nocomma":
    c.sendall(hdr("SEND", 11) + b"/data/x-raw")
elif script == "oversize":
    p = b"/data/local/tmp/raw-oversize,33188"
    c.sendall(hdr("SEND", len(p)) + p + hdr("DATA", 4) + b"abcd" + hdr("DATA", 70000) + b"z" * 70000)
elif script == "notdata":
    p = b"/data/local/tmp/raw-notdata,33188"
    c.sendall(hdr("SEND", len(p)) + p + hdr("DATA", 4) + b"abcd" + hdr("WHAT", 0))
elif script == "recvdir":
    c.sendall(hdr("RECV", 15) + b"/data/local/tmp")
elif script == "recvmissing":
    c.sendall(hdr("RECV", 20) + b"/data/local/tmp/none")
elif script == "hangup":
    p = b"/data/local/tmp/raw-hangup,33188"
    c.sendall(hdr("SEND", len(p)) + p + hdr("DATA", 65536) + b"h" * 65536 + hdr("DATA", 100) + b"h" * 10)
    c.close()
    print("closed")
    sys.exit(0)
out = b""
try:
    while True:
        k = c.recv(65536)
        if not k:
            break
        out += k
except socket.timeout:
    print("no end of the session within 30 s")
if out[:4] == b"FAIL":
    n = struct.unpack("<I", out[4:8])[0]
    print("FAIL " + out[8:8 + n].decode())
else:
    print(repr(out[:64]))
EOF
}
t_check "a client that breaks the protocol gets adbd's FAIL and the session ends"
[ "$(raw unknown)" = "FAIL unknown command 58585858" ] || t_fail "unknown request: $(raw unknown)"
[ "$(raw nocomma)" = "FAIL missing , in ID_SEND" ] || t_fail "SEND without a mode: $(raw nocomma)"
[ "$(raw oversize)" = "FAIL oversize data message" ] || t_fail "oversize DATA: $(raw oversize)"
[ "$(raw notdata)" = "FAIL invalid data message" ] || t_fail "not DATA: $(raw notdata)"
[ "$(raw hangup)" = closed ] || t_fail "the hang-up client did not run"
t_check "RECV of what cannot be pulled: adbd's v1 words"
[ "$(raw recvdir)" = "FAIL read failed: Is a directory" ] || t_fail "RECV of a directory: $(raw recvdir)"
[ "$(raw recvmissing)" = "FAIL open failed: No such file or directory" ] ||
    t_fail "RECV of a missing file: $(raw recvmissing)"

t_check "no file is left behind by a push that failed"
for f in raw-oversize raw-notdata raw-hangup; do
    for ((i = 0; i < 100; i++)); do
        [ -e "$SB/data/local/tmp/$f" ] || break
        sleep 0.1
    done
    [ -e "$SB/data/local/tmp/$f" ] && t_fail "$f was left on the device ($(stat -c %s "$SB/data/local/tmp/$f") bytes)"
done

t_check "the server still serves after them"
run b b shell echo alive
[ "$(cat "$T_TMP/b.out")" = alive ] || t_fail "adbc's server after the broken clients: $(cat "$T_TMP/b.err")"
kill -0 "$ASRV_PID" || t_fail "adbc-serve exited"
grep -qE '(ERROR|WARNING): [A-Za-z]*Sanitizer|runtime error:' "$LOG" &&
    t_fail "adbc-serve: $(grep -m3 -E 'Sanitizer|runtime error' "$LOG")"
echo "ok: $T_CHECKS checks"
