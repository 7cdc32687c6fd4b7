#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# snapshot --web and acts on web refs against a real page: Debian's
# chromium, headless, serving fixtures/webview/form.html; its DevTools port
# is offered to the test device as an abstract socket named like a
# WebView's (fixtures/webview/devtools_relay.py, run as the app's package
# so /proc/<pid>/cmdline names it), and the device's dump has a WebView
# node of that package at known bounds. `input tap` on the device reaches
# the page through fixtures/webview/input_hook.py, as a touch screen would.
# What the page did is read back through Runtime.evaluate.
# The device runs without bubblewrap: /proc/<pid> of the relay must exist.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
command -v python3 > /dev/null || { echo "SKIP: python3 is not installed"; exit 77; }
CHROMIUM=$(command -v chromium || command -v chromium-browser) ||
    { echo "SKIP: chromium is not installed (scripts/packages.txt)"; exit 77; }
t_init
SNAP=${ADBC_SNAP:-$ADBC_BUILD_DIR/tools/adbc-snap}
[ -x "$SNAP" ] || t_fail "adbc-snap not built: $SNAP"
t_need_built WSLAY "WebSocket for the DevTools protocol: ADBC_WITH_WSLAY"
FIX=$ADBC_SOURCE_DIR/fixtures/webview
export HOME=$T_TMP/home XDG_CACHE_HOME=$T_TMP/cache
mkdir -p "$HOME"
OUT=$T_TMP/out ERR=$T_TMP/err

# The browser: 540 CSS px wide, no scroll bars; the WebView below is
# 1080 px wide, so one CSS px is two screen px.
chromium_start --disable-smooth-scrolling --window-size=540,800 "file://$FIX/form.html"
PORT=$CDP_PORT

# cdp EXPR: the page's value of a JavaScript expression (Runtime.evaluate),
# as JSON.
export FIX
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
PAGE=$(python3 -c 'import json,sys,urllib.request; print([p for p in json.load(urllib.request.urlopen("http://127.0.0.1:%s/json/list" % sys.argv[1], timeout=10)) if p["type"]=="page"][0]["id"])' "$PORT")
# Wait for the page to have loaded.
for ((i = 0; i < 100; i++)); do
    [ "$(cdp 'document.readyState')" = '"complete"' ] && break
    sleep 0.1
done

td_start dev --no-auth --no-sandbox
DEV=127.0.0.1:${TD_PORT[dev]}
ctl=${TD_SANDBOX[dev]}/data/local/tmp/.adbc-test
PY=$(python3 -c 'import sys; print(sys.executable)')
# The app's package, unique to this run: DevTools sockets are abstract
# sockets of the host, where another test (snap_webviews.sh) may at the same
# moment offer one for an app of its own; one package name for both made
# this snapshot find two apps' pages and rightly decline to pick one.
PKG=com.example.webform.t$$

# relay NAME TARGET: the app's DevTools socket, its process named PKG.
# Each relay writes its own file: a later one must not be taken as ready on
# the words of an earlier one.
NRELAY=0
relay()
{
    local out=$T_TMP/relay.$((++NRELAY))
    bash -c "exec -a $PKG '$PY' '$FIX/devtools_relay.py' webview_devtools_remote_\$\$ $1" \
        > "$out.out" 2> "$out.err" &
    T_BG_PIDS+=("$!")
    RELAY=$!
    for ((i = 0; i < 200; i++)); do
        grep -q '^listening on' "$out.out" 2> /dev/null && return 0
        sleep 0.05
    done
    t_fail "relay did not start: $(cat "$out.err")"
}
relay "$PORT"

