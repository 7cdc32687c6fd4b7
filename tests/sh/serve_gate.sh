#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# adbc-serve's request heads against hostile and unusual clients, over raw
# loopback sockets: blank lines before the request line do not hide a NUL
# from the gate; headers that must appear once (Host, Content-Length,
# Authorization) twice are 400; an absolute-form target, a lower-case
# "bearer" and HEAD /health are answered; clients that send part of a head
# and close cost no CPU; a request must be whole within --conn-timeout of
# connecting; in a connect flood every client that sends its request at once
# is answered; a request that finds every connection slot taken is answered
# 503 server_busy by its deadline, not pushed out by connects that send
# nothing; out of descriptors, the gate waits instead of spinning.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
t_init
. "$(dirname "${BASH_SOURCE[0]}")/lib_serve.sh"
command -v python3 > /dev/null || t_fail "python3 is needed (scripts/packages.txt)"

td_start a --no-auth
setup_dev a
screen "${TD_SANDBOX[a]}/data/local/tmp/.adbc-test" Send
A=127.0.0.1:${TD_PORT[a]}
serve_start -t "$A" --settle 0 --conn-timeout 6

t_check "blank lines before the request line do not hide a NUL in the head"
raw '
for pre in (b"\r\n", b"\r\n\r\n", b"\n\n", b"\r\n\r\n\r\n\r\n"):
    d = ask(pre + b"GET /v1/devices HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + TOK + b"\x00junk\r\n\r\n")
    assert status(d) == 400 and b"NUL byte" in d, (pre, d[:300])
# The blank lines themselves are skipped, as RFC 9112 2.2 allows.
d = ask(b"\r\n\r\nGET /v1/devices HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + TOK + b"\r\n\r\n")
assert status(d) == 200, d[:300]
' || t_fail "blank lines before the request line"

t_check "Host, Content-Length or Authorization twice: 400, nothing done"
raw '
auth = b"Authorization: Bearer " + TOK + b"\r\n"
for head in (b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: evil.example\r\n\r\n",
             b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nhost: 127.0.0.1\r\n\r\n",
             b"GET /v1/devices HTTP/1.1\r\nHost: 127.0.0.1\r\n" + auth + auth + b"\r\n",
             b"POST /v1/act HTTP/1.1\r\nHost: 127.0.0.1\r\n" + auth +
             b"Content-Type: application/json\r\nContent-Length: 17\r\nContent-Length: 2\r\n\r\n{\"action\":\"home\"}",
             b"POST /v1/act HTTP/1.1\r\nHost: 127.0.0.1\r\n" + auth +
             b"Content-Type: application/json\r\nContent-Length: 2\r\nContent-Length: 17\r\n\r\n{\"action\":\"home\"}"):
    d = ask(head)
    assert status(d) == 400 and b"bad_request" in d, (head, d[:300])
' || t_fail "a header that must appear once, twice"
[ -z "$(calls "${TD_SANDBOX[a]}/data/local/tmp/.adbc-test")" ] || t_fail "a request with a doubled header reached the device"

t_check "an absolute-form target, a lower-case bearer scheme, HEAD /health"
raw '
d = ask(b"GET http://127.0.0.1:%d/v1/devices HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " % PORT + TOK + b"\r\n\r\n")
assert status(d) == 200 and b"\"ok\":true" in d, d[:300]
d = ask(b"GET http://evil.example/v1/devices HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + TOK + b"\r\n\r\n")
assert status(d) == 403 and b"bad_host" in d, d[:300]
for scheme in (b"bearer ", b"BEARER ", b"Bearer   "):
    d = ask(b"GET /v1/devices HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: " + scheme + TOK + b"\r\n\r\n")
    assert status(d) == 200, (scheme, d[:300])
d = ask(b"GET /v1/devices HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: bearer x" + TOK + b"\r\n\r\n")
assert status(d) == 401, d[:300]
d = ask(b"HEAD /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
assert status(d) == 200 and d.endswith(b"\r\n\r\n"), d[:300]
' || t_fail "HTTP details"
code=$(curl -s -m 10 -o /dev/null -w '%{http_code}' -I "$URL/health")
[ "$code" = 200 ] || t_fail "curl -I /health: $code"

t_check "a flood of 1,500 connects, each sending its request at once: every one is answered"
# One connect after the other as fast as they go, each sending a whole
# request at once, the answers read only afterwards (or once the file
# limit allows no more open): far more connections than the gate (128) and
# the HTTP side (64) hold at once. Bounded waits only: a busy machine makes
# it slower, never wrong.
raw '
import resource, selectors
N = 1500
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
if soft < N + 64:
    up = N + 64 if hard == resource.RLIM_INFINITY else min(hard, N + 64)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, up), hard))
cap = min(N, resource.getrlimit(resource.RLIMIT_NOFILE)[0] - 64)
sel = selectors.DefaultSelector()
got, answers = {}, []
def reap(timeout):
    for key, _ in sel.select(timeout):
        s = key.fileobj
        try:
            d = s.recv(65536)
        except OSError as e:
            d, got[s] = b"", got[s] + b" (%s)" % str(e).encode()
        if d:
            got[s] += d
            continue
        answers.append(got.pop(s))
        sel.unregister(s)
        s.close()
req = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
for i in range(N):
    while len(got) >= cap:
        reap(1)
    s = socket.create_connection(("127.0.0.1", PORT), timeout=60)
    s.sendall(req)
    s.setblocking(False)
    got[s] = b""
    sel.register(s, selectors.EVENT_READ)
end = time.monotonic() + 120
while got and time.monotonic() < end:
    reap(1)
ok = sum(1 for d in answers if status(d) == 200 and b"\"ok\":true" in d)
wrong = [d[:80] for d in answers if status(d) != 200][:3]
assert ok == N, "%d of %d answered 200, %d without an answer after 120 s; others: %r" % (ok, N, len(got), wrong)
d = ask(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
assert status(d) == 200, d[:300]
' || t_fail "the connect flood"
grep -F "cannot serve" "$T_TMP/serve.log" && t_fail "the server refused connections in the flood"

t_check "clients that send part of a head and close cost no CPU time"
# CPU seconds (user + system) the server has used, from /proc.
cpu() { awk -v hz="$(getconf CLK_TCK)" '{ printf "%.2f\n", ($14 + $15) / hz }' "/proc/$SPID/stat"; }
before=$(cpu)
t0=$(date +%s.%N)
raw '
for i in range(5):
    s = socket.create_connection(("127.0.0.1", PORT), timeout=10)
    s.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: 0123456789\r\n")
    s.close()
time.sleep(4)
' || t_fail "the half heads"
after=$(cpu)
t1=$(date +%s.%N)
# A server spinning on the peeked bytes burns a core for --conn-timeout (6 s):
# about the whole wall time. One that waits burns next to nothing.
awk -v b="$before" -v a="$after" -v t0="$t0" -v t1="$t1" 'BEGIN { exit !(a - b < (t1 - t0) / 20) }' ||
    t_fail "the server used $before..$after s of CPU in $t0..$t1 (wall) with half heads closed"
raw '
d = ask(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
assert status(d) == 200, d[:300]
' || t_fail "served after the half heads"

t_check "a request must be whole within --conn-timeout of connecting, however it trickles"
raw '
s = socket.create_connection(("127.0.0.1", PORT), timeout=30)
t0 = time.monotonic()
head = (b"POST /v1/act HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + TOK +
        b"\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n")
closed = None
# The head in pieces for 4 s (the gate has it whole before its 6 s), then
# the body a byte every 0.5 s: the connection must go 6 s after connecting
# (plus the watchdog and scheduling), not 6 s after the head was whole.
for i, b in enumerate(head):
    s.sendall(bytes([b]))
    time.sleep(4.0 / len(head))
while time.monotonic() - t0 < 30:
    try:
        s.sendall(b" ")
        s.settimeout(0.5)
        if s.recv(100) == b"":
            closed = time.monotonic() - t0
            break
    except socket.timeout:
        pass
    except OSError:
        closed = time.monotonic() - t0
        break
assert closed is not None, "still open after 30 s"
assert closed < 9, "closed %.1f s after connecting: the request timeout is 6 s" % closed
' || t_fail "the request deadline"

t_check "every slot taken: a whole request waits, idle connects do not push it out, 503 server_busy at its deadline, 503 stopping on SIGTERM"
kill "$SPID"
wait "$SPID"
# 64 observations hold every place the HTTP side has: one whose dump hangs,
# 63 waiting for the device behind it.
echo "mode=hang" >> "${TD_SANDBOX[a]}/data/local/tmp/.adbc-test/uiautomator.conf"
rm -f "$T_TMP/port"
serve_start -t "$A" --settle 0 --conn-timeout 5 --call-timeout 600 --busy-wait 600000
SPID=$SPID raw '
import os, signal
held = []
for i in range(64):
    s = socket.create_connection(("127.0.0.1", PORT), timeout=30)
    s.sendall(b"GET /v1/observe?wait=600000 HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + TOK + b"\r\n\r\n")
    held.append(s)
# Until the server has read all 64 requests (a bound on a hang).
def read_in():
    n = 0
    with open("/proc/net/tcp") as f:
        for line in f.readlines()[1:]:
            w = line.split()
            if int(w[1].split(":")[1], 16) == PORT and w[3] == "01" and int(w[4].split(":")[1], 16) == 0:
                n += 1
    return n
for i in range(600):
    if read_in() >= 64:
        break
    time.sleep(0.05)
assert read_in() >= 64, "the server read %d of the 64 requests" % read_in()
s = socket.create_connection(("127.0.0.1", PORT), timeout=30)
s.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
# 200 connects that send nothing while it waits.
idle = [socket.create_connection(("127.0.0.1", PORT), timeout=30) for i in range(200)]
d = b""
while True:
    c = s.recv(65536)
    if not c:
        break
    d += c
assert status(d) == 503 and b"server_busy" in d and b"Connection: close" in d, d[:300]
# The places were still taken: every observation is still waiting.
for h in held:
    h.settimeout(0)
    try:
        d = h.recv(100)
    except BlockingIOError:
        continue
    assert False, "an observation holding a place has ended: %r" % d[:100]
# Another waits when SIGTERM comes: 503 stopping, at once (the stop itself
# waits for the hanging observation).
s = socket.create_connection(("127.0.0.1", PORT), timeout=30)
s.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
# Until the gate has accepted it: the listening socket queue is empty.
def queued():
    with open("/proc/net/tcp") as f:
        for line in f.readlines()[1:]:
            w = line.split()
            if int(w[1].split(":")[1], 16) == PORT and w[3] == "0A":
                return int(w[4].split(":")[1], 16)
    return -1
for i in range(600):
    if queued() == 0:
        break
    time.sleep(0.05)
assert queued() == 0, "still %d in the listen queue" % queued()
os.kill(int(os.environ["SPID"]), signal.SIGTERM)
d = b""
while True:
    c = s.recv(65536)
    if not c:
        break
    d += c
assert status(d) == 503 and b"stopping" in d, d[:300]
' || t_fail "a request waiting for a slot"
# The stop waits for the hanging observation (--call-timeout 600).
kill -KILL "$SPID"
wait "$SPID" 2> /dev/null

t_check "out of descriptors: connections wait in the listen queue, the gate does not spin, and serves again"
# A soft limit the server inherits (raised back at once for the test itself):
# room for the server's own descriptors and a few connections.
soft=$(ulimit -Sn)
ulimit -Sn 48
serve_start -t "$A" --settle 0 --conn-timeout 30
ulimit -Sn "$soft"
cpu() { awk -v hz="$(getconf CLK_TCK)" '{ printf "%.2f\n", ($14 + $15) / hz }' "/proc/$SPID/stat"; }
before=$(cpu)
t0=$(date +%s.%N)
raw '
import os
# Connections that send nothing (the gate holds them for --conn-timeout)
# until the server is out of descriptors: more than its limit can take.
idle = [socket.create_connection(("127.0.0.1", PORT), timeout=30) for i in range(60)]
time.sleep(3)
' || t_fail "the idle connections"
after=$(cpu)
t1=$(date +%s.%N)
grep -q "cannot accept a connection: Too many open files" "$T_TMP/serve.log" ||
    t_fail "no word of the descriptor limit: $(tail -n 5 "$T_TMP/serve.log")"
# A gate spinning on the listening socket burns a core for the whole wait.
awk -v b="$before" -v a="$after" -v t0="$t0" -v t1="$t1" 'BEGIN { exit !(a - b < (t1 - t0) / 20) }' ||
    t_fail "the server used $before..$after s of CPU in $t0..$t1 (wall) while out of descriptors"
# The idle connections are gone (the snippet ended): the server serves again.
raw '
d = ask(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
assert status(d) == 200, d[:300]
' || t_fail "not served once descriptors were free again"
kill -TERM "$SPID"
wait "$SPID" 2> /dev/null

echo "ok: $T_CHECKS checks"
