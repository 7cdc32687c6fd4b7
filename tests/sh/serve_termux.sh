#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The Termux shape: the phone drives itself through wireless debugging on
# localhost. A test device in TLS mode with a pairing port on 127.0.0.1
# stands for the phone's adbd; adbc-snap pairs with it, adbc-serve bound to
# 127.0.0.1 holds the TLS connection, and curl (the agent) observes and acts
# through the API; adbc-snap works through a session over the same link.
# Listening beyond loopback without an explicit token is refused.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
t_init

SERVE=$ADBC_BUILD_DIR/tools/adbc-serve
SNAP=$ADBC_BUILD_DIR/tools/adbc-snap
t_need_built SERVE "adbc-serve needs cJSON and libmicrohttpd"
[ -x "$SERVE" ] || t_fail "adbc-serve not built: $SERVE"
export HOME=$T_TMP/home XDG_CONFIG_HOME=$T_TMP/config XDG_RUNTIME_DIR=$T_TMP/run
mkdir -p "$HOME" "$XDG_RUNTIME_DIR"
chmod 700 "$XDG_RUNTIME_DIR"
unset ADBC_SERVE_TOKEN
CODE=314159
td_start phone --tls --pair-port 0 --pair-code "$CODE" --serial TERMUX01
DEV=127.0.0.1:${TD_PORT[phone]}
line=$(grep -m1 '^pairing on ' "${TD_DIR[phone]}/stdout")
PAIR=127.0.0.1:${line##*:}
ctl=${TD_SANDBOX[phone]}/data/local/tmp/.adbc-test
mkdir -p "$ctl"
printf '%s' "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\"><node class=\"android.widget.FrameLayout\" package=\"com.termux\" enabled=\"true\" bounds=\"[0,0][1080,2400]\"><node class=\"android.widget.Button\" text=\"Run\" clickable=\"true\" package=\"com.termux\" enabled=\"true\" bounds=\"[100,100][500,300]\"/></node></hierarchy>" > "$ctl/screen.xml"
echo "dump=screen.xml" > "$ctl/uiautomator.conf"
t_at_exit '"$SNAP" -q -t "$DEV" session stop > /dev/null 2>&1'

t_check "pair with the phone's wireless debugging on localhost"
timeout 60 "$SNAP" --timeout 20 pair "$PAIR" "$CODE" > /dev/null 2> "$T_TMP/e" || t_fail "pair: $(cat "$T_TMP/e")"

t_check "adbc-serve on 127.0.0.1 over the TLS link: observe and tap with curl"
"$SERVE" -t "$DEV" --listen 127.0.0.1:0 --ready-file "$T_TMP/port" --settle 0 2> "$T_TMP/serve.log" &
T_BG_PIDS+=($!)
for ((i = 0; i < 100; i++)); do [ -s "$T_TMP/port" ] && break; sleep 0.05; done
[ -s "$T_TMP/port" ] || t_fail "adbc-serve did not start: $(cat "$T_TMP/serve.log")"
URL=http://127.0.0.1:$(cat "$T_TMP/port")
TOK=$(cat "$XDG_CONFIG_HOME/adbc/serve.token") || t_fail "no default token file"
[ "$(stat -c %a "$XDG_CONFIG_HOME/adbc/serve.token")" = 600 ] || t_fail "token file mode"
code=$(curl -s -m 30 -o "$T_TMP/o" -w '%{http_code}' -H "Authorization: Bearer $TOK" "$URL/v1/observe")
[ "$code" = 200 ] && jq -r .result.snapshot "$T_TMP/o" | grep -q '"Run"' || t_fail "observe: $code $(cat "$T_TMP/o")"
rm -f "$ctl/calls"
code=$(curl -s -m 30 -o "$T_TMP/o" -w '%{http_code}' -H "Authorization: Bearer $TOK" -d '{"action":"tap","ref":1}' "$URL/v1/act")
[ "$code" = 200 ] && grep -qx 'cmd input tap 300 200' "$ctl/calls" || t_fail "tap: $code $(cat "$T_TMP/o") calls: $(cat "$ctl/calls" 2> /dev/null)"

t_check "adbc-snap through a session over the same TLS link"
timeout 60 "$SNAP" -t "$DEV" session start 2> "$T_TMP/e" || t_fail "session start: $(cat "$T_TMP/e")"
out=$(timeout 60 "$SNAP" -t "$DEV" shell 'echo via; exit 4')
[ $? = 4 ] && [ "$out" = via ] || t_fail "shell through the session: '$out'"

t_check "beyond loopback only with an explicit token"
timeout 10 "$SERVE" -t "$DEV" --listen 0.0.0.0:0 > /dev/null 2> "$T_TMP/e"
[ $? = 1 ] && grep -q "give the token explicitly" "$T_TMP/e" || t_fail "0.0.0.0 without a token: $(cat "$T_TMP/e")"

echo "ok: $T_CHECKS checks"
