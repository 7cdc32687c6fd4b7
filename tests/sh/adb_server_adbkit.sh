#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# adbc-serve's adb server with @devicefarmer/adbkit as its client
# (tests/adbkit/test.mjs): version, listDevices, trackDevices (with a
# disconnect and a connect), getState/getSerialNo/getFeatures, shell, push,
# pull, forward. The pinned adbkit is installed with `npm ci` into
# tests/adbkit/node_modules when it is not there, as mcp_sdk.sh installs the
# MCP SDK. adbkit never starts a server; the requests must show in
# adbc-serve's request log all the same.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
SERVE=${ADBC_SERVE:-$ADBC_BUILD_DIR/tools/adbc-serve}
t_need_built SERVE "adbc-serve needs cJSON and libmicrohttpd"
command -v node > /dev/null || { echo "SKIP: node not found (Debian: apt install nodejs npm)"; exit 77; }
command -v npm > /dev/null || { echo "SKIP: npm not found (Debian: apt install npm)"; exit 77; }
t_init
DIR=$ADBC_SOURCE_DIR/tests/adbkit
export HOME=$T_TMP/home
mkdir -p "$HOME"

t_check "the pinned adbkit is installed (npm ci, once)"
if [ ! -f "$DIR/node_modules/@devicefarmer/adbkit/package.json" ]; then
    # Two builds testing at once must not run npm ci over each other.
    (
        flock -w 600 9 || exit 1
        [ -f "$DIR/node_modules/@devicefarmer/adbkit/package.json" ] ||
            (cd "$DIR" && timeout 600 npm ci --no-audit --no-fund --loglevel=error)
    ) 9> "$DIR/.npm-ci.lock" >&2 || t_fail "npm ci in $DIR failed"
fi
want=$(sed -n 's/.*"@devicefarmer\/adbkit": "\([^"]*\)".*/\1/p' "$DIR/package.json")
have=$(node -p "require(process.argv[1]).version" "$DIR/node_modules/@devicefarmer/adbkit/package.json")
[ -n "$want" ] && [ "$want" = "$have" ] || t_fail "adbkit $have installed, package.json pins $want: rm -rf $DIR/node_modules"

td_start dev --no-auth
DEV=127.0.0.1:${TD_PORT[dev]}
mkdir -p "$T_TMP/www"
printf 'one\n' > "$T_TMP/www/f1"
python3 "$ADBC_SOURCE_DIR/fixtures/forward/http_server.py" "$T_TMP/www" tcp:0 \
    > "$T_TMP/http.out" 2> "$T_TMP/http.err" &
T_BG_PIDS+=("$!")
for ((i = 0; i < 200; i++)); do [ -s "$T_TMP/http.out" ] && break; sleep 0.05; done
HP=$(sed -n 's/^listening on //p' "$T_TMP/http.out")
[ -n "$HP" ] || t_fail "http server did not start: $(cat "$T_TMP/http.err")"

LOG=$T_TMP/serve.log
P=$(_t_free_port) || t_fail "no free port"
adbsrv_start "$LOG" "$P" --until "connected to $DEV" -t "$DEV"
SPID=$ASRV_PID

t_check "adbkit's test against adbc's server"
T_TMP=$T_TMP ADB_PORT=$P SERIAL=$DEV SANDBOX=${TD_SANDBOX[dev]} HTTP_PORT=$HP \
    timeout 300 node "$DIR/test.mjs" || t_fail "the adbkit test failed (output above); server log: $(tail -20 "$LOG")"

t_check "adbkit's requests reached adbc's server"
for req in host:version host:devices host:track-devices 'host:disconnect:' 'host:connect:' \
    "host:transport:$DEV" 'shell:echo hello' 'sync:' "host-serial:$DEV:forward:" \
    "host-serial:$DEV:list-forward\|host:list-forward"; do
    grep -q "adb server: $req" "$LOG" || t_fail "no $req in the server's log"
done
kill -0 "$SPID" || t_fail "adbc-serve died"
grep -qE '(ERROR|WARNING): [A-Za-z]*Sanitizer|runtime error:' "$LOG" &&
    t_fail "adbc-serve: $(grep -m3 -E 'Sanitizer|runtime error' "$LOG")"
echo "ok: $T_CHECKS checks"
