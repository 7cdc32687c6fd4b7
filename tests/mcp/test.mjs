// SPDX-License-Identifier: Apache-2.0
// adbc-mcp driven by the official MCP TypeScript SDK client against the test
// device: initialize, list tools (the SDK checks every response against the
// protocol's schemas), call every tool and check what the device was asked,
// then the malformed-input and safety cases. Run by tests/sh/mcp_sdk.sh,
// which starts the devices and passes them in the environment.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import Ajv2020 from 'ajv/dist/2020.js';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const env = process.env;
const BIN = env.MCP_BIN;
const TMP = env.T_TMP;
const DEV = JSON.parse(env.MCP_DEVICES); // name -> {addr, ctl, sandbox, pid}
let passed = 0;
let failed = 0;

function check(cond, what, detail) {
  if (cond) {
    passed++;
    console.log(`ok ${passed + failed}: ${what}`);
    return;
  }
  failed++;
  console.log(`FAIL ${passed + failed}: ${what}${detail !== undefined ? `\n    got: ${String(detail).slice(0, 2000)}` : ''}`);
}

const text = (r) => (r.content || []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
const ctlOf = (name) => DEV[name].ctl;
function calls(name) {
  const f = path.join(ctlOf(name), 'calls');
  const s = fs.existsSync(f) ? fs.readFileSync(f, 'utf8') : '';
  fs.rmSync(f, { force: true });
  return s.trim();
}

// ---- screens served by the uiautomator stand-in ----
const node = (cls, t, id, click, scroll, bounds) =>
  `<node class="${cls}" text="${t}" resource-id="${id}" package="com.chat" clickable="${click}" scrollable="${scroll}" enabled="true" bounds="${bounds}"/>`;
const screen = (...nodes) =>
  `<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation="0"><node class="android.widget.FrameLayout" package="com.chat" bounds="[0,0][1080,2400]">${nodes.join('')}</node></hierarchy>`;
const LIST = node('android.widget.ListView', '', 'com.chat:id/list', false, true, '[0,200][1080,1900]');
const FIELD = node('android.widget.EditText', 'draft', 'com.chat:id/msg', true, false, '[40,2000][840,2200]');
const SEND = node('android.widget.Button', 'Send', 'com.chat:id/send', true, false, '[860,2000][1040,2200]');
const SCREEN_TEXT = '- Group\n  - List [ref=1]\n  - TextInput [ref=2] "draft"\n  - Button [ref=3] "Send"';
function serve(name, xml, mode) {
  fs.writeFileSync(path.join(ctlOf(name), 'screen.xml'), xml);
  fs.writeFileSync(path.join(ctlOf(name), 'uiautomator.conf'), `dump=screen.xml\n${mode ? `mode=${mode}\n` : ''}`);
}

function writeConfig(file, body) {
  fs.writeFileSync(file, body);
  return file;
}

async function connect(args, label) {
  const transport = new StdioClientTransport({
    command: BIN,
    args,
    env: { ...process.env, HOME: path.join(TMP, 'home') },
    stderr: 'pipe',
  });
  const log = [];
  transport.stderr.on('data', (d) => log.push(d.toString()));
  const client = new Client({ name: 'adbc-mcp-test', version: '1.0.0' });
  await client.connect(transport);
  client.label = label;
  client.log = log;
  servers.push(client);
  return client;
}

const servers = [];
const call = (client, name, args = {}) =>
  client.callTool({ name, arguments: args }, undefined, { timeout: 90000 });

// A raw session: lines in, lines out, no SDK in between (for malformed input).
class Raw {
  constructor(args) {
    this.p = spawn(BIN, args, { env: { ...process.env, HOME: path.join(TMP, 'home') }, stdio: ['pipe', 'pipe', 'pipe'] });
    this.buf = Buffer.alloc(0);
    this.lines = [];
    this.waiters = [];
    this.bad = [];
    // Bytes, not strings: a line that is not UTF-8 is caught here, where
    // decoding as text would have replaced the bad bytes silently.
    const utf8 = new TextDecoder('utf-8', { fatal: true });
    this.p.stdout.on('data', (d) => {
      this.buf = Buffer.concat([this.buf, d]);
      let i;
      while ((i = this.buf.indexOf(10)) >= 0) {
        const bytes = this.buf.subarray(0, i);
        this.buf = this.buf.subarray(i + 1);
        let line;
        try {
          line = utf8.decode(bytes);
        } catch {
          this.bad.push(`not UTF-8: ${bytes.toString('latin1').slice(0, 300)}`);
          line = bytes.toString();
        }
        let msg;
        try {
          msg = JSON.parse(line);
        } catch {
          this.bad.push(line);
          continue;
        }
        if (msg.jsonrpc !== '2.0') this.bad.push(line);
        const w = this.waiters.shift();
        if (w) w(msg);
        else this.lines.push(msg);
      }
    });
    this.p.stderr.on('data', () => {});
  }
  send(s) {
    this.p.stdin.write(s + '\n');
  }
  next(ms = 30000) {
    if (this.lines.length) return Promise.resolve(this.lines.shift());
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error('no answer within ' + ms + ' ms')), ms);
      this.waiters.push((m) => {
        clearTimeout(t);
        resolve(m);
      });
    });
  }
  async close() {
    this.p.stdin.end();
    await new Promise((r) => this.p.on('exit', r));
  }
}

const ALL_TOOLS = [
  'list_devices', 'select_device', 'snapshot', 'find', 'tap', 'tap_xy', 'tap_grid', 'type', 'press',
  'swipe', 'scroll', 'long_press', 'back', 'home', 'launch', 'intent', 'stop_app', 'top_activity',
  'wait_for_text', 'wait_stable', 'screenshot', 'logcat', 'install_apk', 'grant_permission',
  'revoke_permission', 'clear_app_data', 'list_apps', 'uninstall_app', 'open_url', 'double_tap',
  'drag', 'screen_info', 'rotate', 'screen_record', 'crash_log', 'notifications', 'batch',
];

