#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A scripted language model for adbc's tests, on loopback.

It speaks both wire formats the agent uses (tools/ops/ops_llm.h): OpenAI's
chat completions (POST .../chat/completions) and Anthropic's Messages
(POST .../v1/messages), answers each request with the next turn of a
script, checks what it was sent, and records every request, so a test can
assert what the agent asked and what it was told. Python's standard library
only.

    model_server.py --script S.json --record R.jsonl --port-file P [--key K]

The port it listens on (127.0.0.1, chosen by the system) is written to P
once it accepts connections. The script is {"turns": [TURN, ...]}; request
number i gets turn i (requests past the last turn get HTTP 500, "script
exhausted"). A turn is {"expect": {...}, "answer": {...}}, both optional.

expect (a failed check answers HTTP 400 with a provider-style error whose
message starts "model_server: check failed:", and is recorded):
    format         "openai" | "anthropic": the endpoint asked
    model          the request's model
    tools          names that must all be in the request's tool table
    tool_choice    true: the request forces a tool call (openai "required",
                   anthropic {"type":"any"})
    contains       strings that must each be in the request's text (system
                   prompt, every message's text and tool results)
    not_contains   strings that must not be
    last_contains  strings the last message's text must contain (the
                   current snapshot, a hint after failures)
    image          true: the last user message carries a PNG
    messages       the number of messages as sent (in the format's own terms)

answer (default: {"text": "ok"}):
    tool, args, text, id   one tool call (args an object, default {}), with
                           the model's text (its reasoning) before it
    calls                  [{"tool", "args"}, ...]: several calls in one answer
    args_raw               the call's arguments as raw text (openai: the
                           "arguments" string; anthropic: the raw "input" value)
    text                   text alone (no call)
    usage                  [tokens_in, tokens_out] (default [100, 10])
    status                 an HTTP status (e.g. 429, 500, 401) with a provider-
                           style error body; "error" gives its message
    retry_after            the Retry-After header's value (seconds or a date)
    retry_after_ms         the retry-after-ms header's value
    location               a Location header (for a 3xx)
    body_raw               this exact body instead (malformed answers)
    no_choices             true: an answer without choices / content
    delay_ms               wait before answering
    write                  [PATH, TEXT]: write TEXT to the file PATH first (a test's
                           device screen that changes while the model is asked)
    hang                   seconds to hold the request without answering
                           (a model that never answers), then close

