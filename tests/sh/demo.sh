#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# README's first command ends in scripts/demo: with no device it must serve
# the recorded screen, print its snapshot with refs, tap a ref (showing the
# input command the device received) and write a PNG screenshot.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
t_init
export HOME=$T_TMP/home
mkdir -p "$HOME"
t_check "scripts/demo with no device: snapshot with refs, a tap received, a screenshot"
unset ANDROID_SERIAL
# No USB device may be picked up here: the demo looks for one first.
ADBC_DEMO_SHOT=$T_TMP/shot.png timeout 60 "$ADBC_SOURCE_DIR/scripts/demo" > "$T_TMP/out" 2> "$T_TMP/err" ||
    t_fail "demo failed: $(tail -n 20 "$T_TMP/err")"
grep -q "using the USB device" "$T_TMP/out" && { echo "a USB device is attached: demo ran on it; not checked"; exit 0; }
grep -q '^      - Group \[ref=5\]$' "$T_TMP/out" || t_fail "no snapshot with refs: $(head -n 30 "$T_TMP/out")"
grep -q 'Pair device with pairing code' "$T_TMP/out" || t_fail "not the recorded screen"
grep -qE '^   the device received: (cmd )?input tap [0-9]+ [0-9]+$' "$T_TMP/out" ||
    t_fail "no input command shown: $(grep received "$T_TMP/out")"
head -c 8 "$T_TMP/shot.png" | cmp -s - <(printf '\211PNG\r\n\032\n') || t_fail "no PNG written"
grep -q "wrote $T_TMP/shot.png (1280x734 PNG" "$T_TMP/err" || t_fail "screenshot: $(grep wrote "$T_TMP/err")"

t_check "scripts/demo-agent: the agent turns Bluetooth on in three steps, no phone and no model"
if "$ADBC_BUILD_DIR/tools/adbc-snap" -t 127.0.0.1:1 agent x 2>&1 | grep -q "built without the agent"; then
    echo "adbc-snap built without the agent: demo-agent not checked"
else
    ADBC_BUILD_DIR=$ADBC_BUILD_DIR timeout 120 "$ADBC_SOURCE_DIR/scripts/demo-agent" > "$T_TMP/aout" 2> "$T_TMP/aerr" ||
        t_fail "demo-agent failed: $(tail -n 20 "$T_TMP/aout" "$T_TMP/aerr")"
    grep -q '^done in 3 steps .*: Bluetooth is on\.$' "$T_TMP/aout" || t_fail "no task done: $(cat "$T_TMP/aout")"
    grep -qE '^   the device received: (cmd )?input tap 540 200; (cmd )?input tap 540 500$' "$T_TMP/aout" ||
        t_fail "the device did not get the two taps: $(grep received "$T_TMP/aout")"
fi
echo "ok: $T_CHECKS checks"
