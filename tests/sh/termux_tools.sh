#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The Termux:API tools, with stand-in termux-* commands printing what
# termux-api prints (fixtures/termux/termux-standin): absent Termux they are
# not listed; with TERMUX_VERSION set and the commands on PATH they are,
# each runs its command with exactly its arguments (never a shell), its JSON
# is checked (text that is not JSON, or the app's API_ERROR, fails clearly),
# a command that hangs is killed at the call's bound, and SMS send and calls
# are there only when allowed by name.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
t_init
. "$(dirname "${BASH_SOURCE[0]}")/lib_serve.sh"
command -v jq > /dev/null || t_fail "jq is needed (scripts/packages.txt)"
MCP=${ADBC_MCP:-$ADBC_BUILD_DIR/tools/adbc-mcp}
[ -x "$MCP" ] || t_fail "adbc-mcp not built: $MCP"

export TERMUX_STANDIN=$T_TMP/termux
mkdir -p "$TERMUX_STANDIN/bin"
for n in battery-status clipboard-get clipboard-set location notification torch vibrate volume \
    wifi-connectioninfo sms-list sms-send contact-list camera-photo telephony-call; do
    ln -s "$ADBC_SOURCE_DIR/fixtures/termux/termux-standin" "$TERMUX_STANDIN/bin/termux-$n"
done
tcalls() { cat "$TERMUX_STANDIN/calls" 2> /dev/null; rm -f "$TERMUX_STANDIN/calls"; }
# mcp_list [CONFIG]: the tool names adbc-mcp lists.
mcp_list()
{
    printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' |
        timeout 20 "$MCP" --no-usb ${1:+--config "$1"} 2> "$T_TMP/mcp.err" | jq -r '.result.tools[].name'
}
TERMUX_TOOLS="termux_battery termux_clipboard_get termux_clipboard_set termux_location termux_notification termux_torch termux_vibrate termux_volume termux_wifi_info termux_sms_list termux_contacts termux_camera_photo"

t_check "absent Termux, no termux tool is listed (commands on PATH but no TERMUX_VERSION, or the reverse)"
PATH=$TERMUX_STANDIN/bin:$PATH mcp_list > "$T_TMP/names"
grep -q '^termux_' "$T_TMP/names" && t_fail "listed without TERMUX_VERSION: $(grep termux_ "$T_TMP/names")"
grep -qx tap "$T_TMP/names" || t_fail "no tools listed: $(cat "$T_TMP/names" "$T_TMP/mcp.err")"
TERMUX_VERSION=0.118.1 mcp_list | grep -q '^termux_' && t_fail "listed without the commands on PATH"

export TERMUX_VERSION=0.118.1 PATH=$TERMUX_STANDIN/bin:$PATH
t_check "in Termux: the Termux:API tools are listed, SMS send and calls only when allowed by name"
mcp_list > "$T_TMP/names"
for t in $TERMUX_TOOLS; do grep -qx "$t" "$T_TMP/names" || t_fail "$t not listed"; done
grep -q -e termux_sms_send -e termux_call "$T_TMP/names" && t_fail "sms send or call listed without the opt-in"
printf '[tools]\nallow = ["termux_sms_send"]\n' > "$T_TMP/sms.toml"
mcp_list "$T_TMP/sms.toml" > "$T_TMP/names"
grep -qx termux_sms_send "$T_TMP/names" || t_fail "termux_sms_send not listed with the opt-in: $(cat "$T_TMP/mcp.err")"
grep -qx termux_call "$T_TMP/names" && t_fail "termux_call listed though only sms was allowed"
printf '[tools]\nallow = ["shell"]\n' > "$T_TMP/bad.toml"
timeout 20 "$MCP" --no-usb --config "$T_TMP/bad.toml" < /dev/null > /dev/null 2> "$T_TMP/bad.err" &&
    t_fail "a config allowing an unknown opt-in tool was accepted"
grep -q "not a tool that needs allowing" "$T_TMP/bad.err" || t_fail "bad opt-in: $(cat "$T_TMP/bad.err")"

td_start a --no-auth
serve_start -t "127.0.0.1:${TD_PORT[a]}" --call-timeout 3 --allow-tool termux_call
T() { H -X POST -d "$2" "/v1/tools/$1"; }
text() { J '[.result.content[].text] | join("\n")'; }