async function everyTool() {
  const emu = DEV.emu;
  const shots = path.join(TMP, 'shots');
  const cfg = writeConfig(path.join(TMP, 'main.toml'),
    `# the main server\n[device]\ntargets = ["${emu.addr}"]\nusb = false\nallowlist = ["ALLOWED123"]\n\n[timeouts]\ncall_ms = 30000\nsettle_ms = 0\n\n[screenshots]\ndir = "${shots}"\n`);
  const c = await connect(['--config', cfg], 'main');
  check(c.getServerVersion()?.name === 'adbc-mcp', 'initialize: serverInfo names adbc-mcp', JSON.stringify(c.getServerVersion()));
  check(!!c.getServerCapabilities()?.tools, 'initialize: the tools capability');
  check(await c.ping().then(() => true), 'ping');

  const { tools } = await c.listTools();
  const names = tools.map((t) => t.name).sort();
  check(JSON.stringify(names) === JSON.stringify([...ALL_TOOLS].sort()), 'tools/list: exactly the tools of the issue, no shell without --allow-shell', names.join(','));
  check(tools.every((t) => t.inputSchema.type === 'object' && t.description.length > 30), 'every tool has an object schema and a description');

  let r = await call(c, 'list_devices');
  check(!r.isError && text(r).includes(`${emu.addr}\tdevice`), 'list_devices shows the device', text(r));

  serve('emu', screen(LIST, FIELD, SEND));
  calls('emu');
  r = await call(c, 'snapshot');
  check(!r.isError && text(r).includes(SCREEN_TEXT), 'snapshot: the format v1 text', text(r));
  check(text(r).includes('(emulator)'), 'snapshot: the device is an emulator by ro.kernel.qemu', text(r));
  r = await call(c, 'snapshot', { format: 'json' });
  let js = null;
  try { js = JSON.parse(text(r)); } catch { /* checked below */ }
  check(js && JSON.stringify(js).includes('adbc.ui.snapshot/1'), 'snapshot format json: parses, names its schema', text(r).slice(0, 300));

  r = await call(c, 'find', { text: 'Send' });
  check(!r.isError && text(r).includes('[ref=3] Button "Send"') && text(r).includes('(950,2100)'), 'find text=Send gives ref 3', text(r));
  r = await call(c, 'find', { text: 'sen', contains: true, ignore_case: true });
  check(!r.isError && text(r).includes('[ref=3]'), 'find contains + ignore_case', text(r));
  calls('emu');

  r = await call(c, 'tap', { ref: 3 });
  check(!r.isError && calls('emu') === 'cmd input tap 950 2100', 'tap ref 3: exactly `cmd input tap 950 2100`');
  check(text(r).includes('after:') && text(r).includes(SCREEN_TEXT), 'tap returns the snapshot after', text(r));

  serve('emu', screen(LIST, FIELD)); // Send is gone: ref 3 is stale
  r = await call(c, 'snapshot');
  serve('emu', screen(LIST, FIELD, SEND));
  r = await call(c, 'tap', { ref: 3 });
  check(r.isError && /ref 3 is not in the latest snapshot/.test(text(r)) && calls('emu') === '', 'a ref outside the latest snapshot is an error, nothing sent', text(r));
  r = await call(c, 'snapshot');
  serve('emu', screen(LIST, FIELD));
  r = await call(c, 'tap', { ref: 3 });
  check(r.isError && /snapshot/.test(text(r)) && !calls('emu').includes('input'), 'a stale ref (element gone) is a tool error, no tap sent', text(r));
  serve('emu', screen(LIST, FIELD, SEND));
  await call(c, 'snapshot');
  calls('emu');

  r = await call(c, 'tap_xy', { x: 10, y: 20 });
  check(!r.isError && calls('emu') === 'cmd input tap 10 20', 'tap_xy: `cmd input tap 10 20`');
  r = await call(c, 'tap_grid', { cell: 'B2' });
  let k = calls('emu');
  check(!r.isError && k.includes('wm size') && k.includes('cmd input tap 161 '), 'tap_grid B2: wm size, then a tap in column B', k);

  const evil = "x'; touch /data/local/tmp/pwned; echo '$(touch /data/local/tmp/pwned2)`touch /data/local/tmp/pwned3`";
  r = await call(c, 'type', { ref: 2, text: 'hello', clear: true });
  k = calls('emu');
  // The device watches for the field's focus from the tap on (dumpsys
  // input_method, docs/act.md "Typing"): polls may come before and after it.
  const typed = k.split('\n').filter((l) => l !== 'dumpsys input_method').join('\n');
  check(!r.isError && typed === 'cmd input tap 440 2100\ncmd input keyevent 123 67 67 67 67 67\ncmd input text hello' &&
        k.includes('dumpsys input_method'), 'type ref 2 clear: tap, clear, `cmd input text hello`, focus polled', k);
  r = await call(c, 'type', { text: 'plain' });
  check(!r.isError && calls('emu') === 'cmd input text plain', 'type without ref: into the focused field');
  r = await call(c, 'type', { text: 'x', clear: true });
  check(r.isError && /clear needs/.test(text(r)), 'type clear without ref is refused', text(r));

  r = await call(c, 'press', { key: 'enter' });
  check(!r.isError && calls('emu') === 'cmd input keyevent 66', 'press enter: keyevent 66');
  r = await call(c, 'press', { key: 'bogus' });
  check(r.isError && /back/.test(text(r)) && calls('emu') === '', 'press bogus: error listing key names, nothing sent', text(r));
  r = await call(c, 'back');
  check(!r.isError && calls('emu') === 'cmd input keyevent 4', 'back: keyevent 4');
  r = await call(c, 'home');
  check(!r.isError && calls('emu') === 'cmd input keyevent 3', 'home: keyevent 3');
  r = await call(c, 'swipe', { x1: 1, y1: 2, x2: 3, y2: 4 });
  check(!r.isError && calls('emu') === 'cmd input swipe 1 2 3 4 300', 'swipe: `cmd input swipe 1 2 3 4 300`');
  await call(c, 'snapshot');
  calls('emu');
  r = await call(c, 'scroll', { direction: 'down', ref: 1 });
  k = calls('emu');
  check(!r.isError && /^cmd input swipe 540 1050 540 \d+ 300$/.test(k), 'scroll ref 1 down: a swipe upwards inside the list', k);
  r = await call(c, 'scroll', { direction: 'up' });
  k = calls('emu');
  check(!r.isError && k.includes('wm size') && k.includes('cmd input swipe 540 1200 540 '), 'scroll without ref: the whole screen', k);
  r = await call(c, 'scroll', { direction: 'sideways' });
  check(r.isError && /up, down, left or right/.test(text(r)), 'scroll direction sideways refused', text(r));
  await call(c, 'snapshot');
  calls('emu');
  r = await call(c, 'long_press', { ref: 3 });
  check(!r.isError && calls('emu') === 'cmd input swipe 950 2100 950 2100 1000', 'long_press ref 3: a still swipe of 1000 ms');

  fs.writeFileSync(path.join(ctlOf('emu'), 'packages'), 'com.example.app\n');
  r = await call(c, 'launch', { package: 'com.example.app' });
  check(!r.isError && calls('emu') === 'monkey -p com.example.app -c android.intent.category.LAUNCHER 1', 'launch: monkey with the launcher category', text(r));
  r = await call(c, 'launch', { package: 'com.b; reboot' });
  check(r.isError && text(r) === "argument 'package' must be an Android name such as com.example.app or android.permission.CAMERA (letters, digits, '_' and '.')" && calls('emu') === '',
    'launch of a bad package name: the same message as adbc-serve (tests/sh/serve_http.sh), nothing sent', text(r));
  r = await call(c, 'launch', { package: 'com.missing' });
  check(r.isError && /launcher/.test(text(r)), 'launch of a package without a launcher: tool error', text(r));
  calls('emu');
  r = await call(c, 'intent', { action: 'android.intent.action.VIEW', data: `https://example.com/?q=${evil}`, extras: [{ type: 'int', key: 'n', value: '5' }] });
  k = calls('emu');
  check(!r.isError && k.startsWith('am start') && k.includes('android.intent.action.VIEW') && k.includes('$(touch') && k.includes('--ei n 5'), 'intent: am start with the data as one literal word', k);
  r = await call(c, 'intent', { extras: [] });
  check(r.isError && /at least one/.test(text(r)), 'intent without action/data/component refused', text(r));
  r = await call(c, 'stop_app', { package: 'com.example.app' });
  check(!r.isError && calls('emu') === 'am force-stop com.example.app', 'stop_app: am force-stop');
  fs.writeFileSync(path.join(ctlOf('emu'), 'dumpsys-activity-activities'), '  topResumedActivity=ActivityRecord{c1e5a07 u0 com.example.app/.MainActivity t12}\n');
  fs.writeFileSync(path.join(ctlOf('emu'), 'dumpsys-window'), '  mCurrentFocus=Window{8d2f1b3 u0 com.example.app/com.example.app.MainActivity}\n');
  r = await call(c, 'top_activity');
  check(!r.isError && text(r).includes('activity: com.example.app/.MainActivity') && text(r).includes('package: com.example.app'), 'top_activity', text(r));

  serve('emu', screen(LIST, FIELD, SEND));
  r = await call(c, 'wait_for_text', { text: 'Send', timeout_ms: 5000 });
  check(!r.isError && text(r).includes('[ref=3]'), 'wait_for_text Send: there', text(r));
  r = await call(c, 'wait_for_text', { text: 'Never', timeout_ms: 1500 });
  check(r.isError && /wait_for_text failed/.test(text(r)), 'wait_for_text Never: times out as a tool error', text(r));
  r = await call(c, 'wait_for_text', { text: 'Send', timeout_ms: 100000 });
  check(r.isError && /call limit/.test(text(r)), 'wait_for_text beyond the call limit refused', text(r));
  r = await call(c, 'wait_stable', { timeout_ms: 5000 });
  check(!r.isError && text(r).includes('stable'), 'wait_stable', text(r));

  // 3x2 RGBA raw frame.
  const frame = Buffer.alloc(12 + 3 * 2 * 4, 0xff);
  frame.writeUInt32LE(3, 0); frame.writeUInt32LE(2, 4); frame.writeUInt32LE(1, 8);
  fs.writeFileSync(path.join(ctlOf('emu'), 'screencap.raw'), frame);
  calls('emu');
  r = await call(c, 'screenshot', { include_image: true, grid: true });
  let info = null;
  try { info = JSON.parse(r.content[0].text); } catch { /* checked */ }
  const img = (r.content || []).find((x) => x.type === 'image');
  check(!r.isError && info && info.mimeType === 'image/png' && info.width === 3 && info.height === 2 && info.path.startsWith(shots) && fs.statSync(info.path).size === info.bytes && /^\d{4}-\d\d-\d\dT/.test(info.timestamp), 'screenshot: a PNG in the screenshot dir, path/bytes/timestamp/mimeType', JSON.stringify(r).slice(0, 500));
  check(img && img.mimeType === 'image/png' && Buffer.from(img.data, 'base64').equals(fs.readFileSync(info.path)), 'screenshot include_image: the same PNG as image content');
  check(text(r).includes('A'), 'screenshot grid: the legend', text(r));
  r = await call(c, 'screenshot');
  check(!r.isError && !(r.content || []).some((x) => x.type === 'image'), 'screenshot without include_image: no image content');

  fs.writeFileSync(path.join(ctlOf('emu'), 'logcat.txt'), Array.from({ length: 50 }, (_, i) => `line ${i}`).join('\n') + '\n');
  calls('emu');
  r = await call(c, 'logcat', { lines: 5 });
  check(!r.isError && text(r).trim() === 'line 45\nline 46\nline 47\nline 48\nline 49' && calls('emu').startsWith('logcat -d'), 'logcat lines 5: the last five lines', text(r));
  r = await call(c, 'logcat', { lines: 100000 });
  check(r.isError && /out of range/.test(text(r)), 'logcat beyond 5000 lines refused', text(r));

  const apk = path.join(TMP, 'app.apk');
  fs.writeFileSync(apk, Buffer.from('PK\x03\x04 not really an apk, but bytes to install'));
  r = await call(c, 'install_apk', { path: apk });
  const installed = ['cmd-installed.apk', 'pm-installed.apk'].map((f) => path.join(ctlOf('emu'), f)).find((f) => fs.existsSync(f));
  check(!r.isError && installed && fs.readFileSync(installed).equals(fs.readFileSync(apk)), 'install_apk: the bytes reach the device installer', text(r));
  r = await call(c, 'install_apk', { path: path.join(TMP, 'missing.apk') });
  check(r.isError && /no APK file/.test(text(r)), 'install_apk of a missing file: tool error', text(r));
  calls('emu');
  // The pm stand-in knows no grant/revoke/clear: the exact command line is
  // what is checked, and that the device's answer comes back as an error.
  r = await call(c, 'grant_permission', { package: 'com.example.app', permission: 'android.permission.CAMERA' });
  check(calls('emu') === 'pm grant com.example.app android.permission.CAMERA' && r.isError && /unknown command/.test(text(r)), 'grant_permission: `pm grant PKG PERM`, the device error passed on', text(r));
  r = await call(c, 'revoke_permission', { package: 'com.example.app', permission: 'android.permission.CAMERA' });
  check(calls('emu') === 'pm revoke com.example.app android.permission.CAMERA', 'revoke_permission: `pm revoke PKG PERM`');
  r = await call(c, 'clear_app_data', { package: 'com.example.app' });
  check(calls('emu') === 'pm clear com.example.app', 'clear_app_data: `pm clear PKG`');

  r = await call(c, 'select_device', { serial: emu.addr });
  check(!r.isError && text(r).includes('emulator'), 'select_device of the emulator', text(r));
  r = await call(c, 'select_device', { serial: '10.0.0.1:5555' });
  check(r.isError && /no device/.test(text(r)), 'select_device of an unlisted serial refused (no new targets from the agent)', text(r));

  // ---- hostile arguments ----
  r = await call(c, 'tap', { ref: '3' });
  check(r.isError && /must be an integer/.test(text(r)), 'wrong type: ref as a string', text(r));
  r = await call(c, 'tap_xy', { x: 1.5, y: 2 });
  check(r.isError && /integer/.test(text(r)), 'wrong type: a fractional coordinate', text(r));
  r = await call(c, 'type', { text: 5 });
  check(r.isError && /must be a string/.test(text(r)), 'wrong type: text as a number', text(r));
  r = await call(c, 'tap', { ref: 3, refs: 4 });
  check(r.isError && /unknown argument 'refs'/.test(text(r)), 'an unknown argument is refused', text(r));
  r = await call(c, 'tap', {});
  check(r.isError && /missing argument 'ref'/.test(text(r)), 'a missing argument is refused', text(r));
  r = await call(c, 'type', { text: 'a'.repeat(2_000_000) });
  check(r.isError && /at most 10000/.test(text(r)) && calls('emu') === '', 'a 2 MB string is refused, nothing sent', text(r));
  r = await call(c, 'find', { text: 'x'.repeat(5_000_000) });
  check(r.isError && /at most/.test(text(r)), 'a 5 MB selector is refused', text(r));
  let threw = null;
  try { await call(c, 'no_such_tool'); } catch (e) { threw = e; }
  check(threw && threw.code === -32602, 'an unknown tool is a JSON-RPC -32602 error', threw && threw.message);
  threw = null;
  try { await call(c, 'shell', { command: 'id' }); } catch (e) { threw = e; }
  check(threw && threw.code === -32602, 'no shell tool without --allow-shell', threw && threw.message);

  // Shell metacharacters in every string argument of every tool.
  await call(c, 'snapshot');
  const strArgs = {
    select_device: { serial: evil }, find: { text: evil, desc: evil, resource_id: evil, class: evil },
    tap_grid: { cell: evil }, type: { text: evil }, type_ref: { ref: 2, text: evil }, press: { key: evil },
    scroll: { direction: evil }, launch: { package: evil }, stop_app: { package: evil },
    intent: { action: evil, data: evil, component: evil, extras: [{ type: 'string', key: evil, value: evil }] },
    wait_for_text: { text: evil, timeout_ms: 800 }, install_apk: { path: evil },
    grant_permission: { package: evil, permission: evil }, revoke_permission: { package: 'com.a', permission: evil },
    clear_app_data: { package: evil }, snapshot: { format: evil },
  };
  for (const [tool, args] of Object.entries(strArgs)) {
    const res = await call(c, tool.replace('_ref', ''), args);
    check(res && Array.isArray(res.content), `metacharacters in every string of ${tool}: an answer`, text(res));
  }
  const sb = DEV.emu.sandbox;
  const pwned = ['pwned', 'pwned2', 'pwned3'].filter((f) => fs.existsSync(path.join(sb, 'data/local/tmp', f)));
  check(pwned.length === 0, 'no metacharacter ran a command on the device', pwned.join(','));
  k = calls('emu');
  check(k.includes("cmd input text") && k.includes('$(touch') && !k.includes('\ntouch'), 'the typed text reached `input` as literal words', k);
  check(await c.ping().then(() => true), 'still serving after the hostile arguments');
  await c.close();
}

