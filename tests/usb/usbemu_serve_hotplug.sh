#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# adbc's adb server with no device named (`adbc-serve --adb-server` alone)
# follows USB devices as they come and go: it holds an emulated device
# (EMU0001) with an adb shell session open through it, a second one
# (EMU0002) is plugged in (adbc-usbbed -c: done in the bed's main thread),
# used, listed by `adbc-snap devices`, and unplugged. Debian's adb tracking
# the devices through the server sees EMU0002 appear and leave, and the
# session on EMU0001 answers after every step: the first device is never
# lost. Runs itself under adbc-usbbed (which runs under umockdev-wrapper).
set -u
B_DIR=${ADBC_BUILD_DIR:?}
SNAP=$B_DIR/tools/adbc-snap
SERVE=$B_DIR/tools/adbc-serve
if [ "${1:-}" != --inner ]; then
    command -v adb > /dev/null || { echo "SKIP: Debian's adb is not installed (apt install adb)"; exit 77; }
    [ -x "$SERVE" ] || { echo "SKIP: adbc-serve not built (needs cJSON and libmicrohttpd)"; exit 77; }
    T=$(mktemp -d /tmp/adbc-usbserve-XXXXXX)
    mkfifo "$T/ctl"
    W=${UMOCKDEV_WRAPPER:-umockdev-wrapper}
    ANDROID_USER_HOME=$T/home timeout 240 $W "$B_DIR/tests/usb/adbc-usbbed" -c "$T/ctl" \
        -d serial=EMU0001,sysfs-serial -- bash "$0" --inner "$T" < /dev/null
    rc=$?
    rm -rf "$T"
    exit $rc
fi
T=$2
unset ANDROID_SERIAL
fails=0
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2> /dev/null; done; wait 2> /dev/null; }
trap cleanup EXIT
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
die() { echo "FAIL $*"; echo "--- adbc-serve's log:"; cat "$T/serve.log"; exit 1; }

P=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])') ||
    die "no free port"
"$SERVE" --no-http --adb-server "tcp:$P" --ready-file "$T/ready" 2> "$T/serve.log" &
SPID=$!
PIDS+=($SPID)
for ((i = 0; i < 600; i++)); do
    [ -e "$T/ready" ] && break
    sleep 0.05
done
[ -e "$T/ready" ] || die "adbc-serve not ready"
# Debian's adb as a client of adbc's server; no key of its own a device knows.
mkdir -p "$T/bhome"
# With nothing listening on the port adb starts a server of its own: never then.
A()
{
    kill -0 "$SPID" 2> /dev/null || { echo "adbc-serve is gone"; return 1; }
    HOME=$T/bhome timeout 30 adb -P "$P" "$@"
}

# until_listed PATTERN [absent]: bounded looks at `adb devices` through the server
until_listed()
{
    local i
    for ((i = 0; i < 300; i++)); do
        if A devices | grep -q "$1"; then
            [ "${2:-}" = absent ] || return 0
        else
            [ "${2:-}" = absent ] && return 0
        fi
        sleep 0.1
    done
    return 1
}
until_listed "^EMU0001[[:space:]]device$" || die "EMU0001 not listed: $(A devices)"
echo "ok   the held device is listed"

HOME=$T/bhome adb -P "$P" track-devices > "$T/track" 2> "$T/track.err" &
PIDS+=($!)
TPID=$!
# its first list (EMU0001 alone) before anything changes: a tracker that
# started late would miss what it is to see
for ((i = 0; i < 600; i++)); do
    [ -s "$T/track" ] && break
    sleep 0.05
done
[ -s "$T/track" ] || die "adb track-devices got no list: $(cat "$T/track.err")"

