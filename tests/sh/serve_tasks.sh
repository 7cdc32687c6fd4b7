#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The agent's tasks on adbc-serve (docs/serve.md) with curl against the test
# device (screens that change as the input goes) and the scripted model
# (tests/model_server.py): a task to done with its status and steps, its
# Server-Sent Events one per step and a final one, a cancel while the model
# thinks (nothing reaches the device after it), 409 for a second task on
# the same device, another client observing and acting on the device while
# a task runs, the settings and their checks, and the bounds.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
t_init
. "$(dirname "${BASH_SOURCE[0]}")/lib_serve.sh"
t_need_built AGENT "the agent needs libcurl and cJSON"
command -v jq > /dev/null || t_fail "jq is needed (scripts/packages.txt)"
. "$(dirname "${BASH_SOURCE[0]}")/lib_agent.sh"
agent_dev
reset home
# One scripted model for every case, in order (the server's --base-url is
# fixed): a task to done (3 turns), a tap then a request held until the
# cancel (2), a request held while a second task is refused (1), 34 tasks
# that end at once, one held while the server is stopped (1).
model '{"turns":[
 {"expect":{"model":"scripted","last_contains":["[ref=1] \"Settings\""]},
  "answer":{"text":"Open Settings.","tool":"tap","args":{"ref":1},"usage":[120,12]}},
 {"expect":{"last_contains":["Switch [ref=1] \"Bluetooth\""]},
  "answer":{"text":"Turn Bluetooth on.","tool":"tap","args":{"ref":1}}},
 {"expect":{"last_contains":["\"Bluetooth\" [checked]"]},
  "answer":{"tool":"done","args":{"answer":"Bluetooth is on."}}},
 {"answer":{"tool":"tap","args":{"ref":1}}},
 {"answer":{"hang":60}},
 {"answer":{"hang":60}},
'"$(for i in $(seq 34); do printf ' {"answer":{"tool":"done","args":{"answer":"ok"}}},\n'; done)"'
 {"answer":{"hang":60}}]}'
OPENAI_API_KEY=$KEY serve_start -t "$DEV" --provider openai --base-url "$BASE" --busy-wait 20000
H /v1/settings
[ "$code" = 404 ] && t_fail "/v1/settings answered 404 in a build with the agent"
# task_wait ID: until the task has ended; its JSON in $OUT.
task_wait()
{
    local i
    for ((i = 0; i < 600; i++)); do
        H "/v1/tasks/$1"
        expect 200
        case $(J .result.status) in pending | running) sleep 0.1 ;; *) return 0 ;; esac
    done
    t_fail "task $1 did not end: $(cat "$OUT")"
}
t_check "the settings: defaults, a PUT checked whole before any value is taken"
H /v1/settings
expect 200
[ "$(J '.result | "\(.max_steps) \(.step_delay_ms) \(.provider) \(.model)"')" = "15 0 openai " ] ||
    t_fail "defaults: $(cat "$OUT")"
H -X PUT -d '{"max_steps":51}' /v1/settings
expect 400 bad_request
H -X PUT -d '{"max_steps":10,"provider":"mistral"}' /v1/settings
expect 400 bad_request
H -X PUT -d '{"colour":1}' /v1/settings
expect 400 bad_request
H -X PUT -d '[1]' /v1/settings
expect 400 bad_json
H /v1/settings
[ "$(J .result.max_steps)" = 15 ] || t_fail "a refused PUT changed the settings: $(cat "$OUT")"
H -X PUT -d '{"max_steps":8,"model":"scripted"}' /v1/settings
expect 200
[ "$(J '.result | "\(.max_steps) \(.model)"')" = "8 scripted" ] || t_fail "PUT: $(cat "$OUT")"
H -X POST /v1/settings
expect 405 method_not_allowed

t_check "a task to done: 202 with its id, then completed with three steps, each with its parts"
reset home
H -d '{"goal":"turn on Bluetooth"}' /v1/tasks
expect 202
ID=$(J .result.id)
[ -n "$ID" ] && [ "$(J .result.status)" != null ] || t_fail "no id: $(cat "$OUT")"
task_wait "$ID"
[ "$(J .result.status)" = completed ] || t_fail "status: $(cat "$OUT")"
[ "$(J .result.end.answer)" = "Bluetooth is on." ] || t_fail "answer: $(cat "$OUT")"
[ "$(J '.result.steps | length')" = 3 ] || t_fail "steps: $(cat "$OUT")"
[ "$(J '[.result.steps[].action] | join(" ")')" = "tap tap done" ] || t_fail "actions: $(cat "$OUT")"
[ "$(J '.result.steps[0].reasoning')" = "Open Settings." ] || t_fail "reasoning: $(cat "$OUT")"
[ "$(J '.result.steps[0].tokens.in')" = 120 ] && [ "$(J '.result.steps[0].tokens.out')" = 12 ] ||
    t_fail "tokens: $(cat "$OUT")"