async function rawProtocol() {
  const raw = new Raw(['--no-usb', '-t', DEV.emu.addr, '--config', path.join(TMP, 'main.toml')]);
  raw.send('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}');
  let m = await raw.next();
  check(m.id === 1 && m.result.protocolVersion === '2025-06-18', 'initialize 2025-06-18 is accepted as asked', JSON.stringify(m));
  raw.send('{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"1999-01-01"}}');
  m = await raw.next();
  check(m.id === 2 && m.result.protocolVersion === '2025-11-25', 'an unknown version gets the newest supported one', JSON.stringify(m));
  raw.send('{"jsonrpc":"2.0","method":"notifications/initialized"}');
  const cases = [
    ['{"jsonrpc":"2.0","id":3,"method":"ping"', null, -32700, 'truncated JSON: -32700 parse error, id null'],
    ['not json at all', null, -32700, 'garbage: -32700'],
    ['{"jsonrpc":"2.0","id":4,"method":"ping"} trailing', null, -32700, 'trailing bytes after the message: -32700'],
    ['[{"jsonrpc":"2.0","id":5,"method":"ping"}]', null, -32600, 'a batch (array): -32600'],
    ['{"id":6,"method":"ping"}', 6, -32600, 'no "jsonrpc": -32600'],
    ['{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}', null, -32600, 'an object id: -32600'],
    ['{"jsonrpc":"2.0","id":7,"method":42}', 7, -32600, 'a numeric method: -32600'],
    ['{"jsonrpc":"2.0","id":8,"method":"resources/list"}', 8, -32601, 'an unknown method: -32601'],
    ['{"jsonrpc":"2.0","id":9,"method":"tools/call","params":[1,2]}', 9, -32602, 'params as an array: -32602'],
    ['{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{}}', 10, -32602, 'tools/call without a name: -32602'],
    ['{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"tap","arguments":"3"}}', 11, -32602, 'tools/call with string arguments: -32602'],
    ['{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"nope"}}', 12, -32602, 'an unknown tool: -32602'],
    ['{"jsonrpc":"2.0","id":13,"method":"initialize","params":{}}', 13, -32602, 'initialize without protocolVersion: -32602'],
  ];
  for (const [line, id, code, what] of cases) {
    raw.send(line);
    m = await raw.next();
    check(m.error && m.error.code === code && m.id === id, what, JSON.stringify(m));
  }
  raw.send('{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}');
  raw.send('{"jsonrpc":"2.0","method":"some/notification"}');
  raw.send('{"jsonrpc":"2.0","id":"s1","method":"ping"}');
  m = await raw.next();
  check(m.id === 's1' && m.result && Object.keys(m.result).length === 0, 'notifications get no answer; the next ping does', JSON.stringify(m));
  // A 20 MB line (past the 16 MiB bound) is refused, then service goes on.
  raw.send('{"jsonrpc":"2.0","id":14,"method":"ping","params":{"pad":"' + 'x'.repeat(20 << 20) + '"}}');
  m = await raw.next(60000);
  check(m.error && m.error.code === -32600 && /longer/.test(m.error.message), 'a 20 MB message: -32600, skipped', JSON.stringify(m).slice(0, 300));
  raw.send('{"jsonrpc":"2.0","id":15,"method":"ping"}');
  m = await raw.next();
  check(m.id === 15 && m.result, 'serving after the 20 MB message', JSON.stringify(m));
  // 1 MB of text in an argument is still a well-formed answer.
  raw.send(JSON.stringify({ jsonrpc: '2.0', id: 16, method: 'tools/call', params: { name: 'find', arguments: { text: 'y'.repeat(1 << 20) } } }));
  m = await raw.next();
  check(m.id === 16 && m.result && m.result.isError === true, 'a 1 MB argument: a tool error, not a crash', JSON.stringify(m).slice(0, 300));
  await raw.close();
  check(raw.bad.length === 0, 'stdout held nothing but JSON-RPC messages', raw.bad.join('\n').slice(0, 500));
  check(raw.p.exitCode === 0, 'the server exits 0 when stdin closes', raw.p.exitCode);
}

async function allowlist() {
  const d = DEV;
  const cfg = writeConfig(path.join(TMP, 'multi.toml'),
    `[device]\ntargets = ["${d.emu.addr}", "${d.emu2.addr}", "${d.phone_ok.addr}", "${d.phone_no.addr}"]\nusb = false\nallowlist = ["ALLOWED123"]\n[timeouts]\nsettle_ms = 0\n`);
  const c = await connect(['--config', cfg], 'multi');
  for (const n of ['emu', 'emu2', 'phone_ok', 'phone_no']) serve(n, screen(LIST, FIELD, SEND));
  let r = await call(c, 'snapshot');
  check(r.isError && /4 devices are connected and none is selected/.test(text(r)) && text(r).includes(d.phone_no.addr), 'several devices, none selected: the call fails listing them', text(r));
  r = await call(c, 'select_device', { serial: d.phone_no.addr });
  check(r.isError && /physical device/.test(text(r)) && /allowlist/.test(text(r)) && text(r).includes(cfg), 'a physical device off the allowlist is refused, naming the config', text(r));
  calls('phone_no');
  r = await call(c, 'tap_xy', { x: 1, y: 1 });
  check(r.isError && calls('phone_no') === '', 'after the refusal nothing reaches that device', text(r));
  r = await call(c, 'select_device', { serial: d.emu2.addr });
  check(!r.isError && /emulator/.test(text(r)), 'ro.boot.qemu=1 makes an emulator', text(r));
  r = await call(c, 'select_device', { serial: d.phone_ok.addr });
  check(!r.isError && /physical, on the allowlist/.test(text(r)), 'a physical device allowed by its ro.serialno', text(r));
  calls('phone_ok');
  r = await call(c, 'tap_xy', { x: 5, y: 6 });
  check(!r.isError && calls('phone_ok') === 'cmd input tap 5 6', 'the selected allowed device gets the tap');
  await c.close();

  // The default from --serial applies the same rule.
  const c2 = await connect(['--config', cfg, '--serial', d.phone_no.addr], 'default');
  r = await call(c2, 'snapshot');
  check(r.isError && /allowlist/.test(text(r)), '--serial of a refused device: refused too', text(r));
  await c2.close();

  // An empty allowlist allows no physical device.
  const cfg0 = writeConfig(path.join(TMP, 'empty.toml'), `[device]\ntargets = ["${d.phone_ok.addr}"]\nusb = false\nallowlist = []\n`);
  const c3 = await connect(['--config', cfg0], 'empty');
  r = await call(c3, 'snapshot');
  check(r.isError && /allowlist/.test(text(r)), 'an empty allowlist allows no physical device', text(r));
  await c3.close();
}

