#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""adbc-serve's inspector page in a real browser (run by serve_page.sh).

Drives headless chromium over the DevTools protocol, with the WebSocket
client the WebView tests use (fixtures/webview/input_hook.py), through the
page as a person would: real mouse and key events, nothing called inside
the page. Checks: the page asks for the token, refuses a wrong one, keeps a
right one in sessionStorage only; shows the marked screen and the snapshot;
hovering a ref's line draws its box where the ref is; clicking the ref sends
exactly one `input tap` at the ref's point (the input stand-in's log); a
name other than the server's (DNS rebinding: the browser resolves
evil.test to 127.0.0.1) is refused. Saves a screenshot of the page.

usage: serve_page.py DEVTOOLS_PORT URL TOKEN_FILE CTL_DIR SHOT_PNG [TASKS]
"""
import base64
import json
import os
import sys
import time
import urllib.request

sys.path.insert(0, os.path.join(os.environ["ADBC_SOURCE_DIR"], "fixtures", "webview"))
from input_hook import ws_call, ws_connect  # noqa: E402

PORT, URL, TOKEN_FILE, CTL, SHOT = sys.argv[1:6]
TASKS = len(sys.argv) > 6 and sys.argv[6] == "tasks"
TOKEN = open(TOKEN_FILE).read().strip()
ids = iter(range(1, 1 << 30))


def fail(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def connect():
    pages = json.load(urllib.request.urlopen(f"http://127.0.0.1:{PORT}/json/list", timeout=10))
    s = ws_connect(PORT, [p for p in pages if p["type"] == "page"][0]["id"])
    s.settimeout(60)
    return s


SOCK = connect()


EVENTS = []  # the browser's events, in order (Log.entryAdded among them)


def cdp(method, **params):
    r = ws_call(SOCK, {"id": next(ids), "method": method, "params": params}, EVENTS)
    if "error" in r:
        fail(f"{method}: {r['error']}")
    return r["result"]


def js(expr):
    """The value of a JavaScript expression in the page (awaited)."""
    r = cdp("Runtime.evaluate", expression=expr, returnByValue=True, awaitPromise=True)
    if "exceptionDetails" in r:
        fail(f"{expr}: {r['exceptionDetails']}")
    return r["result"].get("value")


def until(expr, what, seconds=60):
    """Waits for expr to be truthy (the page works in its own time); its value."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        v = js(expr)
        if v:
            return v
        time.sleep(0.1)
    said = js("document.body ? document.body.innerText.slice(0, 600) : ''")
    fail(f"{what}: not within {seconds} s; the page says: {said!r}")


def centre(selector):
    r = js(f"(() => {{ const e = document.querySelector({json.dumps(selector)}); if (!e) return null;"
           f" e.scrollIntoView({{block: 'center'}}); const r = e.getBoundingClientRect();"
           f" return [r.x + r.width / 2, r.y + r.height / 2]; }})()")
    if not r:
        fail(f"no {selector} on the page")
    return r


