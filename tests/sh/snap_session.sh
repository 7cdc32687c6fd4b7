#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# adbc-snap session start|stop|status with adbc-snap as the session client:
# commands go through the session (the device sees no new connection) with
# the same output and exit status as without; --no-session bypasses; the
# socket is 0600 and refuses other uids; two sessions for two devices; a
# stale session file (its server killed) is ignored and cleaned up; a
# session whose device is gone and that nobody uses ends on its own; the
# front end's own way for shell (stdin, -n, statuses, signals, timeouts,
# a server gone mid-command) and what it leaves to adbc-snap-core.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
t_init

SNAP=${ADBC_SNAP:-$ADBC_BUILD_DIR/tools/adbc-snap}
t_need_built SERVE "adbc-serve needs cJSON and libmicrohttpd"
[ -x "$ADBC_BUILD_DIR/tools/adbc-serve" ] || t_fail "adbc-serve not built"
export HOME=$T_TMP/home XDG_CACHE_HOME=$T_TMP/cache XDG_RUNTIME_DIR=$T_TMP/run
mkdir -p "$HOME" "$XDG_RUNTIME_DIR"
chmod 700 "$XDG_RUNTIME_DIR"
RUN=$XDG_RUNTIME_DIR/adbc

td_start a --no-auth -v
td_start b --no-auth -v
A=127.0.0.1:${TD_PORT[a]}
B=127.0.0.1:${TD_PORT[b]}
for n in a b; do
    ctl=${TD_SANDBOX[$n]}/data/local/tmp/.adbc-test
    mkdir -p "$ctl"
    printf '%s' "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\"><node class=\"android.widget.FrameLayout\" package=\"com.$n\" enabled=\"true\" bounds=\"[0,0][1080,2400]\"><node class=\"android.widget.Button\" text=\"Button of $n\" clickable=\"true\" package=\"com.$n\" enabled=\"true\" bounds=\"[100,100][500,300]\"/></node></hierarchy>" > "$ctl/screen.xml"
    echo "dump=screen.xml" > "$ctl/uiautomator.conf"
done

stop_all()
{
    local st=$?
    "$SNAP" -q -t "$A" session stop > /dev/null 2>&1
    "$SNAP" -q -t "$B" session stop > /dev/null 2>&1
    return $st
}
t_at_exit stop_all

# R DEV [GLOBAL OPTS] ARGS...: run adbc-snap; stdout, stderr, status kept.
R()
{
    local dev=$1
    shift
    timeout 60 "$SNAP" -t "$dev" --timeout 20 "$@" > "$T_TMP/o" 2> "$T_TMP/e"
    rc=$?
}
online() { grep -c ': online' "${TD_DIR[$1]}/stderr"; }

CMDS=("shell echo out; echo err >&2; exit 7" "shell true" "exec:echo binary-safe" "snapshot"
      "snapshot --json" "getprop ro.product.brand" "tap 1" "shell cat /nonexistent")
# The reference: every command without a session.
i=0
for c in "${CMDS[@]}"; do
    if [ "${c%%:*}" = exec ]; then set -- exec "${c#exec:}"; else read -ra w <<< "$c"; set -- "${w[@]}"; fi
    [ "$1" = shell ] && set -- shell "${c#shell }"
    R "$A" "$@"
    cp "$T_TMP/o" "$T_TMP/ref-o-$i"
    cp "$T_TMP/e" "$T_TMP/ref-e-$i"
    echo "$rc" > "$T_TMP/ref-rc-$i"
    i=$((i + 1))
done

t_check "status without a session: exit 1"
R "$A" session status
[ "$rc" = 1 ] && grep -q "no session for $A" "$T_TMP/o" || t_fail "status: $rc $(cat "$T_TMP/o" "$T_TMP/e")"

t_check "session start: the server runs, the socket is 0600 in a 0700 directory"
R "$A" session start
[ "$rc" = 0 ] || t_fail "start: $rc $(cat "$T_TMP/e")"
sock=$(ls "$RUN"/session-*.sock)
[ "$(stat -c %a "$RUN")" = 700 ] && [ "$(stat -c %a "$sock")" = 600 ] ||
    t_fail "modes: dir $(stat -c %a "$RUN") socket $(stat -c %a "$sock")"
