// SPDX-License-Identifier: Apache-2.0
// adbc-serve's inspector: the device list, the screen with its refs marked,
// the snapshot whose refs tap through POST /v1/act, and the agent's tasks.
// Only the documented API (docs/openapi.yaml). The token lives in this
// tab's sessionStorage and goes out as the Authorization header only; what
// the device shows is untrusted text and reaches the page as textContent.
"use strict";

const KEY = "adbc-serve-token";
const $ = (id) => document.getElementById(id);
const state = { tapping: false, device: null, refs: new Map(), snapshotId: null, task: null, stream: null };

function token() { return sessionStorage.getItem(KEY) || ""; }

function status(msg, bad) {
  const s = $("status");
  s.textContent = msg;
  s.className = bad ? "error" : "";
}

class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

// One call of the API: the envelope's result, or an ApiError with its code
// and message. A 401 forgets the token and asks for it again.
async function api(method, path, body, opts = {}) {
  const headers = { Authorization: "Bearer " + token() };
  const init = { method, headers, cache: "no-store", signal: opts.signal };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const res = await fetch(path, init);
  if (opts.raw && res.ok)
    return res;
  let doc = null;
  try {
    doc = await res.json();
  } catch (e) {
    throw new ApiError(res.status, "bad_answer", `${method} ${path}: answer ${res.status} is not JSON`);
  }
  if (res.status === 401) {
    sessionStorage.removeItem(KEY);
    showLogin(doc.error ? doc.error.message : "the token was refused");
  }
  if (!doc.ok)
    throw new ApiError(res.status, doc.error.code, doc.error.message);
  return doc.result;
}

function q(path, params = {}) {
  const u = new URLSearchParams(params);
  if (state.device)
    u.set("device", state.device);
  const s = u.toString();
  return s ? `${path}?${s}` : path;
}

// ---- the token ----

function showLogin(msg) {
  $("main").hidden = true;
  $("forget").hidden = true;
  $("login").hidden = false;
  $("login-error").textContent = msg || "";
  $("token").focus();
}

async function login(ev) {
  ev.preventDefault();
  sessionStorage.setItem(KEY, $("token").value.trim());
  $("token").value = "";
  await start();
}

async function start() {
  if (!token()) {
    showLogin("");
    return;
  }
  let devs;
  try {
    devs = await api("GET", "/v1/devices");
  } catch (e) {
    if (e.status !== 401)
      showLogin(e.message);
    return;
  }
  $("login").hidden = true;
  $("main").hidden = false;
  $("forget").hidden = false;
  const sel = $("device");
  sel.replaceChildren();
  for (const d of devs) {
    const o = document.createElement("option");
    o.value = d.device;
    o.textContent = `${d.device || "(default)"} (${d.state}${d.busy ? ", busy" : ""})`;
    sel.append(o);
  }
  sel.disabled = devs.length < 2;
  state.device = devs.length ? devs[0].device : null;
  $("refresh").disabled = false;
  await Promise.all([look(), loadSettings()]);
}

// ---- the screen and the snapshot ----

function b64png(b64) {
  const bin = atob(b64);
  const a = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++)
    a[i] = bin.charCodeAt(i);
  return URL.createObjectURL(new Blob([a], { type: "image/png" }));
}

// One observation with the marked screenshot: the snapshot, its refs and
// the screen of the same moment, so the boxes drawn are the refs listed.
async function look() {
  status("looking…");
  let obs;
  try {
    obs = await api("GET", q("/v1/observe", { screenshot: "1", marks: "1" }));
  } catch (e) {
    status(`${e.code}: ${e.message}`, true);
    return;
  }
  show(obs);
  status(`looked at ${new Date().toLocaleTimeString()}`);
}

function show(obs) {
  const img = $("shot");
  if (img.dataset.url)
    URL.revokeObjectURL(img.dataset.url);
  if (obs.screenshot) {
    img.dataset.url = b64png(obs.screenshot);
    img.src = img.dataset.url;
  }
  $("top").textContent = obs.top.activity || obs.top.package || "";
  $("snap-id").textContent = obs.snapshot_id;
  state.snapshotId = obs.snapshot_id;
  state.refs = new Map(obs.refs.map((r) => [r.ref, r]));
  const out = $("snapshot");
  out.replaceChildren();
  for (const line of obs.snapshot.split("\n")) {
    const div = document.createElement("div");
    div.className = "line";
    const m = /\[ref=(\d+)\]/.exec(line);
    if (m && state.refs.has(Number(m[1]))) {
      const n = Number(m[1]);
      div.dataset.ref = n;
      div.append(line.slice(0, m.index));
      const b = document.createElement("button");
      b.type = "button";
      b.className = "ref";
      b.dataset.ref = n;
      b.textContent = m[0];
      b.title = `tap ref ${n}`;
      div.append(b, line.slice(m.index + m[0].length));
    } else {
      div.textContent = line;
    }
    out.append(div);
  }
}

function highlight(n) {
  const box = $("box"), img = $("shot"), r = state.refs.get(n);
  if (!r || !img.naturalWidth) {
    box.hidden = true;
    return;
  }
  const k = img.clientWidth / img.naturalWidth;
  const [x1, y1, x2, y2] = r.bounds;
  Object.assign(box.style, {
    left: `${x1 * k}px`, top: `${y1 * k}px`, width: `${(x2 - x1) * k}px`, height: `${(y2 - y1) * k}px`,
  });
  box.textContent = String(n);
  box.hidden = false;
}

