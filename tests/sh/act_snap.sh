#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# adbc-snap's snapshot, find, wait and act commands against the test
# device: the stand-ins record what they were asked ($ctl/calls), the
# uiautomator stand-in serves whichever dump the test puts in place, and
# each check compares the exact command lines, output and exit status.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
t_init

SNAP=${ADBC_SNAP:-$ADBC_BUILD_DIR/tools/adbc-snap}
[ -x "$SNAP" ] || t_fail "adbc-snap not built: $SNAP"
td_start dev --no-auth
DEV=127.0.0.1:${TD_PORT[dev]}
ctl=${TD_SANDBOX[dev]}/data/local/tmp/.adbc-test
# The saved refs go to a private cache; nothing of the user's is touched.
export HOME=$T_TMP/home XDG_CACHE_HOME=$T_TMP/cache
mkdir -p "$HOME"
OUT=$T_TMP/out ERR=$T_TMP/err

# S ARGS...: adbc-snap against the device; stdout in $OUT, stderr in $ERR,
# status in $rc.
S()
{
    timeout 60 "$SNAP" -t "$DEV" --timeout 20 "$@" > "$OUT" 2> "$ERR"
    rc=$?
}
expect_rc()
{
    [ "$rc" -eq "$1" ] || t_fail "exit status $rc, expected $1; stderr: $(cat "$ERR")"
}
expect_calls()
{
    local got
    got=$(cat "$ctl/calls" 2> /dev/null)
    [ "$got" = "$1" ] || t_fail "calls were:
$got
expected:
$1"
    rm -f "$ctl/calls"
}
expect_err()
{
    grep -qF -- "$1" "$ERR" || t_fail "stderr lacks '$1': $(cat "$ERR")"
}

node()
{
    printf '<node class="%s" text="%s" resource-id="%s" package="com.chat" clickable="%s" scrollable="%s" enabled="true" bounds="%s"/>' "$@"
}
screen()
{
    printf '%s' "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\"><node class=\"android.widget.FrameLayout\" package=\"com.chat\" bounds=\"[0,0][1080,2400]\">$*</node></hierarchy>"
}
LIST=$(node android.widget.ListView "" com.chat:id/list false true "[0,200][1080,1900]")
FIELD=$(node android.widget.EditText draft com.chat:id/msg true false "[40,2000][840,2200]")
SEND=$(node android.widget.Button Send com.chat:id/send true false "[860,2000][1040,2200]")
FIELD_UP=$(node android.widget.EditText draft com.chat:id/msg true false "[40,1200][840,1400]")
SEND_UP=$(node android.widget.Button Send com.chat:id/send true false "[860,1200][1040,1400]")
SEND_TOP=$(node android.widget.Button Send com.chat:id/send true false "[860,300][1040,500]")
serve()
{
    screen "$@" > "$ctl/screen.xml"
    echo "dump=screen.xml" > "$ctl/uiautomator.conf"
}
SCREEN_TEXT='- Group
  - List [ref=1]
  - TextInput [ref=2] "draft"
  - Button [ref=3] "Send"'

t_check "an act on a ref before any snapshot says to take one, and sends nothing"
S tap 3
expect_rc 1
expect_err 'run `adbc-snap snapshot` first'
expect_calls ""

t_check "snapshot prints the screen and saves its refs for the device"
serve "$LIST$FIELD$SEND"
S snapshot
expect_rc 0
[ "$(cat "$OUT")" = "$SCREEN_TEXT" ] || t_fail "snapshot printed: $(cat "$OUT")"
REFS=$XDG_CACHE_HOME/adbc/refs-127.0.0.1%3A${TD_PORT[dev]}.tab
[ -s "$REFS" ] || t_fail "no ref table at $REFS: $(ls -R "$XDG_CACHE_HOME")"
head -n1 "$REFS" | grep -q '^adbc-reftab ' || t_fail "ref table header: $(head -n1 "$REFS")"

t_check "snapshot --json and -o FILE"
S snapshot --json
expect_rc 0
grep -q '"adbc.ui.snapshot/1"' "$OUT" || t_fail "JSON without its schema: $(head -c 200 "$OUT")"
S snapshot -o "$T_TMP/snap.txt"
expect_rc 0
[ ! -s "$OUT" ] || t_fail "-o also printed to stdout"
[ "$(cat "$T_TMP/snap.txt")" = "$SCREEN_TEXT" ] || t_fail "-o file: $(cat "$T_TMP/snap.txt")"

