#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# adbc-snap tap --id/--text/--desc: the five selector tiers of tools/ops
# against the test device's recorded screen. Each check compares the exact
# `cmd input tap` the device received (or that none was sent) and the exit
# status: ambiguity is refused with the candidates and status 3.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
t_init

SNAP=${ADBC_SNAP:-$ADBC_BUILD_DIR/tools/adbc-snap}
[ -x "$SNAP" ] || t_fail "adbc-snap not built: $SNAP"
td_start dev --no-auth
DEV=127.0.0.1:${TD_PORT[dev]}
ctl=${TD_SANDBOX[dev]}/data/local/tmp/.adbc-test
export HOME=$T_TMP/home XDG_CACHE_HOME=$T_TMP/cache
mkdir -p "$HOME"
OUT=$T_TMP/out ERR=$T_TMP/err

S()
{
    rm -f "$ctl/calls"
    timeout 60 "$SNAP" -t "$DEV" --timeout 20 "$@" > "$OUT" 2> "$ERR"
    rc=$?
}
expect()
{
    local want_rc=$1 want_calls=$2 got
    got=$(grep -v '^uiautomator' "$ctl/calls" 2> /dev/null)
    [ "$rc" -eq "$want_rc" ] || t_fail "exit status $rc, expected $want_rc; stderr: $(cat "$ERR")"
    [ "$got" = "$want_calls" ] || t_fail "calls were '$got', expected '$want_calls'"
}

# A settings-like screen: a clickable row whose label is a child, a button
# with an id, an icon known only by its description, two buttons with the
# same text, and a field showing its hint.
P='package="com.chat" enabled="true"'
cat > "$ctl/screen.xml" << XML
<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation="0"><node class="android.widget.FrameLayout" $P bounds="[0,0][1080,2400]"><node class="android.widget.ImageButton" content-desc="Search" clickable="true" $P bounds="[900,100][1040,200]"/><node class="android.widget.LinearLayout" clickable="true" $P bounds="[0,300][1080,450]"><node class="android.widget.TextView" text="Wi-Fi" $P bounds="[40,320][400,430]"/></node><node class="android.widget.Button" text="OK" clickable="true" $P bounds="[0,600][500,700]"/><node class="android.widget.Button" text="OK" clickable="true" $P bounds="[540,600][1080,700]"/><node class="android.widget.EditText" text="Email address" clickable="true" $P bounds="[40,800][1040,900]"/><node class="android.widget.Button" text="Send" resource-id="com.chat:id/send" clickable="true" $P bounds="[860,2000][1040,2200]"/></node></hierarchy>
XML
echo "dump=screen.xml" > "$ctl/uiautomator.conf"

t_check "tier 1: --id by the name after the slash, and whole"
S tap --id send
expect 0 "cmd input tap 950 2100"
grep -qF "by resource-id" "$ERR" || t_fail "stderr: $(cat "$ERR")"
S tap --id com.chat:id/send
expect 0 "cmd input tap 950 2100"

t_check "tier 2: a control's own text"
S tap --text Send
expect 0 "cmd input tap 950 2100"

t_check "tier 3: a label inside a clickable row taps the row"
S tap --text Wi-Fi
expect 0 "cmd input tap 540 375"
grep -qF "clickable parent" "$ERR" || t_fail "stderr: $(cat "$ERR")"

t_check "tier 4: content-desc, by --desc and by --text"
S tap --desc Search
expect 0 "cmd input tap 970 150"
S tap --text Search
expect 0 "cmd input tap 970 150"

t_check "tier 5: an editable field by the text it shows, any case"
S tap --text email
expect 0 "cmd input tap 540 850"

t_check "ambiguity is refused with the candidates, status 3, nothing sent"
S tap --text OK
expect 3 ""
grep -qF '[ref=3] Button "OK"' "$ERR" && grep -qF '[ref=4] Button "OK"' "$ERR" ||
    t_fail "candidates not listed: $(cat "$ERR")"

t_check "no match: status 1, nothing sent, the message says so"
S tap --text Nowhere
expect 1 ""
grep -qF "matches the selector" "$ERR" || t_fail "stderr: $(cat "$ERR")"

t_check "the picked snapshot's refs are saved: a later tap REF uses them"
S tap --text Send
S tap 6
expect 0 "cmd input tap 950 2100"

t_check "usage: an empty value, a ref with a selector"
S tap --text ""
expect 2 ""
S tap 3 --text OK
expect 2 ""

echo "ok: $T_CHECKS checks"