R "$A" session status
[ "$rc" = 0 ] && grep -q "session for $A: running" "$T_TMP/o" || t_fail "status: $rc $(cat "$T_TMP/o")"

t_check "devices lists the TCP device a session holds, with no -t given (as adb lists connected ones)"
ADB_LOCAL_TRANSPORT_MAX_PORT=5555 timeout 60 "$SNAP" -q devices > "$T_TMP/o" 2> "$T_TMP/e"
# (listed, in whatever state its short handshake found: the state is not the point)
grep -q "^$A[[:space:]]" "$T_TMP/o" || t_fail "devices: $(cat "$T_TMP/o" "$T_TMP/e")"
grep -q "^$B[[:space:]]" "$T_TMP/o" && t_fail "devices lists $B, which has no session: $(cat "$T_TMP/o")"

t_check "through the session: the same output and status, and no new connection to the device"
before=$(online a)
i=0
for c in "${CMDS[@]}"; do
    if [ "${c%%:*}" = exec ]; then set -- exec "${c#exec:}"; else read -ra w <<< "$c"; set -- "${w[@]}"; fi
    [ "$1" = shell ] && set -- shell "${c#shell }"
    R "$A" "$@"
    # (a snapshot's JSON carries the time it was taken: the one thing that differs)
    sed -i 's/"timestamp_ms":[0-9]*//' "$T_TMP/o" "$T_TMP/ref-o-$i"
    cmp -s "$T_TMP/o" "$T_TMP/ref-o-$i" || t_fail "'$c': stdout differs: $(cat "$T_TMP/o") vs $(cat "$T_TMP/ref-o-$i")"
    cmp -s "$T_TMP/e" "$T_TMP/ref-e-$i" || t_fail "'$c': stderr differs: $(cat "$T_TMP/e") vs $(cat "$T_TMP/ref-e-$i")"
    [ "$rc" = "$(cat "$T_TMP/ref-rc-$i")" ] || t_fail "'$c': status $rc, without a session $(cat "$T_TMP/ref-rc-$i")"
    i=$((i + 1))
done
[ "$(online a)" = "$before" ] || t_fail "the device saw $(($(online a) - before)) new connections"

t_check "an act through the session does not ask the device its API level: the banner says it"
asks() { grep -c "spawn .*getprop 'ro.build.version.sdk'" "${TD_DIR[a]}/stderr"; }
R "$A" tap 1
n=$(asks)
R "$A" tap 1
[ "$rc" = 0 ] && [ "$(asks)" = "$n" ] || t_fail "tap through the session: rc $rc, $(($(asks) - n)) getprop calls"
R "$A" --no-session tap 1
[ "$rc" = 0 ] && [ "$(asks)" = $((n + 1)) ] || t_fail "tap without a session: rc $rc, $(($(asks) - n)) getprop calls (1 expected)"
before=$(online a)

t_check "a larger transfer both ways through the session"
head -c 3000000 /dev/urandom > "$T_TMP/big"
R "$A" push "$T_TMP/big" /data/local/tmp/big
[ "$rc" = 0 ] || t_fail "push: $(cat "$T_TMP/e")"
R "$A" pull /data/local/tmp/big "$T_TMP/big.back"
[ "$rc" = 0 ] && cmp -s "$T_TMP/big" "$T_TMP/big.back" || t_fail "pull: $rc $(cat "$T_TMP/e")"
R "$A" shell "cat /data/local/tmp/big"
cmp -s "$T_TMP/big" "$T_TMP/o" || t_fail "shell cat of 3 MB through the session differs"
[ "$(online a)" = "$before" ] || t_fail "the transfers connected to the device"

t_check "--no-session connects directly"
R "$A" --no-session shell true
[ "$rc" = 0 ] && [ "$(online a)" = $((before + 1)) ] || t_fail "--no-session: rc $rc, $(($(online a) - before)) connections"

