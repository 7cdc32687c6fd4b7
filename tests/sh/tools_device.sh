#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The tools of issue 32 through adbc-serve's POST /v1/tools/NAME with curl,
# against the test device: the exact device commands each one sends (the
# stand-ins record their argv), hostile arguments refused before anything
# is sent, the batch stopping at its first failure with one observation,
# and uninstall refused unless the package was allowed.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
t_init
. "$(dirname "${BASH_SOURCE[0]}")/lib_serve.sh"
command -v jq > /dev/null || t_fail "jq is needed (scripts/packages.txt)"

td_start a --no-auth
CA=${TD_SANDBOX[a]}/data/local/tmp/.adbc-test
setup_dev a
screen "$CA" Send Next
A=127.0.0.1:${TD_PORT[a]}
# --busy-wait: as long as load may make the pool's first connect take.
serve_start -t "$A" --settle 0 --busy-wait 60000 --allow-uninstall com.removable
# raw: every call since the last look (dumpsys and uiautomator included).
raw() { cat "$CA/calls" 2> /dev/null; rm -f "$CA/calls"; }
# T NAME JSON: POST /v1/tools/NAME with JSON as the body.
T() { H -X POST -d "$2" "/v1/tools/$1"; }
text() { J '[.result.content[].text] | join("\n")'; }
nothing_sent() { [ -z "$(calls "$CA")" ] || t_fail "$1 reached the device"; }