t_check "snapshot --xml: the offline pipeline on a saved dump, no device"
fx=$ADBC_SOURCE_DIR/fixtures/snapshot/009-settings-small
timeout 30 "$SNAP" snapshot --xml "$fx.xml" > "$OUT" 2> "$ERR"
rc=$?
expect_rc 0
cmp -s <(cat "$fx.txt"; echo) "$OUT" || t_fail "--xml output differs from $fx.txt"
timeout 30 "$SNAP" snapshot --xml "$T_TMP/none.xml" > "$OUT" 2> "$ERR"
[ $? -eq 1 ] || t_fail "a missing --xml file did not fail"

t_check "tap REF acts at the ref's point after a fresh dump (verified)"
rm -f "$ctl/calls"
S tap 3
expect_rc 0
expect_calls "cmd input tap 950 2100"
expect_err "tap ref 3 at 950,2100"

t_check "a moved element is tapped where it is now"
serve "$LIST$FIELD_UP$SEND_UP"
S tap 3
expect_rc 0
expect_calls "cmd input tap 950 1300"
expect_err "(it moved since the snapshot)"

t_check "a vanished element: stale ref, exit 3, nothing tapped"
serve "$LIST$FIELD"
S tap 3
expect_rc 3
expect_err "stale ref 3 (Button \"Send\")"
expect_calls ""
S long-press '[ref=3]'
expect_rc 3
expect_calls ""

t_check "a duplicated element: refused, never a guess"
serve "$SEND_TOP$FIELD_UP$SEND_UP"
S tap ref=3
expect_rc 3
expect_err "2 elements on the screen now look like it"
expect_calls ""

t_check "--no-verify acts at the recorded point without a dump"
serve "$LIST$FIELD"
S tap 3 --no-verify
expect_rc 0
expect_calls "cmd input tap 950 2100"

t_check "refs outside the saved table, and bad refs"
S tap 99
expect_rc 1
expect_err "ref 99 is not in the last snapshot (its refs are 1-3)"
S tap abc
expect_rc 2
expect_calls ""

t_check "type REF TEXT --clear: tap, clear the field's 5 characters, type"
serve "$LIST$FIELD$SEND"
S type 2 "hello world; \$(reboot)" --clear
expect_rc 0
expect_calls "cmd input tap 440 2100
cmd input keyevent 123 67 67 67 67 67
cmd input text 'hello%sworld;%s\$(reboot)'"
S type 2 -- --clear
expect_rc 0
expect_calls "cmd input tap 440 2100
cmd input text --clear"
S type 2 caf$'\xc3\xa9'
expect_rc 1
expect_err "ADB Keyboard"
expect_calls "dumpsys input_method
pm path com.android.adbkeyboard"

t_check "scroll and long-press on refs"
S scroll 1 down
expect_rc 0
S long-press 3
expect_rc 0
expect_calls "cmd input swipe 540 1050 540 767 300
cmd input swipe 950 2100 950 2100 1000"
S scroll 1 sideways
expect_rc 2

t_check "tap-xy, swipe, press, back, home"
S tap-xy 10 20
S swipe 1 2 3 4
S swipe 5 6 7 8 50
S press enter
S press 187
S press KEYCODE_VOLUME_UP
S back
S home
expect_calls "cmd input tap 10 20
cmd input swipe 1 2 3 4 300
cmd input swipe 5 6 7 8 50
cmd input keyevent 66
cmd input keyevent 187
cmd input keyevent 24
cmd input keyevent 4
cmd input keyevent 3"
S press bogus
expect_rc 2
S tap-xy 10 -5
expect_rc 2
expect_calls ""

t_check "grid and tap-grid (wm size, override honoured)"
S grid
expect_rc 0
head -n1 "$OUT" | grep -q '^grid 10x22 on a 1080x2400 screen' || t_fail "grid: $(head -n1 "$OUT")"
grep -qx 'C x 216-323 centre 269' "$OUT" || t_fail "grid lacks column C"
S tap-grid C5
expect_rc 0
expect_calls "wm size
wm size
cmd input tap 269 490"
printf 'Physical size: 1080x2400\nOverride size: 540x1200\n' > "$ctl/wm-size"
S tap-grid A1
expect_calls "wm size
cmd input tap 26 26"
rm -f "$ctl/wm-size"
S tap-grid Z9
expect_rc 1
expect_err "not a cell of this grid"