# The screen: a native button, the WebView at [0,300][1080,1614] with a
# child of its own (what the app's accessibility tree showed), a button.
cat > "$ctl/screen.xml" << EOF
<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation="0"><node class="android.widget.FrameLayout" package="$PKG" bounds="[0,0][1080,2400]"><node class="android.widget.Button" text="Back" package="$PKG" clickable="true" enabled="true" bounds="[0,100][300,250]"/><node class="android.webkit.WebView" package="$PKG" enabled="true" bounds="[0,300][1080,1614]"><node class="android.view.View" text="seen by uiautomator" package="$PKG" bounds="[0,300][1080,400]"/></node><node class="android.widget.Button" text="Done" package="$PKG" clickable="true" enabled="true" bounds="[0,1700][300,1800]"/></node></hierarchy>
EOF
echo "dump=screen.xml" > "$ctl/uiautomator.conf"
echo "$PORT $PAGE 0 300 2" > "$ctl/webtap.conf"
printf '#!/bin/sh\nexec %s %s "$@"\n' "$PY" "$FIX/input_hook.py" > "$ctl/input.hook"
chmod +x "$ctl/input.hook"

S()
{
    timeout 60 "$SNAP" -t "$DEV" --timeout 20 "$@" > "$OUT" 2> "$ERR"
    rc=$?
}

t_check "without --web the WebView is the dump's box, as before"
S snapshot
[ $rc -eq 0 ] || t_fail "snapshot: $(cat "$ERR")"
grep -q 'seen by uiautomator' "$OUT" || t_fail "snapshot lost the dump's child: $(cat "$OUT")"
grep -q 'Go' "$OUT" && t_fail "web content without --web: $(cat "$OUT")"

t_check "snapshot --web: the page's heading, field, buttons and list under the WebView, refs numbered on"
S snapshot --web --web-budget 20000
[ $rc -eq 0 ] || t_fail "snapshot --web: $(cat "$ERR")"
want='- Group
  - Button [ref=1] "Back"
  - WebView
    - Heading "Sign in"
    - Text "User name"
    - TextInput [ref=2] (User name)
    - Button [ref=3] "Go"
    - Button [ref=4] "Other"
    - List
      - Text "Alpha"
      - Text "Beta"
  - Button [ref=5] "Done"'
[ "$(cat "$OUT")" = "$want" ] || t_fail "snapshot --web printed:
$(cat "$OUT")
expected:
$want"

t_check "--web --json: web nodes with screen bounds mapped from CSS px (x2), their ids"
S snapshot --web --web-budget 20000 --json
python3 - "$OUT" << 'PY' || t_fail "JSON check failed: $(head -c 600 "$OUT")"
import json, sys
doc = json.load(open(sys.argv[1]))
def walk(n):
    yield n
    for c in n["children"]:
        yield from walk(c)
nodes = list(walk(doc["windows"][0]["root"]))
go = [n for n in nodes if n["text"] == "Go"][0]
# form.html: the button is 200x40 CSS px at (0,80) in the page.
assert go["ref"] == 3 and go["class"] == "web.Button", go
assert go["bounds"] == {"x": 0, "y": 300 + 160, "w": 400, "h": 80}, go["bounds"]
assert go["resource_id"].startswith("web:webview_devtools_remote_"), go
field = [n for n in nodes if n["role"] == "TextInput"][0]
assert field["states"]["editable"] and field["desc"] == "User name", field
assert doc["refs"] == 5
PY

t_check "tap on a web ref: the verified path taps the mapped point, and the page's button got the click"
rm -f "$ctl/calls"
S tap 3
[ $rc -eq 0 ] || t_fail "tap 3: $(cat "$ERR")"
grep -qE '^(cmd )?input tap 200 500$' "$ctl/calls" || t_fail "calls: $(cat "$ctl/calls")"
[ "$(cdp 'JSON.stringify(window.clicks || [])')" = '"[\"go\"]"' ] ||
    t_fail "the page recorded clicks: $(cdp 'JSON.stringify(window.clicks || [])')"
rm -f "$ctl/calls"

t_check "tap on a web ref with --snapshot: the screen after it reads the page too"
S snapshot --web --web-budget 20000
S tap 3 --snapshot
[ $rc -eq 0 ] || t_fail "tap 3 --snapshot: $(cat "$ERR")"
grep -q '"Go"' "$OUT" || grep -q 'web content not read' "$OUT" || t_fail "after the tap: $(cat "$OUT")"
[ "$(cdp 'JSON.stringify(window.clicks)')" = '"[\"go\",\"go\"]"' ] ||
    t_fail "the page recorded clicks: $(cdp 'JSON.stringify(window.clicks)')"