def click(selector):
    x, y = centre(selector)
    cdp("Input.dispatchMouseEvent", type="mouseMoved", x=x, y=y)
    for kind in ("mousePressed", "mouseReleased"):
        cdp("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)


def hover(selector):
    x, y = centre(selector)
    cdp("Input.dispatchMouseEvent", type="mouseMoved", x=x, y=y)


def type_text(selector, text):
    click(selector)
    cdp("Input.insertText", text=text)


def enter():
    for kind in ("keyDown", "keyUp"):
        cdp("Input.dispatchKeyEvent", type=kind, key="Enter", code="Enter",
            windowsVirtualKeyCode=13, text="\r" if kind == "keyDown" else "")


def calls():
    """The device commands since the log was last cleared, but the reads."""
    try:
        lines = open(os.path.join(CTL, "calls")).read().splitlines()
    except FileNotFoundError:
        return []
    return [c for c in lines if not c.startswith(("uiautomator", "dumpsys", "screencap"))]


def navigate(url):
    cdp("Page.navigate", url=url)
    until(f"document.readyState === 'complete' && location.href === {json.dumps(url)}",
          f"{url} loaded")


cdp("Page.enable")
cdp("Runtime.enable")
cdp("Log.enable")

print("check: the page loads, carries no token, and asks for one")
navigate(URL + "/")
until("!document.getElementById('login').hidden && document.getElementById('main').hidden",
      "the token form is shown")

print("check: the page loads with no console error (no request it cannot answer, /favicon.ico among them)")
# The browser asks for an icon after the load; a moment for that to be
# answered and logged, then every event so far is in.
time.sleep(1.5)
js("1")
errors = [e["params"]["entry"] for e in EVENTS
          if e["method"] == "Log.entryAdded" and e["params"]["entry"].get("level") == "error"]
errors += [e["params"] for e in EVENTS if e["method"] == "Runtime.exceptionThrown"]
errors += [e["params"] for e in EVENTS
           if e["method"] == "Runtime.consoleAPICalled" and e["params"].get("type") == "error"]
if errors:
    fail(f"loading the page logged errors: {errors}")
if TOKEN in js("document.documentElement.outerHTML"):
    fail("the page carries the token")
if js("sessionStorage.length") != 0:
    fail("sessionStorage holds something before a token was typed")

print("check: a wrong token is refused and forgotten")
type_text("#token", "w" * 64)
enter()
until("document.getElementById('login-error').textContent.includes('token')",
      "the refusal of a wrong token is shown")
if js("sessionStorage.getItem('adbc-serve-token')") is not None:
    fail("a refused token stays in sessionStorage")

print("check: the right token shows the marked screen and the snapshot")
type_text("#token", TOKEN)
click("#login button[type=submit]")
until("document.querySelectorAll('#snapshot button.ref').length > 0 && "
      "document.getElementById('shot').naturalWidth > 0", "the screen and the snapshot are shown")
if js("sessionStorage.getItem('adbc-serve-token')") != TOKEN:
    fail("the token is not in the tab's sessionStorage")
if js("localStorage.length") != 0 or js("document.cookie") != "":
    fail("the token went to localStorage or a cookie")
if not js("document.getElementById('shot').src.startsWith('blob:')"):
    fail("the screen is not the fetched image: " + js("document.getElementById('shot').src")[:80])
size = js("[document.getElementById('shot').naturalWidth, document.getElementById('shot').naturalHeight]")
if size != [1080, 2400]:
    fail(f"the screen shown is {size}, the device's is 1080x2400")
# The marks are drawn: the ref colours of the server's marks (docs/serve.md) are in the picture.
red = js("""(() => { const i = document.getElementById('shot'), c = document.createElement('canvas');
  c.width = i.naturalWidth; c.height = i.naturalHeight; const g = c.getContext('2d');
  g.drawImage(i, 0, 0); const d = g.getImageData(0, 0, c.width, c.height).data; let n = 0;
  for (let k = 0; k < d.length; k += 4) if (d[k] === 230 && d[k + 1] === 25 && d[k + 2] === 75) n++;
  return n; })()""")
if not red:
    fail("the screen shown has no mark of ref 1's colour (230,25,75): not the marked screenshot")
lines = js("[...document.querySelectorAll('#snapshot .line')].map(l => l.textContent)")
snap_text = "\n".join(lines)
if '"Send"' not in snap_text or "[ref=" not in snap_text:
    fail(f"the snapshot shown lacks the Send button: {snap_text[:400]}")

# The ref of Send and its box, as the API gives them.
req = urllib.request.Request(URL + "/v1/snapshot", headers={"Authorization": "Bearer " + TOKEN})
api_refs = json.load(urllib.request.urlopen(req, timeout=30))["result"]["refs"]
send = [r for r in api_refs if r["text"] == "Send"][0]
n = send["ref"]
if js(f"document.querySelector('#snapshot button.ref[data-ref=\"{n}\"]') !== null") is not True:
    fail(f"ref {n} (Send) has no button in the snapshot shown")

print("check: hovering a ref's line draws its box over the screen where the ref is")
hover(f"#snapshot .line[data-ref=\"{n}\"]")
until("!document.getElementById('box').hidden", "the box is shown on hover")
box = js("(() => { const b = document.getElementById('box').getBoundingClientRect(),"
         " i = document.getElementById('shot').getBoundingClientRect();"
         " return [b.x - i.x, b.y - i.y, b.width, b.height, i.width]; })()")
k = box[4] / 1080
x1, y1, x2, y2 = send["bounds"]
want = [x1 * k, y1 * k, (x2 - x1) * k, (y2 - y1) * k]
if any(abs(a - b) > 2 for a, b in zip(box[:4], want)):
    fail(f"the box is at {box[:4]}, the ref's bounds scaled are {want}")

print("check: clicking the ref sends exactly one input tap, at the ref's point")
try:
    os.unlink(os.path.join(CTL, "calls"))
except FileNotFoundError:
    pass
js("document.getElementById('status').textContent = ''")
click(f"#snapshot button.ref[data-ref=\"{n}\"]")
until("document.getElementById('status').textContent.startsWith('looked at')",
      "the page looked again after the tap")
got = calls()
tx, ty = send["tap"]
# adbc sends it as `cmd input tap` where the device has cmd, else `input tap`.
if len(got) != 1 or got[0] not in (f"input tap {tx} {ty}", f"cmd input tap {tx} {ty}"):
    fail(f"the device was sent {got}, expected exactly one input tap at {tx} {ty}")

print("check: the agent panel starts a task and shows its steps as they come, then its end")
os.unlink(os.path.join(CTL, "calls"))
type_text("#goal", "send the draft")
click("#task-start")
until("document.getElementById('task-state').textContent.includes('completed')",
      "the task's end is shown")
steps = js("[...document.querySelectorAll('#steps li')].map(l => l.textContent)")
if len(steps) != 2 or "tap" not in steps[0] or "Send the draft." not in steps[0] or "done" not in steps[1]:
    fail(f"the steps shown: {steps}")
if "The draft is sent." not in js("document.getElementById('task-state').textContent"):
    fail("the task's answer is not shown")
got = calls()
if len(got) != 1 or not got[0].endswith(f"input tap {tx} {ty}"):
    fail(f"the task sent {got}, expected one tap at {tx} {ty}")

cdp("Emulation.setDeviceMetricsOverride", width=1280, height=860, deviceScaleFactor=1, mobile=False)
hover(f"#snapshot .line[data-ref=\"{n}\"]")
png = base64.b64decode(cdp("Page.captureScreenshot", format="png")["data"])
with open(SHOT, "wb") as f:
    f.write(png)
print(f"page screenshot: {SHOT} ({len(png)} bytes)")

print("check: the page under another name (DNS rebinding) is refused")
port = URL.rsplit(":", 1)[1]
navigate(f"http://evil.test:{port}/")
body = js("document.body.innerText")
if "bad_host" not in body:
    fail(f"http://evil.test:{port}/ was not refused: {body[:300]!r}")
print("serve_page: every check passed")