Each request is one JSON line in the record file, written before its
answer is sent: n (its number), t_recv and t_sent (time.monotonic(),
seconds; the answer leaves after t_sent; null for a hang), format, path, headers (the auth
header's value, when it is exactly the expected key, is written "<key>"; a
different one is written "<other>": the key itself is never written, so a
key anywhere in the record is a leak), body (the JSON sent, or the text
when it was not JSON), check ("ok" or what failed).
"""

import argparse
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def texts_openai(body):
    out = []
    for m in body.get("messages", []):
        c = m.get("content")
        if isinstance(c, str):
            out.append(c)
        elif isinstance(c, list):
            for p in c:
                if isinstance(p, dict) and isinstance(p.get("text"), str):
                    out.append(p["text"])
        for call in m.get("tool_calls") or []:
            out.append(json.dumps(call.get("function", {})))
    return out


def texts_anthropic(body):
    out = []
    if isinstance(body.get("system"), str):
        out.append(body["system"])
    for m in body.get("messages", []):
        c = m.get("content")
        if isinstance(c, str):
            out.append(c)
            continue
        for b in c or []:
            if not isinstance(b, dict):
                continue
            if b.get("type") == "text":
                out.append(b.get("text", ""))
            elif b.get("type") == "tool_result":
                r = b.get("content")
                out.append(r if isinstance(r, str) else json.dumps(r))
            elif b.get("type") == "tool_use":
                out.append(json.dumps(b.get("input")))
    return out


def last_message(fmt, body):
    msgs = body.get("messages") or []
    if not msgs:
        return "", False
    m = msgs[-1]
    c = m.get("content")
    if isinstance(c, str):
        return c, False
    text, image = [], False
    for b in c or []:
        if not isinstance(b, dict):
            continue
        t = b.get("type")
        if t == "text":
            text.append(b.get("text", ""))
        elif t == "tool_result":
            r = b.get("content")
            text.append(r if isinstance(r, str) else json.dumps(r))
        elif t == "image" and fmt == "anthropic":
            image = b.get("source", {}).get("media_type") == "image/png"
        elif t == "image_url" and fmt == "openai":
            image = b.get("image_url", {}).get("url", "").startswith("data:image/png;base64,")
    return "\n".join(text), image


def check(fmt, body, expect):
    """What failed, or None."""
    if not isinstance(body, dict):
        return "the request body is not a JSON object"
    if "format" in expect and expect["format"] != fmt:
        return "format %s, expected %s" % (fmt, expect["format"])
    if "model" in expect and body.get("model") != expect["model"]:
        return "model %r, expected %r" % (body.get("model"), expect["model"])
    tools = body.get("tools") or []
    if fmt == "openai":
        names = [t.get("function", {}).get("name") for t in tools]
    else:
        names = [t.get("name") for t in tools]
    for n in expect.get("tools", []):
        if n not in names:
            return "tool %r not in the tool table %r" % (n, names)
    if expect.get("tool_choice"):
        tc = body.get("tool_choice")
        forced = tc == "required" if fmt == "openai" else (
            isinstance(tc, dict) and tc.get("type") == "any")
        if not forced:
            return "tool_choice %r does not force a call" % (tc,)
    all_text = "\n".join(texts_openai(body) if fmt == "openai" else texts_anthropic(body))
    for s in expect.get("contains", []):
        if s not in all_text:
            return "the request's text does not contain %r" % s
    for s in expect.get("not_contains", []):
        if s in all_text:
            return "the request's text contains %r" % s
    last, image = last_message(fmt, body)
    for s in expect.get("last_contains", []):
        if s not in last:
            return "the last message does not contain %r: %r" % (s, last[:300])
    if "image" in expect and bool(expect["image"]) != image:
        return "the last message %s a PNG" % ("lacks" if expect["image"] else "has")
    if "messages" in expect and len(body.get("messages") or []) != expect["messages"]:
        return "%d messages, expected %d" % (len(body.get("messages") or []), expect["messages"])
    return None


def error_body(fmt, status, message):
    if fmt == "anthropic":
        kind = {400: "invalid_request_error", 401: "authentication_error",
                429: "rate_limit_error", 529: "overloaded_error"}.get(status, "api_error")
        return {"type": "error", "error": {"type": kind, "message": message}}
    return {"error": {"message": message, "type": "server_error" if status >= 500
                      else "invalid_request_error", "code": None}}


def answer_body(fmt, n, a):
    usage = a.get("usage", [100, 10])
    calls = a.get("calls")
    if calls is None and "tool" in a:
        calls = [{"tool": a["tool"], "args": a.get("args", {}), "id": a.get("id")}]
    calls = calls or []
    text = a.get("text")
    if fmt == "openai":
        if a.get("no_choices"):
            return {"id": "chatcmpl-%d" % n, "object": "chat.completion", "choices": []}
        msg = {"role": "assistant", "content": text}
        if calls:
            tcs = []
            for i, c in enumerate(calls):
                args = a["args_raw"] if "args_raw" in a and i == 0 else json.dumps(c.get("args", {}))
                tcs.append({"id": c.get("id") or "call_%d_%d" % (n, i), "type": "function",
                            "function": {"name": c["tool"], "arguments": args}})
            msg["tool_calls"] = tcs
        return {"id": "chatcmpl-%d" % n, "object": "chat.completion", "created": int(time.time()),
                "model": "scripted",
                "choices": [{"index": 0, "message": msg,
                             "finish_reason": "tool_calls" if calls else "stop"}],
                "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1],
                          "total_tokens": usage[0] + usage[1]}}
    if a.get("no_choices"):
        return {"id": "msg_%d" % n, "type": "message", "role": "assistant"}
    content = []
    if text:
        content.append({"type": "text", "text": text})
    for i, c in enumerate(calls):
        content.append({"type": "tool_use", "id": c.get("id") or "toolu_%d_%d" % (n, i),
                        "name": c["tool"], "input": c.get("args", {})})
    return {"id": "msg_%d" % n, "type": "message", "role": "assistant", "model": "scripted",
            "content": content, "stop_reason": "tool_use" if calls else "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": usage[0], "output_tokens": usage[1]}}


class State:
    def __init__(self, script, record, key):
        self.turns = script.get("turns", [])
        self.record = record
        self.key = key
        self.n = 0
        self.lock = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "model_server"
    # An answer leaves in one write with Nagle off: a head and a body in two
    # small segments would wait out the client's delayed ACK (40 ms), which
    # is no model's time.
    wbufsize = 1 << 16
    disable_nagle_algorithm = True

    def log_message(self, fmt, *args):  # quiet: the record file says it all
        pass

    def send(self, status, body, headers=None):
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def do_POST(self):
        st = self.server.state
        t_recv = time.monotonic()
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length > 0 else b""
        path = self.path
        fmt = "anthropic" if path.endswith("/v1/messages") else (
            "openai" if path.endswith("/chat/completions") else "unknown")
        with st.lock:
            n = st.n
            st.n += 1
        headers = {}
        for k, v in self.headers.items():
            k = k.lower()
            if st.key and k in ("authorization", "x-api-key"):
                want = ("Bearer " + st.key) if k == "authorization" else st.key
                v = "<key>" if v == want else "<other>"
            headers[k] = v
        try:
            body = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            body = raw.decode("utf-8", "replace")
        turn = st.turns[n] if n < len(st.turns) else None
        result = "ok"
        status, out, extra = 200, None, {}
        if fmt == "unknown":
            result = "unknown path " + path
            status, out = 404, error_body("openai", 404, "model_server: no route " + path)
        elif turn is None:
            result = "script exhausted"
            status, out = 500, error_body(fmt, 500, "model_server: script exhausted at request %d" % n)
        else:
            why = check(fmt, body, turn.get("expect", {}))
            if why:
                result = "failed: " + why
                status, out = 400, error_body(fmt, 400, "model_server: check failed: " + why)
        a = (turn or {}).get("answer", {"text": "ok"})
        if result == "ok":
            if a.get("write"):
                with open(a["write"][0], "w") as f:
                    f.write(a["write"][1])
            if a.get("delay_ms"):
                time.sleep(a["delay_ms"] / 1000.0)
            if a.get("hang"):
                self.write_record(n, t_recv, None, fmt, path, headers, body, "hang")
                time.sleep(float(a["hang"]))
                self.close_connection = True
                return
            if "status" in a:
                status = a["status"]
                out = error_body(fmt, status, a.get("error", "scripted error %d" % status))
                if "retry_after" in a:
                    extra["Retry-After"] = str(a["retry_after"])
                if "retry_after_ms" in a:
                    extra["retry-after-ms"] = str(a["retry_after_ms"])
                if "location" in a:
                    extra["Location"] = a["location"]
            if "body_raw" in a:
                out = a["body_raw"].encode()
            elif "status" not in a:
                out = answer_body(fmt, n, a)
                if fmt == "anthropic" and "args_raw" in a:
                    for c in out["content"]:
                        if c.get("type") == "tool_use":
                            c["input"] = "__RAW_INPUT__"
                            break
                    out = json.dumps(out).replace('"__RAW_INPUT__"', a["args_raw"], 1).encode()
        extra["x-request-id"] = "req_%d" % n
        # Recorded before the answer goes out, so a client that has its
        # answer finds the request in the record; t_sent is taken first, so
        # the client got the answer after t_sent.
        self.write_record(n, t_recv, time.monotonic(), fmt, path, headers, body, result)
        try:
            self.send(status, out, extra)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def write_record(self, n, t_recv, t_sent, fmt, path, headers, body, result):
        st = self.server.state
        line = json.dumps({"n": n, "t_recv": t_recv, "t_sent": t_sent, "format": fmt,
                           "path": path, "headers": headers, "body": body, "check": result})
        with st.lock:
            with open(st.record, "a", encoding="utf-8") as f:
                f.write(line + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--script", required=True)
    ap.add_argument("--record", required=True)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--key", default=os.environ.get("MODEL_SERVER_KEY", ""))
    args = ap.parse_args()
    with open(args.script, encoding="utf-8") as f:
        script = json.load(f)
    open(args.record, "w").close()
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    srv.state = State(script, args.record, args.key)
    tmp = args.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(tmp, args.port_file)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())