cdp 'window.clicks = ["go"]; 1' > /dev/null # as the checks below expect
rm -f "$ctl/calls"

t_check "type into a web ref: DevTools focus and insertText fill the field; --clear replaces it"
sessions() { grep -c '^request [0-9]*: GET /devtools/page/' "$T_TMP/relay.1.out"; }
n=$(sessions)
S type 2 'hello "web"'
[ $rc -eq 0 ] || t_fail "type: $(cat "$ERR")"
# One DevTools session: the check of the ref reads the page on it, and the
# typing goes over the same one (lib/ui keeps it with the connection).
[ "$(sessions)" = $((n + 1)) ] || t_fail "typing opened $(($(sessions) - n)) DevTools sessions, not 1"
[ "$(cdp 'document.getElementById("user").value')" = '"hello \"web\""' ] ||
    t_fail "field holds $(cdp 'document.getElementById("user").value')"
S snapshot --web --web-budget 20000
S type 2 --clear 'anna'
[ $rc -eq 0 ] || t_fail "type --clear: $(cat "$ERR")"
[ "$(cdp 'document.getElementById("user").value')" = '"anna"' ] ||
    t_fail "field holds $(cdp 'document.getElementById("user").value')"
[ ! -s "$ctl/calls" ] || t_fail "typing into a web field ran device commands: $(cat "$ctl/calls")"

t_check "a page changed between snapshot and act: the web ref is refused, nothing tapped"
S snapshot --web --web-budget 20000
cdp 'document.getElementById("other").remove(); 1' > /dev/null
S tap 4
[ $rc -eq 3 ] || t_fail "tap on a removed element: status $rc; $(cat "$ERR")"
grep -q 'stale ref 4' "$ERR" || t_fail "no stale message: $(cat "$ERR")"
[ ! -s "$ctl/calls" ] || t_fail "a stale web ref was tapped: $(cat "$ctl/calls")"
[ "$(cdp 'JSON.stringify(window.clicks)')" = '"[\"go\"]"' ] || t_fail "clicks changed"

t_check "a page taller than its view: a scrollable ref over the WebView scrolls it; bounds follow the scroll"
cdp 'document.body.style.height = "3000px"; 1' > /dev/null
S snapshot --web --web-budget 20000
grep -q '^    - ScrollView \[ref=2\]$' "$OUT" || t_fail "no scrollable page: $(cat "$OUT")"
grep -q 'Heading "Sign in"' "$OUT" || t_fail "heading missing: $(cat "$OUT")"
rm -f "$ctl/calls"
S scroll 2 down
[ $rc -eq 0 ] || t_fail "scroll: $(cat "$ERR")"
grep -qE '^(cmd )?input swipe 540 957 540 738 300$' "$ctl/calls" || t_fail "calls: $(cat "$ctl/calls")"
# Until the page has scrolled and stays put (a scroll may take frames).
Y=0
for ((i = 0; i < 200; i++)); do
    y=$(cdp 'window.scrollY')
    [ "$y" != 0 ] && [ "$y" = "$Y" ] && break
    Y=$y
    sleep 0.05
done
[ "$Y" != 0 ] || t_fail "the page did not scroll"
S snapshot --web --web-budget 20000 --json
python3 - "$OUT" "$Y" << 'PY' || t_fail "after scrolling by $Y CSS px: $(head -c 600 "$OUT")"
import json, sys
doc = json.load(open(sys.argv[1]))
y = float(sys.argv[2])
def walk(n):
    yield n
    for c in n["children"]:
        yield from walk(c)
nodes = list(walk(doc["windows"][0]["root"]))
go = [n for n in nodes if n["text"] == "Go"]
# The button's page top is 80 CSS px: on the screen 300 + 2 * (80 - y), clipped to the
# WebView's top edge, or gone once above it.
top = 300 + 2 * (80 - y)
if top + 80 <= 300:
    assert not go, go
else:
    assert go and go[0]["bounds"]["y"] == max(300, round(top)), (go, top)
assert not [n for n in nodes if n["text"] == "Sign in"] or y < 20, y
PY
cdp 'window.scrollTo(0, 0); document.body.style.height = ""; 1' > /dev/null

