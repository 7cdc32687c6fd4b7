#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# adbc-serve's HTTP/JSON API with curl as the client, against two test
# devices serving different screens: every route and status, the envelope,
# the token, body caps and malformed JSON, slow clients, a busy device,
# 1,000 requests from 16 clients across both devices, a device killed
# mid-call and coming back, and the set-of-marks PNG decoded here.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
t_init

SNAP=${ADBC_SNAP:-$ADBC_BUILD_DIR/tools/adbc-snap}
. "$(dirname "${BASH_SOURCE[0]}")/lib_serve.sh"
command -v jq > /dev/null || t_fail "jq is needed (scripts/packages.txt)"

td_start a --no-auth
td_start b --no-auth
CA=${TD_SANDBOX[a]}/data/local/tmp/.adbc-test
CB=${TD_SANDBOX[b]}/data/local/tmp/.adbc-test
setup_dev a
setup_dev b
screen "$CA" Send
screen "$CB" Reply Forward
A=127.0.0.1:${TD_PORT[a]}
B=127.0.0.1:${TD_PORT[b]}

# --busy-wait: as long as load may make another call or the pool's first
# connect take; the busy check asks ?wait=0 itself.
serve_start -t "$A" -t "$B" --settle 0 --busy-wait 60000 --conn-timeout 2 --body-max 4096 \
    --connect-timeout 30

t_check "the token file: created 0600, 32 random bytes as 64 hex digits"
[ "$(stat -c %a "$TOK")" = 600 ] || t_fail "token file mode $(stat -c %a "$TOK")"
grep -qxE '[0-9a-f]{64}' "$TOK" || t_fail "token file content: $(cat "$TOK")"

t_check "libmicrohttpd's option-order warning is not printed at start"
grep -q EXTERNAL_LOGGER "$T_TMP/serve.log" && t_fail "start printed: $(cat "$T_TMP/serve.log")"

t_check "a token file that is a link, another user's, or holds a NUL and more is refused"
# bad_token FILE WORDS: the server refuses FILE at once, saying WORDS.
bad_token()
{
    local out st
    out=$(timeout 20 "$SERVE" -t "$A" --listen 127.0.0.1:0 --token-file "$1" 2>&1)
    st=$?
    [ "$st" = 1 ] || t_fail "token file $1: exit $st (expected 1): $out"
    case $out in *"$2"*) ;; *) t_fail "token file $1: '$out' does not say '$2'" ;; esac
}
mkdir -p "$T_TMP/tok"
chmod 700 "$T_TMP/tok"
ln -s "$TOK" "$T_TMP/tok/link"
bad_token "$T_TMP/tok/link" "symbolic link"
printf '%s\0junk\n' "$(cat "$TOK")" > "$T_TMP/tok/nul"
chmod 600 "$T_TMP/tok/nul"
bad_token "$T_TMP/tok/nul" "must hold one line"
if [ "$(id -u)" = 0 ]; then
    cp "$TOK" "$T_TMP/tok/other"
    chmod 600 "$T_TMP/tok/other"
    chown 65534 "$T_TMP/tok/other"
    bad_token "$T_TMP/tok/other" "belongs to user 65534"
fi

t_check "GET /health needs no token"
code=$(curl -s -m 10 -o "$OUT" -w '%{http_code}' "$URL/health")
expect 200
[ "$(J .result.status)" = ok ] && [ "$(J .result.devices)" = 2 ] || t_fail "health: $(cat "$OUT")"

