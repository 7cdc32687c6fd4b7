#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# snapshot --web on realistic pages in Debian's chromium, every web ref's
# tap point checked by the browser's own hit tests (DOM.getNodeForLocation
# and the page's elementFromPoint at the point mapped back through the
# visual viewport, fixtures/webview/page_check.py): rows under a fixed
# header, bottom bar and banner; a page under an aria-modal dialog with
# its backdrop; a carousel and an inbox panel scrolled inside the page; a
# link wrapped over two lines; a same-origin payment iframe partly under a
# fixed badge, next to an iframe of another site; the feed pinch-zoomed
# and panned; a top-layer <dialog> (showModal); a cart under a sticky
# header and a cookie banner; CSS transforms; shadow DOM; nested, scrolled
# and fixed same-origin iframes, also pinch-zoomed; and, through adbc-snap's
# session (a warm DevTools session), a scroll, a pinch and modals changed
# since the last read.
# Each page also names the elements that show (each must have one ref)
# and those that do not (none may have one). The set-up is
# tests/sh/snap_web.sh's: the browser's DevTools port offered to the test
# device as a WebView's socket, a WebView of 1080 px (2 px per CSS px).
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
PY=$(python3 -c 'import sys; print(sys.executable)')

# The pages over HTTP, so that an iframe can come from another site
# (localhost for 127.0.0.1).
python3 -u -m http.server --bind 127.0.0.1 --directory "$FIX" 0 > "$T_TMP/http.out" 2>&1 &
T_BG_PIDS+=("$!")
for ((i = 0; i < 200; i++)); do
    HTTP=$(sed -n 's/.* port \([0-9]*\).*/\1/p' "$T_TMP/http.out" | head -n 1)
    [ -n "$HTTP" ] && break
    sleep 0.05
done
[ -n "$HTTP" ] || t_fail "the HTTP server did not start: $(cat "$T_TMP/http.out")"
BASE=http://127.0.0.1:$HTTP

chromium_start --window-size=540,800 about:blank
PORT=$CDP_PORT
page() { timeout 60 python3 "$FIX/page_check.py" "$PORT" "$@"; }

td_start dev --no-auth --no-sandbox
DEV=127.0.0.1:${TD_PORT[dev]}
ctl=${TD_SANDBOX[dev]}/data/local/tmp/.adbc-test
PKG=com.example.webtaps.t$$
bash -c "exec -a $PKG '$PY' '$FIX/devtools_relay.py' webview_devtools_remote_\$\$ $PORT" \
    > "$T_TMP/relay.out" 2> "$T_TMP/relay.err" &
T_BG_PIDS+=("$!")
for ((i = 0; i < 200; i++)); do
    grep -q '^listening on' "$T_TMP/relay.out" 2> /dev/null && break
    sleep 0.05
done
grep -q '^listening on' "$T_TMP/relay.out" || t_fail "relay did not start: $(cat "$T_TMP/relay.err")"
cat > "$ctl/screen.xml" << EOF
<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation="0"><node class="android.widget.FrameLayout" package="$PKG" bounds="[0,0][1080,2400]"><node class="android.webkit.WebView" package="$PKG" enabled="true" bounds="[0,300][1080,1614]"/></node></hierarchy>
EOF
echo "dump=screen.xml" > "$ctl/uiautomator.conf"

S()
{
    timeout 60 "$SNAP" -t "$DEV" --timeout 30 "$@" > "$OUT" 2> "$ERR"
    rc=$?
}
names() { local p=$1 a=$2 b=$3 i s=""; for ((i = a; i <= b; i++)); do s+="|$p $i"; done; echo "${s#|}"; }
FAILED=""

# taps NAME MUST MUSTNOT: snapshot the page as it is, check every web ref.
taps()
{
    S snapshot --web --web-budget 20000 --json
    [ $rc -eq 0 ] || t_fail "$1: snapshot --web: $(cat "$ERR")"
    cp "$OUT" "$T_TMP/$1.json"
    page check "$T_TMP/$1.json" 0 300 1080 "$2" "$3" > "$T_TMP/$1.check"
    local crc=$?
    echo "  $1: $(cat "$T_TMP/$1.check")"
    [ $crc -eq 0 ] || FAILED+=" $1"
}