t_check "an act with --snapshot prints the new screen and saves its refs"
serve "$LIST$FIELD_UP$SEND_UP"
S tap 3 --snapshot --settle 0
expect_rc 0
[ "$(head -n1 "$OUT")" = "- Group" ] || t_fail "--snapshot printed: $(cat "$OUT")"
rm -f "$ctl/calls"
S tap 3 # the saved table is now the moved screen's: no move any more
expect_err "tap ref 3 at 950,1300"
grep -q moved "$ERR" && t_fail "still reported as moved: $(cat "$ERR")"
expect_calls "cmd input tap 950 1300"

t_check "find prints matching refs and saves the table they belong to"
S find --text Send
expect_rc 0
[ "$(cat "$OUT")" = '[ref=3] Button "Send" #com.chat:id/send at 950,1300' ] ||
    t_fail "find printed: $(cat "$OUT")"
S find --class EditText --json
expect_rc 0
grep -q '"ref":2,"x":440,"y":1300' "$OUT" || t_fail "find --json: $(cat "$OUT")"
S find --text Nope
expect_rc 1
S find
expect_rc 2

t_check "wait-text, wait-state, wait-stable"
S wait-text Send -t 5
expect_rc 0
S wait-text Nope -t 1
expect_rc 1
expect_err "Nope"
S wait-text Send --gone -t 1
expect_rc 1
S wait-text Nope --gone -t 5 --snapshot
expect_rc 0
[ "$(tail -n1 "$OUT")" = '  - Button [ref=3] "Send"' ] || t_fail "wait --snapshot: $(cat "$OUT")"
S wait-state 3 enabled -t 5
expect_rc 0
S wait-state 3 checked -t 1
expect_rc 1
S wait-state 3 sideways
expect_rc 2
S wait-stable -t 10
expect_rc 0

t_check "an empty screen: empty text and a note on stderr"
printf '%s' "<hierarchy><node class=\"android.widget.FrameLayout\" bounds=\"[0,0][10,10]\"/></hierarchy>" > "$ctl/screen.xml"
S snapshot
expect_rc 0
[ ! -s "$OUT" ] || t_fail "printed for an empty screen: $(cat "$OUT")"
expect_err "nothing to list"

t_check "screenshot: raw frame encoded here, device PNG with --png-on-device"
python3 - "$ctl/screencap.raw" << 'EOF' || t_fail "could not write a raw frame"
import struct, sys
w, h = 40, 30
px = bytes(((x * 7 + y * 3) & 0xff) for y in range(h) for x in range(w * 4))
px = bytearray(px)
px[3::4] = b'\xff' * (w * h)
open(sys.argv[1], 'wb').write(struct.pack('<IIII', w, h, 1, 0) + bytes(px))
EOF
S screenshot -o "$T_TMP/shot.png"
expect_rc 0
expect_err "wrote $T_TMP/shot.png (40x30 PNG"
expect_calls "screencap"
python3 - "$T_TMP/shot.png" "$ctl/screencap.raw" << 'EOF' || t_fail "the PNG does not hold the frame's pixels"
import struct, sys, zlib
png, raw = open(sys.argv[1], 'rb').read(), open(sys.argv[2], 'rb').read()
assert png[:8] == b'\x89PNG\r\n\x1a\n'
w, h, depth, ct = struct.unpack('>IIBB', png[16:26])
assert (w, h, depth, ct) == (40, 30, 8, 2), (w, h, depth, ct)
data, off = b'', 8
while off < len(png):
    n, = struct.unpack('>I', png[off:off + 4]); t = png[off + 4:off + 8]
    if t == b'IDAT': data += png[off + 8:off + 8 + n]
    off += 12 + n