t_check "token missing, wrong, right"
code=$(curl -s -m 10 -o "$OUT" -w '%{http_code}' "$URL/v1/devices")
expect 401 unauthorized
code=$(curl -s -m 10 -o "$OUT" -w '%{http_code}' -H "Authorization: Bearer $(cat "$TOK" | tr 0-9a-f a-f0-9)" "$URL/v1/devices")
expect 401 unauthorized
code=$(curl -s -m 10 -o "$OUT" -w '%{http_code}' -H "Authorization: Bearer $(cut -c1-63 "$TOK")" "$URL/v1/devices")
expect 401 unauthorized
code=$(curl -s -m 10 -o "$OUT" -w '%{http_code}' -H "Authorization: Basic $(cat "$TOK")" "$URL/v1/devices")
expect 401 unauthorized
code=$(curl -s -m 10 -o "$OUT" -w '%{http_code}' -X POST -H 'Content-Type: application/json' -d '{"action":"home"}' "$URL/v1/act?device=$A")
expect 401 unauthorized
[ -z "$(calls "$CA")" ] || t_fail "an unauthorized act reached the device"
t_check "a token followed by a NUL byte and more is 400, and one request per connection"
raw '
act = b"POST /v1/act HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 17\r\n"
home = b"{\"action\":\"home\"}"
d = ask(act + b"Authorization: Bearer " + TOK + b"\x00junk\r\n\r\n" + home)
assert status(d) == 400, d[:200]
assert b"NUL byte" in d and b"Connection: close" in d, d
d = ask(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A: \x00\r\n\r\n")
assert status(d) == 400, d[:200]
# A second request sent behind the first on one connection is not served:
# every answer closes its connection, so every head passes the check.
d = ask(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" + act +
        b"Authorization: Bearer " + TOK + b"\x00junk\r\n\r\n" + home)
assert d.count(b"HTTP/1.1 ") == 1 and status(d) == 200, d[:300]
assert b"Connection: close" in d, d
' || t_fail "NUL in the request head"
[ -z "$(calls "$CA")" ] || t_fail "a request with a NUL in its head reached the device"
for ((i = 0; i < 100; i++)); do
    H /v1/devices
    expect 200
    [ "$(J '[.result[].state] | join(" ")')" = "connected connected" ] && break
    sleep 0.1
done
[ "$(J '[.result[].device] | join(" ")')" = "$A $B" ] || t_fail "devices: $(cat "$OUT")"
[ "$(J '[.result[].state] | join(" ")')" = "connected connected" ] || t_fail "states: $(cat "$OUT")"

t_check "GET /v1/snapshot: exactly what adbc-snap snapshot prints; json; refs"
timeout 30 "$SNAP" -t "$A" snapshot > "$T_TMP/snap-a.txt" || t_fail "adbc-snap snapshot failed"
H "/v1/snapshot?device=$A"
expect 200
cmp -s <(J .result.snapshot; true) <(cat "$T_TMP/snap-a.txt"; echo) ||
    t_fail "snapshot text differs: $(J .result.snapshot) vs $(cat "$T_TMP/snap-a.txt")"
[ "$(J '.result.refs[2].text')" = Send ] && [ "$(J '.result.refs[2].tap | join(",")')" = 950,2100 ] &&
    [ "$(J '.result.refs[2].bounds | join(",")')" = 860,2000,1040,2200 ] || t_fail "refs: $(J .result.refs)"
H "/v1/snapshot?device=$A&format=json"
expect 200
[ "$(J .result.snapshot.schema)" = adbc.ui.snapshot/1 ] || t_fail "json snapshot: $(head -c 300 "$OUT")"
H "/v1/snapshot?device=$A&format=xml"
expect 400 bad_request
H "/v1/snapshot"
expect 400 bad_request
H "/v1/snapshot?device=nosuch:1"
expect 404 not_found

t_check "GET /v1/observe: the resumed activity, the snapshot and refs at one moment"
H "/v1/observe?device=$B"
expect 200
[ "$(J .result.top.package)" = com.b ] || t_fail "top: $(J .result.top)"
J .result.top.activity | grep -q 'com.b/.Main' || t_fail "top activity: $(J .result.top)"
J .result.snapshot | grep -q '"Forward"' || t_fail "observe snapshot: $(J .result.snapshot)"
[ "$(J '.result.refs | length')" = 4 ] || t_fail "refs: $(J .result.refs)"
grey_frame "$CB/screencap.raw" # for the screenshots
H "/v1/observe?device=$B&screenshot=1"
expect 200
J .result.screenshot | base64 -d | head -c 8 | cmp -s - <(printf '\x89PNG\r\n\x1a\n') ||
    t_fail "observe screenshot is not a base64 PNG"

t_check "GET /v1/screenshot: a PNG; ?marks=1 draws each ref's box and number where the ref is"
H "/v1/screenshot?device=$B"
[ "$code" = 200 ] || t_fail "screenshot: status $code $(head -c 300 "$OUT")"
head -c 8 "$OUT" | cmp -s - <(printf '\x89PNG\r\n\x1a\n') || t_fail "not a PNG"
H "/v1/screenshot?device=$B&marks=1"
[ "$code" = 200 ] || t_fail "marks: status $code $(head -c 300 "$OUT")"
cp "$OUT" "$T_TMP/marks.png"
H "/v1/snapshot?device=$B"
J .result.refs > "$T_TMP/refs.json"
python3 "$ADBC_SOURCE_DIR/tests/sh/marks_check.py" check "$T_TMP/marks.png" "$T_TMP/refs.json" > /dev/null ||
    t_fail "the marks are not where the refs are"

t_check "POST /v1/act tap on a ref: exactly one tap, the new observation returned"
H "/v1/snapshot?device=$A"
calls "$CA" > /dev/null
H -X POST -d '{"action":"tap","ref":3}' "/v1/act?device=$A"
expect 200
[ "$(calls "$CA")" = "cmd input tap 950 2100" ] || t_fail "tap calls"
[ "$(J .result.ref)" = 3 ] && [ "$(J '.result.at | join(",")')" = 950,2100 ] || t_fail "act result: $(J .result)"
J .result.observation.snapshot | grep -q '"Send"' || t_fail "no observation after the act: $(J .result)"
[ "$(J .result.observation.top.package)" = com.a ] || t_fail "observation top: $(J .result.observation.top)"

t_check "an unknown ref is 404, nothing sent"
H -X POST -d '{"action":"tap","ref":99}' "/v1/act?device=$A"
expect 404 unknown_ref
[ -z "$(calls "$CA")" ] || t_fail "something was sent"

t_check "a stale ref is 409 and never acted on"
H "/v1/snapshot?device=$A"
SID=$(J .result.snapshot_id)
screen "$CA" Other
calls "$CA" > /dev/null
H -X POST -d '{"action":"tap","ref":3}' "/v1/act?device=$A"
expect 409 stale
[ -z "$(calls "$CA")" ] || t_fail "a stale ref was acted on"
screen "$CA" Send
H "/v1/snapshot?device=$A"
calls "$CA" > /dev/null
H -X POST -d "{\"action\":\"tap\",\"ref\":3,\"snapshot\":\"$SID-old\"}" "/v1/act?device=$A"
expect 409 stale
[ -z "$(calls "$CA")" ] || t_fail "a ref of an older snapshot was acted on"

t_check "acts by selector; ambiguity is 409 with the candidates"
calls "$CB" > /dev/null
H -X POST -d '{"action":"tap","selector":{"text":"Forward"}}' "/v1/act?device=$B"
expect 200
[ "$(calls "$CB")" = "cmd input tap 950 1800" ] || t_fail "selector tap"
screen "$CB" Reply Reply
H -X POST -d '{"action":"tap","selector":{"text":"Reply"}}' "/v1/act?device=$B"
expect 409 ambiguous
J .error.message | grep -q '\[ref=3\] Button "Reply"' || t_fail "candidates: $(J .error.message)"
[ -z "$(calls "$CB")" ] || t_fail "an ambiguous selector was acted on"
H -X POST -d '{"action":"tap","selector":{"text":"Nowhere"}}' "/v1/act?device=$B"
expect 404 not_found
screen "$CB" Reply Forward

t_check "the other actions reach the device as the act API says"
H -X POST -d '{"action":"press","key":"enter"}' "/v1/act?device=$A"
expect 200
H -X POST -d '{"action":"back"}' "/v1/act?device=$A"
expect 200
H -X POST -d '{"action":"home"}' "/v1/act?device=$A"
expect 200
H -X POST -d '{"action":"swipe","x1":1,"y1":2,"x2":3,"y2":4}' "/v1/act?device=$A"
expect 200
H -X POST -d '{"action":"type","text":"hi"}' "/v1/act?device=$A"
expect 200
H -X POST -d '{"action":"long_press","ref":3,"duration_ms":700}' "/v1/act?device=$A"
expect 200
H -X POST -d '{"action":"scroll","ref":1,"direction":"down"}' "/v1/act?device=$A"
expect 200
got=$(calls "$CA")
exp="cmd input keyevent 66
cmd input keyevent 4
cmd input keyevent 3
cmd input swipe 1 2 3 4 300
cmd input text hi
cmd input swipe 950 2100 950 2100 700"
[ "$(printf '%s\n' "$got" | head -n 6)" = "$exp" ] || t_fail "calls: $got"
printf '%s\n' "$got" | tail -n 1 | grep -qE '^cmd input swipe 540 550 540 [0-9]+ 300$' || t_fail "scroll: $got"

t_check "bad bodies: malformed JSON, not an object, unknown action, bad argument, over the cap"
H -X POST -d '{"action":' "/v1/act?device=$A"
expect 400 bad_json
H -X POST -d '[1,2]' "/v1/act?device=$A"
expect 400 bad_json
H -X POST -d '{"action":"dance"}' "/v1/act?device=$A"
expect 400 bad_request
H -X POST -d '{"action":"tap","ref":"3"}' "/v1/act?device=$A"
expect 400 bad_request
H -X POST -d '{"action":"tap","ref":3,"bogus":1}' "/v1/act?device=$A"
expect 400 bad_request
head -c 5000 /dev/zero | tr '\0' ' ' > "$T_TMP/big"
H -X POST --data-binary @"$T_TMP/big" "/v1/act?device=$A"
expect 413 too_large
H -X POST -H 'Transfer-Encoding: chunked' --data-binary @"$T_TMP/big" "/v1/act?device=$A"
expect 413 too_large
# Text after a \u0000 would be lost, a key twice would be read first-wins,
# bytes that are not UTF-8 would be typed as something else: all refused.
H -X POST -d '{"action":"type","text":"ab\u0000cd"}' "/v1/act?device=$A"
expect 400 bad_json
H -X POST -d '{"action":"type","text":"ab","text":"cd"}' "/v1/act?device=$A"
expect 400 bad_json
H -X POST --data-binary $'{"action":"type","text":"ab\xff"}' "/v1/act?device=$A"
expect 400 bad_json
[ -z "$(calls "$CA")" ] || t_fail "a refused body reached the device"

t_check "unknown route 404, wrong method 405"
H /v1/nothing
expect 404 no_route
H -X POST -d '{}' /v1/observe
expect 405 method_not_allowed

t_check "POST /v1/app: top, launch, stop, intent"
H -X POST -d '{"op":"top"}' "/v1/app?device=$B"
expect 200
[ "$(J .result.package)" = com.b ] || t_fail "app top: $(cat "$OUT")"
echo com.b > "$CB/packages"
H -X POST -d '{"op":"launch","package":"com.b"}' "/v1/app?device=$B"
expect 200
H -X POST -d '{"op":"stop","package":"com.b"}' "/v1/app?device=$B"
expect 200
H -X POST -d '{"op":"intent","action":"android.intent.action.VIEW","data":"https://example.com/x"}' "/v1/app?device=$B"
expect 200
H -X POST -d '{"op":"launch","package":"com.b; reboot"}' "/v1/app?device=$B"
expect 400 bad_request
# The same words as adbc-mcp's launch tool (tests/mcp/test.mjs): one operation layer.
[ "$(J .error.message)" = "argument 'package' must be an Android name such as com.example.app or android.permission.CAMERA (letters, digits, '_' and '.')" ] ||
    t_fail "bad package message: $(cat "$OUT")"
got=$(calls "$CB")
printf '%s\n' "$got" | grep -qx 'monkey -p com.b -c android.intent.category.LAUNCHER 1' &&
    printf '%s\n' "$got" | grep -qx 'am force-stop com.b' &&
    printf '%s\n' "$got" | grep -q '^am start' || t_fail "app calls: $got"

t_check "POST /v1/wait: text on screen, and a timeout"
H -X POST -d '{"text":"Forward","timeout_ms":3000}' "/v1/wait?device=$B"
expect 200
J .result.snapshot | grep -q Forward || t_fail "wait result: $(cat "$OUT")"
H -X POST -d '{"text":"Never","timeout_ms":500}' "/v1/wait?device=$B"
expect 504 timeout

t_check "a busy device: 423 past the busy wait, the other device served meanwhile"
curl -s -m 60 -o "$T_TMP/long" -H "Authorization: Bearer $(cat "$TOK")" -d '{"text":"Never","timeout_ms":8000}' "$URL/v1/wait?device=$A" &
LONG=$!
held=
for ((i = 0; i < 600; i++)); do # until the wait holds the device (bounded, not timed)
    H /v1/devices
    [ "$(J '.result[] | select(.device == "'"$A"'") | .busy')" = true ] && { held=1; break; }
    sleep 0.1
done
[ -n "$held" ] || t_fail "the long wait never held $A: $(cat "$OUT")"
H "/v1/snapshot?device=$A&wait=0"
expect 423 busy
H "/v1/snapshot?device=$B"
expect 200
wait $LONG

t_check "slow clients are closed after the connection timeout and do not stop others"
python3 - "$(cat "$T_TMP/port")" << 'PY' || t_fail "slow clients"
import socket, sys, time, urllib.request
port = int(sys.argv[1])
slow = []
for i in range(20):
    s = socket.create_connection(('127.0.0.1', port), timeout=10)
    s.sendall(b'GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n')  # and never finish the headers
    slow.append(s)
body = urllib.request.urlopen('http://127.0.0.1:%d/health' % port, timeout=60).read()
assert b'"ok":true' in body, body
for s in slow:  # each is closed by the server (2 s timeout), not held open
    s.settimeout(60)  # a bound on a hang, not a measure of the timeout
    assert s.recv(100) == b'' or True
for s in slow:
    s.settimeout(0.5)
    try:
        assert s.recv(100) == b'', 'still open'
    except ConnectionResetError:
        pass
PY

t_check "clients that trickle a byte a second, or connect and send nothing, cannot hold the slots"
python3 - "$(cat "$T_TMP/port")" "$(cat "$TOK")" << 'PY' || t_fail "slots held by idle or trickling clients"
import socket, sys, time, urllib.request
port, tok = int(sys.argv[1]), sys.argv[2]
def conn():
    return socket.create_connection(('127.0.0.1', port), timeout=10)
def health():
    r = urllib.request.urlopen('http://127.0.0.1:%d/health' % port, timeout=20).read()
    assert b'"ok":true' in r, r
def trickle(socks):
    """One more header byte on each open socket; the ones the server closed are dropped."""
    alive = []
    for s in socks:
        try:
            s.sendall(b'a')
            alive.append(s)
        except OSError:
            pass
    return alive

# 1. Ten clients send a header byte every 0.3 s, never finishing: the idle
# timeout (2 s) restarts with every byte, the request timeout does not.
slow = [conn() for _ in range(10)]
for s in slow:
    s.sendall(b'GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: ')
t0 = time.time()
while slow and time.time() - t0 < 60:
    slow = trickle(slow)
    time.sleep(0.3)
assert not slow, '%d trickling clients still open after %.0f s' % (len(slow), time.time() - t0)

# 2. 64 trickling clients and 500 connects that send nothing, held while
# /health is asked five times.
slow = [conn() for _ in range(64)]
for s in slow:
    s.sendall(b'GET /health HTTP/1.1\r\nX-Pad: ')
idle = []
for _ in range(500):
    try:
        idle.append(conn())
    except OSError:
        pass
for i in range(5):
    slow = trickle(slow)
    health()
for s in slow + idle:
    s.close()
PY

t_check "1,000 requests from 16 clients over two devices: none lost, none mixed"
screen "$CA" Send
screen "$CB" Reply Forward
seq 1000 | xargs -P 16 -I{} sh -c '
    n={}; if [ $((n % 2)) = 0 ]; then d=$1; w=Send; else d=$2; w=Forward; fi
    out=$(curl -s -m 60 -H "Authorization: Bearer $3" "$4/v1/snapshot?device=$d&wait=60000") || { echo "LOST $n"; exit 0; }
    case $out in *"\"ok\":true"*"\\\"$w\\\""*) echo "OK $n" ;; *) echo "BAD $n $d $out" ;; esac
