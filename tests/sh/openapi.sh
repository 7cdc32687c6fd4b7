#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# docs/openapi.yaml against adbc-serve: the routes and error codes of
# tools/adbc-serve are those of the document (both ways), and every route,
# called with curl against test devices (one of them gone, one held busy),
# answers a status the document lists with a body its schema accepts
# (tests/sh/openapi_check.py).
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
t_init

SERVE=${ADBC_SERVE:-$ADBC_BUILD_DIR/tools/adbc-serve}
[ -x "$SERVE" ] || { echo "skip: adbc-serve not built (libmicrohttpd-dev missing)"; exit 0; }
command -v curl > /dev/null || t_fail "curl is needed (scripts/packages.txt)"
python3 -c 'import yaml' 2> /dev/null || t_fail "python3-yaml is needed (scripts/packages.txt)"
export HOME=$T_TMP/home XDG_CACHE_HOME=$T_TMP/cache XDG_CONFIG_HOME=$T_TMP/config
mkdir -p "$HOME"
unset ADBC_SERVE_TOKEN

P='package="com.chat" enabled="true"'
# screen CTL TEXTS...: one clickable button per text, a list and a field.
screen()
{
    local ctl=$1 y=2000 body=
    shift
    mkdir -p "$ctl"
    for t in "$@"; do
        body+="<node class=\"android.widget.Button\" text=\"$t\" resource-id=\"com.chat:id/b$y\" clickable=\"true\" $P bounds=\"[860,$y][1040,$((y + 200))]\"/>"
        y=$((y - 300))
    done
    printf '%s' "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\"><node class=\"android.widget.FrameLayout\" $P bounds=\"[0,0][1080,2400]\"><node class=\"android.widget.ListView\" scrollable=\"true\" $P bounds=\"[0,200][1080,900]\"/><node class=\"android.widget.EditText\" text=\"draft\" clickable=\"true\" $P bounds=\"[40,2000][840,2200]\"/>$body</node></hierarchy>" > "$ctl/screen.xml"
    echo "dump=screen.xml" > "$ctl/uiautomator.conf"
    echo "  topResumedActivity=ActivityRecord{1a2b u0 com.chat/.Main t7}" > "$ctl/dumpsys-activity-activities"
    echo "  mCurrentFocus=Window{3c4d u0 com.chat/com.chat.Main}" > "$ctl/dumpsys-window"
    echo com.listed > "$ctl/packages"
}
td_start a --no-auth
td_start b --no-auth
td_start c --no-auth
screen "${TD_SANDBOX[a]}/data/local/tmp/.adbc-test" Send
screen "${TD_SANDBOX[b]}/data/local/tmp/.adbc-test" Reply Reply
# A grey 1080x2400 RGBX frame for the screenshots.
python3 - "${TD_SANDBOX[a]}/data/local/tmp/.adbc-test/screencap.raw" << 'PY' || t_fail "could not write a raw frame"
import struct, sys
w, h = 1080, 2400
open(sys.argv[1], 'wb').write(struct.pack('<III', w, h, 2) + bytes([90, 90, 90, 255]) * (w * h))
PY
A=127.0.0.1:${TD_PORT[a]}
B=127.0.0.1:${TD_PORT[b]}
C=127.0.0.1:${TD_PORT[c]}
td_stop c # a device that is gone: its port is closed

TOK=$T_TMP/token
"$SERVE" -t "$A" -t "$B" -t "$C" --listen 127.0.0.1:0 --token-file "$TOK" --ready-file "$T_TMP/port" \
    --settle 0 --body-max 4096 --connect-timeout 3 2> "$T_TMP/serve.log" &
SPID=$!
T_BG_PIDS+=("$SPID")
for ((i = 0; i < 200; i++)); do
    [ -s "$T_TMP/port" ] && break
    kill -0 "$SPID" 2> /dev/null || t_fail "adbc-serve exited: $(cat "$T_TMP/serve.log")"
    sleep 0.05
done
[ -s "$T_TMP/port" ] || t_fail "adbc-serve did not start: $(cat "$T_TMP/serve.log")"

t_check "docs/openapi.yaml: the routes and codes of the source, and every answer matches it"
python3 "$(dirname "${BASH_SOURCE[0]}")/openapi_check.py" "$ADBC_SOURCE_DIR" \
    "http://127.0.0.1:$(cat "$T_TMP/port")" "$TOK" "$A" "$B" "$C" ||
    t_fail "docs/openapi.yaml and adbc-serve disagree (above); adbc-serve's log: $(tail -n 20 "$T_TMP/serve.log")"
