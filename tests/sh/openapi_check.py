#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Check docs/openapi.yaml against adbc-serve's source and its real answers.

Run by tests/sh/openapi.sh, which starts the test devices and adbc-serve.
The routes and error codes of the source must be those of the document, both
ways; then every case below is sent with curl, and each answer's status must
be one the document lists for its route and its body must match the schema
the document gives for that status (the request bodies of cases meant to
succeed are checked against the request schema too). JSON Schema is checked
by the small validator here, for exactly the keywords the document uses: a
keyword it does not know fails the check instead of being ignored.

usage: openapi_check.py SOURCE_DIR URL TOKEN_FILE DEV_A DEV_B DEV_GONE
"""
import glob
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time

try:
    import yaml
except ImportError:
    sys.exit("FAIL: python3-yaml is needed to read docs/openapi.yaml (scripts/packages.txt)")

SRC, URL, TOKEN_FILE, DEV_A, DEV_B, DEV_GONE = sys.argv[1:7]
# The farm's redis-server (the server is a farm node): killed by the last case.
REDIS_PID = int(sys.argv[7]) if len(sys.argv) > 7 else 0
TOKEN = open(TOKEN_FILE).read().strip()
DOC = yaml.safe_load(open(f"{SRC}/docs/openapi.yaml"))
failures = []


def fail(msg):
    failures.append(msg)
    print(f"FAIL: {msg}", file=sys.stderr)


# ---- a JSON Schema validator for the subset the document uses ----

ANNOTATIONS = {"description", "default", "title", "contentEncoding", "contentMediaType", "example"}
TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


def resolve(ref):
    if not ref.startswith("#/"):
        raise ValueError(f"only local $ref is supported: {ref}")
    node = DOC
    for part in ref[2:].split("/"):
        node = node[part]
    return node


def validate(v, s, path="$"):
    """Errors (strings) of instance v against schema s; [] when it matches."""
    errs = []
    for k in s:
        if k not in ANNOTATIONS and k not in CHECKS:
            raise ValueError(f"schema keyword '{k}' at {path} is not supported by openapi_check.py")
    for k, check in CHECKS.items():
        if k in s:
            errs += check(v, s[k], s, path)
    return errs


def c_ref(v, ref, s, path):
    return validate(v, resolve(ref), path)


def c_type(v, t, s, path):
    ts = t if isinstance(t, list) else [t]
    return [] if any(TYPES[x](v) for x in ts) else [f"{path}: {json.dumps(v)[:80]} is not {t}"]


def c_const(v, c, s, path):
    return [] if v == c and type(v) == type(c) else [f"{path}: {json.dumps(v)[:80]} is not {c!r}"]


def c_enum(v, e, s, path):
    return [] if v in e else [f"{path}: {json.dumps(v)[:80]} is not one of {e}"]


def c_properties(v, props, s, path):
    if not isinstance(v, dict):
        return []
    errs = []
    for k, sub in props.items():
        if k in v:
            errs += validate(v[k], sub, f"{path}.{k}")
    return errs


def c_required(v, req, s, path):
    if not isinstance(v, dict):
        return []
    return [f"{path}: required member '{k}' missing" for k in req if k not in v]


def c_additional(v, a, s, path):
    if not isinstance(v, dict):
        return []
    extra = [k for k in v if k not in s.get("properties", {})]
    if a is False:
        return [f"{path}: member '{k}' is not in the document" for k in extra]
    if a is True:
        return []
    errs = []
    for k in extra:
        errs += validate(v[k], a, f"{path}.{k}")
    return errs


def c_items(v, it, s, path):
    if not isinstance(v, list):
        return []
    errs = []
    for i, x in enumerate(v):
        errs += validate(x, it, f"{path}[{i}]")
    return errs


def bound(name, test):
    def check(v, n, s, path):
        ok = test(v, n)
        return [] if ok is None or ok else [f"{path}: {json.dumps(v)[:80]} breaks {name} {n}"]
    return check


def c_oneof(v, subs, s, path):
    results = [validate(v, sub, path) for sub in subs]
    n = sum(1 for r in results if not r)
    if n == 1:
        return []
    if n == 0:
        return [f"{path}: matches none of oneOf: " + "; ".join(r[0] for r in results)]
    return [f"{path}: matches {n} of oneOf, exactly one must"]


def num(v):
    return TYPES["number"](v)


CHECKS = {
    "$ref": c_ref,
    "type": c_type,
    "const": c_const,
    "enum": c_enum,
    "properties": c_properties,
    "required": c_required,
    "additionalProperties": c_additional,
    "items": c_items,
    "oneOf": c_oneof,
    "minItems": bound("minItems", lambda v, n: len(v) >= n if isinstance(v, list) else None),
    "maxItems": bound("maxItems", lambda v, n: len(v) <= n if isinstance(v, list) else None),
    "minLength": bound("minLength", lambda v, n: len(v) >= n if isinstance(v, str) else None),
    "maxLength": bound("maxLength", lambda v, n: len(v) <= n if isinstance(v, str) else None),
    "minimum": bound("minimum", lambda v, n: v >= n if num(v) else None),
    "maximum": bound("maximum", lambda v, n: v <= n if num(v) else None),
    "minProperties": bound("minProperties", lambda v, n: len(v) >= n if isinstance(v, dict) else None),
    "pattern": bound("pattern", lambda v, p: re.search(p, v) is not None if isinstance(v, str) else None),
}


def self_test():
    """The validator must reject what it should, or every check below is void."""
    bad = [
        ({"ok": True, "error": {"code": "stale", "message": "m"}}, "ErrorAnswer"),
        ({"ok": False, "error": {"code": "nope", "message": "m"}}, "ErrorAnswer"),
        ({"ok": False, "error": {"code": "stale", "message": "m", "x": 1}}, "ErrorAnswer"),
        ({"ok": False, "error": {"code": "stale"}}, "ErrorAnswer"),
        ({"ok": True, "result": {"status": "ok", "version": "0.2.0", "devices": "2"}}, "HealthAnswer"),
        ({"ref": 1, "class": "c", "text": "", "desc": "", "id": "", "states": ["pressed"],
          "bounds": [0, 0, 1, 1], "tap": [0, 0]}, "Ref"),
        ({"ref": 1, "class": "c", "text": "", "desc": "", "id": "", "states": [],
          "bounds": [0, 0, 1], "tap": [0, 0]}, "Ref"),
        ({"action": "tap", "ref": 0}, "ActRequest"),
        ({"op": "top", "package": "x"}, "AppRequest"),
    ]
    for inst, name in bad:
        if not validate(inst, {"$ref": f"#/components/schemas/{name}"}):
            fail(f"validator self-test: {json.dumps(inst)} passed as {name}")
    good = ({"ok": False, "error": {"code": "stale", "message": "m"}}, "ErrorAnswer")
    if validate(good[0], {"$ref": f"#/components/schemas/{good[1]}"}):
        fail("validator self-test: a valid error envelope was refused")


# ---- the document against the source ----

def doc_routes():
    ops = set()
    for path, item in DOC["paths"].items():
        for method in item:
            if method in ("get", "post", "put", "delete", "patch", "head", "options"):
                ops.add((path, method.upper()))
    return ops


def source_routes():
    """The routes[] tables of tools/adbc-serve/*.c (routes.c's and those of
    the files that keep their own routes)."""
    text = open(f"{SRC}/tools/adbc-serve/routes.c").read()
    m = re.search(r"routes\[\]\s*=\s*\{(.*?)\};", text, re.S)
    if not m:
        fail("tools/adbc-serve/routes.c: no routes[] table found (the check must be updated)")
        return set()
    found = set()
    for f in sorted(glob.glob(f"{SRC}/tools/adbc-serve/*.c")):
        for m in re.finditer(r"routes\[\]\s*=\s*\{(.*?)\};", open(f).read(), re.S):
            found |= set(re.findall(r'\{\s*"(/[^"]*)"\s*,\s*"([A-Z]+)"\s*\}', m.group(1)))
    if len(found) < 3:
        fail(f"tools/adbc-serve/routes.c: only {len(found)} routes read from routes[]")
    return found


def source_codes():
    codes = set()
    ops = open(f"{SRC}/tools/ops/ops_err.c").read()
    m = re.search(r"ops_code_name\(.*?\n\}", ops, re.S)
    codes |= set(re.findall(r'return "([a-z_]+)";', m.group(0))) if m else set()
    codes.discard("ok")
    for f in sorted(glob.glob(f"{SRC}/tools/adbc-serve/*.c")):
        text = open(f).read()
        codes |= set(re.findall(r'err2\(\s*"([a-z_]+)"', text))
        codes |= set(re.findall(r'serve_error_json\(\s*"([a-z_]+)"', text))
        codes |= set(re.findall(r'send_err\([^,]+,\s*\d+,\s*"([a-z_]+)"', text))
        # gate.c's answers: answer(fd, "503 Service Unavailable", "server_busy", ...)
        codes |= set(re.findall(r'answer\([^,]+,\s*"\d{3} [^"]*",\s*"([a-z_]+)"', text))
    return codes


def check_source():
    d, s = doc_routes(), source_routes()
    for r in sorted(s - d):
        fail(f"route {r[1]} {r[0]} is in tools/adbc-serve/routes.c but not in docs/openapi.yaml")
    for r in sorted(d - s):
        fail(f"route {r[1]} {r[0]} is in docs/openapi.yaml but not in tools/adbc-serve/routes.c")
    doc_codes = set(DOC["components"]["schemas"]["ErrorCode"]["enum"])
    src = source_codes()
    if len(src) < 5:
        fail(f"only {len(src)} error codes read from the source: {sorted(src)}")
    for c in sorted(src - doc_codes):
        fail(f"error code '{c}' is answered by adbc-serve but not in ErrorCode")
    for c in sorted(doc_codes - src):
        fail(f"error code '{c}' is in ErrorCode but adbc-serve never answers it")
    ver = re.search(r'#define ADBC_VERSION_STRING "([^"]+)"',
                    open(f"{SRC}/include/adbc/version.h").read()).group(1)
    if DOC["info"]["version"] != ver:
        fail(f"info.version is {DOC['info']['version']}, include/adbc/version.h says {ver}")
    print(f"source: {len(s)} routes, {len(src)} error codes; the document has the same")


# ---- real answers ----

seen = {}          # (path, method) -> statuses answered
codes_seen = set()
lock = threading.Lock()


def doc_path(path):
    """The document's path for a concrete one: itself, or the template
    ("/v1/tools/{name}") it fills."""
    if path in DOC["paths"]:
        return path
    for p in DOC["paths"]:
        if "{" in p and re.fullmatch(re.sub(r"\\\{[^}]*\\\}", "[^/]+", re.escape(p)), path):
            return p
    return path


def call(method, path, query="", body=None, token=TOKEN, expect=None, code=None, raw=None, host=None):
    """Send one request with curl and check the answer against the document."""
    cmd = ["curl", "-s", "-m", "60", "-o", "-", "-w", "\n%{http_code} %{content_type}", "-X", method]
    if host is not None:
        cmd += ["-H", f"Host: {host}"]
    if token is not None:
        cmd += ["-H", f"Authorization: Bearer {token}"]
    data = None
    if raw is not None:
        data = raw
    elif body is not None:
        data = json.dumps(body).encode()
    if data is not None:
        cmd += ["-H", "Content-Type: application/json", "--data-binary", "@-"]
    url = URL + path + (("?" + query) if query else "")
    p = subprocess.run(cmd + [url], input=data or b"", capture_output=True, timeout=90)
    out = p.stdout
    cut = out.rfind(b"\n")
    content, tail = out[:cut], out[cut + 1:].decode()
    status, _, ctype = tail.partition(" ")
    what = f"{method} {path}{'?' + query if query else ''}"
    if p.returncode != 0 or not status.isdigit():
        fail(f"{what}: curl failed ({p.returncode}): {p.stderr.decode()[:200]}")
        return None
    status = int(status)
    if expect is not None and status != expect:
        fail(f"{what}: status {status}, the case expects {expect}: {content[:300]!r}")
    path = doc_path(path)
    item = DOC["paths"].get(path, {}).get(method.lower())
    if host is not None:
        resp = DOC["components"]["responses"]["BadHost"]  # the Host is checked before all
        if status != 403:
            fail(f"{what}: Host {host}, answered {status} instead of 403")
    elif item is None and token is None and path.startswith("/v1/"):
        resp = DOC["components"]["responses"]["Error"]  # the token is checked first
        if status != 401:
            fail(f"{what}: no token, answered {status} instead of 401")
    elif item is None and path in DOC["paths"]:
        if status != 405:
            fail(f"{what}: the route does not take {method}, answered {status} instead of 405")
        resp = DOC["components"]["responses"]["MethodNotAllowed"]
    elif item is None:
        if status != 404:
            fail(f"{what}: no route in the document, answered {status} instead of 404")
        resp = DOC["components"]["responses"]["NoRoute"]
    else:
        with lock:
            seen.setdefault((path, method), set()).add(status)
        resp = item["responses"].get(str(status))
        if resp is None:
            fail(f"{what}: status {status} is not among the document's {sorted(item['responses'])}: {content[:300]!r}")
            return None
        if "$ref" in resp:
            resp = resolve(resp["$ref"])
        if status == 200 and body is not None and "requestBody" in item:
            schema = item["requestBody"]["content"]["application/json"]["schema"]
            for e in validate(body, schema, "request"):
                fail(f"{what}: a request that succeeded does not match the request schema: {e}")
    (mtype, media), = resp["content"].items()
    if not ctype.startswith(mtype):
        fail(f"{what}: Content-Type '{ctype}', the document says {mtype}")
        return None
    if mtype == "text/event-stream":
        text = content.decode()
        if not text.endswith("\n\n") or "event: " not in text:
            fail(f"{what}: not a stream of events: {text[:200]!r}")
        return text
    if mtype == "image/png":
        if not content.startswith(b"\x89PNG\r\n\x1a\n"):
            fail(f"{what}: not a PNG ({len(content)} bytes)")
        return content
    try:
        doc = json.loads(content)
    except ValueError as e:
        fail(f"{what}: not JSON ({e}): {content[:200]!r}")
        return None
    for e in validate(doc, media["schema"]):
        fail(f"{what} ({status}): {e}")
    if isinstance(doc, dict) and doc.get("ok") is False and isinstance(doc.get("error"), dict):
        with lock:
            codes_seen.add(doc["error"].get("code"))
        if code is not None and doc["error"].get("code") != code:
            fail(f"{what}: error code {doc['error'].get('code')}, the case expects {code}")
    elif code is not None:
        fail(f"{what}: no error, the case expects {code}")
    return doc


def ref_of(obs, text):
    for r in obs["result"]["refs"]:
        if r["text"] == text:
            return r["ref"]
    fail(f"no ref with text {text!r} in {[r['text'] for r in obs['result']['refs']]}")
    return 1


def cases():
    A, B, C = f"device={DEV_A}", f"device={DEV_B}", f"device={DEV_GONE}"
    # /health and what every route shares
    h = call("GET", "/health", token=None, expect=200)
    if h and h["result"]["devices"] != 3:
        fail(f"/health says {h['result']['devices']} devices, 3 were given")
    call("POST", "/health", token=None, expect=405, code="method_not_allowed")
    call("GET", "/v1/devices", token=None, expect=401, code="unauthorized")
    call("GET", "/v1/devices", token="x" * 64, expect=401, code="unauthorized")
    call("GET", "/v1/no-such-route", expect=404, code="no_route")
    for path in ("/health", "/v1/devices", "/v1/no-such-route"):
        call("GET", path, host="rebound.example", expect=403, code="bad_host")
    call("POST", "/v1/devices", expect=405, code="method_not_allowed")
    call("POST", "/v1/act", query=A, raw=b"{" + b" " * 5000 + b"}", expect=413, code="too_large")
    # /v1/devices: the gone device has its error
    for _ in range(200):
        d = call("GET", "/v1/devices", expect=200)
        states = {x["device"]: x for x in d["result"]} if d else {}
        if states.get(DEV_GONE, {}).get("state") == "gone":
            break
        time.sleep(0.05)
    if states.get(DEV_GONE, {}).get("state") != "gone" or not states[DEV_GONE].get("error"):
        fail(f"the stopped device is not listed gone with its error: {states.get(DEV_GONE)}")
    # observe
    call("GET", "/v1/observe", expect=400, code="bad_request")  # several devices, none named
    call("GET", "/v1/observe", query="device=no-such", expect=404, code="not_found")
    call("GET", "/v1/observe", query=A + "&wait=soon", expect=400, code="bad_request")
    call("GET", "/v1/observe", query=C, expect=502, code="device_gone")
    obs = call("GET", "/v1/observe", query=A, expect=200)
    o2 = call("GET", "/v1/observe", query=A + "&screenshot=1", expect=200)
    if o2 and not o2["result"].get("screenshot"):
        fail("observe?screenshot=1 carries no screenshot")
    o3 = call("GET", "/v1/observe", query=A + "&screenshot=1&marks=1", expect=200)
    if o3 and not o3["result"].get("screenshot", "").startswith("iVBORw0KGgo"):
        fail("observe?screenshot=1&marks=1 carries no PNG")
    call("POST", "/v1/observe", query=A, expect=405, code="method_not_allowed")
    # snapshot
    call("GET", "/v1/snapshot", query=A, expect=200)
    t = call("GET", "/v1/snapshot", query=A + "&format=json", expect=200)
    if t and not isinstance(t["result"]["snapshot"], dict):
        fail("snapshot?format=json did not answer the tree")
    call("GET", "/v1/snapshot", query=A + "&format=xml", expect=400, code="bad_request")
    call("GET", "/v1/snapshot", query=C, expect=502, code="device_gone")
    # screenshot
    call("GET", "/v1/screenshot", query=A, expect=200)
    call("GET", "/v1/screenshot", query=A + "&marks=1", expect=200)
    call("GET", "/v1/screenshot", query=C, expect=502, code="device_gone")
    call("POST", "/v1/screenshot", query=A, expect=405, code="method_not_allowed")
    # act: every action, and each way an act is refused
    obs = call("GET", "/v1/observe", query=A, expect=200)
    send = ref_of(obs, "Send") if obs else 1
    sid = obs["result"]["snapshot_id"] if obs else "0" * 16
    call("POST", "/v1/act", query=A, body={"action": "tap", "ref": send, "snapshot": sid,
                                           "settle_ms": 0}, expect=200)
    call("POST", "/v1/act", query=A, body={"action": "tap", "ref": send, "screenshot": True}, expect=200)
    call("POST", "/v1/act", body={"action": "tap", "selector": {"text": "Send"}, "device": DEV_A},
         expect=200)
    call("POST", "/v1/act", query=A, body={"action": "tap", "x": 10, "y": 20}, expect=200)
    call("POST", "/v1/act", query=A, body={"action": "tap", "cell": "C5"}, expect=200)
    call("POST", "/v1/act", query=A, body={"action": "long_press", "ref": send, "duration_ms": 50},
         expect=200)
    call("POST", "/v1/act", query=A, body={"action": "type", "text": "hi", "clear": True,
                                           "selector": {"text": "draft"}}, expect=200)
    call("POST", "/v1/act", query=A, body={"action": "type", "text": "hi"}, expect=200)
    call("POST", "/v1/act", query=A, body={"action": "press", "key": "enter"}, expect=200)
    call("POST", "/v1/act", query=A, body={"action": "swipe", "x1": 1, "y1": 2, "x2": 3, "y2": 4,
                                           "duration_ms": 10}, expect=200)
    call("POST", "/v1/act", query=A, body={"action": "scroll", "direction": "down"}, expect=200)
    call("POST", "/v1/act", query=A, body={"action": "back"}, expect=200)
    call("POST", "/v1/act", query=A, body={"action": "home"}, expect=200)
    call("POST", "/v1/act", query=A, body={"action": "tap", "ref": 999}, expect=404, code="unknown_ref")
    call("POST", "/v1/act", query=A, body={"action": "tap", "ref": send, "snapshot": "0" * 16},
         expect=409, code="stale")
    call("POST", "/v1/act", query=A, body={"action": "tap", "selector": {"text": "Nowhere"}},
         expect=404, code="not_found")
    call("POST", "/v1/act", query=B, body={"action": "tap", "selector": {"text": "Reply"}},
         expect=409, code="ambiguous")
    call("POST", "/v1/act", query=A, body={"action": "fly"}, expect=400, code="bad_request")
    call("POST", "/v1/act", query=A, body={"action": "tap", "ref": 1, "colour": "red"},
         expect=400, code="bad_request")
    call("POST", "/v1/act", query=A, raw=b"tap 3", expect=400, code="bad_json")
    call("POST", "/v1/act", query=C, body={"action": "back"}, expect=502, code="device_gone")
    call("GET", "/v1/act", query=A, expect=405, code="method_not_allowed")
    # app
    call("POST", "/v1/app", query=A, body={"op": "top"}, expect=200)
    call("POST", "/v1/app", query=A, body={"op": "launch", "package": "com.listed"}, expect=200)
    call("POST", "/v1/app", query=A, body={"op": "stop", "package": "com.listed"}, expect=200)
    call("POST", "/v1/app", query=A, body={"op": "intent", "action": "android.intent.action.VIEW",
                                           "data": "https://example.com",
                                           "extras": [{"type": "int", "key": "n", "value": "5"}]},
         expect=200)
    call("POST", "/v1/app", query=A, body={"op": "launch", "package": "com.not.installed"},
         expect=500, code="failed")
    call("POST", "/v1/app", query=A, body={"op": "fly"}, expect=400, code="bad_request")
    call("POST", "/v1/app", query=A, raw=b"[]", expect=400, code="bad_json")
    call("POST", "/v1/app", query=C, body={"op": "top"}, expect=502, code="device_gone")
    call("GET", "/v1/app", query=A, expect=405, code="method_not_allowed")
    # wait
    call("POST", "/v1/wait", query=A, body={"text": "Send", "timeout_ms": 20000}, expect=200)
    call("POST", "/v1/wait", query=A, body={"text": "Nowhere", "gone": True, "contains": True,
                                            "ignore_case": True}, expect=200)
    call("POST", "/v1/wait", query=A, body={"stable": True, "timeout_ms": 20000}, expect=200)
    call("POST", "/v1/wait", query=A, body={"text": 5}, expect=400, code="bad_request")
    call("POST", "/v1/wait", query=C, body={"stable": True}, expect=502, code="device_gone")
    call("GET", "/v1/wait", query=A, expect=405, code="method_not_allowed")
    # the tool table
    tl = call("GET", "/v1/tools", expect=200)
    if tl and "tap" not in [t["name"] for t in tl["result"]]:
        fail("GET /v1/tools lists no tap")
    call("POST", "/v1/tools", expect=405, code="method_not_allowed")
    call("POST", "/v1/tools/snapshot", query=A, expect=200)
    call("POST", "/v1/tools/screenshot", query=A, body={"include_image": True}, expect=200)
    call("POST", "/v1/tools/tap", body={"selector": {"text": "Send"}, "device": DEV_A}, expect=200)
    call("POST", "/v1/tools/tap", query=A, body={"ref": 999}, expect=404, code="unknown_ref")
    call("POST", "/v1/tools/tap", query=B, body={"selector": {"text": "Reply"}}, expect=409,
         code="ambiguous")
    call("POST", "/v1/tools/tap", query=A, body={"ref": 1, "colour": "red"}, expect=400,
         code="bad_request")
    call("POST", "/v1/tools/tap", query=A, raw=b"tap 3", expect=400, code="bad_json")
    call("POST", "/v1/tools/no_such_tool", query=A, body={}, expect=404, code="not_found")
    call("POST", "/v1/tools/launch", query=A, body={"package": "com.not.installed"}, expect=500,
         code="failed")
    call("POST", "/v1/tools/back", query=C, expect=502, code="device_gone")
    call("GET", "/v1/tools/tap", query=A, expect=405, code="method_not_allowed")
    # busy and timeout: a wait that cannot be met holds device B until it
    # runs out (504); while /v1/devices shows B held, a call with ?wait=0 is
    # refused (423) at once. Nothing here depends on how fast the machine is:
    # the holder's bound is long, and the check waits for "busy" to show.
    holder = threading.Thread(target=call, args=("POST", "/v1/wait"), kwargs=dict(
        query=B, body={"text": "never shown", "timeout_ms": 15000}, expect=504, code="timeout"))
    holder.start()
    held = False
    for _ in range(400):
        d = call("GET", "/v1/devices", expect=200)
        if d and any(x["device"] == DEV_B and x["busy"] for x in d["result"]):
            held = True
            break
        time.sleep(0.025)
    if not held:
        fail("device B never showed busy while a wait held it")
    else:
        for path, method, body in (("/v1/observe", "GET", None), ("/v1/snapshot", "GET", None),
                                   ("/v1/screenshot", "GET", None),
                                   ("/v1/act", "POST", {"action": "back"}),
                                   ("/v1/app", "POST", {"op": "top"}),
                                   ("/v1/wait", "POST", {"stable": True}),
                                   ("/v1/tools/top_activity", "POST", {})):
            call(method, path, query=B + "&wait=0", body=body, expect=423, code="busy")
    holder.join()


def tasks_cases():
    A = f"device={DEV_A}"
    call("GET", "/v1/settings", expect=200)
    call("PUT", "/v1/settings", body={"max_steps": 5, "step_delay_ms": 0, "provider": "openai",
                                      "model": "scripted"}, expect=200)
    call("PUT", "/v1/settings", body={"max_steps": 0}, expect=400, code="bad_request")
    call("POST", "/v1/settings", expect=405, code="method_not_allowed")
    t = call("POST", "/v1/tasks", query=A, body={"goal": "say ok", "max_steps": 2}, expect=202)
    tid = t["result"]["id"] if t else "t1"
    for _ in range(600):
        one = call("GET", f"/v1/tasks/{tid}", expect=200)
        if not one or one["result"]["status"] not in ("pending", "running"):
            break
        time.sleep(0.05)
    if one and one["result"]["status"] != "completed":
        fail(f"the task did not complete: {one}")
    ev = call("GET", f"/v1/tasks/{tid}/events", expect=200)
    if ev and not ev.rstrip().split("\n\n")[-1].startswith("event: end"):
        fail(f"the events of an ended task do not end with its end: {ev[-200:]!r}")
    call("GET", "/v1/tasks", expect=200)
    call("POST", f"/v1/tasks/{tid}/cancel", expect=200)
    call("GET", "/v1/tasks/nope", expect=404, code="not_found")
    call("POST", "/v1/tasks", query=A, body={"goal": ""}, expect=400, code="bad_request")
    # A task that waits for its model holds the device's task slot: 409.
    t = call("POST", "/v1/tasks", query=A, body={"goal": "wait"}, expect=202)
    tid = t["result"]["id"] if t else "t2"
    call("POST", "/v1/tasks", query=A, body={"goal": "another"}, expect=409, code="task_running")
    call("POST", f"/v1/tasks/{tid}/cancel", expect=200)
    for _ in range(600):
        one = call("GET", f"/v1/tasks/{tid}", expect=200)
        if not one or one["result"]["status"] not in ("pending", "running"):
            break
        time.sleep(0.05)


def farm_cases():
    """The farm's routes on a node of a farm with one node (docs/farm.md)."""
    if not REDIS_PID:
        fail("no redis-server pid: the farm's routes cannot be checked")
        return
    for _ in range(200):
        n = call("GET", "/v1/farm", expect=200)
        if n and n["result"]["available"]:
            break
        time.sleep(0.05)
    for _ in range(200):
        d = call("GET", "/v1/farm/devices", expect=200)
        if d and any(x["serial"] == DEV_A and "sdk" in x for x in d["result"]["devices"]):
            break
        time.sleep(0.1)
    t = call("POST", "/v1/farm/tasks", body={"goal": "say ok", "max_steps": 2,
                                            "select": {"serial": DEV_A}}, expect=202)
    fid = t["result"]["id"] if t else "f1"
    one = None
    for _ in range(600):
        one = call("GET", f"/v1/farm/tasks/{fid}", expect=200)
        if not one or one["result"]["status"] not in ("queued", "running"):
            break
        time.sleep(0.05)
    if one and one["result"]["status"] != "completed":
        fail(f"the farm task did not complete: {one}")
    ev = call("GET", f"/v1/farm/tasks/{fid}/events", expect=200)
    if ev and "event: end" not in ev.rstrip().split("\n\n")[-1]:
        fail(f"the events of an ended farm task do not end with its end: {ev[-200:]!r}")
    call("GET", "/v1/farm/tasks", expect=200)
    call("POST", f"/v1/farm/tasks/{fid}/cancel", expect=200)
    call("GET", "/v1/farm/tasks/nope", expect=404, code="not_found")
    call("GET", "/v1/farm/tasks/nope/events", expect=404, code="not_found")
    call("POST", "/v1/farm/tasks/nope/cancel", expect=404, code="not_found")
    call("POST", "/v1/farm/tasks", body={"goal": ""}, expect=400, code="bad_request")
    call("POST", "/v1/farm/tasks", body={"goal": "x", "select": {"sdk": 3}}, expect=400,
         code="bad_request")
    call("POST", "/v1/farm/tasks", raw=b"goal", expect=400, code="bad_json")
    call("DELETE", "/v1/farm/tasks", expect=405, code="method_not_allowed")
    # Redis gone: the farm's routes say so, the node's own go on.
    os.kill(REDIS_PID, signal.SIGKILL)
    for _ in range(200):
        d = call("GET", "/v1/farm/devices")
        if d and d.get("ok") is False:
            break
        time.sleep(0.05)
    call("GET", "/v1/farm/devices", expect=503, code="farm_unavailable")
    call("POST", "/v1/farm/tasks", body={"goal": "x"}, expect=503, code="farm_unavailable")
    call("GET", "/v1/devices", expect=200)


def coverage():
    for (path, method) in sorted(doc_routes()):
        st = seen.get((path, method), set())
        if not any(200 <= x < 300 for x in st):
            fail(f"{method} {path} never succeeded (2xx) in the cases")
    # "stopping" is answered only while the server stops on SIGTERM, which
    # these cases do not do: tests/sh/serve_stop.sh checks it. "server_busy"
    # only when 64 connections hold every place past a request's deadline:
    # tests/sh/serve_gate.sh checks it.
    missing = (set(DOC["components"]["schemas"]["ErrorCode"]["enum"]) - codes_seen -
               {"stopping", "server_busy"})
    for c in sorted(missing):
        fail(f"error code '{c}' was never answered by the cases")
    pairs = sum(len(v) for v in seen.values())
    listed = sum(len(DOC["paths"][p][m.lower()]["responses"]) for (p, m) in doc_routes())
    print(f"answers: {pairs} of the document's {listed} route/status pairs seen, "
          f"{len(codes_seen)} error codes")


self_test()
check_source()
cases()
tasks_cases()
farm_cases()
coverage()
if failures:
    print(f"openapi: {len(failures)} failures", file=sys.stderr)
    sys.exit(1)
print("openapi: every answer matches docs/openapi.yaml")
