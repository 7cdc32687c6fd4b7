#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# adbc-serve's farm (docs/farm.md) against a real redis-server started here
# (AOF, every write synced, a password) with three nodes of two test
# devices each and the scripted model (tests/model_server.py): every node
# lists every node's devices; a task submitted on one node runs on the
# device its selector names, on another node, and is watched (status and
# Server-Sent Events) from a third; a task no device fits stays queued and
# is cancelled; a running task is cancelled from another node; 30 tasks
# with a node SIGKILLed and Redis SIGKILLed and restarted mid-run all
# complete, none lost, none ended twice, the killed node's tasks run again
# as a new attempt; a node stopped past its lease loses its task to another
# and writes nothing of its own run; a node that loses Redis keeps its own API and says the
# farm is unavailable; a wrong password, a password in the URL, a password
# file others can read; a node on Redis over TLS (rediss://, certificates
# made here) runs a task and streams its events, and a wrong CA, a missing
# client certificate and redis:// to a TLS port each say why; the model's
# key is nowhere in Redis.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
t_init
. "$(dirname "${BASH_SOURCE[0]}")/lib_serve.sh"
command -v jq > /dev/null || t_fail "jq is needed (scripts/packages.txt)"
. "$(dirname "${BASH_SOURCE[0]}")/lib_agent.sh"
t_need_built AGENT "the farm runs the agent's tasks, which need libcurl and cJSON"
t_need_built HIREDIS "the farm needs hiredis (-DADBC_WITH_HIREDIS=ON)"
. "$(dirname "${BASH_SOURCE[0]}")/lib_farm.sh"
redis_start

# Six devices, all emulators (the agent drives them without --agent-allow),
# the last one an older Android (SDK 30).
DEVS=()
for k in 1 2 3 4 5 6; do
    extra=()
    [ $k = 6 ] && extra=(--prop ro.build.version.sdk=30)
    td_start d$k --no-auth --prop ro.kernel.qemu=1 "${extra[@]}"
    c=${TD_SANDBOX[d$k]}/data/local/tmp/.adbc-test
    mkdir -p "$c"
    screen "$c" OK
    DEVS+=("127.0.0.1:${TD_PORT[d$k]}")
done
# Every answer is "done" after three seconds (which task a turn answers does
# not matter), but the third, which the task cancelled while it runs gets:
# it is held until the cancel.
D='{"answer":{"tool":"done","args":{"answer":"ok"},"delay_ms":3000}}'
model '{"turns":['"$D,$D,"'{"answer":{"hang":60}},'"$(for i in $(seq 199); do printf '%s,' "$D"; done)"'{"answer":{"tool":"done","args":{"answer":"ok"}}}]}'
start_node()
{
    local n=$1 a=$2 b=$3
    OPENAI_API_KEY=$KEY node_start "$n" -t "$a" -t "$b" --provider openai --base-url "$BASE" \
        --model scripted --farm-lease 3
}
start_node n1 "${DEVS[0]}" "${DEVS[1]}"
start_node n2 "${DEVS[2]}" "${DEVS[3]}"
start_node n3 "${DEVS[4]}" "${DEVS[5]}"
for n in n1 n2 n3; do node_joined $n; done

# devices_seen NODE COUNT: until NODE lists COUNT devices with their facts.
devices_seen()
{
    local i
    for ((i = 0; i < 200; i++)); do
        N "$1" /v1/farm/devices
        [ "$code" = 200 ] && [ "$(J '[.result.devices[] | select(.sdk != null)] | length')" = "$2" ] && return 0
        sleep 0.1
    done
    t_fail "node $1 lists: $(cat "$OUT")"
}
t_check "every node lists every node's devices, with model, SDK, ABI and kind"
for n in n1 n2 n3; do devices_seen $n 6; done
[ "$(J '[.result.nodes[]] | sort | join(" ")')" = "n1 n2 n3" ] || t_fail "nodes: $(cat "$OUT")"
[ "$(jq -r --arg d "${DEVS[5]}" '.result.devices[] | select(.serial == $d) | "\(.node) \(.model) \(.sdk) \(.abi) \(.emulator) \(.state)"' "$OUT")" = "n3 adbc_test_device 30 x86_64 true connected" ] ||
    t_fail "device 6: $(cat "$OUT")"

