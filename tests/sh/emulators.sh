#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Emulators found as adb finds them: test devices on the emulator ports of
# 127.0.0.1 (5555, 5557, ...) inside a private network namespace this test
# makes (`unshare -n`), so a real emulator on the machine never collides
# with the suite. Debian's adb (a private server in the same namespace) and
# adbc-snap must list the same emulator-N devices in the same states; the
# device is reached by serial and by default; a port that accepts and never
# answers is listed offline within the handshake bound; wait-for-*,
# get-state and get-serialno follow adb.
set -u
if [ -z "${ADBC_IN_NETNS:-}" ]; then
    if [ "$(id -u)" != 0 ] || ! unshare -n true 2>/dev/null; then
        echo "SKIP: needs root for a private network namespace (unshare -n)"
        exit 77
    fi
    ADBC_IN_NETNS=1 exec unshare -n bash "$0" "$@"
fi
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
if ! command -v "$ADB_BIN" > /dev/null; then
    echo "SKIP: Debian's adb is not installed (apt install adb)"
    exit 77
fi
command -v ip > /dev/null || { echo "SKIP: ip (iproute2) not installed"; exit 77; }
t_init
ip link set lo up || t_fail "cannot bring lo up in the private namespace"
SNAP=$ADBC_BUILD_DIR/tools/adbc-snap
[ -x "$SNAP" ] || t_fail "adbc-snap not built: $SNAP"
# adbc-snap and the adb server share one HOME, so one key.
adb_home_make a
export HOME=${ADB_HOME[a]}
ms() { echo $(($(date +%s%N) / 1000000)); }

# The bounds on how long a listing or a wait took only keep a hang from
# passing (a busy machine may slow anything many times over); what the
# timeouts cost is measured by scripts/bench, not here.
t_check "nothing on the emulator ports: adbc-snap devices lists nothing, no hang"
t0=$(ms)
out=$("$SNAP" devices) || t_fail "adbc-snap devices failed: $out"
t1=$(ms)
[ "$out" = "List of devices attached" ] || t_fail "unexpected listing: $out"
[ $((t1 - t0)) -lt 60000 ] || t_fail "empty listing took $((t1 - t0)) ms"
"$SNAP" shell true 2> "$T_TMP/none.err" && t_fail "a command with no device succeeded"
grep -q "no device found" "$T_TMP/none.err" || t_fail "no-device message: $(cat "$T_TMP/none.err")"

# Up before the adb server: adb scans the emulator ports when it starts.
td_start emu --authorized-keys-from a --port 5555 --prop ro.product.model=Emu_One \
    --prop ro.serialno=EMU1SERIAL
td_start locked --port 5557
python3 -c '
import socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 5559)); s.listen(8)
print("ready", flush=True)
held = []
while True:
    c, _ = s.accept()
    held.append(c)  # accept, never answer
' > "$T_TMP/mute.out" 2>&1 &
T_BG_PIDS+=($!)
for ((i = 0; i < 100; i++)); do grep -q ready "$T_TMP/mute.out" && break; sleep 0.05; done
grep -q ready "$T_TMP/mute.out" || t_fail "mute listener did not start"
adb_server_start a

t_check "Debian's adb lists emulator-5554 device, -5556 unauthorized, -5558 offline"
adb_wait_state a emulator-5554 device 15 || t_fail "adb: $(adb_run a devices)"
adb_wait_state a emulator-5556 unauthorized 15 || t_fail "adb: $(adb_run a devices)"
adb_wait_state a emulator-5558 offline 15 || t_fail "adb: $(adb_run a devices)"

t_check "adbc-snap devices lists the same emulator-N devices in the same states"
adb_list=$(adb_run a devices | grep '^emulator-' | sort)
t0=$(ms)
snap_list=$("$SNAP" -q devices | grep '^emulator-' | sort)
t1=$(ms)
[ "$adb_list" = "$snap_list" ] ||
    t_fail "lists differ: adb:
$adb_list
adbc-snap:
$snap_list"
[ "$(echo "$snap_list" | wc -l)" = 3 ] || t_fail "expected 3 emulators: $snap_list"

t_check "a silent port does not hang the listing: took $((t1 - t0)) ms"
[ $((t1 - t0)) -lt 60000 ] || t_fail "listing took $((t1 - t0)) ms"
t0=$(ms)
"$SNAP" -q --timeout 10 devices > /dev/null || t_fail "devices --timeout 10 failed"
t1=$(ms)
[ $((t1 - t0)) -lt 60000 ] || t_fail "--timeout 10 listing took $((t1 - t0)) ms"

t_check "devices -l shows the emulator's banner names; --json too"
"$SNAP" -q --timeout 10 devices -l | grep -q '^emulator-5554 .* device .*model:Emu_One .*transport:local' ||
    t_fail "devices -l: $("$SNAP" -q --timeout 10 devices -l)"
