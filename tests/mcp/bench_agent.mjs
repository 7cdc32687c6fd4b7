// SPDX-License-Identifier: Apache-2.0
// The agent steps of scripts/bench-agent (here for the MCP SDK client in
// tests/mcp/node_modules), through each front end, against
// one test device (instant or with the phone profile): N rounds of observe,
// tap by ref with its observation, type into a field, scroll, launch an
// app. Prints, per step and front end, the median wall time and the device
// commands the step ran (from the stand-ins' $ctl/commands), and the floor:
// one uiautomator dump plus one input, run on the device in one round trip
// (for the type step: the dump, the tap and the text).
//
// Front ends: adbc-serve (HTTP, one keep-alive agent), adbc-mcp and
// @mobilenext/mobile-mcp (both through the official MCP SDK client, stdio),
// adbc-snap through a session. mobile-mcp's step is what its tools offer an
// agent: list the elements, then act at coordinates (or launch) with the
// next list in the following step; adbc's acts return the next screen
// themselves. Environment: see scripts/bench-agent.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import http from 'node:http';

const env = process.env;
const ROUNDS = Number(env.ROUNDS || 5);
const CTL = env.CTL;
const ADDR = env.ADDR;
const SERIAL = env.SERIAL;
const TMP = env.T_TMP;
const LABEL = env.LABEL;
const fronts = (env.FRONTS || 'serve mcp snap mobilemcp').split(/\s+/).filter(Boolean);
const builds = JSON.parse(env.BUILDS); // name -> build dir ("adbc", and "base" when given)