t_check "a task submitted on n1 runs on the device it selects (n2's), watched from n3: status and events"
N n1 -d '{"goal":"say ok","select":{"serial":"'"${DEVS[3]}"'"}}' /v1/farm/tasks
expect 202
ID=$(J .result.id)
URL=${NURL[n3]}
curl -s -N -m 60 -H "Authorization: Bearer $(cat "$TOK")" "$URL/v1/farm/tasks/$ID/events" > "$T_TMP/ev" &
EV=$!
farm_wait n3 "$ID"
[ "$(J '.result | "\(.status) \(.node) \(.device) \(.attempts) \(.steps_done) \(.end.answer)"')" = "completed n2 ${DEVS[3]} 1 1 ok" ] ||
    t_fail "task: $(cat "$OUT")"
wait "$EV" || t_fail "the event stream did not end with the task"
[ "$(grep '^event:' "$T_TMP/ev" | tr '\n' ' ')" = "event: queued event: attempt event: step event: end " ] ||
    t_fail "events: $(cat "$T_TMP/ev")"
grep '^data:' "$T_TMP/ev" | tail -n 1 | grep -q '"status":"completed"' || t_fail "end event: $(cat "$T_TMP/ev")"
N n2 "/v1/farm/tasks"
expect 200
[ "$(J '.result[0].id')" = "$ID" ] || t_fail "list on n2: $(cat "$OUT")"

t_check "adbc-snap farm: devices, submit (steps printed, the answer), status, watch, cancel"
SNAP=$ADBC_BUILD_DIR/tools/adbc-snap
F=(--serve "${NURL[n2]}" --token-file "$TOK")
out=$("$SNAP" farm devices "${F[@]}") || t_fail "farm devices: $out"
[ "$(grep -c ' connected ' <<< "$out")" = 6 ] && grep -q "^n3 .*${DEVS[5]} .* 30 emulator" <<< "$out" ||
    t_fail "farm devices: $out"
out=$("$SNAP" farm submit "say ok" --serial "${DEVS[2]}" "${F[@]}" 2> "$T_TMP/snap.err") ||
    t_fail "farm submit: $out $(cat "$T_TMP/snap.err")"
[ "${out##*: }" = ok ] && grep -q '^step 1: done' <<< "$out" || t_fail "farm submit printed: $out"
SID=$(sed -n 's/.*task \(f[0-9]*\) started.*/\1/p' "$T_TMP/snap.err")
[ -n "$SID" ] || t_fail "farm submit did not name its task: $(cat "$T_TMP/snap.err")"
out=$("$SNAP" farm status "$SID" "${F[@]}") || t_fail "farm status: $out"
[ "$(head -n 1 <<< "$out")" = "$SID completed on n2 ${DEVS[2]}, attempts 1, steps 1" ] || t_fail "farm status: $out"
out=$("$SNAP" farm watch "$SID" --json "${F[@]}") || t_fail "farm watch: $out"
[ "$(tail -n 1 <<< "$out" | jq -r .answer)" = ok ] || t_fail "farm watch: $out"
out=$("$SNAP" farm status nope/x "${F[@]}" 2>&1)
[ $? = 2 ] || t_fail "a bad id: $out"
out=$("$SNAP" farm status f999 "${F[@]}" 2>&1)
[ $? = 1 ] && grep -q "no farm task" <<< "$out" || t_fail "no such task: $out"

t_check "a task no device fits stays queued; cancelled from another node, it ends at once"
N n1 -d '{"goal":"say ok","select":{"serial":"'"${DEVS[5]}"'","min_sdk":33}}' /v1/farm/tasks
expect 202
ID=$(J .result.id)
sleep 2
N n2 "/v1/farm/tasks/$ID"
[ "$(J .result.status)" = queued ] && [ "$(J .result.attempts)" = 0 ] || t_fail "not queued: $(cat "$OUT")"
out=$("$SNAP" farm cancel "$ID" --serve "${NURL[n3]}" --token-file "$TOK") || t_fail "farm cancel: $out"
[ "$(head -n 1 <<< "$out")" = "$ID cancelled, attempts 0, steps 0" ] || t_fail "cancel: $out"

