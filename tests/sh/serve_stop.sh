#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# adbc-serve on SIGTERM: the call holding the device runs to its end and is
# answered; the calls queued behind it are answered 503 (or closed with
# nothing sent) and never reach the device; exit does not wait for a
# client's long ?wait= nor for a session command still running.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
t_init
. "$(dirname "${BASH_SOURCE[0]}")/lib_serve.sh"
SNAP=${ADBC_SNAP:-$ADBC_BUILD_DIR/tools/adbc-snap}
command -v jq > /dev/null || t_fail "jq is needed (scripts/packages.txt)"

td_start a --no-auth
CA=${TD_SANDBOX[a]}/data/local/tmp/.adbc-test
setup_dev a
screen "$CA" Send
A=127.0.0.1:${TD_PORT[a]}

# stopped_within S: adbc-serve ($SPID) exits within S seconds of now
# (a bound on a hang, far above what stopping takes), with status 0.
stopped_within()
{
    local i
    for ((i = 0; i < $1 * 10; i++)); do
        kill -0 "$SPID" 2> /dev/null || break
        sleep 0.1
    done
    kill -0 "$SPID" 2> /dev/null && t_fail "adbc-serve still running $1 s after SIGTERM: $(tail -n 5 "$T_TMP/serve.log")"
    wait "$SPID"
    local st=$?
    [ "$st" = 0 ] || t_fail "adbc-serve exited $st: $(tail -n 5 "$T_TMP/serve.log")"
}
# read_in N: N connections to the server ($URL's port) are established and
# the server has read what each sent (the kernel holds no byte of them).
read_in()
{
    local port=${URL##*:}
    [ "$(awk -v p="$(printf '%04X' "$port")" 'NR > 1 { split($2, l, ":"); split($5, q, ":");
        if (l[2] == p && $4 == "01" && q[2] ~ /^0+$/) n++ } END { print n + 0 }' /proc/net/tcp)" -ge "$1" ]
}
# busy_now: GET /v1/devices says the device is busy (a call holds it).
busy_now() { H /v1/devices && [ "$code" = 200 ] && [ "$(J '.result[0].busy')" = true ]; }

t_check "SIGTERM with three taps queued behind an observation that hangs: no tap reaches the device"
serve_start -t "$A" --settle 0 --busy-wait 600000 --call-timeout 6
H /v1/observe
expect 200
calls "$CA" > /dev/null
echo "mode=hang" >> "$CA/uiautomator.conf"
curl -s -m 60 -o "$T_TMP/obs" -w '%{http_code}' -H "Authorization: Bearer $(cat "$TOK")" \
    "$URL/v1/observe" > "$T_TMP/obs.code" &
OBS=$!
for ((i = 0; i < 200; i++)); do busy_now && break; sleep 0.05; done
busy_now || t_fail "the observation did not start: $(cat "$OUT")"
TAPS=()
for n in 1 2 3; do
    curl -s -m 60 -o "$T_TMP/tap$n" -w '%{http_code}' -H "Authorization: Bearer $(cat "$TOK")" \
        -d "{\"action\":\"tap\",\"x\":$((100 * n)),\"y\":500}" "$URL/v1/act" > "$T_TMP/tap$n.code" &
    TAPS+=($!)
    sleep 0.1
done
for ((i = 0; i < 600; i++)); do read_in 4 && break; sleep 0.05; done
read_in 4 || t_fail "the three taps did not reach the server"
kill -TERM "$SPID"
stopped_within 30
wait "$OBS"
wait "${TAPS[@]}"
# The observation held the device: it ran to its end (the dump hangs, so
# the call's bound ended it) and was answered.
[ "$(cat "$T_TMP/obs.code")" = 504 ] || t_fail "the observation in flight: $(cat "$T_TMP/obs.code") $(cat "$T_TMP/obs")"
# The taps were read by the server before the signal: each is answered.
for n in 1 2 3; do
    c=$(cat "$T_TMP/tap$n.code")
    [ "$c" = 503 ] && [ "$(jq -r .error.code "$T_TMP/tap$n")" = stopping ] ||
        t_fail "tap $n queued at SIGTERM answered $c: $(cat "$T_TMP/tap$n")"
done
sed -i '/^mode=/d' "$CA/uiautomator.conf"
got=$(calls "$CA" | grep '^input' || true)
[ -z "$got" ] || t_fail "taps queued at SIGTERM reached the device: $got"

t_check "SIGTERM with a session command running, an observation holding the device and ?wait=600000 queued: prompt exit, nothing run"
export XDG_RUNTIME_DIR=$T_TMP/run
mkdir -p "$XDG_RUNTIME_DIR/adbc"
chmod 700 "$XDG_RUNTIME_DIR" "$XDG_RUNTIME_DIR/adbc"
SOCK=$XDG_RUNTIME_DIR/adbc/session-127.0.0.1%3A${TD_PORT[a]}.sock
rm -f "$T_TMP/port"
serve_start -t "$A" --settle 0 --call-timeout 6 --control "$SOCK"
H /v1/observe
expect 200
# A session command runs on its own stream, without the device's lock (two
# commands go side by side); an observation whose dump hangs holds the lock.
timeout 120 "$SNAP" -t "$A" shell 'sleep 100' > /dev/null 2>&1 &
SH=$!
echo "mode=hang" >> "$CA/uiautomator.conf"
curl -s -m 60 -o /dev/null -H "Authorization: Bearer $(cat "$TOK")" "$URL/v1/observe" &
OBS=$!
for ((i = 0; i < 200; i++)); do busy_now && break; sleep 0.05; done
busy_now || t_fail "the observation did not start: $(cat "$OUT"); $(tail -n 5 "$T_TMP/serve.log")"
curl -s -m 120 -o "$T_TMP/wait" -w '%{http_code}' -H "Authorization: Bearer $(cat "$TOK")" \
    "$URL/v1/observe?wait=600000" > "$T_TMP/wait.code" &
W=$!
# Two connections read in: the observation holding the device and the wait
# (the observation's alone would let SIGTERM come before the wait is read).
for ((i = 0; i < 600; i++)); do read_in 2 && break; sleep 0.05; done
read_in 2 || t_fail "the waiting call did not reach the server"
dumps=$(cat "$CA/uiautomator.log" 2> /dev/null | wc -l)
kill -TERM "$SPID"
stopped_within 30
wait "$W"
c=$(cat "$T_TMP/wait.code")
[ "$c" = 503 ] && [ "$(jq -r .error.code "$T_TMP/wait")" = stopping ] ||
    t_fail "the call waiting for the device answered $c: $(cat "$T_TMP/wait")"
[ "$(cat "$CA/uiautomator.log" 2> /dev/null | wc -l)" = "$dumps" ] || t_fail "the call waiting at SIGTERM ran a dump"
wait "$OBS"
sed -i '/^mode=/d' "$CA/uiautomator.conf"
kill "$SH" 2> /dev/null
wait "$SH" 2> /dev/null

echo "ok: $T_CHECKS checks"