# adbc-snap is a front end (tools/adbc-snap/front/front.c) that runs
# `shell` through a session itself and everything else through
# adbc-snap-core. A copy of it alone, with no adbc-snap-core to run, shows
# which path a command took.
FRONT=$T_TMP/front/adbc-snap
if [ -x "$ADBC_BUILD_DIR/tools/adbc-snap-core" ]; then
    mkdir -p "$T_TMP/front"
    cp "$SNAP" "$FRONT"
    F() { timeout 60 "$FRONT" -t "$A" --timeout 20 "$@" > "$T_TMP/o" 2> "$T_TMP/e"; rc=$?; }

    t_check "front end: shell through the session needs no adbc-snap-core; other commands do"
    F shell "echo out; echo err >&2; exit 7"
    [ "$rc" = 7 ] && [ "$(cat "$T_TMP/o")" = out ] && [ "$(cat "$T_TMP/e")" = err ] ||
        t_fail "fast path: rc $rc, out '$(cat "$T_TMP/o")', err '$(cat "$T_TMP/e")'"
    F getprop ro.product.brand
    [ "$rc" = 1 ] && grep -q "cannot run .*adbc-snap-core" "$T_TMP/e" ||
        t_fail "getprop did not go to adbc-snap-core: rc $rc $(cat "$T_TMP/e")"
    for bypass in "--no-session shell true" "shell --json true" "shell --help"; do
        read -ra w <<< "$bypass"
        if [ "${w[0]}" = --no-session ]; then F --no-session "${w[@]:1}"; else F "${w[@]}"; fi
        [ "$rc" = 1 ] && grep -q "cannot run .*adbc-snap-core" "$T_TMP/e" ||
            t_fail "'$bypass' did not go to adbc-snap-core: rc $rc $(cat "$T_TMP/e")"
    done
    timeout 60 "$FRONT" -t 127.0.0.1:1 shell true > /dev/null 2> "$T_TMP/e"
    grep -q "cannot run .*adbc-snap-core" "$T_TMP/e" || t_fail "no session: not the full tool: $(cat "$T_TMP/e")"

    t_check "front end: stdin piped, -n, status and output the same as adbc-snap-core's"
    head -c 3000000 /dev/urandom > "$T_TMP/in"
    for args in "cat" "cat; echo tail >&2; exit 5" "-n cat" "wc -c; exit 300" "-- read x; echo \$x"; do
        read -ra w <<< "$args"
        timeout 60 "$FRONT" -t "$A" shell "${w[@]}" < "$T_TMP/in" > "$T_TMP/fo" 2> "$T_TMP/fe"
        frc=$?
        timeout 60 "$ADBC_BUILD_DIR/tools/adbc-snap-core" -t "$A" shell "${w[@]}" < "$T_TMP/in" \
            > "$T_TMP/co" 2> "$T_TMP/ce"
        crc=$?
        [ "$frc" = "$crc" ] && cmp -s "$T_TMP/fo" "$T_TMP/co" && cmp -s "$T_TMP/fe" "$T_TMP/ce" ||
            t_fail "shell $args: front rc $frc ($(wc -c < "$T_TMP/fo") B out, $(cat "$T_TMP/fe")), core rc $crc ($(wc -c < "$T_TMP/co") B out, $(cat "$T_TMP/ce"))"
    done
    cmp -s "$T_TMP/in" <(timeout 60 "$FRONT" -t "$A" shell cat < "$T_TMP/in") ||
        t_fail "3 MB through stdin and back differs"

    t_check "front end: stdin an open pipe does not hold it up; --timeout bounds a silent command"
    t0=$(date +%s%N)
    # stdin stays open 600 s: returning well before that (300 s, a bound no
    # load reaches) shows the command did not wait for it.
    exec 9< <(exec sleep 600 2> /dev/null)
    sp=$!
    timeout 400 "$FRONT" -t "$A" shell true <&9 || t_fail "shell true with stdin open failed"
    [ $((($(date +%s%N) - t0) / 1000000)) -lt 300000 ] || t_fail "shell true waited for its open stdin"
    exec 9<&-
    kill "$sp" 2> /dev/null
    timeout 60 "$FRONT" -t "$A" --timeout 1 shell "sleep 5" > /dev/null 2> "$T_TMP/e" < /dev/null
    rc=$?
    [ "$rc" = 1 ] && grep -q "nothing from the device for 1.0 s" "$T_TMP/e" ||
        t_fail "--timeout 1 on sleep 5: rc $rc $(cat "$T_TMP/e")"

    t_check "front end: an interrupt ends the command with 130 and says so"
    # (once the command runs: the front end has its handler by then)
    # The files are emptied here, not only by the child's redirection: the
    # child may open them after the first look below, which would then read
    # an earlier check's "started".
    : > "$T_TMP/o"
    : > "$T_TMP/e"
    "$FRONT" -t "$A" shell "echo started; sleep 60" > "$T_TMP/o" 2> "$T_TMP/e" < /dev/null &
    p=$!
    # until it prints, or ends without (bounded: 6000 looks, not a timing)
    for ((k = 0; k < 6000; k++)); do
        grep -q started "$T_TMP/o" && break
        kill -0 "$p" 2> /dev/null || break
        sleep 0.05
    done
    grep -q started "$T_TMP/o" || {
        ended=no
        kill -0 "$p" 2> /dev/null || { wait "$p"; ended="status $?"; }
        t_fail "the command did not start (ended: $ended): stdout '$(cat "$T_TMP/o")' stderr '$(cat "$T_TMP/e")'; session server's log: $(tail -n 20 "$RUN"/session-*"${TD_PORT[a]}".log 2>&1)"
    }
    kill -INT "$p"
    (sleep 20; kill -KILL "$p" 2> /dev/null) & # bounded: a hang fails below
    w=$!
    wait "$p"
    rc=$?
    kill "$w" 2> /dev/null
    [ "$rc" = 130 ] && grep -q "stopped by signal 2" "$T_TMP/e" || t_fail "SIGINT: rc $rc $(cat "$T_TMP/e")"

    t_check "front end: 200 short commands, every exit status arrives"
    bad=0
    for ((k = 0; k < 200; k++)); do
        timeout 20 "$FRONT" -t "$A" shell true < /dev/null 2>> "$T_TMP/e200" || bad=$((bad + 1))
    done
    [ "$bad" = 0 ] || t_fail "$bad of 200 failed: $(sort "$T_TMP/e200" | uniq -c)