async function shellFlag() {
  const c = await connect(['--no-usb', '-t', DEV.emu.addr, '--allow-shell'], 'shell');
  const { tools } = await c.listTools();
  check(tools.some((t) => t.name === 'shell'), '--allow-shell adds the shell tool');
  const r = await call(c, 'shell', { command: 'echo adbc-shell-ok' });
  check(!r.isError && text(r).includes('adbc-shell-ok'), 'shell runs the command', text(r));
  await c.close();
  check(c.log.join('').includes('shell on ') && c.log.join('').includes('echo adbc-shell-ok'), 'the shell command was logged to stderr', c.log.join(''));
}

async function vanish() {
  const v = DEV.victim;
  serve('victim', screen(LIST, FIELD, SEND), 'hang');
  const c = await connect(['--no-usb', '-t', v.addr, '--config', writeConfig(path.join(TMP, 'v.toml'), '[timeouts]\ncall_ms = 20000\n')], 'victim');
  const started = Date.now();
  const pending = call(c, 'snapshot');
  await new Promise((res) => setTimeout(res, 1500));
  process.kill(v.pid, 'SIGKILL');
  const r = await pending;
  check(r.isError && /failed/.test(text(r)), 'a device killed mid-call: a tool error', text(r));
  check(Date.now() - started < 19000, 'the error came when the device went, not at the timeout', Date.now() - started);
  check(await c.ping().then(() => true), 'the server keeps serving after the device vanished');
  const r2 = await call(c, 'tap_xy', { x: 1, y: 1 });
  check(r2.isError && /connect/.test(text(r2)), 'the next call says the device cannot be reached', text(r2));
  const r3 = await call(c, 'list_devices');
  check(!r3.isError, 'list_devices still answers', text(r3));
  await c.close();
}

function configErrors() {
  const bad = writeConfig(path.join(TMP, 'bad.toml'), '[device]\nallowlist = ["A"]\n\nallowlist = ["B"]\n');
  let p = spawnSync(BIN, ['--config', bad], { input: '', encoding: 'utf8', timeout: 10000 });
  check(p.status === 2 && p.stderr.includes('bad.toml:4:') && p.stdout === '', 'a config error stops the server with FILE:LINE on stderr', p.stderr);
  p = spawnSync(BIN, ['--config', path.join(TMP, 'none.toml')], { input: '', encoding: 'utf8', timeout: 10000 });
  check(p.status === 2 && /cannot open/.test(p.stderr), 'a named config that does not exist is an error', p.stderr);
  p = spawnSync(BIN, ['--help'], { encoding: 'utf8', timeout: 10000 });
  check(p.status === 0 && p.stdout.includes('claude mcp add adbc -- adbc-mcp') && p.stdout.includes('allowlist'), '--help explains setup and the allowlist');
}

// With no configuration at all (no config file, no flags) the emulators are
// found as adb finds them: an adbd on 127.0.0.1:5555 is emulator-5554.
// mcp_sdk.sh runs these inside a private network namespace of its own.
async function noConfigOne() {
  const c = await connect([], 'noconfig-one');
  serve('emuport', screen(LIST, FIELD, SEND));
  let r = await call(c, 'list_devices');
  check(!r.isError && /^emulator-5554\tdevice\ttransport:local/m.test(text(r)) && !/kind:/.test(text(r)), 'no configuration: list_devices shows emulator-5554, its kind not yet read', text(r));
  r = await call(c, 'snapshot');
  check(!r.isError && text(r).includes(SCREEN_TEXT) && text(r).includes('(emulator)'), 'no configuration: the only device, emulator-5554, is used (an emulator by ro.kernel.qemu)', text(r));
  r = await call(c, 'list_devices');
  check(!r.isError && /^emulator-5554\tdevice\ttransport:local.* kind:emulator/m.test(text(r)), 'list_devices then shows emulator-5554 as an emulator, as the device said', text(r));
  calls('emuport');
  r = await call(c, 'tap_xy', { x: 7, y: 8 });
  check(!r.isError && calls('emuport') === 'cmd input tap 7 8', 'the tap reaches the device on port 5555', text(r));
  await c.close();
}

async function noConfigTwo() {
  serve('emuport', screen(LIST, FIELD, SEND));
  serve('emuport2', screen(LIST, FIELD, SEND));
  const c = await connect([], 'noconfig-two');
  let r = await call(c, 'snapshot');
  check(r.isError && /2 devices are connected and none is selected/.test(text(r)) && text(r).includes('emulator-5556'), 'two emulators, no selection: the call fails listing both', text(r));
  await c.close();
  process.env.ANDROID_SERIAL = 'emulator-5556';
  const c2 = await connect([], 'android-serial');
  delete process.env.ANDROID_SERIAL;
  calls('emuport2');
  r = await call(c2, 'tap_xy', { x: 3, y: 4 });
  check(!r.isError && calls('emuport2') === 'cmd input tap 3 4', 'ANDROID_SERIAL=emulator-5556 chooses the device on port 5557', text(r));
  await c2.close();
  process.env.ANDROID_SERIAL = 'emulator-5556';
  const c3 = await connect(['-s', 'emulator-5554'], 'dash-s');
  delete process.env.ANDROID_SERIAL;
  calls('emuport');
  r = await call(c3, 'tap_xy', { x: 5, y: 6 });
  check(!r.isError && calls('emuport') === 'cmd input tap 5 6', '-s emulator-5554 wins over ANDROID_SERIAL', text(r));
  await c3.close();
}

// A phone on 127.0.0.1:5555 (after `adb tcpip 5555`, reached from Termux on
// itself, or a forwarded port) is listed as emulator-5554, as adb lists it,
// but it says ro.kernel.qemu=0: a physical device, refused as the only device,
// by -s and by select_device, and nothing reaches it.
async function noConfigPhonePort() {
  serve('phoneport', screen(LIST, FIELD, SEND));
  calls('phoneport');
  const c = await connect([], 'noconfig-phoneport');
  let r = await call(c, 'list_devices');
  check(!r.isError && /^emulator-5554\tdevice/m.test(text(r)) && !/kind:emulator/.test(text(r)), 'a phone on port 5555 is listed as emulator-5554, not as an emulator', text(r));
  r = await call(c, 'snapshot');
  check(r.isError && /physical device/.test(text(r)) && /not on the allowlist/.test(text(r)), 'the implicit only device emulator-5554 that is a phone: refused', text(r));
  r = await call(c, 'tap_xy', { x: 1, y: 2 });
  check(r.isError && /physical device/.test(text(r)), 'a tap on it: refused', text(r));
  r = await call(c, 'select_device', { serial: 'emulator-5554' });
  check(r.isError && /physical device/.test(text(r)), 'select_device emulator-5554: refused', text(r));
  r = await call(c, 'list_devices');
  check(!r.isError && /^emulator-5554\tdevice/m.test(text(r)) && !/kind:emulator/.test(text(r)), 'list_devices after the refusal: still not an emulator', text(r));
  await c.close();
  const c2 = await connect(['-s', 'emulator-5554'], 'noconfig-phoneport-s');
  r = await call(c2, 'tap_xy', { x: 3, y: 4 });
  check(r.isError && /physical device/.test(text(r)), '-s emulator-5554 of a phone: refused', text(r));
  await c2.close();
  check(!calls('phoneport').includes('input'), 'nothing reached the phone', '');
}

// The only device, as adbc_device_find counts them, whatever its state: an
// unauthorized emulator is not skipped for "no device" but named.
async function noConfigLocked() {
  const c = await connect([], 'noconfig-locked');
  const r = await call(c, 'snapshot');
  check(r.isError && /the only device, emulator-5558, is not ready: unauthorized/.test(text(r)), 'the only device unauthorized: the call names it and its state', text(r));
  await c.close();
}