' _ "$A" "$B" "$(cat "$TOK")" "$URL" > "$T_TMP/many"
[ "$(grep -c '^OK ' "$T_TMP/many")" = 1000 ] ||
    t_fail "of 1000: $(grep -c '^OK ' "$T_TMP/many") right; first wrong: $(grep -v '^OK ' "$T_TMP/many" | head -n 3)"
[ "$(cut -d' ' -f2 "$T_TMP/many" | sort -n | uniq | wc -l)" = 1000 ] || t_fail "answers missing or doubled"

t_check "a device killed mid-call: 502, the server keeps serving, and reconnects when it returns"
echo "mode=hang" >> "$CA/uiautomator.conf"
curl -s -m 30 -o "$T_TMP/mid" -w '%{http_code}' -H "Authorization: Bearer $(cat "$TOK")" \
    "$URL/v1/snapshot?device=$A" > "$T_TMP/mid.code" &
MID=$!
sleep 0.5
PORT_A=${TD_PORT[a]}
# The device and everything it runs (the hanging stand-in among them) die.
td_kill a
wait $MID
[ "$(cat "$T_TMP/mid.code")" = 502 ] && [ "$(jq -r .error.code "$T_TMP/mid")" = device_gone ] ||
    t_fail "the call in flight: $(cat "$T_TMP/mid.code") $(cat "$T_TMP/mid"); killed: $TD_KILLED; adbc-serve's log: $(tail -n 15 "$T_TMP/serve.log")"
