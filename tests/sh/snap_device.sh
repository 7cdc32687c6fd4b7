#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# adbc-snap apps, open-url, screen-info, rotate, record, crashlog, shade
# against the test device: the device commands each sends (the stand-ins
# record them; the operations are tools/ops' ops_device.c, the ones
# adbc-mcp and adbc-serve serve as tools), the output and --json, and a
# hostile URL refused with nothing sent.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
t_init
SNAP=${ADBC_SNAP:-$ADBC_BUILD_DIR/tools/adbc-snap}
[ -x "$SNAP" ] || t_fail "adbc-snap not built: $SNAP"
command -v jq > /dev/null || t_fail "jq is needed (scripts/packages.txt)"
export HOME=$T_TMP/home
mkdir -p "$HOME"
td_start dev --no-auth
A=127.0.0.1:${TD_PORT[dev]}
CTL=${TD_SANDBOX[dev]}/data/local/tmp/.adbc-test
mkdir -p "$CTL"
snap() { "$SNAP" -q --no-session -t "$A" "$@"; }
calls() { grep -v -e '^getprop' "$CTL/calls" 2> /dev/null; rm -f "$CTL/calls"; }

t_check "apps: pm query-activities; the packages sorted, --json"
printf 'com.b/.Main\ncom.a/.Main\n' > "$CTL/launchers"
[ "$(snap apps)" = "$(printf 'com.a\ncom.b')" ] || t_fail "apps: $(snap apps)"
[ "$(calls)" = "pm query-activities --components -a android.intent.action.MAIN -c android.intent.category.LAUNCHER" ] || t_fail "apps calls"
[ "$(snap apps --json | jq -c .apps)" = '["com.a","com.b"]' ] || t_fail "apps --json"
calls > /dev/null

t_check "open-url: am start VIEW; a hostile URL is a usage error with nothing sent"
snap open-url 'https://example.com/?a=1&b=2' || t_fail "open-url failed"
[ "$(calls)" = "am start -a android.intent.action.VIEW -d 'https://example.com/?a=1&b=2'" ] || t_fail "open-url calls"
for u in 'https://x.com/$(reboot)' 'file:///sdcard/x' 'https://x.com/;id'; do
    snap open-url "$u" 2> "$T_TMP/err"
    [ $? = 2 ] || t_fail "open-url $u: not a usage error"
done
[ -z "$(calls)" ] || t_fail "a refused URL reached the device"

t_check "screen-info, rotate, rotate restore"
out=$(snap screen-info) || t_fail "screen-info failed"
echo "$out" | grep -qx "size: 1080x2400 (physical 1080x2400)" || t_fail "screen-info: $out"
[ "$(calls)" = "$(printf 'wm size\nwm density\nsettings get system accelerometer_rotation\nsettings get system user_rotation')" ] || t_fail "screen-info calls"
snap rotate 270 || t_fail "rotate failed"
[ "$(snap screen-info --json | jq -c '[.rotation,.auto_rotate,.locked_by_adbc]')" = '[270,false,true]' ] || t_fail "after rotate"
snap rotate restore || t_fail "restore failed"
[ "$(snap screen-info --json | jq -c '[.rotation,.auto_rotate,.locked_by_adbc]')" = '[-1,null,false]' ] || t_fail "after restore"
snap rotate 45 2> /dev/null
[ $? = 2 ] || t_fail "rotate 45: not a usage error"
calls > /dev/null

t_check "record: screenrecord with its time limit, the MP4 pulled to the file"
snap record 1 "$T_TMP/v.mp4" || t_fail "record failed"
grep -q moov-written-at-stop "$T_TMP/v.mp4" || t_fail "the video was not finished: $(od -c "$T_TMP/v.mp4" | head -3)"
calls | grep -qxF "screenrecord --time-limit 1 /data/local/tmp/adbc-record.mp4" || t_fail "record calls"
snap record 200 "$T_TMP/v.mp4" 2> /dev/null
[ $? = 2 ] || t_fail "record 200: not a usage error"

t_check "crashlog and shade"
printf 'E AndroidRuntime: FATAL EXCEPTION: main\n' > "$CTL/logcat-crash.txt"
snap crashlog --lines 10 | grep -q "FATAL EXCEPTION" || t_fail "crashlog"
[ "$(calls)" = "$(printf 'logcat -b crash -d -t 10\ndumpsys dropbox')" ] || t_fail "crashlog calls"
snap shade open && snap shade close || t_fail "shade failed"
[ "$(calls)" = "$(printf 'cmd statusbar expand-notifications\ncmd statusbar collapse')" ] || t_fail "shade calls"
echo "ok: $T_CHECKS checks"