t_check "each tool runs its command with exactly its arguments; JSON passes through checked"
check()
{
    # check TOOL JSON CALLS [OUTPUT-JQ-TEST]
    T "$1" "$2"
    expect 200
    got=$(tcalls)
    [ "$got" = "$3" ] || t_fail "$1 ran: '$got', expected '$3'"
    [ -z "${4:-}" ] || [ "$(text | jq -r "$4")" = true ] || t_fail "$1 answered: $(text)"
}
check termux_battery '{}' 'termux-battery-status' '.percentage == 76 and .status == "DISCHARGING"'
check termux_clipboard_get '{}' 'termux-clipboard-get'
[ "$(text)" = "copied text" ] || t_fail "clipboard: $(text)"
check termux_clipboard_set '{"text":"a $(b) `c` -d"}' "$(printf 'termux-clipboard-set\nstdin: a $(b) `c` -d')"
check termux_location '{"provider":"network","request":"last"}' 'termux-location [-p] [network] [-r] [last]' '.provider == "gps"'
# Left out, provider, request and type take their defaults (gps, once, all).
check termux_location '{}' 'termux-location [-p] [gps] [-r] [once]' '.provider == "gps"'
check termux_notification '{"title":"-t x","content":"hi; there","id":"n1"}' 'termux-notification [-t] [-t x] [-c] [hi; there] [-i] [n1]'
check termux_torch '{"on":true}' 'termux-torch [on]'
check termux_vibrate '{"duration_ms":300,"force":true}' 'termux-vibrate [-d] [300] [-f]'
check termux_volume '{}' 'termux-volume' 'length == 6'
check termux_volume '{"stream":"music","volume":4}' 'termux-volume [music] [4]'
check termux_wifi_info '{}' 'termux-wifi-connectioninfo' '.ssid == "home"'
check termux_sms_list '{"limit":5,"type":"inbox"}' 'termux-sms-list [-l] [5] [-o] [0] [-t] [inbox]' '.[0].body == "on my way"'
check termux_sms_list '{}' 'termux-sms-list [-l] [10] [-o] [0] [-t] [all]' '.[0].body == "on my way"'
check termux_contacts '{}' 'termux-contact-list' '.[0].name == "Sam"'
check termux_call '{"number":"+4915112345678"}' 'termux-telephony-call [+4915112345678]'
T termux_camera_photo '{"camera":1}'
expect 200
tcalls | grep -qE '^termux-camera-photo \[-c\] \[1\] \[.*/adbc-photo-[A-Za-z0-9]{6}\]$' || t_fail "camera call"
[ "$(J '.result.content[] | select(.type == "image") | .mimeType')" = image/jpeg ] || t_fail "no photo: $(J .result)"
[ "$(J '.result.content[] | select(.type == "image") | .data' | base64 -d | head -c 4 | od -An -tx1 | tr -d ' ')" = ffd8ffe0 ] ||
    t_fail "the photo is not the camera's JPEG"

t_check "hostile or bad arguments are refused before anything runs"
for b in 'termux_call {"number":"123;reboot"}' 'termux_call {"number":"$(id)"}' 'termux_call {"number":"*#06#"}' \
    'termux_location {"provider":"gps; id"}' 'termux_volume {"stream":"music"}' 'termux_volume {"stream":"bass","volume":2}' \
    'termux_notification {"title":"t","content":"c","id":"a b"}' 'termux_sms_list {"type":"spam"}' \
    'termux_clipboard_set {"text":""}' 'termux_torch {}' 'termux_vibrate {"duration_ms":9000}'; do
    T "${b%% *}" "${b#* }"
    expect 400 bad_request
done
[ -z "$(tcalls)" ] || t_fail "a refused call ran a command"

t_check "SMS send is refused without the opt-in: no such tool, nothing run"
T termux_sms_send '{"number":"+4915112345678","text":"hi"}'
expect 404 not_found
[ -z "$(tcalls)" ] || t_fail "sms send ran a command"

t_check "output that is not JSON, the app's API_ERROR and a failing command are clear errors"
echo garbage > "$TERMUX_STANDIN/mode-termux-battery-status"
T termux_battery '{}'
expect 500 failed
J .error.message | grep -q "termux-battery-status printed no JSON: Error: Termux:API is not installed" || t_fail "garbage: $(J .error.message)"
echo api_error > "$TERMUX_STANDIN/mode-termux-wifi-connectioninfo"
T termux_wifi_info '{}'
expect 500 failed
J .error.message | grep -q "the Termux:API app said: No current connection" || t_fail "API_ERROR: $(J .error.message)"
echo fail > "$TERMUX_STANDIN/mode-termux-torch"
T termux_torch '{"on":false}'
expect 500 failed
J .error.message | grep -q "termux-torch failed (exit status 1): termux-torch: illegal option" || t_fail "fail: $(J .error.message)"

t_check "a command that hangs is killed at the call's bound (--call-timeout 3), nothing left running"
echo hang > "$TERMUX_STANDIN/mode-termux-battery-status"
T termux_battery '{}'
expect 504 timeout
pid=$(cat "$TERMUX_STANDIN/pid-termux-battery-status")
kill -0 "$pid" 2> /dev/null && t_fail "the hung command ($pid) is still running"
T termux_contacts '{}'
expect 200
tcalls > /dev/null

