#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# adbc-snap over emulated USB (tests/usb/adbc-usbbed plugs the devices in):
# `devices -l` and `--json`, choosing a device by -s SERIAL, -s usb:PATH,
# ANDROID_SERIAL or as the only one, shell with its exit status, and a push
# and pull through the device's sync service.
set -u
B=${ADBC_BUILD_DIR:?}
W=${UMOCKDEV_WRAPPER:-umockdev-wrapper}
BED="$W $B/tests/usb/adbc-usbbed"
SNAP=$B/tools/adbc-snap
fails=0
T=$(mktemp -d /tmp/adbc-usbsnap-XXXXXX)
trap 'rm -rf "$T"' EXIT
unset ANDROID_SERIAL
export ANDROID_USER_HOME=$T/home

check() { # name, expected, actual
    if [ "$2" == "$3" ]; then
        echo "ok   $1"
    else
        echo "FAIL $1"
        echo "  want: $(printf %q "$2")"
        echo "  got:  $(printf %q "$3")"
        fails=$((fails + 1))
    fi
}

contains() { # name, needle, haystack
    if [[ "$3" == *"$2"* ]]; then
        echo "ok   $1"
    else
        echo "FAIL $1: no \"$2\" in:"
        echo "$3" | sed 's/^/    /'
        fails=$((fails + 1))
    fi
}

# Commands get -n (no stdin): none of them reads it.
THREE=(-d serial=EMU0001,sysfs-serial -d serial=EMU0002,port=2,dev=3
       -d serial=EMU0003,port=3,dev=4,auth=prompt
       -d serial=EMU0004,port=4,dev=5,kind=fastboot,sysfs-serial
       -d serial=NOTADB,port=5,dev=6,kind=other)

out=$($BED "${THREE[@]}" -- "$SNAP" devices -l 127.0.0.1:1 2>"$T/err" </dev/null)
want="List of devices attached
EMU0001                device usb:1-1 product:bed_prod model:Bed_Phone device:bed transport:usb
EMU0002                device usb:1-2 product:bed_prod model:Bed_Phone device:bed transport:usb
EMU0003                unauthorized usb:1-3 transport:usb
EMU0004                bootloader usb:1-4 transport:usb
127.0.0.1:1            offline transport:tcp"
check "devices -l" "$want" "$out"
contains "devices: why EMU0003 is unauthorized" 'EMU0003: device unauthorized' "$(cat "$T/err")"
contains "devices: why the TCP target is offline" '127.0.0.1:1:' "$(cat "$T/err")"

out=$($BED "${THREE[@]}" -- "$SNAP" devices --json 2>/dev/null </dev/null)
contains "devices --json" '{"serial":"EMU0002","state":"device","transport":"usb","usb":"1-2","vendor_id":"18d1","product_id":"4ee7","product":"bed_prod","model":"Bed Phone","device":"bed","error":null}' "$out"
contains "devices --json: fastboot" '"serial":"EMU0004","state":"bootloader"' "$out"

out=$($BED "${THREE[@]}" -- "$SNAP" -s EMU0002 shell -n getprop ro.serialno 2>&1 </dev/null)
check "-s SERIAL picks that device" "EMU0002" "$out"
out=$($BED "${THREE[@]}" -- "$SNAP" -s usb:1-1 shell -n getprop ro.serialno 2>&1 </dev/null)
check "-s usb:PATH picks that port" "EMU0001" "$out"
out=$($BED "${THREE[@]}" -- env ANDROID_SERIAL=EMU0002 "$SNAP" shell -n echo via env 2>&1 </dev/null)
check "ANDROID_SERIAL" "via env" "$out"

out=$($BED "${THREE[@]}" -- "$SNAP" shell -n echo hi 2>&1 </dev/null); rc=$?
check "several devices: refused" "1" "$rc"
contains "several devices: listed" "EMU0001 (1-1), EMU0002 (1-2)" "$out"
out=$($BED "${THREE[@]}" -- "$SNAP" -s EMU0004 shell -n echo hi 2>&1 </dev/null); rc=$?
contains "fastboot device: not ADB" "fastboot" "$out"
out=$($BED "${THREE[@]}" -- "$SNAP" -s EMU0009 shell -n echo hi 2>&1 </dev/null); rc=$?
contains "unknown serial" 'no USB device with serial "EMU0009"' "$out"

ONE=(-d serial=SOLO0001,sysfs-serial -d serial=NOTADB,port=2,dev=3,kind=other)
out=$($BED "${ONE[@]}" -- "$SNAP" shell -n echo only one 2>&1 </dev/null)
check "the only device, no -s" "only one" "$out"
$BED "${ONE[@]}" -- "$SNAP" shell -n bed-fail >/dev/null 2>"$T/err" </dev/null; rc=$?
check "shell exit status" "3" "$rc"
check "shell stderr" "oops" "$(cat "$T/err")"

out=$($BED -d serial=NOTADB,kind=other -- "$SNAP" shell -n echo hi 2>&1 </dev/null); rc=$?
check "no device: status" "1" "$rc"
contains "no device: says how" "a USB device with USB debugging on" "$out"

head -c 200000 /dev/urandom >"$T/up.bin"
out=$($BED "${ONE[@]}" -- bash -c "'$SNAP' push '$T/up.bin' /data/local/tmp/up.bin &&
      '$SNAP' pull /data/local/tmp/up.bin '$T/down.bin'" 2>&1 </dev/null); rc=$?
check "push then pull: status" "0" "$rc"
if cmp -s "$T/up.bin" "$T/down.bin"; then echo "ok   push then pull: same bytes"; else
    echo "FAIL push then pull: files differ"; echo "$out"; fails=$((fails + 1)); fi

echo "$fails failed"
[ "$fails" -eq 0 ]
