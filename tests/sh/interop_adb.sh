#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Interop with Debian's real adb: the test device runs on adbc's session
# engine in the device role, so if adb can connect, authenticate, run shell
# and exec against it, the engine speaks the real protocol. Every adb call
# goes to a private server (own port, own HOME and key), stopped by pid at
# exit. The last checks load the device with raw handshakes (16 parallel,
# 1000 sequential connections) and look for leaked fds and zombies.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

if ! command -v "$ADB_BIN" > /dev/null; then
    echo "SKIP: Debian's adb is not installed (apt install adb)"
    exit 77
fi
t_init
T0=$SECONDS

adb_server_start a
td_start dev --authorized-keys-from a \
    --prop ro.product.name=interop_prod --prop ro.product.model=Interop_Model \
    --prop ro.product.device=interop_dev
DEV=127.0.0.1:${TD_PORT[dev]}
A() { adb_run a -s "$DEV" "$@"; }

t_check "adb connect $DEV succeeds"
out=$(adb_run a connect "$DEV" 2>&1) || t_fail "adb connect exited nonzero: $out"
case $out in *"connected to $DEV"*) ;; *) t_fail "adb connect said: $out" ;; esac
adb_wait_state a "$DEV" device 10 || t_fail "$DEV not in state 'device': $(adb_run a devices)"

t_check "adb devices -l shows product/model/device from the banner"
line=$(adb_run a devices -l | grep "^$DEV[[:space:]]")
case $line in
    *" device product:interop_prod model:Interop_Model device:interop_dev"*) ;;
    *) t_fail "adb devices -l line: '$line'" ;;
esac

t_check "shell v2: stdout and exit status ('echo x; exit 3' prints x, exits 3)"
out=$(A shell 'echo x; exit 3')
rc=$?
[ "$out" = x ] || t_fail "stdout was '$out', expected 'x'"
[ $rc -eq 3 ] || t_fail "exit status $rc, expected 3"

t_check "shell v2: stderr goes to stderr, stdout to stdout"
A shell 'echo to-out; echo to-err >&2' > "$T_TMP/o" 2> "$T_TMP/e" || t_fail "shell failed"
[ "$(cat "$T_TMP/o")" = to-out ] || t_fail "stdout: '$(cat "$T_TMP/o")'"
[ "$(cat "$T_TMP/e")" = to-err ] || t_fail "stderr: '$(cat "$T_TMP/e")'"

t_check "shell v2: a command killed by a signal exits 128+signal (137 for SIGKILL)"
A shell 'kill -9 $$'
rc=$?
[ $rc -eq 137 ] || t_fail "exit status $rc, expected 137"

t_check "shell v2: stdin passes through (echo hello | adb shell cat)"
out=$(echo hello | A shell cat)
[ "$out" = hello ] || t_fail "got '$out'"

t_check "interactive shell on a PTY (adb shell from a terminal): output, exit status, clean job control"
# adb switches its terminal to raw mode with TCSAFLUSH, dropping typeahead,
# so type only once the device's prompt shows.
HOME=${ADB_HOME[a]} TMPDIR=$T_TMP/adb-a/tmp python3 - "$ADB_BIN" "${ADB_PORT[a]}" "$DEV" \
    > "$T_TMP/pty.txt" << 'EOF' || t_fail "interactive shell: $(cat "$T_TMP/pty.txt")"
import os, pty, select, sys, time
adb, port, dev = sys.argv[1:4]
pid, fd = pty.fork()
if pid == 0:
    os.execvp(adb, [adb, "-P", port, "-s", dev, "shell"])
# One line at a time, each after the prompt, so echo and output do not mix.
lines = [b"echo pty-$((6*7))\n", b"exit 4\n"]
out, deadline = b"", time.time() + 20
while time.time() < deadline:
    r, _, _ = select.select([fd], [], [], 0.2)
    if r:
        try:
            data = os.read(fd, 4096)
        except OSError:
            break
        if not data:
            break
        out += data
    if lines and (out.endswith(b"# ") or out.endswith(b"$ ")):
        os.write(fd, lines.pop(0))
        out += b"\n"  # so the same prompt is not taken twice
else:
    os.kill(pid, 9)
