#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# adbc-serve's generic tool routes (GET /v1/tools, POST /v1/tools/NAME) with
# curl, against the test device: the list is tools/ops' one table (the same
# tools adbc-mcp lists, less the ones not for HTTP clients), a call reaches
# the device exactly as the tool says, and arguments are refused before
# anything is sent, with the envelope and statuses of the other routes.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
t_init
. "$(dirname "${BASH_SOURCE[0]}")/lib_serve.sh"
command -v jq > /dev/null || t_fail "jq is needed (scripts/packages.txt)"
MCP=${ADBC_MCP:-$ADBC_BUILD_DIR/tools/adbc-mcp}

td_start a --no-auth
CA=${TD_SANDBOX[a]}/data/local/tmp/.adbc-test
setup_dev a
screen "$CA" Send
A=127.0.0.1:${TD_PORT[a]}
# A call waits for the device as long as load may make it take (the pool's
# first connect holds it): a test that is not about a busy device never
# sees 423.
serve_start -t "$A" --settle 0 --busy-wait 60000

t_check "GET /v1/tools needs the token"
code=$(curl -s -m 30 -o "$OUT" -w '%{http_code}' "$URL/v1/tools")
expect 401 unauthorized

t_check "GET /v1/tools: adbc-mcp's table, less the device choice, host files and the shell"
H /v1/tools
expect 200
J '.result[].name' > "$T_TMP/serve.names"
[ "$(J '[.result[] | select(.inputSchema.type == "object" and .description != "")] | length')" = \
  "$(wc -l < "$T_TMP/serve.names")" ] || t_fail "a tool without its schema or description: $(J .result)"
if t_built MCP; then
    printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' |
        HOME=$T_TMP/home timeout 120 "$MCP" --no-usb --allow-shell 2> /dev/null |
        jq -r '.result.tools[].name' |
        grep -vx -e list_devices -e select_device -e install_apk -e shell > "$T_TMP/mcp.names"
    diff "$T_TMP/mcp.names" "$T_TMP/serve.names" || t_fail "adbc-serve and adbc-mcp list different tools"
fi
grep -qx tap "$T_TMP/serve.names" || t_fail "no tap in: $(cat "$T_TMP/serve.names")"
for t in shell install_apk list_devices select_device; do
    grep -qx "$t" "$T_TMP/serve.names" && t_fail "$t is listed over HTTP"
done

t_check "POST /v1/tools/snapshot, then tap on a ref: exactly one tap, the screen after"
H -X POST /v1/tools/snapshot
expect 200
J '.result.content[0].text' | grep -q '"Send"' || t_fail "snapshot: $(J .result)"
calls "$CA" > /dev/null
H -X POST -d '{"ref":3}' /v1/tools/tap
expect 200
[ "$(calls "$CA")" = "cmd input tap 950 2100" ] || t_fail "tap calls"
J '.result.content[].text' | grep -q '^after:' || t_fail "no screen after the tap: $(J .result)"

t_check "device in the body or ?device=; an unknown one is 404"
H -X POST -d "{\"device\":\"$A\",\"key\":\"back\"}" /v1/tools/press
expect 200
[ "$(calls "$CA")" = "cmd input keyevent 4" ] || t_fail "press calls"
H -X POST -d '{}' "/v1/tools/top_activity?device=nope"
expect 404 not_found

t_check "arguments refused before anything is sent: unknown, missing, bad values"
H -X POST -d '{"ref":3,"clear":true}' /v1/tools/tap
expect 400 bad_request
J .error.message | grep -q "unknown argument 'clear'" || t_fail "message: $(J .error.message)"
H -X POST -d '{}' /v1/tools/launch
expect 400 bad_request
H -X POST -d '{"package":"com.x y"}' /v1/tools/launch
expect 400 bad_request
H -X POST -d '{"package":"com.x;reboot"}' /v1/tools/stop_app
expect 400 bad_request
H -X POST -d '[1]' /v1/tools/tap
expect 400 bad_json
H -X POST -d '{"ref":' /v1/tools/tap
expect 400 bad_json
H -X POST -d '{"device":3}' /v1/tools/back
expect 400 bad_request
[ -z "$(calls "$CA")" ] || t_fail "a refused call reached the device"

t_check "a stale or unknown ref: the act's own status"
H -X POST -d '{"ref":99}' /v1/tools/tap
expect 404 unknown_ref

t_check "unknown tool 404, tools hidden over HTTP 404, wrong methods 405"
H -X POST -d '{}' /v1/tools/nothing
expect 404 not_found
H -X POST -d '{"command":"id"}' /v1/tools/shell
expect 404 not_found
H /v1/tools/tap
expect 405 method_not_allowed
H -X POST -d '{}' /v1/tools
expect 405 method_not_allowed
[ -z "$(calls "$CA")" ] || t_fail "a refused call reached the device"
echo "ok: $T_CHECKS checks"