t_check "the new tools are listed once each"
H /v1/tools
expect 200
for t in list_apps uninstall_app open_url double_tap drag screen_info rotate screen_record \
    crash_log notifications batch; do
    [ "$(J "[.result[] | select(.name == \"$t\")] | length")" = 1 ] || t_fail "$t listed $(J "[.result[] | select(.name == \"$t\")] | length") times"
done

t_check "list_apps: pm query-activities for launcher activities, each package once, sorted"
printf '%s\n' com.zeta/.Main com.alpha/.Main com.alpha/.Other 'bad pkg/.X' > "$CA/launchers"
raw > /dev/null
T list_apps '{}'
expect 200
[ "$(raw)" = "pm query-activities --components -a android.intent.action.MAIN -c android.intent.category.LAUNCHER" ] ||
    t_fail "list_apps calls"
[ "$(text)" = "$(printf '2 apps with a launcher activity:\ncom.alpha\ncom.zeta\n')" ] || t_fail "list_apps: $(text)"

t_check "uninstall_app: the package service's uninstall of an allowed package; others refused, nothing sent"
echo com.removable > "$CA/packages"
T uninstall_app '{"package":"com.removable"}'
expect 200
# through abb_exec (the device advertises it): cmd package, which runs pm
[ "$(calls "$CA")" = "$(printf 'cmd package uninstall com.removable\npm uninstall com.removable')" ] ||
    t_fail "uninstall calls"
T uninstall_app '{"package":"com.other"}'
expect 400 bad_request
J .error.message | grep -q "not on the list" || t_fail "message: $(J .error.message)"
T uninstall_app '{"package":"com.removable x"}'
expect 400 bad_request
T uninstall_app '{"package":"com.removable;reboot"}'
expect 400 bad_request
nothing_sent "a refused uninstall"

t_check "open_url: am start VIEW with the URL as one word; hostile URLs refused, nothing sent"
T open_url '{"url":"https://example.com/a?b=1&c=(2)"}'
expect 200
calls "$CA" | grep -qxF "am start -a android.intent.action.VIEW -d 'https://example.com/a?b=1&c=(2)'" ||
    t_fail "open_url calls: $(cat "$CA/calls" 2> /dev/null)"
for u in 'https://x.com/;reboot' 'https://x.com/$(reboot)' 'https://x.com/`id`' \
    'javascript:alert(1)' 'file:///etc/passwd' 'intent://x#Intent;end' 'http://' \
    'https://x.com/ a' "https://x.com/'q'" 'https://x.com/|id'; do
    T open_url "$(jq -nc --arg u "$u" '{url:$u}')"
    expect 400 bad_request
done
nothing_sent "a refused URL"

t_check "double_tap: two cmd input taps in one exec, on a point and on a ref"
T double_tap '{"x":100,"y":200}'
expect 200
[ "$(calls "$CA")" = "$(printf 'cmd input tap 100 200\ncmd input tap 100 200')" ] || t_fail "double_tap calls"
H /v1/snapshot
T double_tap '{"selector":{"text":"Send"}}'
expect 200
[ "$(calls "$CA")" = "$(printf 'cmd input tap 950 2100\ncmd input tap 950 2100')" ] || t_fail "double_tap on a selector"
T double_tap '{"x":-1,"y":2}'
expect 400 bad_request
T double_tap '{}'
expect 400 bad_request
nothing_sent "a refused double tap"

t_check "double_tap before Android 12: two input taps, the second 150 ms after the first"
sed -i 's/^ro.build.version.sdk=.*/ro.build.version.sdk=29/' "$CA/props"
T double_tap '{"x":5,"y":6}'
expect 200
[ "$(calls "$CA")" = "$(printf 'input tap 5 6\ninput tap 5 6')" ] || t_fail "old double_tap calls"
sed -i 's/^ro.build.version.sdk=.*/ro.build.version.sdk=34/' "$CA/props"

t_check "drag: cmd input draganddrop from a ref to a point"
H /v1/snapshot
ref=$(J '.result.refs[] | select(.text == "Send") | .ref')
T drag "{\"from\":{\"ref\":$ref},\"to\":{\"x\":540,\"y\":500},\"duration_ms\":800}"
expect 200
[ "$(calls "$CA")" = "cmd input draganddrop 950 2100 540 500 800" ] || t_fail "drag calls"
T drag '{"from":{"x":1,"y":2},"to":{"x":3}}'
expect 400 bad_request
T drag '{"from":{"x":1,"y":2,"text":"x"},"to":{"x":3,"y":4}}'
expect 400 bad_request
nothing_sent "a refused drag"

t_check "screen_info: wm size, wm density, the rotation settings"
echo "Override density: 320" > "$CA/wm-density"
T screen_info '{}'
expect 200
[ "$(raw)" = "$(printf 'wm size\nwm density\nsettings get system accelerometer_rotation\nsettings get system user_rotation')" ] ||
    t_fail "screen_info calls"
text | grep -qF "size 1080x2400 (physical 1080x2400), density 320 dpi (physical 420); auto-rotate unset, rotation unset" ||
    t_fail "screen_info: $(text)"

t_check "rotate: auto-rotate off and user_rotation set, then restore puts back what was"
printf 'accelerometer_rotation=1\n' > "$CA/settings-system"
T rotate '{"degrees":90}'
expect 200
[ "$(calls "$CA")" = "$(printf 'settings get system accelerometer_rotation\nsettings get system user_rotation\nsettings put system accelerometer_rotation 0\nsettings put system user_rotation 1')" ] ||
    t_fail "rotate calls"
T rotate '{"degrees":180}'
expect 200
[ "$(calls "$CA")" = "$(printf 'settings put system accelerometer_rotation 0\nsettings put system user_rotation 2')" ] ||
    t_fail "second rotate remembers nothing new"
T screen_info '{}'
text | grep -q "auto-rotate off, rotation 180 (locked by adbc" || t_fail "screen_info: $(text)"
calls "$CA" > /dev/null
T rotate '{"restore":true}'
expect 200
got=$(calls "$CA")
[ "$got" = "$(printf 'settings put system accelerometer_rotation 1\nsettings delete system user_rotation')" ] ||
    t_fail "restore calls: $got"
[ "$(cat "$CA/settings-system")" = accelerometer_rotation=1 ] || t_fail "settings after restore: $(cat "$CA/settings-system")"
T rotate '{"restore":true}'
expect 500 failed
for b in '{"degrees":45}' '{}' '{"degrees":90,"restore":true}' '{"degrees":"90"}'; do
    T rotate "$b"
    expect 400 bad_request
done
nothing_sent "a refused rotate"

t_check "screen_record: screenrecord with its time limit, stopped by the hang-up; one at a time"
T screen_record '{"action":"start","time_limit_s":30}'
expect 200
calls "$CA" | grep -qxF "screenrecord --time-limit 30 /data/local/tmp/adbc-record.mp4" || t_fail "record calls"
T screen_record '{"action":"start"}'
expect 500 failed
J .error.message | grep -q "already running" || t_fail "second start: $(J .error.message)"
T screen_record '{"action":"stop"}'
expect 200
text | grep -q "video is on the device at /data/local/tmp/adbc-record.mp4" || t_fail "stop: $(text)"
grep -q moov-written-at-stop "${TD_SANDBOX[a]}/data/local/tmp/adbc-record.mp4" || t_fail "the recording was not ended by the hang-up"
T screen_record '{"action":"stop"}'
expect 500 failed
T screen_record '{"action":"start","time_limit_s":181}'
expect 400 bad_request
T screen_record '{"action":"pause"}'
expect 400 bad_request

t_check "crash_log: the crash buffer's last lines and dropbox crash entries, newest first"
printf 'E AndroidRuntime: FATAL EXCEPTION: main\nE AndroidRuntime: Process: com.x, PID: 4\n' > "$CA/logcat-crash.txt"
cat > "$CA/dumpsys-dropbox" << 'BOX'
Drop box contents: 4 entries
Max entries: 1000

2026-11-01 10:00:00 data_app_crash (text, 900 bytes)
2026-11-01 10:05:00 storage_trim (text, 16 bytes)
2026-11-01 11:00:00 system_app_anr (compressed text, 3000 bytes)
2026-11-01 12:00:00 SYSTEM_TOMBSTONE (compressed text, 6361 bytes)

Usage: dumpsys dropbox [--print|--file] [YYYY-mm-dd] [HH:MM:SS] [tag]
BOX
raw > /dev/null
T crash_log '{"lines":50,"entries":2}'
expect 200
[ "$(raw)" = "$(printf 'logcat -b crash -d -t 50\ndumpsys dropbox')" ] || t_fail "crash_log calls"
text | grep -q "FATAL EXCEPTION" || t_fail "no crash buffer: $(text)"
[ "$(text | sed -n '/newest first/,$p')" = "$(printf 'dropbox crash entries, newest first (2 of 3):\n2026-11-01 12:00:00 SYSTEM_TOMBSTONE (compressed text, 6361 bytes)\n2026-11-01 11:00:00 system_app_anr (compressed text, 3000 bytes)')" ] ||
    t_fail "dropbox entries: $(text)"

t_check "notifications: cmd statusbar expand-notifications, collapse"
T notifications '{}'
expect 200
[ "$(calls "$CA")" = "cmd statusbar expand-notifications" ] || t_fail "shade open calls"
T notifications '{"open":false}'
expect 200
[ "$(calls "$CA")" = "cmd statusbar collapse" ] || t_fail "shade close calls"

t_check "batch: acts in order, one observation at the end"
H /v1/snapshot
calls "$CA" > /dev/null
T batch '{"acts":[{"action":"tap","x":1,"y":2},{"action":"press","key":"enter"},{"action":"back"}]}'
expect 200
[ "$(calls "$CA")" = "$(printf 'cmd input tap 1 2\ncmd input keyevent 66\ncmd input keyevent 4')" ] || t_fail "batch calls"
[ "$(J '[.result.content[].text | select(startswith("after:"))] | length')" = 1 ] || t_fail "batch: not one observation: $(text)"

t_check "batch: stops at the first failure, the rest not run, still one observation"
T batch '{"acts":[{"action":"tap","x":1,"y":2},{"action":"tap","ref":99},{"action":"back"}]}'
expect 404 unknown_ref
J .error.message | grep -q "act 2 of 3 (tap) failed" || t_fail "batch failure: $(J .error.message)"
[ "$(calls "$CA")" = "cmd input tap 1 2" ] || t_fail "acts after the failure were run"

t_check "batch: a bad act anywhere is refused before any act runs"
T batch '{"acts":[{"action":"tap","x":1,"y":2},{"action":"fly"}]}'
expect 400 bad_request
T batch '{"acts":[{"action":"tap","x":1,"y":2},{"action":"type"}]}'
expect 400 bad_request
T batch '{"acts":[{"action":"back","extra":1}]}'
expect 400 bad_request
T batch '{"acts":[]}'
expect 400 bad_request
nothing_sent "a refused batch"
echo "ok: $T_CHECKS checks"
