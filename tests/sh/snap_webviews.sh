#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# adbc-snap webviews against stand-in DevTools servers on abstract sockets
# (fixtures/forward/http_server.py --devtools): one named
# webview_devtools_remote_<pid> whose process calls itself
# com.example.webapp (argv[0], as an Android app's cmdline), one
# chrome_devtools_remote, and one *_devtools_remote socket that answers 404.
# The device runs without bubblewrap here: each sandboxed command would get
# its own PID namespace, where /proc/<pid> of the server does not exist.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
command -v python3 > /dev/null || { echo "SKIP: python3 is not installed"; exit 77; }
command -v curl > /dev/null || { echo "SKIP: curl is not installed"; exit 77; }
t_init
SNAP=${ADBC_SNAP:-$ADBC_BUILD_DIR/tools/adbc-snap}
[ -x "$SNAP" ] || t_fail "adbc-snap not built: $SNAP"
SRV=$ADBC_SOURCE_DIR/fixtures/forward/http_server.py
export HOME=$T_TMP/home
mkdir -p "$HOME" "$T_TMP/www"

td_start dev --no-auth --no-sandbox
ADDR=127.0.0.1:${TD_PORT[dev]}
TAG=$$_$RANDOM

start() # NAME CMD...: background, wait for "listening on"
{
    local name=$1 i
    shift
    "$@" > "$T_TMP/$name.out" 2> "$T_TMP/$name.err" &
    T_BG_PIDS+=("$!")
    for ((i = 0; i < 100; i++)); do
        grep -q '^listening on' "$T_TMP/$name.out" 2> /dev/null && return 0
        sleep 0.05
    done
    t_fail "$name did not start: $(cat "$T_TMP/$name.err")"
}
# The interpreter itself (not a wrapper that re-executes it and loses argv[0]).
PY=$(python3 -c 'import sys; print(sys.executable)')
start wv bash -c "exec -a com.example.webapp '$PY' '$SRV' '$T_TMP/www' \
    localabstract:webview_devtools_remote_\$\$ --devtools"
WVPID=${T_BG_PIDS[-1]}
WV=webview_devtools_remote_$WVPID
# Unique names for the other two, so other tests' sockets cannot collide.
start ch python3 "$SRV" "$T_TMP/www" "localabstract:chrome_devtools_remote_t$TAG" --devtools
start bad python3 "$SRV" "$T_TMP/www" "localabstract:broken_devtools_remote_t$TAG"

t_check "text: the webview socket with its pid, package and pages"
out=$("$SNAP" -t "$ADDR" webviews) || t_fail "webviews failed: $out"
echo "$out" | grep -q "^@$WV  pid $WVPID  com.example.webapp\$" || t_fail "no socket line: $out"
echo "$out" | grep -q "^  page     Stand-in page  https://example.test/\$" || t_fail "no page: $out"
echo "$out" | grep -q "^  page     Second \"tab\"  about:blank\$" || t_fail "no second page: $out"

t_check "text: a socket answering 404 is listed with the reason, the others still read"
echo "$out" | grep -A1 "^@broken_devtools_remote_t$TAG" | grep -q "pages unavailable: .*HTTP 404" ||
    t_fail "no 404 line: $out"
echo "$out" | grep -A1 "^@chrome_devtools_remote_t$TAG" | grep -q "Stand-in page" ||
    t_fail "chrome socket pages missing: $out"

t_check "--json: sockets, pids, packages and pages as JSON"
"$SNAP" -t "$ADDR" webviews --json > "$T_TMP/wv.json" || t_fail "--json failed"
python3 - "$T_TMP/wv.json" "$WV" "$WVPID" << 'PY' || t_fail "JSON check failed: $(cat "$T_TMP/wv.json")"
import json, sys
doc = json.load(open(sys.argv[1]))
s = [x for x in doc["sockets"] if x["socket"] == sys.argv[2]]
assert len(s) == 1, s
s = s[0]
assert s["pid"] == int(sys.argv[3]) and s["package"] == "com.example.webapp", s
assert [p["id"] for p in s["pages"]] == ["PAGE-1", "PAGE-2"], s
assert s["pages"][1]["title"] == 'Second "tab"', s
assert s["pages"][0]["webSocketDebuggerUrl"] == "ws:///devtools/page/PAGE-1", s
assert "error" not in s
PY

t_check "--forward prints a forward per socket, and that forward serves /json/list"
line=$("$SNAP" -t "$ADDR" webviews --forward | grep "localabstract:$WV ")
case $line in "adbc-snap forward tcp:0 localabstract:$WV   # com.example.webapp pid $WVPID") ;;
    *) t_fail "forward line: '$line'" ;; esac
"$SNAP" -t "$ADDR" forward tcp:0 "localabstract:$WV" > "$T_TMP/fw.out" 2> "$T_TMP/fw.err" &
FW=$!
T_BG_PIDS+=("$FW")
for ((i = 0; i < 100; i++)); do [ -s "$T_TMP/fw.out" ] && break; sleep 0.05; done
P=$(awk '{print $1}' "$T_TMP/fw.out")
out=$(curl -sS --max-time 10 "http://127.0.0.1:${P#tcp:}/json/list") || t_fail "curl failed"
case $out in *PAGE-2*) ;; *) t_fail "curl got: $out" ;; esac
echo "PASS: $T_CHECKS checks"
