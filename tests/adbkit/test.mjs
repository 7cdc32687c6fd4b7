// SPDX-License-Identifier: Apache-2.0
// adbc-serve's adb server driven by @devicefarmer/adbkit, the most used
// JavaScript client of adb's server (tests/sh/adb_server_adbkit.sh starts
// the test device and the server). Environment: ADB_PORT (adbc's server),
// SERIAL (the device's address), SANDBOX (the device's file tree), HTTP_PORT
// (an HTTP server on this machine whose /f1 is "one\n"), T_TMP (a scratch
// directory).
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import adbkit from '@devicefarmer/adbkit';

const { Adb } = adbkit;

const port = Number(process.env.ADB_PORT);
const serial = process.env.SERIAL;
const sandbox = process.env.SANDBOX;
const httpPort = Number(process.env.HTTP_PORT);
let checks = 0;

function fail(msg) {
  console.error(`FAIL: ${msg}`);
  process.exit(1);
}
function check(what) {
  checks++;
  console.log(`adbkit check ${checks}: ${what}`);
}
// Every wait is bounded: a hang is a failure that says where.
function within(ms, what, p) {
  let timer;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
    }),
  ]);
}
function collect(stream) {
  return new Promise((resolve, reject) => {
    const parts = [];
    stream.on('data', (b) => parts.push(b));
    stream.on('end', () => resolve(Buffer.concat(parts)));
    stream.on('error', reject);
  });
}
function sha(b) {
  return createHash('sha256').update(b).digest('hex');
}
function get(url) {
  return new Promise((resolve, reject) => {
    http.get(url, (res) => collect(res).then((b) => resolve(b.toString()), reject)).on('error', reject);
  });
}

const client = Adb.createClient({ host: '127.0.0.1', port });

try {
  check('version: 41, so adbkit keeps this server');
  const v = await within(10000, 'version', client.version());
  if (v !== 41) fail(`version ${v}`);

  check('listDevices: the device, online');
  let list = await within(10000, 'listDevices', client.listDevices());
  if (list.length !== 1 || list[0].id !== serial || list[0].type !== 'device')
    fail(`listDevices: ${JSON.stringify(list)}`);

  check('trackDevices: add for the device; remove on disconnect; add again on connect');
  const tracker = await within(10000, 'trackDevices', client.trackDevices());
  const events = [];
  const waitEvent = (kind) =>
    within(15000, `tracker ${kind}`, new Promise((resolve) => {
      const look = () => {
        const i = events.findIndex((e) => e.kind === kind && e.id === serial);
        if (i >= 0) {
          events.splice(0, i + 1);
          resolve();
        } else setTimeout(look, 50);
      };
      look();
    }));
  tracker.on('add', (d) => events.push({ kind: 'add', id: d.id }));
  tracker.on('remove', (d) => events.push({ kind: 'remove', id: d.id }));
  tracker.on('error', (e) => fail(`tracker: ${e.message}`));
  // The first list may have been read before the handlers were attached.
  if (tracker.deviceMap[serial]) events.push({ kind: 'add', id: serial });
  await waitEvent('add');
  const [host, devPort] = serial.split(':');
  await within(15000, 'disconnect', client.disconnect(host, Number(devPort)));
  await waitEvent('remove');
  list = await client.listDevices();
  if (list.length !== 0) fail(`listed after disconnect: ${JSON.stringify(list)}`);
  await within(15000, 'connect', client.connect(host, Number(devPort)));
  await waitEvent('add');
  tracker.end();

  const device = client.getDevice(serial);
  check('getState, getDevicePath, getProperties');
  if ((await within(10000, 'getState', device.getState())) !== 'device') fail('getState');
  // adb's server has no device path for a TCP device: "unknown". (adbkit
  // 3.3.9's getSerialNo sends get-devpath too, so it is not checked.)
  const path = await within(10000, 'getDevicePath', device.getDevicePath());
  if (path !== 'unknown') fail(`getDevicePath: ${path}`);
  const props = await within(10000, 'getProperties', device.getProperties());
  if (!props['ro.product.model']) fail(`getProperties: ${JSON.stringify(props)}`);

  check('shell: the output of a command');
  const out = await within(15000, 'shell',
    device.shell('echo hello; echo $((6*7))').then((s) => collect(s)));
  if (out.toString() !== 'hello\n42\n') fail(`shell said ${JSON.stringify(out.toString())}`);

  check('push: 3 MiB arrive whole');
  const data = randomBytes(3 << 20);
  const local = `${process.env.T_TMP}/adbkit.bin`;
  writeFileSync(local, data);
  const transfer = await within(30000, 'push', device.push(local, '/data/local/tmp/adbkit.bin'));
  await within(30000, 'push end', new Promise((resolve, reject) => {
    transfer.on('end', resolve);
    transfer.on('error', reject);
  }));
  const onDevice = readFileSync(`${sandbox}/data/local/tmp/adbkit.bin`);
  if (sha(onDevice) !== sha(data)) fail(`pushed ${onDevice.length} bytes differ`);

  check('pull: the same bytes back');
  const back = await within(30000, 'pull',
    device.pull('/data/local/tmp/adbkit.bin').then((s) => collect(s)));
  if (sha(back) !== sha(data)) fail(`pulled ${back.length} bytes differ`);

  check('forward: made, listed, relayed');
  // tcp:0: the server picks a free port, and lists it.
  if (!(await within(10000, 'forward', device.forward('tcp:0', `tcp:${httpPort}`))))
    fail('forward refused');
  const fwds = await within(10000, 'listForwards', device.listForwards());
  const made = fwds.find((f) => f.serial === serial && f.remote === `tcp:${httpPort}`);
  if (!made || !/^tcp:[1-9][0-9]*$/.test(made.local)) fail(`listForwards: ${JSON.stringify(fwds)}`);
  const fwd = made.local;
  const body = await within(10000, 'GET', get(`http://127.0.0.1:${fwd.slice(4)}/f1`));
  if (body !== 'one\n') fail(`through the forward: ${JSON.stringify(body)}`);

  console.log(`adbkit: ${checks} checks passed`);
  process.exit(0);
} catch (e) {
  fail(e.stack || String(e));
}