t_check "fixed header, bottom bar and banner over a scrolled feed: covered rows get no refs, half-covered ones a point that shows"
page load "$BASE/bars.html" 'scrollTo(0, 140); 1' || t_fail "bars.html did not load"
[ "$(page eval 'scrollY')" = 140 ] || t_fail "bars.html did not scroll: $(page eval 'scrollY')"
taps bars "Menu|Search|$(names Post 4 14)|$(names Like 4 14)|Home|Inbox|Me" \
    "$(names Post 1 3)|Like 1|Like 2|$(names Post 15 40)|$(names Like 15 40)|Accept"

t_check "a modal dialog with a backdrop: only the dialog's field and buttons have refs"
page load "$BASE/modal.html" || t_fail "modal.html did not load"
taps modal "Reason|OK|Cancel" "Edit profile|Help|Delete account|More"

t_check "a ref the modal has since covered: the act is refused, nothing tapped"
page load "$BASE/modal.html" 'for (const id of ["backdrop", "dlg"]) document.getElementById(id).hidden = true; 1' ||
    t_fail "modal.html did not load"
S snapshot --web --web-budget 20000
ref=$(sed -n 's/.*Button \[ref=\([0-9]*\)\] "Delete account".*/\1/p' "$OUT")
[ -n "$ref" ] || t_fail "no ref for the button before the modal: $(cat "$OUT")"
page eval 'for (const id of ["backdrop", "dlg"]) document.getElementById(id).hidden = false; 1' > /dev/null
rm -f "$ctl/calls"
S tap "$ref"
[ $rc -eq 3 ] || t_fail "tap on a covered button: status $rc; $(cat "$ERR")"
grep -q "stale ref $ref (Button \"Delete account\"): it is not on the screen any more, or its page now covers it or clips it away; nothing was sent" "$ERR" ||
    t_fail "the refusal says: $(cat "$ERR")"
! grep -q 'input' "$ctl/calls" 2> /dev/null || t_fail "a covered button was tapped: $(cat "$ctl/calls")"

t_check "a carousel and an inbox panel scrolled: what they clip has no ref, a message showing 8 CSS px is tapped in them"
page load "$BASE/panels.html" || t_fail "panels.html did not load"
taps panels "$(names Buy 2 4)|$(names Message 4 9)|Compose" \
    "Buy 1|$(names Buy 5 8)|$(names Message 1 3)|$(names Message 10 20)"

t_check "a link wrapped over two lines is tapped on one of its lines"
page load "$BASE/wrap.html" || t_fail "wrap.html did not load"
taps wrap "the full terms and conditions|link" ""

t_check "a same-origin iframe is read, mapped and clipped through its frame; the other site's iframe is a note"
page load "$BASE/frame.html" || t_fail "frame.html did not load"
for ((i = 0; i < 100; i++)); do
    [ "$(page eval 'document.getElementById("pay").contentDocument.readyState')" = '"complete"' ] && break
    sleep 0.1
done
sleep 0.5 # the other site's frame has no document this page can ask
taps frame "Start over|Card number|Pay now|Done" "Cancel|Terms"
grep -q 'frame not read: its page runs in another process' "$T_TMP/frame.json" ||
    FAILED+=" frame(no note for the other site's iframe)"