t_check "adbc-serve: observe with web=1 lists the page's elements and their refs; without, the box"
SERVE=$ADBC_BUILD_DIR/tools/adbc-serve
if t_built SERVE; then
    command -v curl > /dev/null || t_fail "curl is needed (scripts/packages.txt)"
    "$SERVE" -t "$DEV" --listen 127.0.0.1:0 --token-file "$T_TMP/token" \
        --ready-file "$T_TMP/port" --settle 0 2> "$T_TMP/serve.log" &
    T_BG_PIDS+=("$!")
    for ((i = 0; i < 100; i++)); do
        [ -s "$T_TMP/port" ] && break
        sleep 0.05
    done
    [ -s "$T_TMP/port" ] || t_fail "adbc-serve did not start: $(cat "$T_TMP/serve.log")"
    get() { curl -sS --max-time 30 -H "Authorization: Bearer $(cat "$T_TMP/token")" \
        "http://127.0.0.1:$(cat "$T_TMP/port")$1"; }
    get "/v1/observe?web=1&web_budget=20000" > "$OUT" || t_fail "observe?web=1: $(cat "$OUT")"
    python3 - "$OUT" << 'PY' || t_fail "observe?web=1: $(head -c 800 "$OUT")"
import json, sys
r = json.load(open(sys.argv[1]))["result"]
assert 'Button [ref=3] "Go"' in r["snapshot"], r["snapshot"]
go = [x for x in r["refs"] if x["ref"] == 3][0]
assert go["class"] == "web.Button" and go["tap"] == [200, 500], go
PY
    get "/v1/snapshot?web=1&web_budget=20000" > "$OUT"
    grep -q 'Button \[ref=3\] \\"Go\\"' "$OUT" || t_fail "snapshot?web=1: $(head -c 600 "$OUT")"
    t_check "adbc-serve: a marked screenshot with web=1 draws the web refs' boxes and numbers"
    python3 "$ADBC_SOURCE_DIR/tests/sh/marks_check.py" grey "$ctl/screencap.raw" || t_fail "no raw frame"
    python3 -c 'import json, sys; json.dump(json.load(open(sys.argv[1]))["result"]["refs"], open(sys.argv[2], "w"))' \
        "$OUT" "$T_TMP/webrefs.json" || t_fail "snapshot?web=1 refs: $(head -c 600 "$OUT")"
    get "/v1/screenshot?marks=1&web=1&web_budget=20000" > "$T_TMP/webmarks.png"
    web_refs=$(python3 -c 'import json, sys; print(" ".join(str(r["ref"]) for r in json.load(open(sys.argv[1])) if r["class"].startswith("web.")))' "$T_TMP/webrefs.json")
    [ -n "$web_refs" ] || t_fail "no web refs in the snapshot: $(cat "$T_TMP/webrefs.json")"
    # shellcheck disable=SC2086
    python3 "$ADBC_SOURCE_DIR/tests/sh/marks_check.py" check "$T_TMP/webmarks.png" "$T_TMP/webrefs.json" $web_refs ||
        t_fail "web refs $web_refs not marked: $(head -c 300 "$T_TMP/webmarks.png")"
    rm -f "$ctl/screencap.raw"
    t_check "adbc-serve: the observation after an act on a web ref reads the page too"
    get "/v1/observe?web=1&web_budget=20000" > /dev/null
    curl -sS --max-time 60 -H "Authorization: Bearer $(cat "$T_TMP/token")" -H 'Content-Type: application/json' \
        -d '{"action":"tap","ref":3}' "http://127.0.0.1:$(cat "$T_TMP/port")/v1/act" > "$OUT" ||
        t_fail "act: $(cat "$OUT")"
    # The page's nodes, or (on a machine too busy for the default budget)
    # the note saying the page was tried: either way not the bare box.
    python3 - "$OUT" << 'PY' || t_fail "act on web ref 3: $(head -c 800 "$OUT")"