t_check "a running task cancelled from another node ends cancelled, on its device"
N n1 -d '{"goal":"say ok","select":{"serial":"'"${DEVS[0]}"'"}}' /v1/farm/tasks
expect 202
ID=$(J .result.id)
for ((i = 0; i < 100; i++)); do
    N n2 "/v1/farm/tasks/$ID"
    [ "$(J .result.status)" = running ] && break
    sleep 0.05
done
[ "$(J .result.node)" = n1 ] || t_fail "not running on n1: $(cat "$OUT")"
model_waits # the model holds its request until the cancel
N n3 -X POST "/v1/farm/tasks/$ID/cancel"
expect 200
[ "$(J .result.cancel_requested)" = true ] || t_fail "cancel: $(cat "$OUT")"
farm_wait n2 "$ID"
[ "$(J .result.status)" = cancelled ] || t_fail "status: $(cat "$OUT")"
R XRANGE "adbc:farm:events:$ID" - + | grep -c '^end$' | grep -qx 1 || t_fail "end events: $(R XRANGE "adbc:farm:events:$ID" - +)"

t_check "a selector's model, kind and least SDK: no device fits a physical phone or another model; all three fit d6 (SDK 30)"
for sel in '{"emulator":false}' '{"model":"Pixel 8"}' '{"min_sdk":31,"serial":"'"${DEVS[5]}"'"}'; do
    N n2 -d '{"goal":"say ok","select":'"$sel"'}' /v1/farm/tasks
    expect 202
    QID=$(J .result.id)
    # A node that read it and found no free device fitting put it back: a new entry.
    first=$(R HGET "adbc:farm:task:$QID" entry)
    for ((i = 0; i < 200; i++)); do
        [ "$(R HGET "adbc:farm:task:$QID" entry)" != "$first" ] && break
        sleep 0.05
    done
    [ "$(R HGET "adbc:farm:task:$QID" entry)" != "$first" ] || t_fail "no node put $sel back"
    N n3 "/v1/farm/tasks/$QID"
    [ "$(J .result.status)" = queued ] && [ "$(J .result.attempts)" = 0 ] || t_fail "$sel ran: $(cat "$OUT")"
    N n1 -X POST "/v1/farm/tasks/$QID/cancel"
    expect 200
    [ "$(J .result.status)" = cancelled ] || t_fail "$sel not cancelled: $(cat "$OUT")"
done
N n2 -d '{"goal":"say ok","select":{"model":"adbc_test_device","emulator":true,"min_sdk":30,"serial":"'"${DEVS[5]}"'"}}' /v1/farm/tasks
expect 202
ID=$(J .result.id)
farm_wait n1 "$ID"
[ "$(J '.result | "\(.status) \(.node) \(.device)"')" = "completed n3 ${DEVS[5]}" ] || t_fail "the fitting task: $(cat "$OUT")"

t_check "30 tasks, n2 SIGKILLed and Redis SIGKILLed and restarted mid-run: all complete, none twice"
# The 30 tasks go in from the side (on n1 and n3, which stay) while n2 is
# watched: it dies just after it took one (a model turn takes three seconds).
(
    OUT=$T_TMP/out.submit
    for ((k = 0; k < 30; k++)); do
        N n$((k % 2 * 2 + 1)) -d '{"goal":"task '$k'"}' /v1/farm/tasks
        expect 202
        J .result.id >> "$T_TMP/ids"
    done
) &
SUBMIT=$!
killed=
for ((i = 0; i < 1200; i++)); do
    N n1 /v1/farm/tasks
    running=$(jq -r --argjson now "$(date +%s%3N)" '.result[] | select(.status == "running" and .node == "n2" and $now - .started_ms < 1500) | .id' "$OUT")
    if [ -n "$running" ]; then
        kill -KILL "${NPID[n2]}"
        killed=1
        break
    fi
    sleep 0.02