session server's log: $(tail -n 30 "$RUN"/session-*"${TD_PORT[a]}".log 2>&1)"

    t_check "front end: the session's server killed mid-command: exit 1, a clear error, no hang"
    : > "$T_TMP/o" # emptied before the child runs (check 10 wrote "started" there)
    : > "$T_TMP/e"
    timeout 800 "$FRONT" -t "$A" shell "echo started; sleep 600; echo never" > "$T_TMP/o" 2> "$T_TMP/e" < /dev/null &
    p=$!
    for ((k = 0; k < 6000; k++)); do
        grep -q started "$T_TMP/o" && break
        kill -0 "$p" 2> /dev/null || break
        sleep 0.05
    done
    grep -q started "$T_TMP/o" || {
        ended=no
        kill -0 "$p" 2> /dev/null || { wait "$p"; ended="status $?"; }
        t_fail "the command did not start (ended: $ended): stdout '$(cat "$T_TMP/o")' stderr '$(cat "$T_TMP/e")'; session server's log: $(tail -n 20 "$RUN"/session-*"${TD_PORT[a]}".log 2>&1)"
    }
    kill -KILL "$(cat "$RUN"/session-*"${TD_PORT[a]}".pid)"
    t0=$(date +%s%N)
    wait "$p"
    rc=$?
    [ "$rc" = 1 ] && grep -q "the session's server closed the connection" "$T_TMP/e" &&
        ! grep -q never "$T_TMP/o" || t_fail "server killed: rc $rc $(cat "$T_TMP/e")"
    # The command runs 600 s more: ending within 300 s (a bound no load
    # reaches) is noticing the kill.
    [ $((($(date +%s%N) - t0) / 1000000)) -lt 300000 ] || t_fail "took too long to notice"
    rm -f "$RUN"/session-*"${TD_PORT[a]}".sock "$RUN"/session-*"${TD_PORT[a]}".pid
    R "$A" session start
    [ "$rc" = 0 ] || t_fail "session start again: $rc $(cat "$T_TMP/e")"
