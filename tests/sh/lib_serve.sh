#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Shared by the adbc-serve tests (serve_http.sh, openapi.sh), sourced after
# lib.sh's t_init: a private HOME and no token from the environment, screens
# and frames for the test device's stand-ins, and starting adbc-serve.
SERVE=${ADBC_SERVE:-$ADBC_BUILD_DIR/tools/adbc-serve}
t_need_built SERVE "adbc-serve needs cJSON and libmicrohttpd"
[ -x "$SERVE" ] || t_fail "adbc-serve not built: $SERVE"
command -v curl > /dev/null || t_fail "curl is needed (scripts/packages.txt)"
export HOME=$T_TMP/home XDG_CACHE_HOME=$T_TMP/cache XDG_CONFIG_HOME=$T_TMP/config
mkdir -p "$HOME"
unset ADBC_SERVE_TOKEN

P='package="com.chat" enabled="true"'
# screen CTL TEXTS...: a screen with one clickable button per text (the
# first at y 2000, the next 300 px above, ...), a list and a field.
screen()
{
    local ctl=$1 y=2000 body=
    shift
    for t in "$@"; do
        body+="<node class=\"android.widget.Button\" text=\"$t\" resource-id=\"com.chat:id/b$y\" clickable=\"true\" $P bounds=\"[860,$y][1040,$((y + 200))]\"/>"
        y=$((y - 300))
    done
    printf '%s' "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\"><node class=\"android.widget.FrameLayout\" $P bounds=\"[0,0][1080,2400]\"><node class=\"android.widget.ListView\" scrollable=\"true\" $P bounds=\"[0,200][1080,900]\"/><node class=\"android.widget.EditText\" text=\"draft\" clickable=\"true\" $P bounds=\"[40,2000][840,2200]\"/>$body</node></hierarchy>" > "$ctl/screen.xml"
    echo "dump=screen.xml" > "$ctl/uiautomator.conf"
}

# setup_dev NAME: device NAME's resumed activity and focused window are
# com.NAME/.Main.
setup_dev()
{
    local n=$1 ctl=${TD_SANDBOX[$1]}/data/local/tmp/.adbc-test
    mkdir -p "$ctl"
    echo "  topResumedActivity=ActivityRecord{1a2b u0 com.$n/.Main t7}" > "$ctl/dumpsys-activity-activities"
    echo "  mCurrentFocus=Window{3c4d u0 com.$n/com.$n.Main}" > "$ctl/dumpsys-window"
}

# grey_frame FILE: a grey 1080x2400 RGBX raw frame for screencap.
grey_frame()
{
    python3 "$ADBC_SOURCE_DIR/tests/sh/marks_check.py" grey "$1" || t_fail "could not write a raw frame"
}

# serve_start ARGS...: start adbc-serve on a free port with the token file
# $TOK and ARGS; SPID, URL once it listens (log in $T_TMP/serve.log).
TOK=$T_TMP/token
serve_start()
{
    # A ready file left by an earlier server would name its (closed) port.
    rm -f "$T_TMP/port"
    "$SERVE" "$@" --listen 127.0.0.1:0 --token-file "$TOK" --ready-file "$T_TMP/port" \
        2> "$T_TMP/serve.log" &
    SPID=$!
    T_BG_PIDS+=("$SPID")
    local i
    for ((i = 0; i < 200; i++)); do
        [ -s "$T_TMP/port" ] && break
        kill -0 "$SPID" 2> /dev/null || t_fail "adbc-serve exited: $(cat "$T_TMP/serve.log")"
        sleep 0.05
    done
    [ -s "$T_TMP/port" ] || t_fail "adbc-serve did not start: $(cat "$T_TMP/serve.log")"
    URL=http://127.0.0.1:$(cat "$T_TMP/port")
}

# raw CHECK: after serve_start, the python3 snippet CHECK over raw loopback
# sockets, with ask(bytes) -> the answer's bytes (the connection read to its
# end), status(answer) -> its HTTP status (0: none), PORT and TOK (bytes).
raw()
{
    python3 -c '
import socket, sys, time
PORT, TOK = int(sys.argv[1]), sys.argv[2].encode()
def ask(data):
    s = socket.create_connection(("127.0.0.1", PORT), timeout=30)
    s.sendall(data)
    d = b""
    while True:
        c = s.recv(65536)
        if not c:
            return d
        d += c
def status(d):
    return int(d.split(b" ", 2)[1]) if d.startswith(b"HTTP/1.1 ") else 0
'"$1" "$(cat "$T_TMP/port")" "$(cat "$TOK")"
}

# After serve_start: requests with the token and checks of their answers.
OUT=$T_TMP/out

# H [CURL ARGS...] PATH: a request with the token; body in $OUT, status in $code.
H()
{
    local path=${*: -1}
    code=$(curl -s -m 30 -o "$OUT" -w '%{http_code}' -H "Authorization: Bearer $(cat "$TOK")" \
        "${@:1:$#-1}" "$URL$path")
}
J() { jq -r "$1" "$OUT"; }
expect()
{
    [ "$code" = "$1" ] || t_fail "status $code, expected $1: $(head -c 600 "$OUT")"
    if [ $# -gt 1 ]; then
        [ "$(J .error.code)" = "$2" ] || t_fail "error code $(J .error.code), expected $2: $(head -c 600 "$OUT")"
        [ "$(J .ok)" = false ] && [ -n "$(J .error.message)" ] || t_fail "not an error envelope: $(head -c 300 "$OUT")"
    elif [ "$1" = 200 ] && [ "$(J .ok)" != true ]; then
        t_fail "not an ok envelope: $(head -c 300 "$OUT")"
    fi
}
calls() { grep -v -e '^uiautomator' -e '^dumpsys' "$1/calls" 2> /dev/null; rm -f "$1/calls"; }