[ "$(J '.result.steps[0] | (.observation | length > 0) and .ok and (.result | length > 0) and (.ms.total >= 0) and (.args.ref == 1)')" = true ] ||
    t_fail "step 1's parts: $(J '.result.steps[0]')"
[ "$(J '.result.max_steps')" = 8 ] || t_fail "the settings' max_steps was not used: $(cat "$OUT")"
[ "$(inputs)" = "input tap 540 200
input tap 540 500" ] || t_fail "the device got: $(inputs)"
grep -v '"check": "ok"' "$REC" && t_fail "a model check failed (above)"
H /v1/tasks
expect 200
[ "$(J '.result[0].id')" = "$ID" ] && [ "$(J '.result[0].steps')" = null ] || t_fail "list: $(cat "$OUT")"

t_check "the events: one per step as it happens, then the end, over one stream"
reset home
H -d '{"goal":"turn on Bluetooth"}' /v1/tasks
expect 202
ID=$(J .result.id)
curl -s -N -m 60 -H "Authorization: Bearer $(cat "$TOK")" -D "$T_TMP/ev.h" \
    "$URL/v1/tasks/$ID/events" > "$T_TMP/ev" &
EV=$!
model_waits
# The first step's event is out while the task still runs.
for ((i = 0; i < 200; i++)); do
    grep -q '^event: step' "$T_TMP/ev" && break
    sleep 0.05
done
grep -q '^event: step' "$T_TMP/ev" || t_fail "no step event while the task runs: $(cat "$T_TMP/ev")"
grep -q '^event: end' "$T_TMP/ev" && t_fail "an end event before the end: $(cat "$T_TMP/ev")"
grep -qi '^content-type: text/event-stream' "$T_TMP/ev.h" || t_fail "headers: $(cat "$T_TMP/ev.h")"

t_check "cancel while the model thinks: cancelled, nothing reaches the device after it"
[ "$(inputs)" = "input tap 540 200" ] || t_fail "before the cancel the device got: $(inputs)"
H -X POST "/v1/tasks/$ID/cancel"
expect 200
[ "$(J .result.cancel_requested)" = true ] || t_fail "cancel: $(cat "$OUT")"
wait "$EV"
task_wait "$ID"
[ "$(J .result.status)" = cancelled ] || t_fail "status after cancel: $(cat "$OUT")"
[ "$(inputs)" = "input tap 540 200" ] || t_fail "after the cancel the device got: $(inputs)"
python3 - "$T_TMP/ev" "$OUT" << 'PY' || t_fail "the event stream (above)"
import json, sys
events, name = [], None
for block in open(sys.argv[1]).read().split("\n\n"):
    lines = [l for l in block.split("\n") if l and not l.startswith(":")]
    if not lines:
        continue
    ev = dict(l.split(": ", 1) for l in lines)
    events.append((ev["event"], json.loads(ev["data"])))
task = json.load(open(sys.argv[2]))["result"]
names = [e[0] for e in events]
assert names == ["step"] * len(task["steps"]) + ["end"], names
assert [e[1] for e in events[:-1]] == task["steps"], "the events are not the task's steps"
assert events[-1][1]["status"] == "cancelled", events[-1]
PY
H "/v1/tasks/$ID/events"
[ "$code" = 200 ] || t_fail "events of an ended task: $code"

t_check "one task per device: a second is 409 while one runs; another client observes and acts meanwhile"
reset home
H -d '{"goal":"wait"}' /v1/tasks
expect 202
ID=$(J .result.id)
model_waits 2
H -d '{"goal":"another"}' /v1/tasks
expect 409 task_running
case $(J .error.message) in *"$ID"*) ;; *) t_fail "the 409 does not name the running task: $(cat "$OUT")" ;; esac
H /v1/observe
expect 200
J .result.snapshot | grep -q '"Settings"' || t_fail "observe during a task: $(cat "$OUT")"
H -d '{"action":"back"}' /v1/act
expect 200
H -X POST "/v1/tasks/$ID/cancel"
expect 200
task_wait "$ID"
[ "$(J .result.status)" = cancelled ] || t_fail "status: $(cat "$OUT")"

