#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The DevTools session a connection keeps per page (docs/webview.md, "A
# warm session"), through adbc-serve's held device (and adbc-snap's
# session, whose server reads the pages): one session for many
# snapshots, counted on the page's side (fixtures/webview/devtools_relay.py
# logs each connection's first request); what changes on the page is seen
# (a DOM change, and a checkbox's state set by script, which sends no DOM
# event); the screen read warm is the one a cold read gives; a new page, or
# the app's socket gone and back under another name, gets a new session;
# a page that changes all the time stops being followed (nothing piles up
# between snapshots); a page that hangs on a warm session costs at most its
# budget. The set-up
# is tests/sh/snap_web.sh's: Debian's chromium, headless, its DevTools port
# offered to the test device as a WebView's abstract socket.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
command -v python3 > /dev/null || { echo "SKIP: python3 is not installed"; exit 77; }
command -v curl > /dev/null || { echo "SKIP: curl is not installed"; exit 77; }
CHROMIUM=$(command -v chromium || command -v chromium-browser) ||
    { echo "SKIP: chromium is not installed (scripts/packages.txt)"; exit 77; }
t_init
SNAP=$ADBC_BUILD_DIR/tools/adbc-snap
SERVE=$ADBC_BUILD_DIR/tools/adbc-serve
[ -x "$SNAP" ] || t_fail "adbc-snap not built: $SNAP"
t_need_built WSLAY "WebSocket for the DevTools protocol: ADBC_WITH_WSLAY"
t_built SERVE || { echo "SKIP: adbc-serve is not built"; exit 77; }
FIX=$ADBC_SOURCE_DIR/fixtures/webview
export HOME=$T_TMP/home XDG_CACHE_HOME=$T_TMP/cache
mkdir -p "$HOME"
OUT=$T_TMP/out

chromium_start --window-size=540,800 "file://$FIX/form.html"
PORT=$CDP_PORT
export FIX
# cdp EXPR: the page's value of a JavaScript expression, asked of the
# browser directly (not through adbc).
cdp()
{
    python3 -c '
import json, os, sys, urllib.request
sys.path.insert(0, os.environ["FIX"])
import input_hook
port, expr = sys.argv[1], sys.argv[2]
pages = json.load(urllib.request.urlopen("http://127.0.0.1:%s/json/list" % port, timeout=10))
s = input_hook.ws_connect(port, [p for p in pages if p["type"] == "page"][0]["id"])
r = input_hook.ws_call(s, {"id": 1, "method": "Runtime.evaluate",
                           "params": {"expression": expr, "returnByValue": True}})
print(json.dumps(r["result"]["result"].get("value")))
' "$PORT" "$1"
}
for ((i = 0; i < 100; i++)); do
    [ "$(cdp 'document.readyState')" = '"complete"' ] && break
    sleep 0.1
done

td_start dev --no-auth --no-sandbox
DEV=127.0.0.1:${TD_PORT[dev]}
ctl=${TD_SANDBOX[dev]}/data/local/tmp/.adbc-test
PY=$(python3 -c 'import sys; print(sys.executable)')
PKG=com.example.webwarm.t$$

# relay: the app's DevTools socket (a new name each time, as a restarted
# app's), its log in $RLOG.
NRELAY=0
relay()
{
    RLOG=$T_TMP/relay.$((++NRELAY)).out
    bash -c "exec -a $PKG '$PY' '$FIX/devtools_relay.py' webview_devtools_remote_\$\$ $PORT" \
        > "$RLOG" 2> "$RLOG.err" &
    T_BG_PIDS+=("$!")
    RELAY=$!
    for ((i = 0; i < 200; i++)); do
        grep -q '^listening on' "$RLOG" 2> /dev/null && return 0
        sleep 0.05
    done
    t_fail "relay did not start: $(cat "$RLOG.err")"
}
# sessions: the DevTools sessions the current relay has seen opened.
sessions() { grep -c '^request [0-9]*: GET /devtools/page/' "$RLOG"; }
relay
printf '%s' "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\"><node class=\"android.widget.FrameLayout\" package=\"$PKG\" bounds=\"[0,0][1080,2400]\"><node class=\"android.widget.TextView\" text=\"Example\" package=\"$PKG\" bounds=\"[0,100][1080,250]\"/><node class=\"android.webkit.WebView\" package=\"$PKG\" enabled=\"true\" bounds=\"[0,300][1080,1900]\"/></node></hierarchy>" > "$ctl/screen.xml"
echo "dump=screen.xml" > "$ctl/uiautomator.conf"

"$SERVE" -t "$DEV" --listen 127.0.0.1:0 --token-file "$T_TMP/token" \
    --ready-file "$T_TMP/port" --settle 0 2> "$T_TMP/serve.log" &
T_BG_PIDS+=("$!")
for ((i = 0; i < 200; i++)); do
    [ -s "$T_TMP/port" ] && break
    sleep 0.05