H "/v1/snapshot?device=$A"
expect 502 device_gone
H "/v1/snapshot?device=$B"
expect 200
H /v1/devices
[ "$(J '.result[0].state')" = gone ] || t_fail "devices after the kill: $(cat "$OUT")"
td_start a --no-auth --port "$PORT_A"
[ "${TD_PORT[a]}" = "$PORT_A" ] || t_fail "the device came back on another port"
sed -i '/^mode=/d' "$CA/uiautomator.conf"
back=
for ((i = 0; i < 600; i++)); do
    H /v1/devices
    [ "$(J '.result[0].state')" = connected ] && { back=1; break; }
    sleep 0.1
done
[ -n "$back" ] || t_fail "not reconnected after 600 tries 0.1 s apart: $(cat "$OUT"); $(tail -n 5 "$T_TMP/serve.log")"
H "/v1/snapshot?device=$A"
expect 200
J .result.snapshot | grep -q Send || t_fail "after the return: $(cat "$OUT")"

t_check "the server stops cleanly on SIGTERM"
kill -TERM "$SPID"
for ((i = 0; i < 600; i++)); do kill -0 "$SPID" 2> /dev/null || break; sleep 0.05; done
kill -0 "$SPID" 2> /dev/null && t_fail "adbc-serve still running 600 tries 0.05 s after SIGTERM"
wait "$SPID"
st=$?
[ "$st" = 0 ] || t_fail "adbc-serve exited $st: $(tail -n 5 "$T_TMP/serve.log")"

echo "ok: $T_CHECKS checks"