t_check "refusals: no goal, unknown members, bad numbers, no such task, wrong methods"
H -d '{}' /v1/tasks
expect 400 bad_request
H -d '{"goal":""}' /v1/tasks
expect 400 bad_request
H -d '{"goal":"x","max_steps":0}' /v1/tasks
expect 400 bad_request
H -d '{"goal":"x","colour":1}' /v1/tasks
expect 400 bad_request
H -d 'goal' /v1/tasks
expect 400 bad_json
H -d '{"goal":"x","device":"nope"}' /v1/tasks
expect 404 not_found
H /v1/tasks/t999
expect 404 not_found
H /v1/tasks/t999/events
expect 404 not_found
H -X POST /v1/tasks/t999/cancel
expect 404 not_found
H /v1/tasks/t1/nope
expect 404 no_route
H -X DELETE /v1/tasks
expect 405 method_not_allowed
H /v1/tasks/t1/cancel
expect 405 method_not_allowed
code=$(curl -s -m 10 -o "$OUT" -w '%{http_code}' -d '{"goal":"x"}' "$URL/v1/tasks")
expect 401 unauthorized

t_check "the key is never in an answer or the server's log"
H /v1/tasks
grep -q "$KEY" "$OUT" "$T_TMP/serve.log" && t_fail "the key leaked"
true

t_check "the tasks kept are bounded: after 34 more, the last 32, the oldest gone, no descriptor kept"
H /v1/tasks
FIRST=$(J '.result[-1].id')
fds() { find "/proc/$SPID/fd" -mindepth 1 | wc -l; }
fd0=$(fds)
for ((k = 0; k < 34; k++)); do
    H -d '{"goal":"say ok","max_steps":1}' /v1/tasks
    expect 202
    task_wait "$(J .result.id)"
    [ "$(J .result.status)" = completed ] || t_fail "task $k: $(cat "$OUT")"
done
H /v1/tasks
[ "$(J '.result | length')" = 32 ] || t_fail "$(J '.result | length') tasks kept, expected 32"
H "/v1/tasks/$FIRST"
expect 404 not_found
# An ended task keeps no model client (its connections, its socketpairs):
# 34 more tasks leave the server's descriptors about as they were.
fd1=$(fds)
[ $((fd1 - fd0)) -lt 10 ] || t_fail "34 ended tasks left $((fd1 - fd0)) more descriptors open ($fd0 -> $fd1)"

t_check "a physical device not named with --agent-allow: the task fails saying how to allow it, nothing sent"
phone_dev
S2=$URL
SPID1=$SPID
rm -f "$T_TMP/port"
OPENAI_API_KEY=$KEY serve_start -t "$PHONE" --provider openai --base-url "$BASE" --model scripted
H -d '{"goal":"say ok"}' /v1/tasks
expect 202
task_wait "$(J .result.id)"
[ "$(J .result.status)" = failed ] || t_fail "a task on a physical device not allowed: $(cat "$OUT")"
J .result.error | grep -q -- "--agent-allow" || t_fail "the refusal does not say how to allow: $(cat "$OUT")"
grep -E '^(input|cmd input)' "$pctl/calls" 2> /dev/null && t_fail "the physical device got input"
kill -TERM "$SPID"
wait "$SPID"
URL=$S2 SPID=$SPID1

t_check "SIGTERM while a task waits for its model: the run is cancelled, the server exits 0"
reset home
H -d '{"goal":"wait"}' /v1/tasks
expect 202
model_waits 3
kill -TERM "$SPID"
for ((i = 0; i < 300; i++)); do
    kill -0 "$SPID" 2> /dev/null || break
    sleep 0.1
done
kill -0 "$SPID" 2> /dev/null && t_fail "adbc-serve still runs 30 s after SIGTERM: $(tail "$T_TMP/serve.log")"
wait "$SPID"
st=$?
[ "$st" = 0 ] || t_fail "adbc-serve exited $st: $(tail "$T_TMP/serve.log")"
[ -z "$(inputs)" ] || t_fail "the device got: $(inputs)"