// Phones announced by mDNS (mcp_sdk.sh --mdns: avahi-daemon in a private
// namespace announces adb-ALLOWED-111111, adb-DENIED-222222 and
// emulator-5554 as _adb._tcp, adb-BOTH-333333 under both services).
async function mdnsAllowlist() {
  const OK = 'adb-ALLOWED-111111._adb._tcp';
  const NO = 'adb-DENIED-222222._adb._tcp';
  serve('mdns_ok', screen(LIST, FIELD, SEND));
  serve('mdns_no', screen(LIST, FIELD, SEND));
  const cfg = writeConfig(path.join(TMP, 'mdns.toml'),
    '[device]\nusb = false\nmdns = true\nallowlist = ["adb-ALLOWED-111111", "adb-BOTH-333333"]\n[timeouts]\nsettle_ms = 0\n');
  let c = await connect(['--config', cfg], 'mdns');
  let r = await call(c, 'list_devices');
  const t = text(r);
  check(!r.isError && new RegExp(`^${OK}\tdevice\ttransport:mdns.* allowlisted$`, 'm').test(t) &&
    new RegExp(`^${NO}\tdevice\ttransport:mdns`, 'm').test(t) && !new RegExp(`^${NO}.*allowlisted`, 'm').test(t),
  'list_devices shows both mDNS phones, the one named on the allowlist marked so', t);
  // One phone announcing both services on one address: listed once, under
  // the documented INSTANCE._adb-tls-connect._tcp name, which finds it.
  const BOTH = 'adb-BOTH-333333._adb-tls-connect._tcp';
  const lines = t.split('\n').filter((l) => l.startsWith('adb-BOTH-333333.'));
  check(lines.length === 1 && lines[0].startsWith(`${BOTH}\tdevice\ttransport:mdns`), 'a phone announcing both services on one address is listed once, as INSTANCE._adb-tls-connect._tcp', t);
  serve('mdns_both', screen(LIST, FIELD, SEND));
  r = await call(c, 'select_device', { serial: BOTH });
  check(!r.isError && /physical, on the allowlist/.test(text(r)), 'select_device INSTANCE._adb-tls-connect._tcp finds it', text(r));
  calls('mdns_both');
  r = await call(c, 'tap_xy', { x: 3, y: 3 });
  check(!r.isError && calls('mdns_both') === 'cmd input tap 3 3', 'the tap reaches it', text(r));
  r = await call(c, 'select_device', { serial: 'adb-BOTH-333333._adb._tcp' });
  check(!r.isError, 'its other service\'s name finds it too', text(r));
  // A phone whose announcer named its instance emulator-5554: a name says
  // nothing, the device (no ro.kernel.qemu, no ro.boot.qemu) says phone.
  const EMUNAME = 'emulator-5554._adb._tcp';
  serve('mdns_emuname', screen(LIST, FIELD, SEND));
  calls('mdns_emuname');
  r = await call(c, 'select_device', { serial: EMUNAME });
  check(r.isError && /physical device/.test(text(r)) && /not on the allowlist/.test(text(r)),
    'an mDNS instance named emulator-5554 that is a phone: refused', text(r));
  r = await call(c, 'list_devices');
  check(!r.isError && new RegExp(`^${EMUNAME}\tdevice\ttransport:mdns`, 'm').test(text(r)) &&
    !new RegExp(`^${EMUNAME}.*kind:emulator`, 'm').test(text(r)), 'it is listed, never as an emulator', text(r));
  check(calls('mdns_emuname') === '', 'nothing reached it', '');
  await c.close();
  // The documented name as -s: the phone on both services is found by it.
  const cb = await connect(['--config', cfg, '-s', BOTH], 'mdns-both-s');
  calls('mdns_both');
  r = await call(cb, 'tap_xy', { x: 6, y: 6 });
  check(!r.isError && calls('mdns_both') === 'cmd input tap 6 6', '-s INSTANCE._adb-tls-connect._tcp reaches the phone on both services', text(r));
  await cb.close();
  const c1 = await connect(['--config', cfg, '-s', EMUNAME], 'mdns-emuname-s');
  r = await call(c1, 'tap_xy', { x: 2, y: 2 });
  check(r.isError && /physical device/.test(text(r)) && !calls('mdns_emuname').includes('input'),
    '-s emulator-5554._adb._tcp of a phone: refused, nothing sent', text(r));
  await c1.close();
  c = await connect(['--config', cfg], 'mdns-again');
  r = await call(c, 'snapshot');
  check(r.isError && /no device found/.test(text(r)) && /mDNS/.test(text(r)), 'an mDNS phone is never the implicit only device', text(r));
  r = await call(c, 'select_device', { serial: NO });
  check(r.isError && /not on the allowlist/.test(text(r)) && text(r).includes(NO), 'an mDNS phone off the allowlist is refused', text(r));
  calls('mdns_no');
  r = await call(c, 'tap_xy', { x: 1, y: 1 });
  check(r.isError && calls('mdns_no') === '', 'after the refusal nothing reaches that phone', text(r));
  r = await call(c, 'select_device', { serial: OK });
  check(!r.isError && /physical, on the allowlist/.test(text(r)), 'an mDNS phone whose instance is on the allowlist is selected', text(r));
  calls('mdns_ok');
  r = await call(c, 'tap_xy', { x: 9, y: 8 });
  check(!r.isError && calls('mdns_ok') === 'cmd input tap 9 8', 'the tap reaches the allowed mDNS phone', text(r));
  await c.close();

  // Named with -s or ANDROID_SERIAL, without mdns = true: the same allowlist.
  const cfg2 = writeConfig(path.join(TMP, 'mdns2.toml'), '[device]\nusb = false\nallowlist = ["adb-ALLOWED-111111"]\n');
  const c2 = await connect(['--config', cfg2, '-s', 'adb-DENIED-222222'], 'mdns-s-denied');
  r = await call(c2, 'snapshot');
  check(r.isError && /not on the allowlist/.test(text(r)), '-s INSTANCE of a phone off the allowlist: refused', text(r));
  await c2.close();
  process.env.ANDROID_SERIAL = OK;
  const c3 = await connect(['--config', cfg2], 'mdns-env-ok');
  delete process.env.ANDROID_SERIAL;
  calls('mdns_ok');
  r = await call(c3, 'tap_xy', { x: 4, y: 2 });
  check(!r.isError && calls('mdns_ok') === 'cmd input tap 4 2', 'ANDROID_SERIAL=INSTANCE._adb._tcp of an allowed phone: used', text(r));
  r = await call(c3, 'select_device', { serial: NO });
  check(r.isError && /mdns = true/.test(text(r)), 'without mdns = true, select_device of an mDNS name says how to list them', text(r));
  await c3.close();
}

// The tools of issue 32 through the SDK: what reaches the device, the
// uninstall list from the config, the recording pulled beside the
// screenshots, hostile URLs, and a batch that stops at its first failure.
async function moreTools() {
  const emu = DEV.emu;
  const shots = path.join(TMP, 'shots-more');
  const cfg = writeConfig(path.join(TMP, 'more.toml'),
    `[device]\ntargets = ["${emu.addr}"]\nusb = false\n\n[timeouts]\nsettle_ms = 0\n\n[screenshots]\ndir = "${shots}"\n\n[apps]\nuninstall = ["com.removable"]\n`);
  const c = await connect(['--config', cfg], 'more');
  serve('emu', screen(LIST, FIELD, SEND));
  fs.writeFileSync(path.join(ctlOf('emu'), 'launchers'), 'com.b/.Main\ncom.a/.Main\n');
  calls('emu');
  let r = await call(c, 'list_apps');
  check(!r.isError && text(r) === '2 apps with a launcher activity:\ncom.a\ncom.b\n' &&
    calls('emu') === 'pm query-activities --components -a android.intent.action.MAIN -c android.intent.category.LAUNCHER',
  'list_apps: pm query-activities, packages sorted', text(r));
  fs.writeFileSync(path.join(ctlOf('emu'), 'packages'), 'com.removable\ncom.kept\n');
  r = await call(c, 'uninstall_app', { package: 'com.kept' });
  check(r.isError && /not on the list/.test(text(r)) && calls('emu') === '', 'uninstall_app: a package not in [apps] uninstall is refused, nothing sent', text(r));
  r = await call(c, 'uninstall_app', { package: 'com.removable' });
  check(!r.isError && calls('emu') === 'cmd package uninstall com.removable\npm uninstall com.removable', 'uninstall_app: a listed package is uninstalled', text(r));
  for (const url of ['https://x.com/$(reboot)', 'https://x.com/;reboot', 'content://x', 'https://x.com/ a']) {
    r = await call(c, 'open_url', { url });
    check(r.isError && calls('emu') === '', `open_url refuses ${url} before anything is sent`, text(r));
  }
  r = await call(c, 'open_url', { url: 'https://example.com/?q=1' });
  check(!r.isError && calls('emu').startsWith('am start -a android.intent.action.VIEW -d \'https://example.com/?q=1\''), 'open_url: am start VIEW', text(r));
  r = await call(c, 'double_tap', { x: 10, y: 20 });
  check(!r.isError && calls('emu').startsWith('cmd input tap 10 20\ncmd input tap 10 20'), 'double_tap: two taps in one exec', text(r));
  r = await call(c, 'screen_record', { action: 'start', time_limit_s: 60 });
  check(!r.isError && calls('emu').includes('screenrecord --time-limit 60 /data/local/tmp/adbc-record.mp4'), 'screen_record start: screenrecord with its time limit', text(r));
  r = await call(c, 'screen_record', { action: 'stop' });
  let info = {};
  try { info = JSON.parse(text(r)); } catch { /* checked below */ }
  check(!r.isError && info.path && info.path.startsWith(fs.realpathSync(shots)) && info.path.endsWith('.mp4') &&
    fs.statSync(info.path).size === info.bytes && fs.readFileSync(info.path).includes('moov-written-at-stop') &&
    !fs.existsSync(path.join(emu.sandbox, 'data/local/tmp/adbc-record.mp4')),
  'screen_record stop: the finished video pulled beside the screenshots, removed from the device', text(r));
  calls('emu');
  r = await call(c, 'batch', { acts: [{ action: 'tap', x: 1, y: 2 }, { action: 'tap', ref: 42 }, { action: 'back' }] });
  const k = calls('emu').split('\n').filter((l) => !/^(uiautomator|dumpsys)/.test(l));
  check(r.isError && /act 2 of 3/.test(text(r)) && k.join('\n') === 'cmd input tap 1 2' &&
    r.content.filter((p) => p.text.startsWith('after:')).length === 1,
  'batch: stops at the failing act, the rest not run, one observation', text(r) + '\n' + k.join('\n'));
  await c.close();
}