import json, sys
r = json.load(open(sys.argv[1]))["result"]
snap = r["observation"]["snapshot"]
assert r["ref"] == 3, r
assert '"Go"' in snap or "web content not read" in snap, snap
PY
    get "/v1/observe?web=1&web_budget=0" > "$OUT"
    grep -q 'web_budget must be 1..60000' "$OUT" || t_fail "web_budget=0: $(cat "$OUT")"
    get "/v1/observe" > "$OUT"
    grep -q 'seen by uiautomator' "$OUT" || t_fail "observe without web: $(head -c 400 "$OUT")"
    grep -q '"Go"' "$OUT" && t_fail "observe without web read the page"
else
    echo "adbc-serve or curl missing: observe not checked" >&2
fi

t_check "adbc-mcp: the screen after an act on a web ref reads the page too"
MCP=${ADBC_MCP:-$ADBC_BUILD_DIR/tools/adbc-mcp}
if t_built MCP; then
    # A snapshot with the page (its refs are what the tap takes), then a tap
    # on the page's button without asking for the page: the screen returned
    # after it must read the page anyway. Each call is sent once the one
    # before it was answered (the server runs calls side by side).
    mkdir -p "$T_TMP/home"
    printf '[device]\nallowlist = ["%s"]\n' "$DEV" > "$T_TMP/mcp.toml"
    HOME=$T_TMP/home timeout 120 python3 - "$MCP" "$T_TMP/mcp.toml" "$DEV" > "$OUT" 2> "$T_TMP/mcp.err" << 'PY' ||
import json, subprocess, sys
mcp = subprocess.Popen([sys.argv[1], "--config", sys.argv[2], "--no-usb", "-t", sys.argv[3],
                        "-s", sys.argv[3]], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
def call(i, method, params):
    mcp.stdin.write(json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}) + "\n")
    mcp.stdin.flush()
    for line in mcp.stdout:
        m = json.loads(line)
        if m.get("id") == i:
            return m["result"]
    sys.exit("adbc-mcp ended before answering call %d" % i)
call(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "t", "version": "1"}})
mcp.stdin.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
snap = call(2, "tools/call", {"name": "snapshot", "arguments": {"web": True, "web_budget_ms": 20000}})
tap = call(3, "tools/call", {"name": "tap", "arguments": {"ref": 3}})
mcp.stdin.close()
mcp.wait()
json.dump({"snapshot": snap, "tap": tap}, sys.stdout)
PY
        t_fail "adbc-mcp: $(cat "$T_TMP/mcp.err")"
    python3 - "$OUT" << 'PY' || t_fail "adbc-mcp, tap on web ref 3: $(head -c 1500 "$OUT") $(cat "$T_TMP/mcp.err")"
import json, sys
r = json.load(open(sys.argv[1]))
snap, tap = r["snapshot"], r["tap"]
assert not snap.get("isError") and 'Button [ref=3] "Go"' in snap["content"][0]["text"], snap
assert not tap.get("isError"), tap
text = "\n".join(c["text"] for c in tap["content"] if c["type"] == "text")
# The screen after the act, less the line saying what was done (which may
# name the element): the page's nodes, or (on a machine too busy for the
# default budget) the note saying the page was tried; not the bare box.
after = text[text.index("after:"):]
assert '"Go"' in after or "web content not read" in after, text
PY
else
    echo "adbc-mcp missing: its screen after a web act not checked" >&2
fi

t_check "a hung DevTools socket costs at most its budget and leaves the WebView as a box with a note"
kill "$RELAY"
wait "$RELAY" 2> /dev/null
relay --hang
start=$(date +%s%N)
S snapshot --web --web-budget 1500
ms=$(( ($(date +%s%N) - start) / 1000000 ))
[ $rc -eq 0 ] || t_fail "snapshot with a hung page failed: $(cat "$ERR")"
grep -qE 'WebNote "web content not read: .* within the 1500 ms budget"' "$OUT" ||
    t_fail "no note: $(cat "$OUT")"
grep -q 'seen by uiautomator' "$OUT" || t_fail "the dump's own child went: $(cat "$OUT")"
grep -q 'Button \[ref=2\] "Done"' "$OUT" || t_fail "native refs: $(cat "$OUT")"
# Not a timing test: the bound checked is the snapshot's whole --timeout.
[ "$ms" -lt 20000 ] || t_fail "the snapshot took $ms ms"
echo "PASS: $T_CHECKS checks"