t_check "typing into the iframe's field reaches it"
ref=$(python3 -c '
import json, sys
def walk(n):
    yield n
    for c in n["children"]:
        yield from walk(c)
d = json.load(open(sys.argv[1]))
print([n["ref"] for w in d["windows"] for n in walk(w["root"]) if n["desc"] == "Card number"][0])' \
    "$T_TMP/frame.json") || t_fail "no ref for the card number: $(head -c 800 "$T_TMP/frame.json")"
S type "$ref" '4111'
[ $rc -eq 0 ] || t_fail "type into the iframe: $(cat "$ERR")"
[ "$(page eval 'document.getElementById("pay").contentDocument.querySelector("input").value')" = '"4111"' ] ||
    t_fail "the iframe's field holds $(page eval 'document.getElementById("pay").contentDocument.querySelector("input").value')"

t_check "pinch zoom panned away from the corner: boxes mapped once through the visual viewport"
page load "$BASE/bars.html" || t_fail "bars.html did not load"
vv=$(page pinch 400 500 2) || t_fail "no pinch: $vv"
python3 -c '
import json, sys
v = json.loads(sys.argv[1])
sys.exit(not (abs(v["offsetX"] - 200) < 0.5 and abs(v["offsetY"] - 250) < 0.5 and abs(v["scale"] - 2) < 0.01))' "$vv" ||
    t_fail "the pinch left the visual viewport at $vv, not at 200,250 zoomed 2x"
taps pinch "$(names Post 5 10)|$(names Like 5 10)" \
    "Menu|Search|Home|Inbox|Me|$(names Post 1 4)|Like 1|Like 2|Like 3|$(names Post 12 40)|$(names Like 12 40)|Accept"

t_check "a <dialog> opened with showModal(): the page behind it has no refs"
page load "$BASE/dialog.html" || t_fail "dialog.html did not load"
[ "$(page eval 'document.getElementById("nl").matches(":modal")')" = true ] || t_fail "the dialog is not modal"
taps dialog "Email|Subscribe|No thanks" "Read more|Share|Save for later|Next story"

t_check "a sticky header and a cookie banner over a scrolled cart: covered buttons get no refs, half-covered ones a point that shows"
page load "$BASE/cookie.html" 'scrollTo(0, 200); 1' || t_fail "cookie.html did not load"
[ "$(page eval 'scrollY')" = 200 ] || t_fail "cookie.html did not scroll: $(page eval 'scrollY')"
taps cookie "Back|Help|Checkout|$(names Remove 4 10)|Accept all|Settings" \
    "$(names Remove 1 3)|Continue shopping"

t_check "CSS transforms: a drawer parked off screen, a carousel moved by its track, rotated and scaled elements"
page load "$BASE/transform.html" || t_fail "transform.html did not load"
taps transform "Slide 2|Rotated|Small 1|Small 2|$(names Row 1 5)|Below|Card number|Pay now|Cancel|$(names Big 1 3)" \
    "$(names Drawer 1 3)|Slide 1|Slide 3|Slide 4|$(names Row 6 10)|Terms|Big 4"

t_check "CSS zoom: a zoomed section's scrolled list, an iframe and a clipping box zoomed"
page load "$BASE/zoom.html" || t_fail "zoom.html did not load"
taps zoom "Row 2|Row 3|Row 4|Card number|Pay now|Cancel|$(names Big 1 3)" "Row 1|Row 5|Row 6|Terms|Big 4"

t_check "shadow DOM: open and closed roots, a slotted button, a scrolled list and a consent bar inside components"
page load "$BASE/shadow.html" || t_fail "shadow.html did not load"
taps shadow "Back|Share|Like|Slotted|Row 4|Row 5|Row 6|Pay|Agree|Decline" \
    "Row 1|Row 2|Row 3|$(names Row 7 10)|Later"

t_check "nested, scrolled and fixed same-origin iframes: each read, mapped and clipped through every frame"
page load "$BASE/chat.html" || t_fail "chat.html did not load"
[ "$(page eval 'document.getElementById("news").contentWindow.scrollY')" = 200 ] ||
    t_fail "the news frame did not scroll: $(page eval 'document.getElementById("news").contentWindow.scrollY')"
taps chat "Top up|Card number|Pay now|Cancel|$(names Story 6 9)|$(names Order 1 3)|Close|$(names Msg 11 15)|Message|Send" \
    "Terms|$(names Story 1 5)|$(names Story 10 12)|$(names Msg 1 10)|Help center"

t_check "the iframes pinch-zoomed and panned"
vv=$(page pinch 200 250 2) || t_fail "no pinch: $vv"
taps chatpinch "$(names Story 6 8)" "$(names Order 1 3)|$(names Msg 1 10)|Help center"

t_check "an element across the WebView's bottom edge is tapped on a point of it that shows on the screen"
page load "$BASE/edge.html" || t_fail "edge.html did not load"
# The WebView's box made 550 CSS px tall: the page's viewport goes on
# below it, past the Send button.
[ "$(page eval 'innerHeight >= 640')" = true ] ||
    t_fail "the page's viewport is $(page eval 'innerHeight') CSS px tall, not the 640 or more edge.html needs"
sed 's/\[0,300\]\[1080,1614\]/[0,300][1080,1400]/' "$ctl/screen.xml" > "$ctl/edge.xml"
echo "dump=edge.xml" > "$ctl/uiautomator.conf"
taps edge "Quote|Reply" "Send"
echo "dump=screen.xml" > "$ctl/uiautomator.conf"

# Through adbc-snap's session: its server's connection keeps each page's
# DevTools session and tree (docs/webview.md, "A warm session"), and reads
# the tree again only when the page's DOM changed. A scroll or a pinch
# sends no DOM event: what shows must still be asked afresh each time.
settle() { page eval 'new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(1))))' > /dev/null; }
sessions() { grep -c '^request [0-9]*: GET /devtools/page/' "$T_TMP/relay.out"; }
export XDG_RUNTIME_DIR=$T_TMP/run
mkdir -p "$XDG_RUNTIME_DIR"
chmod 700 "$XDG_RUNTIME_DIR"
stop_session() { local st=$?; timeout 30 "$SNAP" -q -t "$DEV" session stop > /dev/null 2>&1; return $st; }
t_at_exit stop_session
timeout 60 "$SNAP" -t "$DEV" session start > "$T_TMP/session.out" 2>&1 ||
    t_fail "session start: $(cat "$T_TMP/session.out")"
before=$(sessions)

t_check "a warm session: the feed scrolled since the last read (no DOM event) gets fresh tap points"
page load "$BASE/bars.html" || t_fail "bars.html did not load"
for k in 1 2 3; do # the first read opens, the second follows the DOM, the third reads nothing again
    S snapshot --web --web-budget 20000
    [ $rc -eq 0 ] || t_fail "snapshot $k through the session: $(cat "$ERR")"
done
page eval 'scrollTo(0, 140); 1' > /dev/null
settle
taps warmbars "Menu|Search|$(names Post 4 14)|$(names Like 4 14)|Home|Inbox|Me" \
    "$(names Post 1 3)|Like 1|Like 2|$(names Post 15 40)|$(names Like 15 40)|Accept"

t_check "a warm session: the feed pinch-zoomed and panned since the last read"
page eval 'scrollTo(0, 0); 1' > /dev/null
settle
S snapshot --web --web-budget 20000
vv=$(page pinch 400 500 2) || t_fail "no pinch: $vv"
taps warmpinch "$(names Post 5 10)|$(names Like 5 10)" \
    "Menu|Search|Home|Inbox|Me|$(names Post 1 4)|Like 1|Like 2|Like 3|$(names Post 12 40)|$(names Like 12 40)|Accept"

t_check "a warm session: a <dialog> closed, then opened with showModal() again"
page load "$BASE/dialog.html" 'document.getElementById("nl").close(); 1' || t_fail "dialog.html did not load"
for k in 1 2; do
    S snapshot --web --web-budget 20000
    [ $rc -eq 0 ] || t_fail "snapshot $k through the session: $(cat "$ERR")"
done
taps warmnodialog "Read more|Share|Save for later|Next story" "Email|Subscribe|No thanks"
page eval 'document.getElementById("nl").showModal(); 1' > /dev/null
settle
taps warmdialog "Email|Subscribe|No thanks" "Read more|Share|Save for later|Next story"

t_check "a warm session: a modal opened since the last read hides the page; a ref it covered is refused"
page load "$BASE/modal.html" 'for (const id of ["backdrop", "dlg"]) document.getElementById(id).hidden = true; 1' ||
    t_fail "modal.html did not load"
for k in 1 2 3; do
    S snapshot --web --web-budget 20000
    [ $rc -eq 0 ] || t_fail "snapshot $k through the session: $(cat "$ERR")"
done
ref=$(sed -n 's/.*Button \[ref=\([0-9]*\)\] "Delete account".*/\1/p' "$OUT")
[ -n "$ref" ] || t_fail "no ref for the button before the modal: $(cat "$OUT")"
[ "$(sessions)" -eq $((before + 1)) ] ||
    t_fail "$((before + 1)) DevTools sessions expected (one for the session's reads), $(sessions): $(cat "$T_TMP/relay.out")"
page eval 'for (const id of ["backdrop", "dlg"]) document.getElementById(id).hidden = false; 1' > /dev/null
settle
# The act verifies with a fresh snapshot of the client's own (a cold read).
rm -f "$ctl/calls"
S tap "$ref"
[ $rc -eq 3 ] || t_fail "tap on a covered button through the session: status $rc; $(cat "$ERR")"
grep -q "stale ref $ref (Button \"Delete account\"): it is not on the screen any more, or its page now covers it or clips it away; nothing was sent" "$ERR" ||
    t_fail "the refusal says: $(cat "$ERR")"
! grep -q 'input' "$ctl/calls" 2> /dev/null || t_fail "a covered button was tapped: $(cat "$ctl/calls")"
taps warmmodal "Reason|OK|Cancel" "Edit profile|Help|Delete account|More"

[ -z "$FAILED" ] || t_fail "wrong refs on:$FAILED (above)"
echo "PASS: $T_CHECKS checks"
