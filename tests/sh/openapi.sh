#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# docs/openapi.yaml against adbc-serve: the routes and error codes of
# tools/adbc-serve are those of the document (both ways), and every route,
# called with curl against test devices (one of them gone, one held busy),
# answers a status the document lists with a body its schema accepts
# (tests/sh/openapi_check.py).
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
t_init

. "$(dirname "${BASH_SOURCE[0]}")/lib_serve.sh"
python3 -c 'import yaml' 2> /dev/null || t_fail "python3-yaml is needed (scripts/packages.txt)"

td_start a --no-auth
td_start b --no-auth
td_start c --no-auth
for n in a b; do
    setup_dev $n
    echo com.listed > "${TD_SANDBOX[$n]}/data/local/tmp/.adbc-test/packages"
done
screen "${TD_SANDBOX[a]}/data/local/tmp/.adbc-test" Send
screen "${TD_SANDBOX[b]}/data/local/tmp/.adbc-test" Reply Reply
grey_frame "${TD_SANDBOX[a]}/data/local/tmp/.adbc-test/screencap.raw"
A=127.0.0.1:${TD_PORT[a]}
B=127.0.0.1:${TD_PORT[b]}
C=127.0.0.1:${TD_PORT[c]}
td_stop c # a device that is gone: its port is closed

# The agent's tasks: a scripted model (a task that ends done, then one that
# waits until it is cancelled), device A allowed to the agent by name.
. "$(dirname "${BASH_SOURCE[0]}")/lib_agent.sh"
model '{"turns":[{"answer":{"tool":"done","args":{"answer":"ok"}}},{"answer":{"hang":30}},{"answer":{"tool":"done","args":{"answer":"ok"}}}]}'
# The server is a node of a farm of one (docs/farm.md) on a redis-server of its own.
t_need_built HIREDIS "the farm's routes need hiredis (-DADBC_WITH_HIREDIS=ON)"
. "$(dirname "${BASH_SOURCE[0]}")/lib_farm.sh"
redis_start
OPENAI_API_KEY=$KEY serve_start -t "$A" -t "$B" -t "$C" --settle 0 --body-max 4096 --connect-timeout 30 \
    --provider openai --base-url "$BASE" --model scripted --agent-allow "$A" \
    --farm "redis://127.0.0.1:$RPORT" --farm-node api --farm-password-file "$T_TMP/farm.pass"

t_check "docs/openapi.yaml: the routes and codes of the source, and every answer matches it"
python3 "$(dirname "${BASH_SOURCE[0]}")/openapi_check.py" "$ADBC_SOURCE_DIR" \
    "$URL" "$TOK" "$A" "$B" "$C" "$RPID" ||
    t_fail "docs/openapi.yaml and adbc-serve disagree (above); adbc-serve's log: $(tail -n 20 "$T_TMP/serve.log")"
