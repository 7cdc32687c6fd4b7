#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The intent policy (docs/mcp.md, "Intents") through the front ends, against
# the test device, whose `am` stand-in records every command it receives:
# every refused row of the table sends nothing, through adbc-serve's intent
# tool and POST /v1/app and through adbc-mcp; allowed by its name
# (--allow-tool, [tools] allow), the same intent reaches `am` as asked, and
# a name lets through only its own rows.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
t_init
. "$(dirname "${BASH_SOURCE[0]}")/lib_serve.sh"
t_need_built MCP "adbc-mcp needs cJSON"
command -v jq > /dev/null || t_fail "jq is needed (scripts/packages.txt)"
MCP=$ADBC_BUILD_DIR/tools/adbc-mcp

td_start a --no-auth --serial SN-INTENT-1
CA=${TD_SANDBOX[a]}/data/local/tmp/.adbc-test
setup_dev a
screen "$CA" Send
A=127.0.0.1:${TD_PORT[a]}
T() { H -X POST -d "$2" "/v1/tools/$1"; }

# The rows: NAME-NEEDED|ACTION|DATA|COMPONENT (empty: left out).
ROWS=$T_TMP/rows
cat > "$ROWS" << 'EOF'
intent_call|android.intent.action.CALL|tel:5551234|
intent_call|android.intent.action.CALL_PRIVILEGED|tel:5551234|
intent_call|android.intent.action.CALL_EMERGENCY|tel:112|
intent_call|android.intent.action.NEW_OUTGOING_CALL||
intent_call|android.intent.action.call|tel:5551234|
intent_call|android.intent.action.VIEW||com.android.phone/.OutgoingCallBroadcaster
intent_call|||com.android.phone/.PrivilegedOutgoingCallBroadcaster
intent_call|||com.android.phone/.EmergencyOutgoingCallBroadcaster
intent_call|||com.android.server.telecom/.CallActivity
intent_call|||com.android.server.telecom/.components.UserCallActivity
intent_call|||com.android.server.telecom/.PrivilegedCallActivity
intent_call|||com.android.server.telecom/.EmergencyCallActivity
intent_call|android.intent.action.DIAL|tel:5551234|
intent_call|android.intent.action.VIEW|TEL:5551234|
intent_call|android.intent.action.VIEW|sip:bob@example.com|
intent_call|android.intent.action.VIEW|voicemail:|
intent_sms|android.intent.action.RESPOND_VIA_MESSAGE||
intent_sms|android.intent.action.SENDTO|sms:5551234|
intent_sms|android.intent.action.SENDTO|smsto:5551234|
intent_sms|android.intent.action.SENDTO|mms:5551234|
intent_sms|android.intent.action.SENDTO|mmsto:5551234|
intent_any|android.intent.action.REBOOT||
intent_any|android.intent.action.ACTION_REQUEST_SHUTDOWN||
intent_any|com.android.internal.intent.action.REQUEST_SHUTDOWN||
intent_any|android.intent.action.ACTION_SHUTDOWN||
intent_any|android.intent.action.FACTORY_RESET||
intent_any|android.intent.action.MASTER_CLEAR||
intent_any|android.intent.action.DELETE|package:com.chat|
intent_any|android.intent.action.UNINSTALL_PACKAGE|package:com.chat|
intent_any|android.intent.action.INSTALL_PACKAGE|file:///sdcard/a.apk|
intent_any|||android/com.android.internal.app.ShutdownActivity
intent_any|android.intent.action.VIEW||com.android.packageinstaller/.UninstallerActivity
intent_any|android.intent.action.VIEW|content://media/external/1|
intent_any|android.intent.action.VIEW|javascript:alert(1)|
intent_any||intent:#Intent;action=android.intent.action.CALL;end|
intent_any|android.intent.action.VIEW|x:y|
EOF
# args ACTION DATA COMPONENT: the intent's JSON arguments.
args() { jq -nc --arg a "$1" --arg d "$2" --arg c "$3" \
    '{} + (if $a != "" then {action:$a} else {} end) + (if $d != "" then {data:$d} else {} end)
        + (if $c != "" then {component:$c} else {} end)'; }
# sent ACTION DATA COMPONENT: `am start` received exactly this intent.
sent()
{
    local want="am start" got
    [ -n "$1" ] && want+=" -a $1"
    [ -n "$2" ] && want+=" -d $(printf '%q' "$2" | sed "s/^\\$'\\(.*\\)'\$/'\\1'/")"
    [ -n "$3" ] && want+=" -n $3"
    got=$(calls "$CA")
    # the stand-in prints words as the shell got them: compare without quotes
    [ "$(printf '%s' "$got" | tr -d "'\\\\")" = "$(printf '%s' "$want" | tr -d "'\\\\")" ] ||
        t_fail "am received '$got', expected '$want'"
}
nothing_sent() { [ -z "$(calls "$CA")" ] || t_fail "$1 reached the device: $(cat "$CA/calls" 2> /dev/null)"; }

t_check "adbc-serve, no name allowed: every row refused by the intent tool (and POST /v1/app), nothing sent"
serve_start -t "$A" --settle 0 --busy-wait 60000
H /v1/snapshot
calls "$CA" > /dev/null
n=0
while IFS='|' read -r need act data comp; do
    j=$(args "$act" "$data" "$comp")
    T intent "$j"
    expect 400 bad_request
    J .error.message | grep -q "refused, nothing sent.*--allow-tool $need" ||
        t_fail "$j: $(J .error.message)"
    if [ $((n % 12)) = 0 ]; then # the same ops_app behind POST /v1/app: a sample
        H -X POST -d "$(jq -c '. + {op:"intent"}' <<< "$j")" "/v1/app?device=$A"
        expect 400 bad_request
    fi
    nothing_sent "$j"
    n=$((n + 1))
done < "$ROWS"
[ "$n" -ge 36 ] || t_fail "only $n rows read"

t_check "adbc-serve, no name allowed: safe intents reach am as asked"
for j in 'android.intent.action.VIEW|https://example.com/?q=1|' 'android.intent.action.DIAL||' \
    'android.intent.action.SENDTO|mailto:a@example.com|' 'android.intent.action.VIEW|geo:0,0?q=cafe|' \
    'android.intent.action.VIEW|market://details?id=com.chat|' 'android.intent.action.MAIN||com.chat/.Main'; do
    IFS='|' read -r act data comp <<< "$j"
    T intent "$(args "$act" "$data" "$comp")"
    expect 200
    sent "$act" "$data" "$comp"
done
kill "$SPID"
wait "$SPID" 2> /dev/null

# allowed_by NAME: serve with --allow-tool NAME; each row of NAME is sent as
# asked, the first row of each other name still refused with nothing sent
# (every row was refused without a name above; intent_any lets every row
# through, and its own rows are checked). POST /v1/app: the same ops_app as
# the tool, without the screen the tool reads after it.
allowed_by()
{
    local a=() x
    for x in "$@"; do a+=(--allow-tool "$x"); done
    rm -f "$T_TMP/port"
    serve_start -t "$A" --settle 0 --busy-wait 60000 "${a[@]}"
    calls "$CA" > /dev/null
    local seen=" "
    while IFS='|' read -r need act data comp; do
        j=$(args "$act" "$data" "$comp")
        if [ "$need" != "$1" ]; then
            [ "$1" = intent_any ] && continue
            [[ $seen == *" $need "* ]] && continue
            seen+="$need "
        fi
        H -X POST -d "$(jq -c '. + {op:"intent"}' <<< "$j")" "/v1/app?device=$A"
        if [ "$need" = "$1" ]; then
            expect 200
            sent "$act" "$data" "$comp"
        else
            expect 400 bad_request
            nothing_sent "$j with --allow-tool $1"
        fi
    done < "$ROWS"
    kill "$SPID"
    wait "$SPID" 2> /dev/null
}
t_check "--allow-tool intent_call: the call rows reach am, the others still refused"
allowed_by intent_call
t_check "--allow-tool intent_sms: the message rows reach am, the others still refused"
allowed_by intent_sms
t_check "--allow-tool intent_any: the rows only it allows reach am as asked"
allowed_by intent_any
t_check "--allow-tool takes only the names it knows"
"$SERVE" -t "$A" --allow-tool intent_CALL --listen 127.0.0.1:0 > /dev/null 2> "$T_TMP/err" &&
    t_fail "an unknown name was taken"
grep -q "intent_call" "$T_TMP/err" || t_fail "the refusal does not list the names: $(cat "$T_TMP/err")"

t_check "adbc-mcp: a call intent refused with nothing sent; sent once [tools] allow names intent_call"
# mcp_call CONFIG: the intent tool's CALL through adbc-mcp with CONFIG; its
# result's JSON in $OUT.
mcp_call()
{
    printf '%s\n' \
        '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' \
        '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
        '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"intent","arguments":{"action":"android.intent.action.CALL","data":"tel:5551234"}}}' |
        HOME=$T_TMP/home timeout 120 "$MCP" --config "$1" --no-usb -t "$A" -s "$A" 2> "$T_TMP/mcp.err" |
        jq -c 'select(.id == 2)' > "$OUT" || t_fail "adbc-mcp: $(cat "$T_TMP/mcp.err")"
    [ -s "$OUT" ] || t_fail "adbc-mcp gave no answer: $(cat "$T_TMP/mcp.err")"
}
mkdir -p "$T_TMP/home"
printf '[device]\nallowlist = ["SN-INTENT-1"]\n' > "$T_TMP/mcp.toml"
calls "$CA" > /dev/null
mcp_call "$T_TMP/mcp.toml"
[ "$(J .result.isError)" = true ] || t_fail "adbc-mcp let the call through: $(cat "$OUT")"
J '.result.content[0].text' | grep -q 'refused, nothing sent.*\[tools\] allow = \["intent_call"\]' ||
    t_fail "adbc-mcp's refusal: $(cat "$OUT")"
nothing_sent "adbc-mcp's call intent"
printf '[device]\nallowlist = ["SN-INTENT-1"]\n[tools]\nallow = ["intent_call"]\n' > "$T_TMP/mcp.toml"
mcp_call "$T_TMP/mcp.toml"
[ "$(J '.result.isError // false')" = false ] || t_fail "adbc-mcp with intent_call: $(cat "$OUT")"
sent android.intent.action.CALL tel:5551234 ""

echo "ok: $T_CHECKS checks"