// The tools' metadata: every schema compiles under a strict JSON Schema
// validator (ajv, draft 2020-12, strict mode) with nothing at its root that
// the Anthropic API refuses (anyOf, oneOf, allOf); what the schema refuses
// the tool refuses too (and the reverse for the cases listed); the wait's
// maximum is the call bound less 500 ms; screenshot writes a file, so it is
// not read-only.
async function schemas() {
  const emu = DEV.emu;
  const cfg = writeConfig(path.join(TMP, 'schemas.toml'),
    `[device]\ntargets = ["${emu.addr}"]\nusb = false\n[timeouts]\ncall_ms = 20000\nsettle_ms = 0\n[screenshots]\ndir = "${path.join(TMP, 'shots-schemas')}"\n`);
  const c = await connect(['--config', cfg], 'schemas');
  const { tools } = await c.listTools();
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  const valid = {};
  for (const t of tools) {
    let fn = null, err = '';
    try { fn = ajv.compile(t.inputSchema); } catch (e) { err = String(e); }
    check(fn, `${t.name}: its schema compiles in strict mode`, err);
    const root = Object.keys(t.inputSchema).filter((k) => ['anyOf', 'oneOf', 'allOf'].includes(k));
    check(root.length === 0, `${t.name}: no ${root.join('/') || 'anyOf/oneOf/allOf'} at the schema's root`, JSON.stringify(t.inputSchema));
    valid[t.name] = fn;
  }
  const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
  check(byName.screenshot.annotations.readOnlyHint === false, 'screenshot (it writes a file) is not readOnlyHint', JSON.stringify(byName.screenshot.annotations));
  const open = tools.filter((t) => t.annotations.openWorldHint).map((t) => t.name);
  check(JSON.stringify(open) === '["open_url"]', 'openWorldHint on open_url alone (it reaches the web), the rest act on the device', open.join(','));
  check(byName.wait_for_text.inputSchema.properties.timeout_ms.maximum === 19500 &&
    byName.wait_stable.inputSchema.properties.timeout_ms.maximum === 19500, 'the waits\' timeout_ms maximum: call_ms 20000 less 500',
  JSON.stringify(byName.wait_for_text.inputSchema.properties.timeout_ms));
  const refused = [
    ['tap', {}], ['tap', { ref: 1, selector: { text: 'Send' } }], ['tap', { selector: {} }], ['tap', { selector: { text: '' } }],
    ['long_press', {}], ['rotate', {}], ['rotate', { restore: false }], ['rotate', { restore: true, degrees: 90 }],
    ['find', {}], ['find', { contains: true, ignore_case: true }], ['intent', {}], ['intent', { extras: [] }],
    ['type', { text: 'x', clear: true }], ['type', { text: 'x', ref: 2, selector: { text: 'a' } }],
    ['scroll', { direction: 'down', ref: 1, selector: { text: 'a' } }],
    ['wait_for_text', { text: 'Send', timeout_ms: 19501 }], ['wait_stable', { timeout_ms: 19501 }],
    // A point as tap takes it: ref, selector, x and y, or cell.
    ['double_tap', {}], ['double_tap', { y: 5 }], ['double_tap', { snapshot: 'x' }], ['double_tap', { selector: {} }],
    ['drag', { from: {}, to: { x: 1, y: 1 } }], ['drag', { from: { x: 1, y: 1 }, to: { bogus: 1 } }],
    // Lengths, characters and ranges the argument readers refuse.
    ['tap_xy', { x: 65536, y: 1 }], ['swipe', { x1: 0, y1: 0, x2: 70000, y2: 0 }],
    ['launch', { package: 'com.b; reboot' }], ['launch', { package: '' }], ['stop_app', { package: 'a'.repeat(256) }],
    ['grant_permission', { package: 'com.a', permission: 'a b' }], ['uninstall_app', { package: '1abc' }],
    ['press', { key: '' }], ['press', { key: 'a b' }], ['press', { key: 'k'.repeat(65) }],
    ['open_url', { url: 'content://x' }], ['open_url', { url: 'https://x.com/$(reboot)' }], ['open_url', { url: 'https:///x' }],
    ['open_url', { url: 'https://x.com/ a' }], ['intent', { action: '' }], ['intent', { action: 'a b' }],
    ['intent', { component: 'c'.repeat(513) }], ['intent', { data: ' https://x' }],
    ['intent', { action: 'a', extras: [{ type: 'string', key: 'a b', value: 'v' }] }],
    ['select_device', { serial: 's'.repeat(256) }], ['find', { text: 'x'.repeat(4097) }], ['find', { class: 'c'.repeat(513) }],
    ['type', { text: 'x'.repeat(10001) }], ['wait_for_text', { text: 'x'.repeat(4097), timeout_ms: 100 }],
    ['install_apk', { path: `/${'p'.repeat(4096)}` }], ['tap', { selector: { text: 'x'.repeat(4097) } }],
    // A batch's acts, each as its action's tool takes it.
    ['batch', { acts: [{}] }], ['batch', { acts: [{ action: 'fly' }] }], ['batch', { acts: [{ action: 'tap' }] }],
    ['batch', { acts: [{ action: 'tap', x: 1 }] }], ['batch', { acts: [{ action: 'long_press' }] }],
    ['batch', { acts: [{ action: 'type' }] }], ['batch', { acts: [{ action: 'type', text: 'x', clear: true }] }],
    ['batch', { acts: [{ action: 'press' }] }], ['batch', { acts: [{ action: 'press', key: 'a b' }] }],
    ['batch', { acts: [{ action: 'swipe', x1: 1, y1: 1, x2: 1 }] }], ['batch', { acts: [{ action: 'scroll' }] }],
    ['batch', { acts: [{ action: 'scroll', direction: 'sideways' }] }], ['batch', { acts: [{ action: 'back', bogus: 1 }] }],
    ['batch', { acts: [{ action: 'tap', ref: 1, selector: { text: 'a' } }] }], ['batch', { acts: [{ action: 'tap', x: 70000, y: 1 }] }],
  ];
  serve('emu', screen(LIST, FIELD, SEND));
  await call(c, 'snapshot');
  calls('emu');
  for (const [name, args] of refused) {
    const ok = valid[name](args);
    const r = await call(c, name, args);
    check(!ok && r.isError, `${name} ${JSON.stringify(args)}: refused by the schema and by the tool`, `schema ${ok ? 'accepts' : 'refuses'}; tool: ${text(r)}`);
  }
  check(!/cmd input|am start|settings put/.test(calls('emu')), 'nothing refused reached the device');
  const accepted = [
    ['tap', { ref: 3 }], ['tap', { selector: { text: 'Send' } }], ['long_press', { ref: 3 }], ['rotate', { degrees: 90 }],
    ['rotate', { restore: true }], ['rotate', { degrees: 0, restore: false }], ['find', { text: 'Send' }], ['find', { class: 'Button', contains: true }],
    ['intent', { action: 'android.intent.action.VIEW' }], ['type', { text: 'x', ref: 2, clear: true }],
    ['type', { text: 'x', selector: { text: 'draft' }, clear: true }], ['type', { text: 'x' }], ['type', { text: 'x', clear: false }],
    ['wait_for_text', { text: 'Send', timeout_ms: 19500 }], ['wait_stable', { timeout_ms: 1000 }],
    ['double_tap', { ref: 3 }], ['double_tap', { x: 1, y: 2 }], ['double_tap', { cell: 'B2' }],
    ['drag', { from: { ref: 3 }, to: { x: 5, y: 5 } }], ['tap_xy', { x: 65535, y: 0 }],
    ['open_url', { url: 'https://example.com/a?q=1&b=%20#x' }], ['launch', { package: 'com.example.app' }],
    ['press', { key: 'KEYCODE_ENTER' }], ['press', { key: 'page_up' }], ['press', { key: '66' }],
    ['intent', { data: 'geo:0,0?q=a b' }], ['intent', { action: 'a', extras: [{ type: 'int', key: 'n', value: '' }] }],
    ['batch', { acts: [{ action: 'tap', ref: 3 }, { action: 'tap', x: 1, y: 2 }, { action: 'tap', cell: 'B2' },
      { action: 'type', text: 'x', ref: 2, clear: true }, { action: 'type', text: 'y' }, { action: 'press', key: 'enter' },
      { action: 'swipe', x1: 1, y1: 2, x2: 3, y2: 4, duration_ms: 50 }, { action: 'scroll', direction: 'down' },
      { action: 'long_press', selector: { text: 'Send' } }, { action: 'back' }, { action: 'home' }] }],
  ];
  for (const [name, args] of accepted) check(valid[name](args), `${name} ${JSON.stringify(args)}: the schema accepts it`, JSON.stringify(valid[name].errors));
  // The largest the schema allows is run, not refused: the bound is from
  // the call's start, whatever taking the device used of it.
  const r = await call(c, 'wait_for_text', { text: 'Send', timeout_ms: 19500 });
  check(!r.isError && text(r).includes('[ref=3]'), 'wait_for_text at the schema\'s maximum runs', text(r));
  await c.close();
  // A call bound under 10.5 s: timeout_ms left out (the schema allows it)
  // is the bound, not the default 10000 the tool would refuse.
  const cfg8 = writeConfig(path.join(TMP, 'schemas8.toml'),
    `[device]\ntargets = ["${emu.addr}"]\nusb = false\n[timeouts]\ncall_ms = 8000\nsettle_ms = 0\n`);
  const c8 = await connect(['--config', cfg8], 'schemas-8s');
  const t8 = Object.fromEntries((await c8.listTools()).tools.map((t) => [t.name, t]));
  check(t8.wait_for_text.inputSchema.properties.timeout_ms.maximum === 7500, 'call_ms 8000: the waits\' maximum is 7500');
  for (const [name, args] of [['wait_for_text', { text: 'Send' }], ['wait_stable', {}]]) {
    const r8 = await call(c8, name, args);
    check(!/beyond the call limit/.test(text(r8)) && (name !== 'wait_for_text' || (!r8.isError && text(r8).includes('[ref=3]'))),
      `call_ms 8000: ${name} ${JSON.stringify(args)} without timeout_ms runs`, text(r8));
  }
  await c8.close();
}