fi

t_check "another uid is refused by the socket's peer check"
if command -v setpriv > /dev/null && [ "$(id -u)" = 0 ]; then
    chmod 755 "$T_TMP" "$XDG_RUNTIME_DIR" "$RUN"
    chmod 666 "$sock"
    setpriv --reuid=65534 --regid=65534 --clear-groups /usr/bin/python3 - "$sock" << 'PY' || t_fail "another uid got an answer"
import socket, struct, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(5)
s.connect(sys.argv[1])
banner = b'host::\0'
hdr = struct.pack('<6I', 0x4e584e43, 0x01000001, 4096, len(banner), sum(banner), 0x4e584e43 ^ 0xffffffff)
try:
    s.sendall(hdr + banner)
    assert s.recv(24) == b'', 'answered'
except (ConnectionResetError, BrokenPipeError):
    pass
PY
    chmod 600 "$sock"
    chmod 700 "$RUN" "$XDG_RUNTIME_DIR" "$T_TMP"
    grep -q "refused a client of uid 65534" "$RUN"/session-*.log || t_fail "no refusal logged"
else
    echo "  (not root or no setpriv: skipped)"
fi

t_check "the socket in the device role: OPEN before CNXN ignored, the banner without delayed_ack, a refused service closed, the stream relayed"
python3 - "$sock" << 'PY' || t_fail "the control socket's device role"
import socket, struct, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(10)
s.connect(sys.argv[1])
def pkt(cmd, a0, a1, data=b''):
    c = struct.unpack('<I', cmd)[0]
    return struct.pack('<6I', c, a0, a1, len(data), 0, c ^ 0xffffffff) + data
def get(n):
    b = b''
    while len(b) < n:
        k = s.recv(n - len(b))
        assert k, 'the socket closed'
        b += k
    return b
def recv():
    h = get(24)
    c, a0, a1, n = struct.unpack('<4I', h[:16])
    return h[:4], a0, a1, get(n) if n else b''
# Before CNXN an OPEN is ignored (adbd ignores it): nothing answers it.
s.sendall(pkt(b'OPEN', 7, 0, b'shell:echo early\0'))
s.sendall(pkt(b'CNXN', 0x01000001, 256 * 1024, b'host::features=shell_v2,delayed_ack\0'))
c, a0, a1, d = recv()
assert c == b'CNXN', (c, d)
assert d.startswith(b'device::'), d
assert b'delayed_ack' not in d, d
assert b'shell_v2' in d, d
# A service the device refuses: CLSE(0, our id).
s.sendall(pkt(b'OPEN', 1, 0, b'nosuchservice:\0'))
c, a0, a1, d = recv()
assert (c, a0, a1) == (b'CLSE', 0, 1), (c, a0, a1)
# A stream: OKAY, the output one WRTE at a time, CLSE after our last OKAY.
s.sendall(pkt(b'OPEN', 2, 0, b'shell:echo relayed\0'))
c, local, a1, d = recv()
assert (c, a1) == (b'OKAY', 2), (c, a1)
out = b''
while True:
    c, a0, a1, d = recv()
    assert a0 == local and a1 == 2, (c, a0, a1)
    if c == b'CLSE':
        break
    assert c == b'WRTE', c
    out += d
    s.sendall(pkt(b'OKAY', 2, local))
assert out == b'relayed\n', out
PY