// A tap on a ref goes through the verified act: the server finds the
// element again and refuses (409) when the screen changed under it.
async function tap(n) {
  if (state.tapping)
    return; // one tap at a time: a double click taps once
  state.tapping = true;
  try {
    await tapOnce(n);
  } finally {
    state.tapping = false;
  }
}

async function tapOnce(n) {
  status(`tapping ref ${n}…`);
  try {
    const res = await api("POST", "/v1/act", {
      action: "tap", ref: n, snapshot: state.snapshotId, device: state.device || undefined,
    });
    status(`${res.done}`);
  } catch (e) {
    status(`${e.code}: ${e.message}`, true);
    if (e.code !== "stale")
      return;
  }
  await look();
}

// ---- the agent's tasks ----

async function loadSettings() {
  try {
    const s = await api("GET", "/v1/settings");
    $("max-steps").placeholder = s.max_steps;
    $("model").placeholder = s.model || "";
  } catch (e) {
    $("task-state").textContent = e.code === "no_route" ? "this server runs no agent tasks" : e.message;
  }
}

function stepItem(s) {
  const li = document.createElement("li");
  li.className = s.ok === false ? "step failed" : "step";
  const head = document.createElement("div");
  head.className = "mono";
  const args = s.args && Object.keys(s.args).length ? " " + JSON.stringify(s.args) : "";
  head.textContent = s.action ? `${s.forced ? "(stuck) " : ""}${s.action}${args}` : "(no action)";
  li.append(head);
  for (const [k, v] of [["reasoning", s.reasoning], ["result", s.result], ["screen", s.observation]]) {
    if (!v)
      continue;
    const p = document.createElement("div");
    p.className = k;
    p.textContent = v;
    li.append(p);
  }
  return li;
}

function taskState(t) {
  const bits = [`task ${t.id}: ${t.status}`];
  const end = t.end || {};
  if (end.answer)
    bits.push(`answer: ${end.answer}`);
  if (end.reason || t.error)
    bits.push(end.reason || t.error);
  $("task-state").textContent = bits.join(" — ");
  const running = t.status === "pending" || t.status === "running";
  $("task-cancel").disabled = !running;
  $("task-start").disabled = running;
}

// Server-Sent Events read with fetch, so the token travels in the
// Authorization header (EventSource cannot send one).
async function follow(id) {
  const ctl = new AbortController();
  state.stream = ctl;
  $("steps").replaceChildren();
  try {
    const res = await api("GET", q(`/v1/tasks/${encodeURIComponent(id)}/events`), undefined,
                          { raw: true, signal: ctl.signal });
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buf = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done)
        break;
      buf += value;
      let cut;
      while ((cut = buf.indexOf("\n\n")) >= 0) {
        const block = buf.slice(0, cut);
        buf = buf.slice(cut + 2);
        let ev = "message", data = "";
        for (const line of block.split("\n")) {
          if (line.startsWith("event:"))
            ev = line.slice(6).trim();
          else if (line.startsWith("data:"))
            data += line.slice(5).trim();
        }
        if (!data)
          continue;
        const obj = JSON.parse(data);
        if (ev === "step") {
          $("steps").append(stepItem(obj));
          await look();
        } else if (ev === "end") {
          taskState(obj);
        } else if (ev === "state") {
          taskState(obj);
        }
      }
    }
  } catch (e) {
    if (e.name !== "AbortError")
      $("task-state").textContent = `${e.code || "stream"}: ${e.message}`;
  }
  if (state.stream === ctl)
    state.stream = null;
}

async function startTask(ev) {
  ev.preventDefault();
  const body = { goal: $("goal").value };
  if ($("max-steps").value)
    body.max_steps = Number($("max-steps").value);
  if ($("model").value)
    body.model = $("model").value;
  if (state.device)
    body.device = state.device;
  try {
    const t = await api("POST", "/v1/tasks", body);
    state.task = t.id;
    taskState(t);
    follow(t.id);
  } catch (e) {
    $("task-state").textContent = `${e.code}: ${e.message}`;
  }
}

async function cancelTask() {
  if (!state.task)
    return;
  try {
    taskState(await api("POST", `/v1/tasks/${encodeURIComponent(state.task)}/cancel`));
  } catch (e) {
    $("task-state").textContent = `${e.code}: ${e.message}`;
  }
}

// ---- wiring (no inline handlers: the CSP allows this file only) ----

document.addEventListener("DOMContentLoaded", () => {
  $("login").addEventListener("submit", login);
  $("forget").addEventListener("click", () => {
    sessionStorage.removeItem(KEY);
    if (state.stream)
      state.stream.abort();
    showLogin("");
  });
  $("refresh").addEventListener("click", look);
  $("device").addEventListener("change", (e) => {
    state.device = e.target.value;
    look();
  });
  const snap = $("snapshot");
  snap.addEventListener("mouseover", (e) => {
    const line = e.target.closest(".line[data-ref]");
    highlight(line ? Number(line.dataset.ref) : 0);
  });
  snap.addEventListener("mouseleave", () => highlight(0));
  snap.addEventListener("click", (e) => {
    const b = e.target.closest("button.ref");
    if (b)
      tap(Number(b.dataset.ref));
  });
  $("task-form").addEventListener("submit", startTask);
  $("task-cancel").addEventListener("click", cancelTask);
  start();
});