done
[ -n "$killed" ] || t_fail "n2 never took a task"
wait "${NPID[n2]}" 2> /dev/null
# What it ran when it died, as Redis has it (a dead node changes nothing;
# the lease keeps the others off for three seconds).
ON_N2=$(for id in $running; do [ "$(R HMGET "adbc:farm:task:$id" status node | paste -sd' ')" = "running n2" ] && echo "$id"; done)
[ -n "$ON_N2" ] || t_fail "n2 ran no task when it was killed: $(cat "$OUT")"
wait "$SUBMIT" || t_fail "submitting the 30 tasks failed"
mapfile -t IDS < "$T_TMP/ids"
[ ${#IDS[@]} = 30 ] || t_fail "${#IDS[@]} tasks submitted"
# Redis dies and comes back while n1 and n3 run tasks.
sleep 1
redis_kill
for ((i = 0; i < 100; i++)); do
    N n1 /v1/farm
    [ "$(J .result.available)" = false ] && break
    sleep 0.05
done
[ "$(J .result.available)" = false ] || t_fail "n1 did not see Redis go: $(cat "$OUT")"
N n1 /v1/devices
expect 200
redis_start
for id in "${IDS[@]}"; do
    farm_wait n1 "$id" 120
    [ "$(J .result.status)" = completed ] || t_fail "task $id: $(cat "$OUT")"
done
for id in "${IDS[@]}"; do
    ends=$(R XRANGE "adbc:farm:events:$id" - + | grep -cx end)
    [ "$ends" = 1 ] || t_fail "task $id has $ends end events: $(R XRANGE "adbc:farm:events:$id" - +)"
done
for id in $ON_N2; do
    N n3 "/v1/farm/tasks/$id"
    [ "$(J .result.attempts)" -ge 2 ] && [ "$(J .result.node)" != n2 ] ||
        t_fail "task $id, running on n2 when it died: $(cat "$OUT")"
done
[ "$(R XLEN adbc:farm:queue)" = 0 ] || t_fail "entries left in the queue: $(R XRANGE adbc:farm:queue - +)"
[ "$(R XPENDING adbc:farm:queue nodes | head -n 1)" = 0 ] || t_fail "pending: $(R XPENDING adbc:farm:queue nodes)"

t_check "the dead node's devices leave the list; the node restarted under its name rejoins"
for ((i = 0; i < 100; i++)); do
    N n1 /v1/farm/devices
    [ "$(J '.result.devices | length')" = 4 ] && break
    sleep 0.1
done
[ "$(J '[.result.devices[].node] | unique | join(" ")')" = "n1 n3" ] || t_fail "after n2 died: $(cat "$OUT")"
start_node n2 "${DEVS[2]}" "${DEVS[3]}"
node_joined n2
devices_seen n1 6

t_check "a lease running out under a live node (stopped past it): another node runs the task, the first writes nothing"
N n1 -d '{"goal":"stalled"}' /v1/farm/tasks
expect 202
ID=$(J .result.id)
for ((i = 0; i < 200; i++)); do
    [ "$(R HGET "adbc:farm:task:$ID" status)" = running ] && break
    sleep 0.05
done
ST=$(R HGET "adbc:farm:task:$ID" node)
[ -n "$ST" ] || t_fail "not running: $(R HGETALL "adbc:farm:task:$ID")"
kill -STOP "${NPID[$ST]}"
# Past the lease (3 s) another node takes it over.
for ((i = 0; i < 300; i++)); do
    [ "$(R HGET "adbc:farm:task:$ID" attempts)" -ge 2 ] && break
    sleep 0.05
done
kill -CONT "${NPID[$ST]}"
[ "$(R HGET "adbc:farm:task:$ID" attempts)" -ge 2 ] || t_fail "not taken over from $ST: $(R HGETALL "adbc:farm:task:$ID")"
farm_wait n3 "$ID"
[ "$(J .result.status)" = completed ] && [ "$(J .result.node)" != "$ST" ] && [ "$(J .result.attempts)" -ge 2 ] ||
    t_fail "after $ST stalled: $(cat "$OUT")"
sleep 1 # the stalled node's run ends (cancelled, or done): nothing of it is written
[ "$(R XRANGE "adbc:farm:events:$ID" - + | grep -cx end)" = 1 ] || t_fail "end events: $(R XRANGE "adbc:farm:events:$ID" - +)"
N n3 "/v1/farm/tasks/$ID"
[ "$(J .result.node)" != "$ST" ] && [ "$(J .result.status)" = completed ] || t_fail "$ST wrote over it: $(cat "$OUT")"
node_joined "$ST"

t_check "a node that loses Redis keeps its own API, says the farm is unavailable, rejoins"
redis_kill
for ((i = 0; i < 100; i++)); do
    N n3 /v1/farm
    [ "$(J .result.available)" = false ] && break
    sleep 0.1
done
[ "$(J .result.available)" = false ] && [ -n "$(J .result.error)" ] || t_fail "n3: $(cat "$OUT")"
N n3 /v1/farm/devices
expect 503 farm_unavailable
N n3 /v1/devices
expect 200
redis_start
node_joined n3
N n3 /v1/farm/devices
expect 200

t_check "a wrong password: the node says so and keeps serving; a password in the URL or a file others read: refused"
printf 'wrong\n' > "$T_TMP/bad.pass"
chmod 600 "$T_TMP/bad.pass"
"$SERVE" -t "${DEVS[0]}" --farm "redis://127.0.0.1:$RPORT" --farm-node n9 --farm-password-file "$T_TMP/bad.pass" \
    --listen 127.0.0.1:0 --token-file "$TOK" --ready-file "$T_TMP/port.n9" 2> "$T_TMP/node.n9.log" &
NPID[n9]=$!
T_BG_PIDS+=("${NPID[n9]}")
for ((i = 0; i < 200; i++)); do [ -s "$T_TMP/port.n9" ] && break; sleep 0.05; done
NURL[n9]=http://127.0.0.1:$(cat "$T_TMP/port.n9")
for ((i = 0; i < 100; i++)); do
    N n9 /v1/farm
    J .result.error | grep -qi pass && break
    sleep 0.1
done
[ "$(J .result.available)" = false ] && J .result.error | grep -qi 'WRONGPASS\|invalid.*password' ||
    t_fail "wrong password: $(cat "$OUT")"
N n9 /v1/devices
expect 200
grep -q wrong "$T_TMP/node.n9.log" && t_fail "the password is in the log"
out=$("$SERVE" -t "${DEVS[0]}" --farm "redis://u:$RPASS@127.0.0.1:$RPORT" --farm-node n8 --listen 127.0.0.1:0 --token-file "$TOK" 2>&1)
[ $? = 1 ] && case $out in *"password in the URL"*) ;; *) false ;; esac || t_fail "a password in the URL: $out"
chmod 644 "$T_TMP/bad.pass"
out=$("$SERVE" -t "${DEVS[0]}" --farm "redis://127.0.0.1:$RPORT" --farm-node n8 --farm-password-file "$T_TMP/bad.pass" --listen 127.0.0.1:0 --token-file "$TOK" 2>&1)
[ $? = 1 ] && case $out in *"readable by others"*) ;; *) false ;; esac || t_fail "a password file others read: $out"

