#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# adbc's adb server with no device named (`adbc-serve --adb-server` alone,
# as `adbc-snap start-server` runs it) follows the devices adbc lists while
# it runs, as adb's server does: Debian's adb (29) tracking devices through
# it sees an emulator (a test device on the emulator port 5555, inside a
# private network namespace) appear and leave, and a device remembered with
# `adbc-snap connect` appear, and leave with `adbc-snap disconnect`; at each
# step `adb devices` through the server lists what `adbc-snap devices`
# lists, and the device is reached through the server.
set -u
if [ -z "${ADBC_IN_NETNS:-}" ]; then
    if [ "$(id -u)" != 0 ] || ! unshare -n true 2> /dev/null; then
        echo "SKIP: needs root for a private network namespace (unshare -n)"
        exit 77
    fi
    ADBC_IN_NETNS=1 exec unshare -n bash "$0" "$@"
fi
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
t_need_adb
t_need_built SERVE "adbc-serve needs cJSON and libmicrohttpd"
command -v ip > /dev/null || { echo "SKIP: ip (iproute2) not installed"; exit 77; }
t_init
ip link set lo up || t_fail "cannot bring lo up in the private namespace"
SNAP=$ADBC_BUILD_DIR/tools/adbc-snap
SERVE=$ADBC_BUILD_DIR/tools/adbc-serve
export HOME=$T_TMP/home
mkdir -p "$HOME/.android"
"$SNAP" keygen "$HOME/.android/adbkey" > /dev/null 2>&1 || t_fail "adbc-snap keygen"
ADB_HOME["snap"]=$HOME # the devices below trust adbc's key (td_start --authorized-keys-from)

P=$(_t_free_port) || t_fail "no free port"
LOG=$T_TMP/serve.log
# No adb client before adbc's server listens: adb would start its own.
adbsrv_start "$LOG" "$P"
SPID=$ASRV_PID
# B ARGS...: Debian's adb client of adbc's server; its HOME holds no key a
# device knows (a server of its own would list nothing it could use).
mkdir -p "$T_TMP/bhome"
B() { HOME=$T_TMP/bhome timeout 30 adb -P "$P" "$@"; }
B devices > /dev/null 2>&1 || t_fail "adbc-serve does not answer: $(cat "$LOG")"

# Debian's adb tracking the devices through adbc's server.
HOME=$T_TMP/bhome adb -P "$P" track-devices > "$T_TMP/track" 2> "$T_TMP/track.err" &
TPID=$!
T_BG_PIDS+=("$TPID")

# until PATTERN [absent]: until adb devices through the server lists (or
# no longer lists) PATTERN; bounded looks.
until_listed()
{
    local i
    for ((i = 0; i < 300; i++)); do
        if B devices | grep -q "$1"; then
            [ "${2:-}" = absent ] || return 0
        else
            [ "${2:-}" = absent ] && return 0
        fi
        sleep 0.1
    done
    return 1
}
# same_as_adbc: adb devices through the server and adbc-snap devices list
# the same devices in the same states. adbc-snap's handshake with each
# device has a bound (3 s): on a machine too busy for it the device shows
# offline, so a difference is looked at again a few times.
same_as_adbc()
{
    local i
    for ((i = 0; i < 5; i++)); do
        B devices | tail -n +2 | sort > "$T_TMP/la"
        "$SNAP" devices 2> /dev/null | tail -n +2 | sort > "$T_TMP/lb"
        cmp -s "$T_TMP/la" "$T_TMP/lb" && return 0
    done
    t_fail "$1: adb through adbc's server lists '$(cat "$T_TMP/la")', adbc-snap '$(cat "$T_TMP/lb")'"
}

t_check "no device: the server lists none, as adbc-snap devices"
same_as_adbc "nothing yet"

t_check "an emulator starts: listed by the server and reached through it"
td_start emu --authorized-keys-from snap --port 5555 --prop ro.product.model=Emu_One
until_listed "^emulator-5554[[:space:]]device$" || t_fail "emulator not listed: $(B devices; tail -5 "$LOG")"
[ "$(B -s emulator-5554 shell echo hello)" = hello ] || t_fail "shell through the server"
same_as_adbc "the emulator up"

t_check "a device remembered with adbc-snap connect appears; disconnect takes it away"
td_start tcp --authorized-keys-from snap
TCPDEV=127.0.0.1:${TD_PORT[tcp]}
"$SNAP" connect "$TCPDEV" > /dev/null || t_fail "adbc-snap connect"
until_listed "^${TCPDEV}[[:space:]]device$" || t_fail "$TCPDEV not listed: $(B devices)"
same_as_adbc "the remembered device"
# adb's server lists USB devices first, then the others by serial
# (transport.cpp's list_transports), not in the order they came.
ORDER=$(B devices | tail -n +2 | cut -f1 | grep . | tr '\n' ' ')
[ "$ORDER" = "$TCPDEV emulator-5554 " ] ||
    t_fail "the list is in adb's order ($TCPDEV before emulator-5554, which came first): '$ORDER'"
"$SNAP" disconnect "$TCPDEV" > /dev/null || t_fail "adbc-snap disconnect"
until_listed "^${TCPDEV}[[:space:]]" absent || t_fail "$TCPDEV still listed: $(B devices)"

t_check "the emulator stops: it leaves the server's list"
td_stop emu
until_listed "^emulator-5554[[:space:]]" absent || t_fail "emulator still listed: $(B devices)"
same_as_adbc "the emulator gone"

t_check "the emulator starts again: listed again, reached again"
td_start emu --port 5555 --prop ro.product.model=Emu_One
until_listed "^emulator-5554[[:space:]]device$" || t_fail "emulator not listed again: $(B devices; tail -5 "$LOG")"
[ "$(B -s emulator-5554 shell echo again)" = again ] || t_fail "shell through the server (again)"

t_check "adb's track-devices through the server saw it appear, leave and come back"
# emu_seq: the emulator's state in each list adb got (absent when not listed),
# a state repeated once, the moment it is offline while going left out.
emu_seq()
{
    python3 - "$T_TMP/track" << 'PY'
import sys
b = open(sys.argv[1], 'rb').read()
i, seq = 0, []
while i < len(b):
    n = int(b[i:i + 4], 16)
    body = b[i + 4:i + 4 + n]
    if len(body) != n:
        sys.exit("a frame of %d bytes holds %d" % (n, len(body)))
    st = 'absent'
    for line in body.decode().splitlines():
        serial, state = line.split('\t')
        if serial == 'emulator-5554':
            st = state
    if st != 'offline' and (not seq or seq[-1] != st):
        seq.append(st)
    i += 4 + n
print(','.join(seq))
PY
}
# The tracker is sent a change within a moment: wait for the last one.
for ((i = 0; i < 300; i++)); do
    [ "$(emu_seq 2> /dev/null)" = "absent,device,absent,device" ] && break
    sleep 0.1
done
kill "$TPID" 2> /dev/null
wait "$TPID" 2> /dev/null
[ "$(emu_seq)" = "absent,device,absent,device" ] ||
    t_fail "adb track-devices saw the emulator: $(emu_seq) ($(cat -A "$T_TMP/track"))"
[ ! -s "$T_TMP/track.err" ] || t_fail "adb track-devices said: $(cat "$T_TMP/track.err")"
! grep -q "daemon started" "$T_TMP/track.err" "$LOG" || t_fail "adb started a server of its own"
echo "ok: $T_CHECKS checks"