done
[ -s "$T_TMP/port" ] || t_fail "adbc-serve did not start: $(cat "$T_TMP/serve.log")"
# snap [BUDGET]: the screen's text with the page read, through adbc-serve
# (its held device keeps the page's session), into $OUT. The budget is
# generous: a busy machine must not turn a read into a note.
snap()
{
    curl -sS --max-time 60 -H "Authorization: Bearer $(cat "$T_TMP/token")" \
        "http://127.0.0.1:$(cat "$T_TMP/port")/v1/snapshot?web=1&web_budget=${1:-20000}" > "$OUT.json" ||
        t_fail "snapshot?web=1: $(cat "$OUT.json")"
    python3 -c 'import json, sys; sys.stdout.write(json.load(open(sys.argv[1]))["result"]["snapshot"])' \
        "$OUT.json" > "$OUT" || t_fail "snapshot?web=1: $(head -c 600 "$OUT.json")"
}

t_check "four snapshots of one page: one DevTools session, opened once and kept"
for k in 1 2 3 4; do
    snap
    grep -q 'Button \[ref=[0-9]*\] "Go"' "$OUT" || t_fail "snapshot $k did not read the page: $(cat "$OUT")"
done
[ "$(sessions)" -eq 1 ] || t_fail "$(sessions) DevTools sessions for four snapshots: $(cat "$RLOG")"
cp "$OUT" "$T_TMP/warm.txt"

t_check "the screen read on the kept session is the one a snapshot of its own reads"
"$SNAP" -t "$DEV" snapshot --web --web-budget 20000 > "$T_TMP/cold.txt" || t_fail "adbc-snap snapshot --web failed"
diff "$T_TMP/cold.txt" "$T_TMP/warm.txt" > "$T_TMP/diff" || t_fail "warm and cold differ: $(cat "$T_TMP/diff")"
# That snapshot had a connection of its own, so a session of its own.
[ "$(sessions)" -eq 2 ] || t_fail "$(sessions) DevTools sessions, not adbc-serve's and adbc-snap's: $(cat "$RLOG")"

t_check "adbc-snap through a session: three snapshot --web, one DevTools session, the same screen"
export XDG_RUNTIME_DIR=$T_TMP/run
mkdir -p "$XDG_RUNTIME_DIR"
chmod 700 "$XDG_RUNTIME_DIR"
stop_session() { local st=$?; "$SNAP" -q -t "$DEV" session stop > /dev/null 2>&1; return $st; }
t_at_exit stop_session
timeout 60 "$SNAP" -t "$DEV" session start > "$T_TMP/session.out" 2>&1 || t_fail "session start: $(cat "$T_TMP/session.out")"
for k in 1 2 3; do
    timeout 60 "$SNAP" -t "$DEV" snapshot --web --web-budget 20000 > "$T_TMP/sess.txt" 2> "$T_TMP/sess.err" ||
        t_fail "snapshot --web through the session: $(cat "$T_TMP/sess.err")"
    diff "$T_TMP/cold.txt" "$T_TMP/sess.txt" > "$T_TMP/diff" || t_fail "session snapshot $k differs: $(cat "$T_TMP/diff")"
done
[ "$(sessions)" -eq 3 ] || t_fail "$(sessions) DevTools sessions, not adbc-serve's, adbc-snap's and the session's: $(cat "$RLOG")"
"$SNAP" -q -t "$DEV" session stop > /dev/null 2>&1

t_check "a list item added to the page shows in the next snapshot on the kept session"
cdp "var l = document.createElement('li'); l.textContent = 'Gamma'; document.querySelector('ul').appendChild(l); 1" > /dev/null
snap
grep -q 'Text "Gamma"' "$OUT" || t_fail "the new item is missing: $(cat "$OUT")"

t_check "a checkbox checked by script (no DOM event) shows checked in the next snapshot"
cdp "var c = document.createElement('input'); c.type = 'checkbox'; c.id = 'cb'; c.style.display = 'block'; document.body.appendChild(c); 1" > /dev/null
snap
grep -q 'CheckBox \[ref=[0-9]*\]' "$OUT" || t_fail "no checkbox: $(cat "$OUT")"
grep -q 'CheckBox \[ref=[0-9]*\] \[checked\]' "$OUT" && t_fail "checked before it was: $(cat "$OUT")"
snap # a read with nothing changed: the kept tree
cdp "document.getElementById('cb').checked = true; 1" > /dev/null
snap
grep -q 'CheckBox \[ref=[0-9]*\] \[checked\]' "$OUT" || t_fail "the checkbox is not checked: $(cat "$OUT")"
[ "$(sessions)" -eq 3 ] || t_fail "adbc-serve opened another session for its page: $(cat "$RLOG")"