t_check "rediss://: a node on Redis over TLS runs a task; a wrong CA, no client certificate, redis:// to a TLS port each say why"
# A CA, Redis's certificate (for 127.0.0.1) and the node's, both signed by
# it, and a CA that signed neither.
P=$T_TMP/tls
mkdir -p "$P"
ssl() { openssl "$@" 2>> "$P/openssl.log" || t_fail "openssl $1: $(tail -n 3 "$P/openssl.log")"; }
ssl req -x509 -newkey rsa:2048 -nodes -keyout "$P/ca.key" -out "$P/ca.crt" -days 2 -subj /CN=adbc-farm-test-ca
ssl req -x509 -newkey rsa:2048 -nodes -keyout "$P/other.key" -out "$P/other.crt" -days 2 -subj /CN=another-ca
for who in srv cli; do
    ssl req -newkey rsa:2048 -nodes -keyout "$P/$who.key" -out "$P/$who.csr" -subj "/CN=adbc-farm-$who"
    printf 'subjectAltName=IP:127.0.0.1\n' > "$P/$who.ext"
    ssl x509 -req -in "$P/$who.csr" -CA "$P/ca.crt" -CAkey "$P/ca.key" -CAcreateserial \
        -out "$P/$who.crt" -days 2 -extfile "$P/$who.ext"
done
chmod 600 "$P/cli.key"
TPORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$REDIS_SERVER" --port 0 --tls-port "$TPORT" --bind 127.0.0.1 --dir "$P" --save '' \
    --tls-cert-file "$P/srv.crt" --tls-key-file "$P/srv.key" --tls-ca-cert-file "$P/ca.crt" \
    --requirepass "$RPASS" --daemonize no --logfile "$P/redis.log" &
T_BG_PIDS+=("$!")
TR=("$REDIS_CLI" -h 127.0.0.1 -p "$TPORT" --tls --cacert "$P/ca.crt" --cert "$P/cli.crt" --key "$P/cli.key" -a "$RPASS" --no-auth-warning)
for ((i = 0; i < 200; i++)); do
    [ "$("${TR[@]}" PING 2> /dev/null)" = PONG ] && break
    sleep 0.05