# One adb shell session on EMU0001, kept open: cat answers each line.
coproc HOLD { HOME=$T/bhome timeout 200 adb -P "$P" -s EMU0001 shell cat 2>&1; }
PIDS+=($HOLD_PID)
held() { # LINE: a round trip through the session
    local got=""
    echo "$1" >&"${HOLD[1]}" 2> /dev/null || { fail "session on EMU0001 gone ($1)"; return; }
    read -r -t 30 got <&"${HOLD[0]}"
    got=${got%$'\r'}
    if [ "$got" = "$1" ]; then echo "ok   session on EMU0001: $1"; else
        fail "session on EMU0001: sent \"$1\", got \"$got\""; fi
}
held "held"

echo "plug serial=EMU0002,port=2,dev=3,sysfs-serial" > "$T/ctl"
until_listed "^EMU0002[[:space:]]device$" || die "EMU0002 not listed after plugging: $(A devices)"
echo "ok   EMU0002 plugged in: listed"
held "after plug"
out=$(A -s EMU0002 shell echo two 2>&1)
[ "$out" = two ] && echo "ok   shell on EMU0002" || fail "shell on EMU0002: $out"
out=$(A -s EMU0001 shell echo one 2>&1)
[ "$out" = one ] && echo "ok   a second shell on EMU0001" || fail "a second shell on EMU0001: $out"
held "after using both"

# adbc-snap devices tries a handshake with both: the server holds them
out=$("$SNAP" devices 2> /dev/null < /dev/null)
if grep -q "^EMU0001[[:space:]]*busy$" <<< "$out" && grep -q "^EMU0002[[:space:]]*busy$" <<< "$out"; then
    echo "ok   adbc-snap devices lists both, busy"; else fail "adbc-snap devices: $out"; fi
held "after adbc-snap devices"

echo "unplug EMU0002" > "$T/ctl"
until_listed "^EMU0002[[:space:]]" absent || die "EMU0002 still listed after unplugging: $(A devices)"
echo "ok   EMU0002 unplugged: no longer listed"
held "after unplug"
out=$(A -s EMU0001 shell echo still 2>&1)
[ "$out" = still ] && echo "ok   shell on EMU0001 after the unplug" || fail "shell on EMU0001 after the unplug: $out"

# the tracker: EMU0002 absent, then a device, then absent; EMU0001 a device in every list
seq_of()
{
    python3 - "$T/track" "$1" << 'PY'
import sys
b, who = open(sys.argv[1], 'rb').read(), sys.argv[2]
i, seq = 0, []
while i < len(b):
    n = int(b[i:i + 4], 16)
    body = b[i + 4:i + 4 + n]
    if len(body) != n:
        sys.exit("a frame of %d bytes holds %d" % (n, len(body)))
    st = 'absent'
    for line in body.decode().splitlines():
        serial, state = line.split('\t')
        if serial == who:
            st = state
    if st != 'offline' and (not seq or seq[-1] != st):
        seq.append(st)
    i += 4 + n
print(','.join(seq))
PY
}
for ((i = 0; i < 300; i++)); do
    [ "$(seq_of EMU0002 2> /dev/null)" = "absent,device,absent" ] && break
    sleep 0.1
done
kill "$TPID" 2> /dev/null
s2=$(seq_of EMU0002) s1=$(seq_of EMU0001)
[ "$s2" = "absent,device,absent" ] && echo "ok   adb track-devices: EMU0002 came and went" ||
    fail "adb track-devices saw EMU0002: $s2 ($(cat -A "$T/track"))"
[ "$s1" = "device" ] && echo "ok   adb track-devices: EMU0001 a device throughout" ||
    fail "adb track-devices saw EMU0001: $s1 ($(cat -A "$T/track"))"
[ ! -s "$T/track.err" ] || fail "adb track-devices said: $(cat "$T/track.err")"
if grep -q "lost EMU0001" "$T/serve.log"; then fail "adbc-serve lost EMU0001: $(cat "$T/serve.log")"; fi
held "at the end"

[ "$fails" -eq 0 ] || { echo "--- adbc-serve's log:"; cat "$T/serve.log"; }
echo "$fails failed"
[ "$fails" -eq 0 ]