t_check "with the opt-in, termux_sms_send passes the number as one argument and the text on stdin"
printf '[tools]\nallow = ["termux_sms_send"]\n[timeouts]\ncall_ms = 5000\n' > "$T_TMP/sms.toml"
printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}' \
    '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"termux_sms_send","arguments":{"number":"+4915112345678","text":"on my way; $(rm -rf /)"}}}' |
    timeout 20 "$MCP" --no-usb --config "$T_TMP/sms.toml" 2> /dev/null > "$T_TMP/sms.out"
jq -e 'select(.id == 2) | .result.isError != true' "$T_TMP/sms.out" > /dev/null || t_fail "sms send: $(cat "$T_TMP/sms.out")"
[ "$(tcalls)" = "$(printf 'termux-sms-send [-n] [+4915112345678]\nstdin: on my way; $(rm -rf /)')" ] || t_fail "sms send calls"
# fds_clean NAME [PATTERN]: the command NAME was started with no descriptor
# but 0, 1 and 2 (what ls, its child, lists besides: its own hold on the
# listing), or none whose target matches PATTERN.
fds_clean()
{
    local f=$TERMUX_STANDIN/fds-$1
    [ -s "$f" ] || t_fail "$1 did not record its descriptors"
    grep -q ' 0 -> ' "$f" || t_fail "$1: no descriptor listing: $(cat "$f")"
    local extra
    extra=$(grep -- ' -> ' "$f" | grep -vE ' [012] -> ' | grep -v -- '-> /proc/' | grep -E -- "-> ${2:-}")
    [ -z "$extra" ] || t_fail "$1 inherited descriptors of the server: $extra"
}
t_check "a command a tool runs inherits no descriptor: adbc-mcp's protocol stream, adbc-serve's sockets"
rm -f "$TERMUX_STANDIN"/fds-* "$TERMUX_STANDIN"/mode-*
T termux_battery '{}'
expect 200
# adbc-serve inherits what this test's runner left open: its own sockets
# (listening, clients, devices) are what must not reach the command.
fds_clean termux-battery-status 'socket:'
rm -f "$TERMUX_STANDIN"/fds-*
# adbc-mcp started with nothing open past 2: any descriptor the command
# has beyond 0..2 is the server's (its protocol stream above all).
printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}' \
    '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"termux_battery","arguments":{}}}' |
    timeout 20 python3 -c 'import os, sys; os.closerange(3, 1 << 16); os.execvp(sys.argv[1], sys.argv[1:])' \
        "$MCP" --no-usb 2> /dev/null | cat > "$T_TMP/fds.out"
jq -e 'select(.id == 2) | .result.isError != true' "$T_TMP/fds.out" > /dev/null || t_fail "battery: $(cat "$T_TMP/fds.out")"
fds_clean termux-battery-status
tcalls > /dev/null

t_check "termux_camera_photo under a hostile folder: a quote in its name, links planted at each name it may use"
shots=$T_TMP/'photos "q" \ x'
mkdir -p "$shots"
# Every name a fresh server's first photo may get (local-DATE-TIME-MS-1.jpg)
# in a window of 4 s links to a file that does not exist yet; the window
# starts once they are planted (later, when planting was slow), and the
# server is started then.
rm -f "$T_TMP/victim"
python3 -c '
import os, sys, time
shots, victim = sys.argv[1], sys.argv[2]
start = 0
while not start or time.time() >= start:
    start = int(time.time()) + 2
    for t in range(start, start + 4):
        stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime(t))
        for ms in range(1000):
            f = os.path.join(shots, "local-%s-%03d-1.jpg" % (stamp, ms))
            if not os.path.lexists(f):
                os.symlink(victim, f)
time.sleep(max(0, start - time.time()))
' "$shots" "$T_TMP/victim" || t_fail "cannot plant the links"
printf '[screenshots]\ndir = %s\n' "$(jq -Rn --arg d "$shots" '$d')" > "$T_TMP/photo.toml"
printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}' \
    '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"termux_camera_photo","arguments":{}}}' |
    timeout 20 "$MCP" --no-usb --config "$T_TMP/photo.toml" 2> "$T_TMP/photo.err" > "$T_TMP/photo.out"
text=$(jq -r 'select(.id == 2) | .result.content[0].text' "$T_TMP/photo.out")
photo=$(printf '%s' "$text" | jq -er .path) || t_fail "the photo's answer is not JSON: $text $(cat "$T_TMP/photo.err")"
[ "$(dirname "$photo")" = "$(realpath "$shots")" ] || t_fail "photo path: $photo"
[ -e "$T_TMP/victim" ] && t_fail "the photo was written through a planted link"
[ -f "$photo" ] && [ ! -L "$photo" ] || t_fail "the photo is not a regular file: $(ls -l "$photo")"
[ "$(head -c 4 "$photo" | od -An -tx1 | tr -d ' ')" = ffd8ffe0 ] || t_fail "the photo is not the camera's JPEG"
[ -z "$(ls -A "$shots" | grep '^\.')" ] || t_fail "a temporary file was left: $(ls -A "$shots")"
tcalls > /dev/null
echo "ok: $T_CHECKS checks"