// The Termux:API tools (in Termux: TERMUX_VERSION set and the termux-*
// commands on PATH, here the stand-in of fixtures/termux): each schema
// compiles strictly, and what it refuses the tool refuses too; a cancelled
// call stops its command.
async function termuxTools() {
  const dir = path.join(TMP, 'termux');
  const bin = path.join(dir, 'bin');
  fs.mkdirSync(bin, { recursive: true });
  const standin = path.join(path.dirname(new URL(import.meta.url).pathname), '..', '..', 'fixtures', 'termux', 'termux-standin');
  for (const n of ['battery-status', 'clipboard-set', 'location', 'notification', 'volume', 'sms-list', 'sms-send', 'telephony-call']) {
    const f = path.join(bin, `termux-${n}`);
    if (!fs.existsSync(f)) fs.symlinkSync(standin, f);
  }
  const saved = { v: process.env.TERMUX_VERSION, p: process.env.PATH, s: process.env.TERMUX_STANDIN };
  Object.assign(process.env, { TERMUX_VERSION: '0.118.1', PATH: `${bin}:${saved.p}`, TERMUX_STANDIN: dir });
  const cfg = writeConfig(path.join(TMP, 'termux.toml'),
    '[device]\nusb = false\n[timeouts]\ncall_ms = 60000\n[tools]\nallow = ["termux_sms_send", "termux_call"]\n');
  const c = await connect(['--config', cfg], 'termux');
  process.env.TERMUX_VERSION = saved.v; process.env.PATH = saved.p; process.env.TERMUX_STANDIN = saved.s;
  if (saved.v === undefined) delete process.env.TERMUX_VERSION;
  if (saved.s === undefined) delete process.env.TERMUX_STANDIN;
  const { tools } = await c.listTools();
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  const valid = {};
  for (const t of tools.filter((x) => x.name.startsWith('termux_'))) valid[t.name] = ajv.compile(t.inputSchema);
  check(valid.termux_sms_send && valid.termux_call && valid.termux_volume, 'the Termux tools are listed, sms and call allowed', Object.keys(valid).join(','));
  const open = tools.filter((t) => t.name.startsWith('termux_') && t.annotations.openWorldHint).map((t) => t.name).sort();
  check(JSON.stringify(open) === '["termux_call","termux_sms_send"]', 'openWorldHint on termux_sms_send and termux_call (they reach other people)', open.join(','));
  const refused = [
    ['termux_clipboard_set', { text: '' }], ['termux_clipboard_set', { text: 'x'.repeat(100001) }],
    ['termux_notification', { title: 't'.repeat(201), content: 'c' }], ['termux_notification', { title: 't', content: 'c'.repeat(4001) }],
    ['termux_notification', { title: 't', content: 'c', id: 'a b' }], ['termux_notification', { title: 't', content: 'c', id: 'i'.repeat(65) }],
    ['termux_volume', { volume: 101, stream: 'music' }], ['termux_volume', { stream: 'music' }], ['termux_volume', { volume: 5 }],
    ['termux_sms_list', { offset: 100001 }], ['termux_sms_send', { number: '12', text: 'hi' }],
    ['termux_sms_send', { number: '+49 151', text: 'hi' }], ['termux_sms_send', { number: '+4915112345678', text: '' }],
    ['termux_sms_send', { number: '+4915112345678', text: 'x'.repeat(1601) }], ['termux_call', { number: '1'.repeat(21) }],
    ['termux_call', { number: '*#06#' }],
  ];
  for (const [name, args] of refused) {
    const ok = valid[name](args);
    const r = await call(c, name, args);
    check(!ok && r.isError, `${name} ${JSON.stringify(args).slice(0, 80)}: refused by the schema and by the tool`, `schema ${ok ? 'accepts' : 'refuses'}; tool: ${text(r)}`);
  }
  const accepted = [
    ['termux_clipboard_set', { text: 'x' }], ['termux_notification', { title: 't', content: 'c', id: 'a_b-1' }],
    ['termux_volume', {}], ['termux_volume', { stream: 'music', volume: 100 }], ['termux_sms_list', { offset: 100000 }],
    ['termux_sms_send', { number: '+4915112345678', text: 'hi' }], ['termux_call', { number: '112' }],
  ];
  for (const [name, args] of accepted) check(valid[name](args), `${name} ${JSON.stringify(args)}: the schema accepts it`, JSON.stringify(valid[name].errors));
  const sent = fs.existsSync(path.join(dir, 'calls')) ? fs.readFileSync(path.join(dir, 'calls'), 'utf8') : '';
  check(!/termux-(sms-send|telephony-call|notification|clipboard-set|volume|sms-list)/.test(sent), 'nothing refused ran a command', sent);

  // notifications/cancelled of a termux_location whose command hangs (a
  // GPS fix that never comes: the tool would wait 30 s): the command is
  // killed, no answer comes, the server serves on.
  fs.writeFileSync(path.join(dir, 'mode-termux-location'), 'hang');
  const pidFile = path.join(dir, 'pid-termux-location');
  fs.rmSync(pidFile, { force: true });
  const late = [];
  c.onerror = (e) => late.push(String(e));
  const ac = new AbortController();
  const pending = c.callTool({ name: 'termux_location', arguments: {} }, undefined, { signal: ac.signal, timeout: 90000 })
    .then(() => 'answered', (e) => `rejected: ${e}`);
  const sleep = (ms) => new Promise((res) => setTimeout(res, ms));
  for (let i = 0; i < 600 && !fs.existsSync(pidFile); i++) await sleep(50);
  const pid = fs.existsSync(pidFile) ? Number(fs.readFileSync(pidFile, 'utf8')) : 0;
  check(pid > 0, 'termux_location\'s command is running (hung)', c.log.join('').slice(-1500));
  ac.abort('the user gave up');
  check((await pending).startsWith('rejected'), 'the SDK gives up on the call');
  const alive = () => { try { process.kill(pid, 0); return true; } catch { return false; } };
  // Bounded looks (15 s; the command would otherwise live 30 s).
  for (let i = 0; i < 300 && pid && alive(); i++) await sleep(50);
  check(pid && !alive(), 'the cancelled call\'s command was killed', pid);
  fs.rmSync(path.join(dir, 'mode-termux-location'), { force: true });
  check(await c.ping().then(() => true), 'still serving');
  await c.close();
  check(late.length === 0, 'no answer for the cancelled call reached the client', late.join('\n'));
  if (pid && alive()) process.kill(pid, 'SIGKILL');
}

// Twenty first calls at once, before any device is active, on a TCP
// device: the device list is probed once for all of them (the device logs
// each handshake: -v), and none fails as "not ready"; past the 16 calls
// that may run at once the rest are refused as back-pressure.
async function crowd() {
  const d = DEV.crowd;
  const log = path.join(path.dirname(d.sandbox), 'stderr');
  const handshakes = () => fs.readFileSync(log, 'utf8').split('\n').filter((l) => / online$/.test(l)).length;
  serve('crowd', screen(LIST, FIELD, SEND));
  const cfg = writeConfig(path.join(TMP, 'crowd.toml'),
    `[device]\ntargets = ["${d.addr}"]\nusb = false\n[timeouts]\ncall_ms = 60000\nsettle_ms = 0\n`);
  const c = await connect(['--config', cfg], 'crowd');
  calls('crowd');
  const before = handshakes();
  const rs = await Promise.all(Array.from({ length: 20 }, (_, i) => call(c, 'tap_xy', { x: i, y: 100 + i })
    .then((r) => ({ r }), (e) => ({ e }))));
  const seen = handshakes() - before;
  const ok = rs.filter((x) => x.r && !x.r.isError).length;
  const busy = rs.filter((x) => x.e && /already running/.test(String(x.e))).length;
  const other = rs.filter((x) => !(x.r && !x.r.isError) && !(x.e && /already running/.test(String(x.e))));
  check(other.length === 0, 'twenty first calls at once: each runs or is refused as back-pressure, none fails otherwise',
    other.map((x) => (x.e ? String(x.e) : text(x.r))).join('\n'));
  check(ok >= 16 && ok + busy === 20, `at least 16 of them ran (${ok} ran, ${busy} refused as back-pressure)`);
  check(seen <= 2, `the device list was probed once for all of them: the device saw ${seen} handshakes (a listing and the connection)`, seen);
  const taps = calls('crowd').split('\n').filter((l) => l.startsWith('cmd input tap')).length;
  check(taps === ok, `each call that ran tapped once (${taps} taps)`, taps);
  await c.close();
}

// What a device prints goes into results; bytes that are not UTF-8 among
// them are repaired there, as in errors, so every answer is UTF-8 (checked
// on the bytes of each line, Raw above).
async function deviceBytes() {
  const emu = DEV.emu;
  const raw = new Raw(['--no-usb', '-t', emu.addr]);
  raw.send('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}');
  await raw.next();
  const bad = Buffer.concat([Buffer.from('ok caf\xc3\xa9 ', 'latin1'), Buffer.from([0xff, 0xfe, 0xc3, 0x28, 0xed, 0xa0, 0x80, 0x0a]),
    Buffer.from('cut \xe2\x82\n', 'latin1')]);
  fs.writeFileSync(path.join(ctlOf('emu'), 'logcat.txt'), bad);
  fs.writeFileSync(path.join(ctlOf('emu'), 'logcat-crash.txt'), bad);
  for (const [id, name, args] of [[2, 'logcat', { lines: 5 }], [3, 'crash_log', {}]]) {
    raw.send(JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } }));
    const m = await raw.next();
    const t = m.result ? m.result.content.map((x) => x.text).join('\n') : '';
    check(m.id === id && !m.result.isError && t.includes('ok café ') && t.includes('cut ') && !t.includes('\ufffd'),
      `${name}: the device's text, its bad bytes repaired`, JSON.stringify(m).slice(0, 400));
  }
  await raw.close();
  check(raw.bad.length === 0, 'every answer line is UTF-8', raw.bad.join('\n').slice(0, 600));
  fs.writeFileSync(path.join(ctlOf('emu'), 'logcat.txt'), '');
  fs.rmSync(path.join(ctlOf('emu'), 'logcat-crash.txt'), { force: true });
}