rows = zlib.decompress(data)
stride, prev, out = w * 3, bytearray(w * 3), bytearray()
for y in range(h):
    f, line = rows[y * (stride + 1)], bytearray(rows[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = line[i - 3] if i >= 3 else 0; b = prev[i]; c = prev[i - 3] if i >= 3 else 0
        if f == 1: line[i] = (line[i] + a) & 255
        elif f == 2: line[i] = (line[i] + b) & 255
        elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    out += line; prev = line
want = bytearray()
for i in range(16, len(raw), 4): want += raw[i:i + 3]
assert out == want
EOF
cp "$T_TMP/shot.png" "$ctl/screencap.png"
S screenshot -o "$T_TMP/dev.png" --png-on-device
expect_rc 0
cmp -s "$T_TMP/dev.png" "$ctl/screencap.png" || t_fail "device PNG changed on the way"
S screenshot
expect_rc 0
cmp -s "$OUT" "$T_TMP/shot.png" || t_fail "screenshot to stdout differs"
expect_calls "screencap -p
screencap"

t_check "apps: launch, intent, stop, top, install, uninstall"
echo com.chat > "$ctl/packages"
S launch com.chat
expect_rc 0
S launch com.none
expect_rc 1
expect_err "no launcher activity"
S intent android.intent.action.VIEW --data 'https://x.test/?a=1&b=2' --component com.chat/.Main \
    --es text 'hi there' --ei n -3 --ez on false
expect_rc 0
S intent android.intent.action.VIEW --ei n x
expect_rc 1
S stop com.chat
expect_rc 0
expect_calls "monkey -p com.chat -c android.intent.category.LAUNCHER 1
monkey -p com.none -c android.intent.category.LAUNCHER 1
am start -a android.intent.action.VIEW -d 'https://x.test/?a=1&b=2' -n com.chat/.Main --es text 'hi there' --ei n -3 --ez on false
am force-stop com.chat"
printf '  mResumedActivity: ActivityRecord{1 u0 com.chat/.Main t4}\n' > "$ctl/dumpsys-activity-activities"
printf '  mCurrentFocus=Window{2 u0 com.chat/com.chat.Main}\n' > "$ctl/dumpsys-window"
S top
expect_rc 0
[ "$(cat "$OUT")" = "activity: com.chat/.Main
package: com.chat" ] || t_fail "top printed: $(cat "$OUT")"
head -c 5000 /dev/urandom > "$T_TMP/app.apk"
rm -f "$ctl/calls"
S install "$T_TMP/app.apk"
expect_rc 0
expect_calls "cmd package install -S 5000"
cmp -s "$T_TMP/app.apk" "$ctl/cmd-installed.apk" || t_fail "installed bytes differ"
S uninstall com.chat
expect_rc 0
S uninstall com.chat
expect_rc 1
expect_err "DELETE_FAILED_INTERNAL_ERROR"

t_check "getprop"
S getprop ro.product.brand
expect_rc 0
[ "$(cat "$OUT")" = adbc ] || t_fail "getprop printed: $(cat "$OUT")"
S getprop
grep -qxF '[ro.product.brand]: [adbc]' "$OUT" || t_fail "getprop listing: $(head -n 3 "$OUT")"

t_check "logcat passes adb's arguments to the device's logcat, quoted as adb quotes them"
printf 'a\nb\nc\n' > "$ctl/logcat.txt"
rm -f "$ctl/calls"
S logcat -t 2
expect_rc 0
[ "$(cat "$OUT")" = "b
c" ] || t_fail "logcat -t 2: $(cat "$OUT")"
S logcat -d -v brief '*:E' 'Tag with space:I'
expect_rc 0
[ "$(cat "$OUT")" = "a
b
c" ] || t_fail "logcat -d: $(cat "$OUT")"
ANDROID_LOG_TAGS='ActivityManager:I *:S' S logcat -d
expect_rc 0
expect_calls "logcat -t 2
logcat -d -v brief '*:E' 'Tag with space:I'
ANDROID_LOG_TAGS=ActivityManager:I *:S
logcat -d"

t_check "logcat --for SECONDS follows the log for a time and exits 0; --json needs an end"
start=$SECONDS
S logcat --for 1
expect_rc 0
[ $((SECONDS - start)) -lt 120 ] || t_fail "logcat --for 1 took $((SECONDS - start)) s (a hang?)"
[ "$(cat "$OUT")" = "a
b
c" ] || t_fail "logcat --for 1: $(cat "$OUT")"
S logcat --json -t 2
expect_rc 0
[ "$(cat "$OUT")" = '{"lines":["b","c"]}' ] || t_fail "logcat --json -t 2: $(cat "$OUT")"
S logcat --json
expect_rc 2
expect_err "--json reads the whole log"
S logcat --for
expect_rc 2
expect_err "--for takes seconds"

t_check "logcat -c clears the log; an option after -- goes to logcat as it is"
S logcat -c
expect_rc 0
[ ! -s "$ctl/logcat.txt" ] || t_fail "logcat -c left: $(cat "$ctl/logcat.txt")"
rm -f "$ctl/calls"
S logcat -d -- --json
expect_rc 0
expect_calls "logcat -d --json"

echo "ok: $T_CHECKS checks"