done
[ "$("${TR[@]}" PING 2>&1)" = PONG ] || t_fail "redis-server with TLS did not start: $(tail -n 5 "$P/redis.log")"
TLS=(--farm-ca "$P/ca.crt" --farm-cert "$P/cli.crt" --farm-key "$P/cli.key")
OPENAI_API_KEY=$KEY FARM_URL=rediss://127.0.0.1:$TPORT node_start n7 -t "${DEVS[1]}" "${TLS[@]}" \
    --provider openai --base-url "$BASE" --model scripted
node_joined n7
devices_seen n7 1
N n7 -d '{"goal":"say ok","select":{"serial":"'"${DEVS[1]}"'"}}' /v1/farm/tasks
expect 202
ID=$(J .result.id)
curl -s -N -m 60 -H "Authorization: Bearer $(cat "$TOK")" "${NURL[n7]}/v1/farm/tasks/$ID/events" > "$T_TMP/ev.tls" &
EV=$!
farm_wait n7 "$ID"
[ "$(J '.result | "\(.status) \(.node) \(.device) \(.attempts) \(.end.answer)"')" = "completed n7 ${DEVS[1]} 1 ok" ] ||
    t_fail "task over TLS: $(cat "$OUT")"
wait "$EV" || t_fail "the event stream over TLS did not end with the task"
[ "$(grep '^event:' "$T_TMP/ev.tls" | tr '\n' ' ')" = "event: queued event: attempt event: step event: end " ] ||
    t_fail "events over TLS: $(cat "$T_TMP/ev.tls")"
[ "$("${TR[@]}" HGET "adbc:farm:task:$ID" status)" = completed ] || t_fail "the TLS Redis does not hold the task"
FARM_URL=rediss://127.0.0.1:$TPORT node_start n6 -t 127.0.0.1:1 --farm-ca "$P/other.crt" --farm-cert "$P/cli.crt" --farm-key "$P/cli.key"
node_refused n6 "certificate is refused.*--farm-ca"
FARM_URL=rediss://127.0.0.1:$TPORT node_start n5 -t 127.0.0.1:1 --farm-ca "$P/ca.crt"
node_refused n5 "client certificate"
FARM_URL=redis://127.0.0.1:$TPORT node_start n4 -t 127.0.0.1:1
node_refused n4 "rediss://"
N n4 /v1/devices
expect 200
out=$("$SERVE" -t "${DEVS[0]}" --farm "redis://127.0.0.1:$RPORT" --farm-node n8 --farm-ca "$P/ca.crt" --listen 127.0.0.1:0 --token-file "$TOK" 2>&1)
[ $? = 1 ] && case $out in *"for TLS"*) ;; *) false ;; esac || t_fail "--farm-ca without rediss://: $out"
chmod 644 "$P/cli.key"
out=$("$SERVE" -t "${DEVS[0]}" --farm "rediss://127.0.0.1:$TPORT" --farm-node n8 "${TLS[@]}" --listen 127.0.0.1:0 --token-file "$TOK" 2>&1)
[ $? = 1 ] && case $out in *"readable by group or others"*) ;; *) false ;; esac || t_fail "a client key others read: $out"

t_check "the model's key is in no key of Redis (every key dumped) and not in its append-only file"
nkeys=0
while read -r k; do
    nkeys=$((nkeys + 1))
    R --raw DUMP "$k" | grep -aq "$KEY" && t_fail "the key is in $k"
done < <(R --scan)
[ "$nkeys" -gt 30 ] || t_fail "only $nkeys keys scanned"
while read -r k; do
    "${TR[@]}" --raw DUMP "$k" | grep -aq "$KEY" && t_fail "the key is in $k of the TLS Redis"
done < <("${TR[@]}" --scan)
grep -raq "$KEY" "$RDIR" && t_fail "the key is in Redis's files"
grep -raq "sk-test" "$RDIR" && t_fail "a key is in Redis's files"
grep -q "$KEY" "$T_TMP"/node.*.log && t_fail "the key is in a node's log"
true

t_check "every node stops on SIGTERM with status 0, and no node logged a sanitizer report"
nodes_stop_clean