_, status = os.waitpid(pid, 0)
code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else -1
text = out.replace(b"\r", b"").decode(errors="replace")
print(text)
print("exit status", code)
sys.exit(0 if "\npty-42\n" in text and code == 4 and "Cannot set tty" not in text else 1)
EOF

t_check "getprop stand-in serves the --prop values"
out=$(A shell getprop ro.product.model)
[ "$out" = Interop_Model ] || t_fail "getprop ro.product.model gave '$out'"

t_check "sandbox: /data is the sandbox's data/, PATH and cwd like a device"
echo marker > "${TD_SANDBOX[dev]}/data/local/tmp/marker"
out=$(A shell 'cat /data/local/tmp/marker; pwd; echo $PATH')
[ "$out" = "marker
/
/system/bin:/usr/bin:/bin" ] || t_fail "got '$out'"

t_check "exec-out returns 1 MiB of random bytes byte for byte"
head -c 1048576 /dev/urandom > "$T_TMP/rand.bin"
cp "$T_TMP/rand.bin" "${TD_SANDBOX[dev]}/data/local/tmp/rand.bin"
A exec-out cat /data/local/tmp/rand.bin > "$T_TMP/got.bin" || t_fail "adb exec-out failed"
cmp "$T_TMP/rand.bin" "$T_TMP/got.bin" || t_fail "exec-out data differs"

t_check "exec-in passes 1 MiB of stdin byte for byte"
A exec-in 'cat > /data/local/tmp/in.bin' < "$T_TMP/rand.bin" || t_fail "adb exec-in failed"
# adb exec-in returns once the data is handed to its server; the device
# finishes writing shortly after.
for ((i = 0; i < 100; i++)); do
    cmp -s "$T_TMP/rand.bin" "${TD_SANDBOX[dev]}/data/local/tmp/in.bin" && break
    sleep 0.1
done
cmp "$T_TMP/rand.bin" "${TD_SANDBOX[dev]}/data/local/tmp/in.bin" || t_fail "exec-in data differs"

# Commands still running under device DEV, by their bubblewrap command
# line (it names the sandbox), matching a pattern.
running() { ps -eo args= | grep -F -- "${TD_SANDBOX[dev]}" | grep -c -- "$1"; }
wait_ended()
{
    local i
    for ((i = 0; i < 50; i++)); do
        [ "$(running "$1")" -eq 0 ] && return 0
        sleep 0.1
    done
    return 1
}

t_check "a reader that stops reading stalls only its own stream"
# adb writes into a FIFO nobody reads (we hold it open read-write so
# opening it does not block): its pipe fills, the adb server stops
# acknowledging, and the device must stop reading that command's output,
# not the connection.
mkfifo "$T_TMP/stall"
exec {stall}<>"$T_TMP/stall"
adb_bg a -s "$DEV" exec-out 'cat /dev/zero' > "$T_TMP/stall"
sleep 0.5
out=$(A shell echo still-served)
[ "$out" = still-served ] || t_fail "second command gave '$out' while a stream was stalled"
[ "$(running 'cat /dev/zero')" -gt 0 ] || t_fail "the stalled command is not running"
kill "$ADB_BG_PID"
exec {stall}<&-
wait_ended 'cat /dev/zero' || t_fail "the stalled 'cat /dev/zero' still runs after its stream closed"

t_check "closing a shell v2 stream hangs its command up (SIGHUP)"
adb_bg a -s "$DEV" shell 'sleep 41'
for ((i = 0; i < 50 && $(running 'sleep 41') == 0; i++)); do sleep 0.1; done
[ "$(running 'sleep 41')" -gt 0 ] || t_fail "the command never started"
kill "$ADB_BG_PID"
wait_ended 'sleep 41' || t_fail "'sleep 41' still runs 5 s after its stream closed"

t_check "closing an exec stream ends its command (SIGPIPE when writing, SIGHUP otherwise)"
adb_bg a -s "$DEV" exec-out 'sleep 42'
adb_bg a -s "$DEV" exec-out 'cat /dev/zero' > /dev/null
for ((i = 0; i < 50 && $(running 'sleep 42') == 0; i++)); do sleep 0.1; done
kill "${T_BG_PIDS[@]: -2}" 2>/dev/null
wait_ended 'sleep 42' || t_fail "'sleep 42' still runs 5 s after its stream closed"
wait_ended 'cat /dev/zero' || t_fail "'cat /dev/zero' still runs 5 s after its stream closed"

t_check "a host with an unknown key is 'unauthorized' (prompt pending)"
adb_server_start b
adb_run b connect "$DEV" > "$T_TMP/connect-b" 2>&1
adb_wait_state b "$DEV" unauthorized 10 ||
    t_fail "expected unauthorized; adb devices: $(adb_run b devices); connect said: $(cat "$T_TMP/connect-b")"
key_b=$(cut -d' ' -f1 "${ADB_HOME[b]}/.android/adbkey.pub")
grep -qF "$key_b" "${TD_KEYS[dev]}" && t_fail "unknown key was added to the authorized keys"
adb_run b disconnect "$DEV" > /dev/null 2>&1

t_check "with --accept-new-keys the unknown key becomes 'device' and is saved"
td_start acc --authorized-keys-from a --accept-new-keys
ACC=127.0.0.1:${TD_PORT[acc]}
adb_run b connect "$ACC" > /dev/null 2>&1
adb_wait_state b "$ACC" device 10 || t_fail "expected device; adb devices: $(adb_run b devices)"
grep -qF "$key_b" "${TD_KEYS[acc]}" || t_fail "accepted key not appended to ${TD_KEYS[acc]}"
out=$(adb_run b -s "$ACC" shell echo ok)
[ "$out" = ok ] || t_fail "shell on the accepted connection gave '$out'"

t_check "the saved key authorizes host b after a device restart without --accept-new-keys"
adb_run b disconnect "$ACC" > /dev/null 2>&1
td_stop acc
td_start acc
ACC=127.0.0.1:${TD_PORT[acc]}
adb_run b connect "$ACC" > /dev/null 2>&1
adb_wait_state b "$ACC" device 10 || t_fail "expected device; adb devices: $(adb_run b devices)"

# The device itself, without adb: raw CNXN handshakes (lib.sh td_hello).
td_start raw --no-auth
rport=${TD_PORT[raw]} rpid=${TD_PID[raw]}

t_check "16 parallel connections: 16 connection processes, all gone after closing"
fds=()
base_fds=$(ls "/proc/$rpid/fd" | wc -l)
for ((i = 0; i < 16; i++)); do
    td_hello "$rport"
    [ "$TD_REPLY" = CNXN ] || t_fail "connection $i: no CNXN (got '$TD_REPLY')"
    fds+=("$TD_FD")
done
n=$(_t_children "$rpid")
[ "$n" -eq 16 ] || t_fail "$n connection processes for 16 connections"
for i in "${fds[@]}"; do exec {i}<&-; done
for ((i = 0; i < 100 && $(_t_children "$rpid") > 0; i++)); do sleep 0.05; done
[ "$(_t_children "$rpid")" -eq 0 ] || t_fail "connection processes left: $(ps --ppid "$rpid")"

t_check "1000 sequential connections: no fd leak, no zombies"
for ((i = 0; i < 1000; i++)); do
    td_hello "$rport"
    [ "$TD_REPLY" = CNXN ] || t_fail "connection $i: no CNXN (got '$TD_REPLY')"
    exec {TD_FD}<&-
done
for ((i = 0; i < 100 && $(_t_children "$rpid") > 0; i++)); do sleep 0.05; done
[ "$(_t_zombies "$rpid")" -eq 0 ] || t_fail "zombies: $(ps --ppid "$rpid" -o pid,stat)"
[ "$(_t_children "$rpid")" -eq 0 ] || t_fail "connection processes left: $(ps --ppid "$rpid")"
n=$(ls "/proc/$rpid/fd" | wc -l)
[ "$n" -eq "$base_fds" ] || t_fail "device had $base_fds fds before, $n after"

t_check "hostile shell v2 input: unknown ids, oversized control packets and a 4 GiB stdin claim are survived"
# Raw ADB from Python (no auth): frames adb would never send, then proof
# that the connection and the device still serve.
python3 - "$rport" > "$T_TMP/hostile.txt" 2>&1 << 'EOF' || t_fail "hostile input: $(cat "$T_TMP/hostile.txt")"
import socket, struct, sys
port = int(sys.argv[1])
def pkt(cmd, a0, a1, data=b""):
    c = struct.unpack("<I", cmd)[0]
    return struct.pack("<6I", c, a0, a1, len(data), 0, c ^ 0xFFFFFFFF) + data
def rd(s):
    def exact(n):
        b = b""
        while len(b) < n:
            d = s.recv(n - len(b))
            if not d:
                raise SystemExit("connection closed by the device")
            b += d
        return b
    cmd, a0, a1, n, _, _ = struct.unpack("<6I", exact(24))
    return struct.pack("<I", cmd).decode(), a0, a1, exact(n)
def reply_for(s, hid):  # skip packets for earlier streams
    while True:
        r = rd(s)
        if r[2] == hid:
            return r
def collect(s, hid):  # WRTE payloads until CLSE
    out = b""
    while True:
        r = reply_for(s, hid)
        if r[0] == "WRTE":
            out += r[3]
            s.sendall(pkt(b"OKAY", hid, r[1]))
        elif r[0] == "CLSE":
            return out
def frame(i, data):
    return bytes([i]) + struct.pack("<I", len(data)) + data
s = socket.create_connection(("127.0.0.1", port), timeout=10)
s.sendall(pkt(b"CNXN", 0x01000001, 256 * 1024, b"host::features=shell_v2"))
assert rd(s)[0] == "CNXN"
s.sendall(pkt(b"OPEN", 1, 0, b"shell,v2,raw:cat; echo done\0"))
r = reply_for(s, 1); assert r[0] == "OKAY", r
bad = (frame(9, b"abc") + frame(5, b"x" * 5000) + frame(5, b"garbage") + frame(3, b"\x07")
       + frame(0, b"hello\n") + frame(4, b""))
s.sendall(pkt(b"WRTE", 1, r[1], bad))
out, got = collect(s, 1), {}
while out:  # the device's frames, split however it read the pipes
    i, n = out[0], struct.unpack("<I", out[1:5])[0]
    got[i] = got.get(i, b"") + out[5:5 + n]
    out = out[5 + n:]
assert got == {1: b"hello\ndone\n", 3: b"\x00"}, got
s.sendall(pkt(b"OPEN", 2, 0, b"shell,v2,raw:cat > /dev/null\0"))
r = reply_for(s, 2); assert r[0] == "OKAY", r
s.sendall(pkt(b"WRTE", 2, r[1], b"\x00\xff\xff\xff\xff" + b"z" * 1000))
assert reply_for(s, 2)[0] == "OKAY"
s.sendall(pkt(b"CLSE", 2, r[1]))
for hid, svc in ((3, b"nosuch:service\0"), (4, b"shell\0")):
    s.sendall(pkt(b"OPEN", hid, 0, svc))
    assert reply_for(s, hid)[0] == "CLSE", svc
s.sendall(pkt(b"OPEN", 5, 0, b"exec:echo alive\0"))
assert reply_for(s, 5)[0] == "OKAY"
assert collect(s, 5) == b"alive\n"
s.close()
g = socket.create_connection(("127.0.0.1", port), timeout=10)
g.sendall(b"GET / HTTP/1.0\r\n\r\n" + b"x" * 64)
assert g.recv(100) == b"", "garbage was answered"
print("ok")
EOF
grep -q "protocol error" "${TD_DIR[raw]}/stderr" ||
    t_fail "the garbage connection was not reported as a protocol error"
: > "${TD_DIR[raw]}/stderr" # expected; td_stop fails on protocol errors

t_check "everything stops cleanly and no process is left behind"
adb_run a disconnect > /dev/null 2>&1
adb_run b disconnect > /dev/null 2>&1
td_stop dev
td_stop acc
td_stop raw
adb_server_stop a
adb_server_stop b
left=$(ps -eo pid=,args= | grep -F "$T_TMP" | grep -v grep)
[ -z "$left" ] || t_fail "processes left behind: $left"

echo "ok: $T_CHECKS checks in $((SECONDS - T0)) s"