"$SNAP" -q --timeout 10 devices --json | grep -q '"serial":"emulator-5554","state":"device","transport":"local"' ||
    t_fail "devices --json: $("$SNAP" -q devices --json)"

t_check "-s emulator-5554 reaches it; ANDROID_SERIAL=emulator-5554 too"
out=$("$SNAP" -s emulator-5554 shell getprop ro.product.model) || t_fail "-s: $out"
[ "$out" = Emu_One ] || t_fail "-s emulator-5554 got '$out'"
out=$(ANDROID_SERIAL=emulator-5554 "$SNAP" shell getprop ro.serialno) || t_fail "env: $out"
[ "$out" = EMU1SERIAL ] || t_fail "ANDROID_SERIAL got '$out'"
"$SNAP" --timeout 2 -s emulator-5556 shell true 2> "$T_TMP/locked.err" && t_fail "unauthorized device let us in"
grep -qi "unauthori\|not accept\|prompt" "$T_TMP/locked.err" ||
    t_fail "unauthorized message: $(cat "$T_TMP/locked.err")"

t_check "with three emulators no default is guessed; with one it is the default"
"$SNAP" shell true 2> "$T_TMP/many.err" && t_fail "several devices and no -s succeeded"
grep -q "more than one device" "$T_TMP/many.err" || t_fail "message: $(cat "$T_TMP/many.err")"
out=$(ADB_LOCAL_TRANSPORT_MAX_PORT=5555 "$SNAP" shell getprop ro.product.model) ||
    t_fail "default device: $out"
[ "$out" = Emu_One ] || t_fail "default device answered '$out'"

t_check "get-state and get-serialno as adb prints them: the state, or an error and exit 1"
for s in emulator-5554 emulator-5556 emulator-5558 emulator-5570; do
    a=$(adb_run a -s "$s" get-state 2> "$T_TMP/a.err")
    ra=$?
    b=$("$SNAP" -q --timeout 10 -s "$s" get-state 2> "$T_TMP/b.err")
    rb=$?
    [ "$b" = "$a" ] && [ $rb = $ra ] ||
        t_fail "get-state $s: adbc-snap '$b' exit $rb, adb '$a' exit $ra ($(cat "$T_TMP/b.err"))"
    case $ra in 0) ;; *) grep -q "^adbc-snap: device \(unauthorized\|offline\|'$s' not found\)" \
        "$T_TMP/b.err" || t_fail "get-state $s: '$(cat "$T_TMP/b.err")' beside adb's '$(cat "$T_TMP/a.err")'" ;; esac
done
[ "$(adb_run a -s emulator-5554 get-state)" = device ] || t_fail "adb get-state"
[ "$("$SNAP" -s emulator-5554 get-serialno)" = "$(adb_run a -s emulator-5554 get-serialno)" ] ||
    t_fail "get-serialno differs from adb's"
"$SNAP" -s emulator-5570 get-state 2> /dev/null && t_fail "get-state of an absent emulator"

t_check "wait-for-device returns once the emulator comes up; wait-for-disconnect once it is gone"
ANDROID_SERIAL=emulator-5560 "$SNAP" wait-for-local-device -t 300 &
wpid=$!
T_BG_PIDS+=($wpid)
sleep 0.6
kill -0 $wpid 2> /dev/null || t_fail "wait-for-local-device returned before the device existed"
td_start late --port 5561 --no-auth
t0=$(ms)
wait $wpid || t_fail "wait-for-local-device failed"
t1=$(ms)
[ $((t1 - t0)) -lt 120000 ] || t_fail "wait-for-device noticed the device after $((t1 - t0)) ms"
"$SNAP" -s emulator-5560 wait-for-usb-device -t 0.5 2> "$T_TMP/usb.err" &&
    t_fail "wait-for-usb-device accepted an emulator"
grep -q "timed out" "$T_TMP/usb.err" || t_fail "wait-for-usb message: $(cat "$T_TMP/usb.err")"
"$SNAP" -s emulator-5560 wait-for-recovery -t 0.5 2> /dev/null && t_fail "a device is not recovery"
td_stop late
"$SNAP" -s emulator-5560 wait-for-disconnect -t 120 || t_fail "wait-for-disconnect"

t_check "wait-for-device -t 1 on an absent device times out, not before its second, exit 1"
t0=$(ms)
"$SNAP" -s emulator-5570 wait-for-device -t 1 2> "$T_TMP/to.err"
rc=$?
t1=$(ms)
[ $rc = 1 ] || t_fail "exit $rc"
[ $((t1 - t0)) -ge 900 ] && [ $((t1 - t0)) -lt 60000 ] || t_fail "took $((t1 - t0)) ms"
grep -q "timed out after 1000 ms waiting for emulator-5570" "$T_TMP/to.err" ||
    t_fail "message: $(cat "$T_TMP/to.err")"

td_stop emu
td_stop locked
adb_server_stop a
echo "ok: $T_CHECKS checks"
