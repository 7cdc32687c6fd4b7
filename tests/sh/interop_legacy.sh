#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The test device's --legacy mode (an AOSP-era adbd: protocol 0x01000000,
# checksummed packets of at most 4 KiB, no features, so no delayed_ack and
# one packet in flight per stream and direction) against Debian's real adb
# and against adbc-snap: the handshake, shell v1 (no shell_v2), exec both
# ways, and push/pull of random data byte for byte, each checked from the
# other side. The device verifies every checksum it receives and drops the
# connection on a wrong one, so a transfer that completes proves both hosts
# send correct sums; both hosts verify the device's.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

if ! command -v "$ADB_BIN" > /dev/null; then
    echo "SKIP: Debian's adb is not installed (apt install adb)"
    exit 77
fi
SNAP=$ADBC_BUILD_DIR/tools/adbc-snap/adbc-snap
[ -x "$SNAP" ] || SNAP=$ADBC_BUILD_DIR/tools/adbc-snap
t_init

adb_server_start a
td_start dev --legacy --authorized-keys-from a
DEV=127.0.0.1:${TD_PORT[dev]}
SB=${TD_SANDBOX[dev]}
A() { adb_run a -s "$DEV" "$@"; }
S() { HOME=${ADB_HOME[a]} timeout "$ADB_TIMEOUT" "$SNAP" -t "$DEV" "$@"; }

t_check "adb connects to a legacy device"
out=$(adb_run a connect "$DEV" 2>&1) || t_fail "adb connect: $out"
adb_wait_state a "$DEV" device 10 || t_fail "$DEV not online: $(adb_run a devices)"

t_check "the legacy device advertises no features"
feat=$(A features 2>&1)
[ -z "$(tr -d '[:space:]' <<< "$feat")" ] || t_fail "features: '$feat'"

t_check "adbc-snap sees protocol 0x01000000, 4096-byte payloads, no delayed_ack"
info=$(S info 2>&1) || t_fail "adbc-snap info: $info"
grep -q "0x01000000, max payload 4096, delayed_ack off" <<< "$info" || t_fail "adbc-snap info: $info"

t_check "shell v1 (no shell_v2): adb and adbc-snap get the output"
out=$(A shell 'echo legacy-$((6*7))' | tr -d '\r')
[ "$out" = legacy-42 ] || t_fail "adb shell: '$out'"
out=$(S shell 'echo legacy-$((6*7))' 2>&1 | tr -d '\r')
[ "$out" = legacy-42 ] || t_fail "adbc-snap shell: '$out'"

head -c 3000000 /dev/urandom > "$T_TMP/rand.bin"
cp "$T_TMP/rand.bin" "$SB/data/local/tmp/rand.bin"

t_check "exec-out: 3 MB of random bytes in 4 KiB checksummed packets (adb and adbc-snap)"
A exec-out cat /data/local/tmp/rand.bin > "$T_TMP/adb-out.bin" || t_fail "adb exec-out failed"
cmp "$T_TMP/rand.bin" "$T_TMP/adb-out.bin" || t_fail "adb exec-out data differs"
S exec cat /data/local/tmp/rand.bin > "$T_TMP/snap-out.bin" || t_fail "adbc-snap exec failed"
cmp "$T_TMP/rand.bin" "$T_TMP/snap-out.bin" || t_fail "adbc-snap exec data differs"

t_check "exec-in: 3 MB of stdin through the device's checksum check"
A exec-in 'cat > /data/local/tmp/in.bin' < "$T_TMP/rand.bin" || t_fail "adb exec-in failed"
for ((i = 0; i < 100; i++)); do
    cmp -s "$T_TMP/rand.bin" "$SB/data/local/tmp/in.bin" && break
    sleep 0.1
done
cmp "$T_TMP/rand.bin" "$SB/data/local/tmp/in.bin" || t_fail "adb exec-in data differs"

for n in 0 1 4095 4096 4097 65536 3000000; do
    head -c "$n" "$T_TMP/rand.bin" > "$T_TMP/f$n"
done

t_check "push: adb and adbc-snap, sizes around the 4 KiB packet and 64 KiB chunk"
for n in 0 1 4095 4096 4097 65536 3000000; do
    A push "$T_TMP/f$n" "/data/local/tmp/adb.$n" > /dev/null || t_fail "adb push of $n bytes"
    cmp "$T_TMP/f$n" "$SB/data/local/tmp/adb.$n" || t_fail "adb push of $n bytes differs"
    S push "$T_TMP/f$n" "/data/local/tmp/snap.$n" > /dev/null 2>&1 ||
        t_fail "adbc-snap push of $n bytes"
    cmp "$T_TMP/f$n" "$SB/data/local/tmp/snap.$n" || t_fail "adbc-snap push of $n bytes differs"
done

t_check "pull: each reads what the other pushed"
for n in 0 1 4095 4096 4097 65536 3000000; do
    A pull "/data/local/tmp/snap.$n" "$T_TMP/back-adb.$n" > /dev/null || t_fail "adb pull of $n"
    cmp "$T_TMP/f$n" "$T_TMP/back-adb.$n" || t_fail "adb pull of $n bytes differs"
    S pull "/data/local/tmp/adb.$n" "$T_TMP/back-snap.$n" > /dev/null 2>&1 ||
        t_fail "adbc-snap pull of $n"
    cmp "$T_TMP/f$n" "$T_TMP/back-snap.$n" || t_fail "adbc-snap pull of $n bytes differs"
done

t_check "the device logged no protocol error (a wrong checksum would be one)"
td_check_log dev

td_stop dev
echo "ok: $T_CHECKS checks"