const commandsFile = path.join(CTL, 'commands');
const readCommands = () => (fs.existsSync(commandsFile) ? fs.readFileSync(commandsFile, 'utf8') : '');
const now = () => Number(process.hrtime.bigint()) / 1e6;
const median = (a) => {
  const s = [...a].sort((x, y) => x - y);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
// What the device ran during fn, in order, as "cmd cmd ...".
async function timed(fn) {
  const before = readCommands().length;
  const t0 = now();
  await fn();
  const ms = now() - t0;
  const ran = readCommands().slice(before).trim().split('\n').filter(Boolean).join(' ');
  return { ms, ran };
}
function must(ok, what) {
  if (!ok) throw new Error(what);
}

// ---- front ends ----------------------------------------------------------
function serveFront(build) {
  const port = Number(fs.readFileSync(path.join(TMP, `serve-${build}.port`), 'utf8'));
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const req = (method, p, body) =>
    new Promise((resolve, reject) => {
      const data = body ? JSON.stringify(body) : undefined;
      const r = http.request({ host: '127.0.0.1', port, method, path: p, agent,
        headers: { Authorization: `Bearer ${env.ADBC_SERVE_TOKEN}`,
          ...(data ? { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(data) } : {}) } },
      (res) => {
        let b = '';
        res.on('data', (d) => { b += d; });
        res.on('end', () => {
          const j = JSON.parse(b);
          if (res.statusCode !== 200) reject(new Error(`${p}: ${res.statusCode} ${b.slice(0, 300)}`));
          else resolve(j);
        });
      });
      r.on('error', reject);
      r.setNoDelay(true); // headers and body may go out in two writes
      r.end(data);
    });
  const act = async (a) => {
    const j = await req('POST', '/v1/act', a);
    must(j.result && j.result.observation, `act ${a.action}: no observation: ${JSON.stringify(j).slice(0, 300)}`);
  };
  return {
    prepare: () => req('GET', '/v1/observe'),
    observe: () => req('GET', '/v1/observe'),
    tap: () => act({ action: 'tap', ref: 3 }),
    type: () => act({ action: 'type', ref: 2, text: 'hi' }),
    scroll: () => act({ action: 'scroll', ref: 1, direction: 'down' }),
    launch: async () => { await req('POST', '/v1/app', { op: 'launch', package: 'com.chat' }); await req('GET', '/v1/observe'); },
    close: async () => agent.destroy(),
  };
}

async function mcpClient(command, args, extraEnv) {
  const transport = new StdioClientTransport({ command, args, env: { ...process.env, ...extraEnv }, stderr: 'pipe' });
  const log = [];
  transport.stderr.on('data', (d) => log.push(d.toString()));
  const client = new Client({ name: 'bench-agent', version: '1.0.0' });
  await client.connect(transport);
  const call = async (name, a = {}) => {
    const r = await client.callTool({ name, arguments: a }, undefined, { timeout: 120000 });
    if (r.isError) throw new Error(`${name}: ${JSON.stringify(r.content).slice(0, 400)} ${log.join('').slice(-400)}`);
    return r;
  };
  return { client, call };
}

async function adbcMcpFront(build) {
  const cfg = path.join(TMP, `mcp-${build}.toml`);
  fs.writeFileSync(cfg, `[device]\ntargets = ["${ADDR}"]\nusb = false\nallowlist = ["${SERIAL}"]\n\n[timeouts]\ncall_ms = 60000\n`);
  const { client, call } = await mcpClient(path.join(builds[build], 'tools/adbc-mcp'), ['--config', cfg], {});
  const after = (r) => must(JSON.stringify(r.content).includes('[ref=3]'), 'no screen after the act');
  return {
    prepare: () => call('snapshot'),
    observe: () => call('snapshot'),
    tap: async () => after(await call('tap', { ref: 3 })),
    type: async () => after(await call('type', { ref: 2, text: 'hi' })),
    scroll: async () => after(await call('scroll', { ref: 1, direction: 'down' })),
    launch: async () => after(await call('launch', { package: 'com.chat' })),
    close: () => client.close(),
  };
}

function snapFront(build) {
  const snap = path.join(builds[build], 'tools/adbc-snap');
  const run = (...a) => {
    const p = spawnSync(snap, ['-q', '-t', ADDR, ...a], { encoding: 'utf8' });
    if (p.status !== 0) throw new Error(`adbc-snap ${a.join(' ')}: ${p.status} ${p.stderr}`);
    return p.stdout;
  };
  const after = (out) => must(out.includes('[ref=3]'), 'no screen after the act');
  return {
    prepare: () => run('snapshot'),
    observe: () => run('snapshot'),
    tap: () => after(run('tap', '3', '--snapshot')),
    type: () => after(run('type', '2', 'hi', '--snapshot')),
    scroll: () => after(run('scroll', '1', 'down', '--snapshot')),
    launch: () => { run('launch', 'com.chat'); after(run('snapshot')); },
    close: async () => {},
  };
}

async function mobileMcpFront() {
  const bin = path.join(env.MOBILEMCP_DIR, 'node_modules/@mobilenext/mobile-mcp/lib/index.js');
  const { client, call } = await mcpClient(process.execPath, [bin], {
    MOBILEMCP_LEGACY_ROBOT: '1', MOBILEMCP_DISABLE_TELEMETRY: '1', ANDROID_ADB_SERVER_PORT: env.ADB_PORT,
    HOME: env.ADB_HOME,
  });
  const device = ADDR;
  const list = async () => {
    const r = await call('mobile_list_elements_on_screen', { device });
    const t = r.content.map((c) => c.text || '').join('\n');
    must(t.includes('Send'), `mobile-mcp listed no Send button: ${t.slice(0, 300)}`);
    return t;
  };
  // Centre of an element whose text is given, from mobile-mcp's own list.
  const centre = (t, label) => {
    const line = t.split('\n').find((l) => l.includes(label));
    const m = line && line.match(/(-?\d+)\D+?(-?\d+)\D+?(\d+)\D+?(\d+)/);
    must(m, `no coordinates for ${label} in: ${t.slice(0, 300)}`);
    const [x, y, w, h] = m.slice(1, 5).map(Number);
    return { x: x + Math.floor(w / 2), y: y + Math.floor(h / 2) };
  };
  return {
    prepare: list,
    observe: list,
    tap: async () => { const p = centre(await list(), 'Send'); await call('mobile_click_on_screen_at_coordinates', { device, ...p }); },
    type: async () => {
      const p = centre(await list(), 'draft');
      await call('mobile_click_on_screen_at_coordinates', { device, ...p });
      await call('mobile_type_keys', { device, text: 'hi', submit: false });
    },
    scroll: async () => { await list(); await call('mobile_swipe_on_screen', { device, direction: 'up' }); },
    launch: async () => { await list(); await call('mobile_launch_app', { device, packageName: 'com.chat' }); },
    close: () => client.close(),
  };
}

// ---- the run -------------------------------------------------------------
const ALL_STEPS = ['observe', 'tap', 'type', 'scroll', 'launch'];
const STEPS = (env.STEPS || ALL_STEPS.join(' ')).split(/\s+/).filter(Boolean);
for (const st of STEPS) must(ALL_STEPS.includes(st), `unknown step ${st} (${ALL_STEPS.join(', ')})`);

// One round trip on the device, as the device itself costs it: a dump and
// one input (the floor of observe, tap, scroll), and for typing a dump, the
// tap and the text (the inputs as adbc sends them on this device). One
// floor round runs right before each round of a step, so the two see the
// same load: the paired ratio is the median of step/floor per round. The
// floor's inputs draw frames on the test device ($ctl/frames counts up),
// which would make the next act's frame check fail and take its slow way;
// the count is put back after the floor (untimed), as if its tap at 1,1
// had hit nothing that draws.
const snapBin = path.join(builds.adbc, 'tools/adbc-snap');
const sdk = Number(spawnSync(snapBin, ['-q', '-t', ADDR, 'shell', 'getprop', 'ro.build.version.sdk'], { encoding: 'utf8' }).stdout.trim());
const inputCmd = sdk >= 31 ? 'cmd input' : 'input';
const framesFile = path.join(CTL, 'frames');
const floorRuns = { false: [], true: [] };
const floorRan = { false: '', true: '' };
async function floorOnce(typing) {
  const inputs = typing ? `${inputCmd} tap 1 1; ${inputCmd} text hi` : `${inputCmd} tap 1 1`;
  const frames = fs.existsSync(framesFile) ? fs.readFileSync(framesFile) : null;
  const r = await timed(async () => {
    const p = spawnSync(snapBin, ['-q', '-t', ADDR, 'exec',
      `uiautomator dump /data/local/tmp/bench-floor.xml >/dev/null; ${inputs}; rm -f /data/local/tmp/bench-floor.xml`]);
    must(p.status === 0, 'floor command failed');
  });
  if (frames) fs.writeFileSync(framesFile, frames);
  else fs.rmSync(framesFile, { force: true });
  floorRuns[typing].push(r.ms);
  floorRan[typing] = r.ran;
  return r.ms;
}

const results = {}; // front -> step -> {ms, paired, ran}
const columns = [];
for (const f of fronts) {
  const names = f === 'mobilemcp' ? ['mobilemcp'] : Object.keys(builds).map((b) => (b === 'adbc' ? f : `${f}@${b}`));
  for (const name of names) {
    const build = name.includes('@') ? name.split('@')[1] : 'adbc';
    let fe;
    if (f === 'serve') fe = serveFront(build);
    else if (f === 'mcp') fe = await adbcMcpFront(build);
    else if (f === 'snap') fe = snapFront(build);
    else if (f === 'mobilemcp') fe = await mobileMcpFront();
    else throw new Error(`unknown front end ${f}`);
    await fe.prepare(); // the first screen; after it each act's reply is the next one
    const res = {};
    for (const step of STEPS) {
      const times = [];
      const ratios = [];
      let ran = '';
      for (let i = 0; i < ROUNDS; i++) {
        const fl = await floorOnce(step === 'type');
        const r = await timed(fe[step]);
        times.push(r.ms);
        ratios.push(r.ms / fl);
        ran = r.ran;
      }
      res[step] = { ms: median(times), paired: median(ratios), ran };
    }
    await fe.close();
    results[name] = res;
    columns.push(name);
  }
}
const fl = { ms: median(floorRuns.false.length ? floorRuns.false : [NaN]), ran: floorRan.false };
const flType = { ms: median(floorRuns.true.length ? floorRuns.true : [NaN]), ran: floorRan.true };
const floorOf = (step) => (step === 'type' ? flType : fl);

const pad = (s, n) => String(s).padEnd(n);
const rpad = (s, n) => String(s).padStart(n);
console.log(`\n== ${LABEL}: median of ${ROUNDS} rounds, ms (x the floor: ratio of medians, then paired: the median of each round's step/floor)`);
console.log(`floor: one dump + one input on the device: ${fl.ms.toFixed(0)} ms (median of ${floorRuns.false.length})  [${fl.ran}]`);
console.log(`type floor (the type row's): one dump + the tap + the text: ${flType.ms.toFixed(0)} ms (median of ${floorRuns.true.length})  [${flType.ran}]`);
console.log(pad('step', 9) + columns.map((c) => rpad(c, 24)).join(''));
for (const step of STEPS) {
  console.log(pad(step, 9) + columns.map((c) => rpad(`${results[c][step].ms.toFixed(0)} (${(results[c][step].ms / floorOf(step).ms).toFixed(2)}x, p${results[c][step].paired.toFixed(2)}x)`, 24)).join(''));
}
console.log('device commands of each step (last round):');
for (const c of columns) {
  for (const step of STEPS) console.log(`  ${pad(c, 14)} ${pad(step, 8)} ${results[c][step].ran}`);
}