t_check "a new page in the WebView (another page id): a new session for it"
old=$(python3 -c 'import json,sys,urllib.request; print([p for p in json.load(urllib.request.urlopen("http://127.0.0.1:%s/json/list" % sys.argv[1], timeout=10)) if p["type"]=="page"][0]["id"])' "$PORT")
printf '%s' '<!doctype html><html><body><button>Second page</button></body></html>' > "$T_TMP/second.html"
curl -sS --max-time 10 -X PUT "http://127.0.0.1:$PORT/json/new?file://$T_TMP/second.html" > "$T_TMP/new.json" ||
    t_fail "no new page: $(cat "$T_TMP/new.json")"
curl -sS --max-time 10 "http://127.0.0.1:$PORT/json/close/$old" > /dev/null || t_fail "the old page did not close"
for ((i = 0; i < 100; i++)); do
    snap
    grep -q 'Button \[ref=[0-9]*\] "Second page"' "$OUT" && break
    sleep 0.1 # the new page still loading
done
grep -q 'Button \[ref=[0-9]*\] "Second page"' "$OUT" || t_fail "the new page was not read: $(cat "$OUT")"
grep -q '"Go"' "$OUT" && t_fail "the old page's content is still there: $(cat "$OUT")"
new=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["id"])' "$T_TMP/new.json")
grep -q "GET /devtools/page/$new " "$RLOG" || t_fail "no session to the new page: $(cat "$RLOG")"
[ "$(sessions)" -eq 4 ] || t_fail "$(sessions) sessions, not adbc-serve's two, adbc-snap's and the session's: $(cat "$RLOG")"

t_check "the app's socket gone and back under another name: a new session on it"
kill "$RELAY"
wait "$RELAY" 2> /dev/null
relay
snap
grep -q 'Button \[ref=[0-9]*\] "Second page"' "$OUT" || t_fail "the page was not read again: $(cat "$OUT")"
[ "$(sessions)" -eq 1 ] || t_fail "$(sessions) sessions on the new socket: $(cat "$RLOG")"
snap
[ "$(sessions)" -eq 1 ] || t_fail "$(sessions) sessions on the new socket after two snapshots: $(cat "$RLOG")"

t_check "a page that changes all the time: its session stops following the DOM, nothing piles up"
# Ten attribute changes a tick: DOM events at hundreds a second, until the
# session sees the page is busy and sends DOM.disable. Then the browser
# sends nothing on the session between snapshots (the relay's byte count
# of the session stays), and each snapshot still reads the page whole.
cdp "window.busy = setInterval(function () { for (var i = 0; i < 10; i++) document.body.setAttribute('data-n', Math.random()); }, 5); 1" > /dev/null
n=$(grep '^request [0-9]*: GET /devtools/page/' "$RLOG" | tail -n 1 | sed 's/^request \([0-9]*\):.*/\1/')
# bytes: what the browser has sent on the session so far (the relay's count).
bytes()
{
    local before
    before=$(grep -c "^bytes $n:" "$RLOG")
    kill -USR2 "$RELAY"
    for ((i = 0; i < 200; i++)); do
        [ "$(grep -c "^bytes $n:" "$RLOG")" -gt "$before" ] && break
        sleep 0.05
    done
    grep "^bytes $n:" "$RLOG" | tail -n 1 | sed 's/.*: //'
}
quiet=0
for ((k = 0; k < 10 && !quiet; k++)); do
    snap
    grep -q 'Button \[ref=[0-9]*\] "Second page"' "$OUT" || t_fail "the busy page was not read: $(cat "$OUT")"
    a=$(bytes)
    sleep 1
    b=$(bytes)
    [ -n "$a" ] && [ "$a" = "$b" ] && quiet=1
done
[ $quiet = 1 ] || t_fail "the browser kept sending on the session between snapshots ($a then $b bytes)"
cdp "var b = document.createElement('button'); b.textContent = 'Third'; document.body.appendChild(b); 1" > /dev/null
snap
grep -q 'Button \[ref=[0-9]*\] "Third"' "$OUT" || t_fail "a change on the busy page was not read: $(cat "$OUT")"
[ "$(sessions)" -eq 1 ] || t_fail "$(sessions) sessions on the busy page: $(cat "$RLOG")"
cdp "clearInterval(window.busy); 1" > /dev/null

t_check "a page that hangs on a kept session costs at most its budget and leaves a note"
kill -USR1 "$RELAY"
# Bounded by curl's --max-time: the call must come back, with the note.
snap 1500
grep -qE 'WebNote "web content not read: .* within the 1500 ms budget"' "$OUT" ||
    t_fail "no note: $(cat "$OUT")"
grep -q 'Text "Example"' "$OUT" || t_fail "the native part went: $(cat "$OUT")"
snap 1500
grep -qE 'WebNote "web content not read: .* within the 1500 ms budget"' "$OUT" ||
    t_fail "no note on the next snapshot: $(cat "$OUT")"
echo "PASS: $T_CHECKS checks"