// screen_record's stop under a hostile screenshots folder: a name that
// needs escaping in JSON (a quote, a backslash), and symlinks planted at
// every name the video could get (SERIAL-DATE-TIME-MS-SEQ.mp4, the
// sequence of a fresh server being 1) pointing at a file outside: the video
// is written as screenshots are (a temporary file, then rename), so the
// links are replaced, never written through.
async function hostileFolder() {
  const emu = DEV.emu;
  const shots = path.join(TMP, 'shots "q" \\ x');
  fs.mkdirSync(shots, { recursive: true });
  // The links point at a file that does not exist yet (a dotfile the user
  // has not made, say): written through, the video would appear there.
  const victim = path.join(TMP, 'victim.txt');
  fs.rmSync(victim, { force: true });
  const cfg = writeConfig(path.join(TMP, 'hostile.toml'),
    `[device]\ntargets = ["${emu.addr}"]\nusb = false\n[timeouts]\nsettle_ms = 0\n[screenshots]\ndir = ${JSON.stringify(shots)}\n`);
  const c = await connect(['--config', cfg], 'hostile-folder');
  let r = await call(c, 'screen_record', { action: 'start', time_limit_s: 30 });
  check(!r.isError, 'screen_record start', text(r));
  const ser = emu.addr.replace(/[^A-Za-z0-9.-]/g, '_');
  const pad = (n, w = 2) => String(n).padStart(w, '0');
  // Links for every millisecond of a window of 4 s that starts after they
  // are all planted (a busy machine plants slowly: then a later window),
  // and the stop sent at its start.
  let planted = 0, from = 0;
  const plant = (t0, t1) => {
    for (let t = t0; t < t1; t += 1000) {
      const d = new Date(t);
      const stamp = `${d.getUTCFullYear()}${pad(d.getUTCMonth() + 1)}${pad(d.getUTCDate())}-${pad(d.getUTCHours())}${pad(d.getUTCMinutes())}${pad(d.getUTCSeconds())}`;
      for (let ms = 0; ms < 1000; ms++) {
        const f = path.join(shots, `${ser}-${stamp}-${pad(ms, 3)}-1.mp4`);
        let there = true;
        try { fs.lstatSync(f); } catch { there = false; } // a dangling link is there too
        if (!there) {
          fs.symlinkSync(victim, f);
          planted++;
        }
      }
    }
  };
  for (let i = 0; i < 10 && (!from || Date.now() >= from); i++) {
    from = (Math.floor(Date.now() / 1000) + 2) * 1000;
    plant(from, from + 4000);
  }
  while (Date.now() < from) await new Promise((res) => setTimeout(res, 20));
  r = await call(c, 'screen_record', { action: 'stop' });
  let info = null;
  try { info = JSON.parse(text(r)); } catch { /* checked */ }
  check(!r.isError && info && info.path && path.dirname(info.path) === fs.realpathSync(shots),
    'screen_record stop: its JSON parses, the path inside the folder whose name needs escaping', text(r));
  check(!fs.existsSync(victim), `nothing was written where a planted link pointed (${planted} links)`,
    fs.existsSync(victim) && fs.readFileSync(victim).subarray(0, 60).toString('latin1'));
  const st = info && info.path ? fs.lstatSync(info.path) : null;
  check(st && st.isFile() && !st.isSymbolicLink() && st.size === info.bytes && fs.readFileSync(info.path).includes('moov-written-at-stop'),
    'the video is a regular file at the name given, whole', st && JSON.stringify({ size: st.size, link: st.isSymbolicLink() }));
  const frame = Buffer.alloc(12 + 2 * 2 * 4, 0x7f); // a 2x2 RGBA raw frame
  frame.writeUInt32LE(2, 0); frame.writeUInt32LE(2, 4); frame.writeUInt32LE(1, 8);
  fs.writeFileSync(path.join(ctlOf('emu'), 'screencap.raw'), frame);
  r = await call(c, 'screenshot');
  try { info = JSON.parse(text(r)); } catch { info = null; }
  check(!r.isError && info && path.dirname(info.path) === fs.realpathSync(shots), 'screenshot in that folder: its JSON parses too', text(r));
  const left = fs.readdirSync(shots).filter((f) => f.startsWith('.'));
  check(left.length === 0, 'no temporary file is left behind', left.join(','));
  await c.close();
}

// notifications/cancelled (MCP's cancellation): the SDK's AbortSignal on a
// long wait_for_text stops the wait (no more dumps on the device), frees the
// device for the next call, and no answer ever comes for the cancelled id.
async function cancelCall() {
  const emu = DEV.emu;
  const cfg = writeConfig(path.join(TMP, 'cancel.toml'),
    `[device]\ntargets = ["${emu.addr}"]\nusb = false\n[timeouts]\ncall_ms = 30000\nsettle_ms = 0\n`);
  const c = await connect(['--config', cfg], 'cancel');
  const late = [];
  c.onerror = (e) => late.push(String(e));
  serve('emu', screen(LIST, FIELD, SEND));
  await call(c, 'snapshot');
  const ac = new AbortController();
  const pending = c.callTool({ name: 'wait_for_text', arguments: { text: 'Never', timeout_ms: 25000 } }, undefined,
    { signal: ac.signal, timeout: 90000 }).then(() => 'answered', (e) => `rejected: ${e}`);
  // The uiautomator stand-in counts its runs in uiautomator.count.
  const dumps = () => { try { return Number(fs.readFileSync(path.join(ctlOf('emu'), 'uiautomator.count'), 'utf8')); } catch { return 0; } };
  const before = dumps();
  for (let i = 0; i < 600 && dumps() < before + 2; i++) await new Promise((res) => setTimeout(res, 50));
  check(dumps() >= before + 2, 'wait_for_text is polling the screen', `${before} then ${dumps()}`);
  ac.abort('the user gave up');
  const how = await pending;
  check(how.startsWith('rejected'), 'the SDK gives up on the call', how);
  // The device is free at once: with the wait still running it would be held
  // for another ~23 s, past this call's 15 s bound.
  calls('emu');
  const r = await c.callTool({ name: 'tap_xy', arguments: { x: 4, y: 5 } }, undefined, { timeout: 15000 })
    .catch((e) => ({ isError: true, content: [{ type: 'text', text: String(e) }] }));
  check(!r.isError && calls('emu').includes('cmd input tap 4 5'), 'the next call gets the device at once', text(r));
  const n1 = dumps();
  await new Promise((res) => setTimeout(res, 1500));
  check(dumps() === n1, 'the cancelled wait polls no more', `${n1} then ${dumps()}`);
  check(await c.ping().then(() => true), 'still serving');
  await c.close();
  check(late.length === 0, 'no answer for the cancelled request reached the client', late.join('\n'));
  check(c.log.join('').includes('cancelled by the client, no answer sent'), 'the server says it dropped the answer', c.log.join('').slice(-1500));

  // Raw: the cancelled call's id never gets an answer, even after its
  // timeout would have passed; a cancel for an unknown id is ignored.
  const raw = new Raw(['--config', cfg]);
  raw.send('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}');
  await raw.next();
  raw.send('{"jsonrpc":"2.0","method":"notifications/initialized"}');
  raw.send('{"jsonrpc":"2.0","id":9007199254740993,"method":"tools/call","params":{"name":"wait_for_text","arguments":{"text":"Never","timeout_ms":3000}}}');
  await new Promise((res) => setTimeout(res, 800));
  raw.send('{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9007199254740992}}');
  raw.send('{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9007199254740993,"reason":"x"}}');
  raw.send('{"jsonrpc":"2.0","id":"p","method":"ping"}');
  let m = await raw.next();
  check(m.id === 'p', 'the ping is answered', JSON.stringify(m));
  const after = await raw.next(6000).then((x) => JSON.stringify(x), () => null);
  check(after === null, 'nothing is sent for the cancelled call (past its 3 s wait too)', after);
  await raw.close();
  check(raw.bad.length === 0, 'stdout held nothing but JSON-RPC messages', raw.bad.join('\n'));
}

const allSteps = {
  'every tool': everyTool, 'more tools': moreTools, 'raw protocol': rawProtocol, allowlist, '--allow-shell': shellFlag, cancel: cancelCall, 'device bytes': deviceBytes, 'hostile folder': hostileFolder, schemas, termux: termuxTools, crowd,
  'device vanishes': vanish, 'config errors': configErrors,
  'no config: one emulator': noConfigOne, 'no config: two emulators': noConfigTwo,
  'no config: only device unauthorized': noConfigLocked, 'no config: a phone on an emulator port': noConfigPhonePort, 'mdns: allowlist': mdnsAllowlist,
};
const steps = env.MCP_STEPS
  ? env.MCP_STEPS.split(';').map((n) => [n, allSteps[n]])
  : [['every tool', everyTool], ['more tools', moreTools], ['cancel', cancelCall], ['device bytes', deviceBytes], ['hostile folder', hostileFolder], ['schemas', schemas], ['termux', termuxTools], ['crowd', crowd], ['raw protocol', rawProtocol], ['allowlist', allowlist], ['--allow-shell', shellFlag], ['device vanishes', vanish], ['config errors', configErrors]];
for (const [name, fn] of steps) {
  console.log(`== ${name}`);
  if (!fn) {
    failed++;
    console.log(`FAIL: no step named ${name}`);
    continue;
  }
  try {
    await fn();
  } catch (e) {
    failed++;
    console.log(`FAIL: ${name} threw: ${e && e.stack ? e.stack : e}`);
  }
}
const reports = servers.filter((c) => /Sanitizer|runtime error/.test(c.log.join('')));
check(reports.length === 0, 'no sanitizer report in any server log', reports.map((c) => c.label + ': ' + c.log.join('').slice(-1500)).join('\n'));
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
