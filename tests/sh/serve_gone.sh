#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# adbc-serve with a device that stops answering: while the background
# reconnect waits on a device that takes the TCP connection but never
# answers the handshake, calls on it are answered 502 device_gone at once
# (never 423 busy) and GET /v1/devices does not show it busy.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
t_init
. "$(dirname "${BASH_SOURCE[0]}")/lib_serve.sh"
command -v jq > /dev/null || t_fail "jq is needed (scripts/packages.txt)"

td_start a --no-auth
CA=${TD_SANDBOX[a]}/data/local/tmp/.adbc-test
setup_dev a
screen "$CA" Send
PORT_A=${TD_PORT[a]}
A=127.0.0.1:$PORT_A
# A busy wait far below the connect bound: a call that waited for a lock
# the reconnect held would answer 423 after 2 s.
serve_start -t "$A" --settle 0 --busy-wait 2000 --connect-timeout 60

t_check "a connected device is served"
H /v1/observe
expect 200

t_check "the device gone, its port taken by a peer that never answers: 502 at once, not busy"
td_stop a
# The silent peer: takes connections on the device's port and never
# answers; each one it takes is a line in $T_TMP/taken.
python3 - "$PORT_A" "$T_TMP/taken" << 'PY' &
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(('127.0.0.1', int(sys.argv[1])))
s.listen(16)
held = []
while True:
    c, _ = s.accept()
    held.append(c)
    with open(sys.argv[2], 'a') as f:
        f.write('taken\n')
PY
T_BG_PIDS+=($!)
# The lost connection is seen by the next call or the reconnector; then the
# reconnector connects to the silent peer and waits (up to 60 s).
for ((i = 0; i < 300; i++)); do
    [ -s "$T_TMP/taken" ] && break
    H /v1/observe
    sleep 0.1
done
[ -s "$T_TMP/taken" ] || t_fail "the server never tried to reconnect: $(tail -n 5 "$T_TMP/serve.log")"
for n in 1 2 3 4 5; do
    H /v1/observe
    expect 502 device_gone
    H /v1/devices
    expect 200
    [ "$(J '.result[0].busy')" = false ] || t_fail "a gone device shown busy: $(cat "$OUT")"
    [ "$(J '.result[0].state')" = gone ] || t_fail "state: $(cat "$OUT")"
    sleep 0.2
done

echo "ok: $T_CHECKS checks"