t_check "two sessions for two devices, each answering for its own"
R "$B" session start
[ "$rc" = 0 ] || t_fail "start b: $(cat "$T_TMP/e")"
before_b=$(online b)
R "$B" snapshot
grep -q "Button of b" "$T_TMP/o" || t_fail "b: $(cat "$T_TMP/o")"
R "$A" snapshot
grep -q "Button of a" "$T_TMP/o" || t_fail "a: $(cat "$T_TMP/o")"
[ "$(online b)" = "$before_b" ] || t_fail "b was connected to directly"
[ "$(ls "$RUN"/session-*.sock | wc -l)" = 2 ] || t_fail "sockets: $(ls "$RUN")"

t_check "a stale session file: its server killed, commands connect directly, status cleans up"
pid=$(cat "$RUN"/session-127.0.0.1%3A${TD_PORT[a]}.pid)
kill -9 "$pid"
for ((i = 0; i < 100; i++)); do kill -0 "$pid" 2> /dev/null || break; sleep 0.05; done
[ -S "$sock" ] || t_fail "the killed server's socket is gone already; the test needs it stale"
R "$A" shell "echo direct"
[ "$rc" = 0 ] && [ "$(cat "$T_TMP/o")" = direct ] || t_fail "with a stale file: $rc $(cat "$T_TMP/o" "$T_TMP/e")"
R "$A" session status
[ "$rc" = 1 ] && grep -q "removed a stale session file" "$T_TMP/e" || t_fail "status on stale: $rc $(cat "$T_TMP/e")"
[ ! -e "$sock" ] || t_fail "the stale socket was left"
R "$A" session start
[ "$rc" = 0 ] || t_fail "start after stale: $(cat "$T_TMP/e")"

t_check "session stop: the server exits, the files go, status says so"
R "$A" session stop
[ "$rc" = 0 ] || t_fail "stop: $(cat "$T_TMP/e")"
[ ! -e "$sock" ] || t_fail "socket left after stop"
R "$A" session status
[ "$rc" = 1 ] || t_fail "status after stop: $rc"
R "$A" session stop
[ "$rc" = 1 ] || t_fail "stop without a session: $rc"
R "$B" session stop
[ "$rc" = 0 ] || t_fail "stop b: $(cat "$T_TMP/e")"

t_check "a session ends on its own once its device is gone and nobody uses it (--idle-exit)"
td_start c --no-auth
C=127.0.0.1:${TD_PORT[c]}
ADBC_SESSION_IDLE_EXIT=2 R "$C" session start
[ "$rc" = 0 ] || t_fail "start c: $(cat "$T_TMP/e")"
pid_c=$(cat "$RUN"/session-127.0.0.1%3A${TD_PORT[c]}.pid)
log_c=$RUN/session-127.0.0.1%3A${TD_PORT[c]}.log
sleep 3.5 # unused for longer than the bound, but the device is there: it stays
kill -0 "$pid_c" 2> /dev/null || t_fail "the session ended while its device was there: $(cat "$log_c")"
R "$C" shell "echo still"
[ "$(cat "$T_TMP/o")" = still ] || t_fail "c through its session: $rc $(cat "$T_TMP/o" "$T_TMP/e")"
gone_at=$(date +%s%N)
td_kill c
for ((i = 0; i < 200; i++)); do kill -0 "$pid_c" 2> /dev/null || break; sleep 0.05; done
took=$((($(date +%s%N) - gone_at) / 1000000))
kill -0 "$pid_c" 2> /dev/null && t_fail "the session still runs 10 s after its device died"
[ "$took" -ge 1900 ] || t_fail "the session ended $took ms after its device died, before its 2 s bound"
grep -q "every device gone and no client for 2 s (--idle-exit)" "$log_c" ||
    t_fail "no idle-exit line in the log: $(cat "$log_c")"
R "$C" session status
[ "$rc" = 1 ] || t_fail "status after the idle exit: $rc"
[ ! -e "$RUN/session-127.0.0.1%3A${TD_PORT[c]}.sock" ] || t_fail "socket left after the idle exit"

t_check "session without a named device is a usage error"
timeout 20 env -u ANDROID_SERIAL "$SNAP" session start > /dev/null 2>&1
[ $? = 2 ] || t_fail "no device named: not status 2"

echo "ok: $T_CHECKS checks"
