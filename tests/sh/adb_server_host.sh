#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# adbc-serve's adb server: the host services Debian's adb (29) has no command
# for, byte for byte through tests/sh/hostproto_client.py (which connects to
# the server's port and never starts a server): host:pair (wrong code,
# nothing listening, no port, the right code: adb's messages and framing),
# host:mdns:check and host:mdns:services against a real responder
# (avahi-daemon announcing the test device, as mdns_local.sh sets it up),
# host:server-status (adb_host.proto's AdbServerStatus, decoded here by a
# reader of protobuf's wire format of its own), host:track-devices-proto-
# binary and -proto-text (Devices, first list and the update when the device
# goes); with no device at all, list-forward and killforward-all answer as
# adb's server does. After pairing, Debian's adb connects to the device through adbc's
# server over TLS with the key adbc paired: adb 29 has no TLS, so only
# adbc's server can have made that connection.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib_netns.sh"
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/lib_avahi.sh"
. "$(dirname "${BASH_SOURCE[0]}")/lib_pb.sh"
t_need_cmds avahi-daemon ip nsenter python3
t_need_adb
SERVE=${ADBC_SERVE:-$ADBC_BUILD_DIR/tools/adbc-serve}
t_need_built SERVE "adbc-serve needs cJSON and libmicrohttpd"
t_init
SNAP=$ADBC_BUILD_DIR/tools/adbc-snap
[ -x "$SNAP" ] || t_fail "adbc-snap not built: $SNAP"
CLIENT=$ADBC_SOURCE_DIR/tests/sh/hostproto_client.py
export XDG_CACHE_HOME=$T_TMP/cache HOME=$T_TMP/home
mkdir -p "$HOME"

CODE=314159
netns_phone
td_start phone --host 127.0.0.1 --port 37002 --tls --pair-port 37003 --pair-code "$CODE" \
    --serial HOSTSVC1
avahi_service tls adb-HOSTSVC1-cCdDeE _adb-tls-connect._tcp 37002 '<txt-record>v=ADB_SECURE_SERVICE_VERSION</txt-record>'
avahi_service pair adb-HOSTSVC1-cCdDeE _adb-tls-pairing._tcp 37003
avahi_start vhost v4 unshare -m
avahi_wait 2

LOG=$T_TMP/serve.log
P=$(_t_free_port) || t_fail "no free port"
# The device is named: it connects once it is paired (until then its TLS
# handshake is refused and adbc-serve retries).
adbsrv_start "$LOG" "$P" -t 127.0.0.1:37002
SPID=$ASRV_PID

# C OUT [--frames N] REQUEST...: the server's answer, raw, in $T_TMP/OUT; the
# request must show in adbc-serve's request log.
C()
{
    local out=$1 before opts=()
    shift
    [ "$1" = --frames ] && opts=(--frames "$2") && shift 2
    before=$(wc -l < "$LOG")
    timeout 60 python3 "$CLIENT" --timeout 40 "${opts[@]}" "$P" "$@" > "$T_TMP/$out"
    RC=$?
    [ "$(wc -l < "$LOG")" -gt "$before" ] || t_fail "$* reached no adbc server"
}
# expect OUT STATUS TEXT: the answer is exactly STATUS ("OKAY", "FAIL",
# "OKAYFAIL"), then TEXT as a protocol string (4 hex digits of its length).
expect()
{
    printf '%s%04x%s' "$2" "${#3}" "$3" > "$T_TMP/want"
    cmp -s "$T_TMP/want" "$T_TMP/$1" ||
        t_fail "answered '$(cat -v "$T_TMP/$1")', adb's server answers '$(cat -v "$T_TMP/want")'"
}

t_check "host:mdns:check: mDNS usable, on the interface with multicast"
C a host:mdns:check
grep -qx 'OKAY....mdns daemon version \[adbc built-in mDNS: vhost (IPv4.*)\]' "$T_TMP/a" ||
    t_fail "mdns:check: $(cat -v "$T_TMP/a")"

t_check "host:mdns:services: the announced services, one line each as adb lists them"
C a host:mdns:services
list="adb-HOSTSVC1-cCdDeE	_adb-tls-connect._tcp	10.77.0.1:37002
adb-HOSTSVC1-cCdDeE	_adb-tls-pairing._tcp	10.77.0.1:37003
"
expect a OKAY "$list"

t_check "host:pair: a wrong code, nothing listening, no port: OKAY, then FAIL and adb's words"
C a "host:pair:111111:127.0.0.1:37003"
expect a OKAYFAIL "Failed: Wrong password or connection was dropped."
grep -q "pairing with 127.0.0.1:37003: wrong pairing code" "$LOG" || t_fail "adbc's reason not logged"
C a "host:pair:$CODE:127.0.0.1:1"
expect a OKAYFAIL "Failed: Unable to start pairing client."
C a "host:pair:$CODE:127.0.0.1"
expect a OKAYFAIL "Invalid port while parsing address [127.0.0.1]"
C a "host:pair:$CODE"
expect a FAIL "unknown host service"
[ ! -e "$HOME/.android/adbkey" ] || grep -q . "${TD_KEYS[phone]}" &&
    t_fail "a failed pairing gave the device a key: $(cat "${TD_KEYS[phone]}")"

t_check "host:pair with the right code: adb's message and the device's GUID; the key is adbc's"
C a "host:pair:$CODE:127.0.0.1:37003"
grep -qxE "OKAY00[0-9a-f]{2}Successfully paired to 127.0.0.1:37003 \[guid=adb-HOSTSVC1-[A-Za-z0-9]{6}\]" "$T_TMP/a" ||
    t_fail "pair: $(cat -v "$T_TMP/a")"
for ((i = 0; i < 100; i++)); do grep -q . "${TD_KEYS[phone]}" && break; sleep 0.05; done
[ "$(cat "${TD_KEYS[phone]}")" = "$(cat "$HOME/.android/adbkey.pub")" ] ||
    t_fail "the device's keys are not adbc-serve's key: $(cat "${TD_KEYS[phone]}")"

t_check "Debian's adb connects through adbc's server to the paired device (TLS: adbc's only)"
B() { HOME=$T_TMP/bhome timeout 60 "$ADB_BIN" -P "$P" "$@"; }
mkdir -p "$T_TMP/bhome"
B wait-for-device || t_fail "the paired device did not come online"
out=$(B connect 127.0.0.1:37002 2>&1) || t_fail "connect: $out"
[ "$out" = "already connected to 127.0.0.1:37002" ] || t_fail "connect said: $out"
out=$(B -s 127.0.0.1:37002 shell echo paired-ok 2>&1) || t_fail "shell: $out"
[ "$out" = paired-ok ] || t_fail "shell said: $out"
grep -q "adb server: shell" "$LOG" || grep -q "adb server: shell,v2" "$LOG" ||
    t_fail "the shell did not go through adbc's server"

t_check "host:server-status: AdbServerStatus with what applies to adbc's server"
C a host:server-status
pb "$T_TMP/a" > "$T_TMP/st" || t_fail "not a protobuf answer: $(od -c "$T_TMP/a" | head)"
ver=$("$SERVE" --version 2>&1 | grep -oE '[0-9]+\.[0-9]+\.[0-9]+' | head -1)
for want in "1=2" "5=$ver" "7=$(readlink -f "$SERVE")" "9=$(uname -s) $(uname -r) ($(uname -m))" \
    "10=1" "11=1" "12=1" "13=$HOME/.android/adbkey"; do
    grep -qxF -- "$want" "$T_TMP/st" || t_fail "no field $want in: $(cat "$T_TMP/st")"
done
[ "$(grep -c = "$T_TMP/st")" = 8 ] || t_fail "fields beyond those: $(cat "$T_TMP/st")"

t_check "host-features names the tracker's protobuf form and server-status"
C a host:host-features
grep -q "devicetracker_proto_format" "$T_TMP/a" && grep -q "server_status" "$T_TMP/a" ||
    t_fail "host-features: $(cat "$T_TMP/a")"

t_check "host:track-devices-proto-binary: Devices, then an empty one when the device goes"
C a host:devices-l
line=$(tail -c +9 "$T_TMP/a")
tid=${line##*transport_id:}
tid=${tid%%[!0-9]*}
prod=$(sed -n 's/.* product:\([^ ]*\).*/\1/p' <<< "$line")
model=$(sed -n 's/.* model:\([^ ]*\).*/\1/p' <<< "$line")
dev=$(sed -n 's/.* device:\([^ ]*\).*/\1/p' <<< "$line")
[ -n "$tid" ] && [ -n "$model" ] || t_fail "devices -l: $line"
(sleep 1; HOME=$T_TMP/bhome timeout 30 "$ADB_BIN" -P "$P" disconnect 127.0.0.1:37002 > /dev/null) &
C a --frames 2 host:track-devices-proto-binary
[ $RC = 0 ] || t_fail "no second list within 40 s: $(od -c "$T_TMP/a" | head)"
pb "$T_TMP/a" > "$T_TMP/tr"
want="frame
1={1=127.0.0.1:37002 2=8 4=$prod 5=$model 6=$dev 7=2 10=$tid}
frame"
[ "$(cat "$T_TMP/tr")" = "$want" ] || t_fail "tracked: $(cat "$T_TMP/tr") wanted $want"

t_check "host:track-devices-proto-text: protobuf's text format"
out=$(B connect 127.0.0.1:37002 2>&1) || t_fail "connect: $out"
[ "$out" = "connected to 127.0.0.1:37002" ] || t_fail "connect said: $out"
C a host:devices-l
line=$(tail -c +9 "$T_TMP/a")
tid=${line##*transport_id:}
tid=${tid%%[!0-9]*}
C a --frames 1 host:track-devices-proto-text
text="device {
  serial: \"127.0.0.1:37002\"
  state: DEVICE
  product: \"$prod\"
  model: \"$model\"
  device: \"$dev\"
  connection_type: SOCKET
  transport_id: $tid
}
"
expect a OKAY "$text"

t_check "host:devices-proto-binary is no service of adb's: refused as adb's server does"
C a host:devices-proto-binary
expect a FAIL "unknown host service"

t_check "no device at all: list-forward is adb's empty list, killforward-all OKAY twice (adb.cpp)"
# A second server naming no device, with a home and state of its own (no
# remembered device), so it holds none.
mkdir -p "$T_TMP/home2" "$T_TMP/state2"
P2=$(_t_free_port) || t_fail "no free port"
LOG2=$T_TMP/serve2.log
HOME=$T_TMP/home2 XDG_STATE_HOME=$T_TMP/state2 adbsrv_start "$LOG2" "$P2"
SPID2=$ASRV_PID
timeout 60 python3 "$CLIENT" --timeout 40 "$P2" host:devices > "$T_TMP/none" || t_fail "host:devices: $?"
[ "$(cat "$T_TMP/none")" = "OKAY0000" ] || t_fail "the second server holds a device: $(cat -v "$T_TMP/none")"
timeout 60 python3 "$CLIENT" --timeout 40 "$P2" host:list-forward > "$T_TMP/lf" || t_fail "host:list-forward: $?"
[ "$(cat "$T_TMP/lf")" = "OKAY0000" ] || t_fail "host:list-forward with no device: $(cat -v "$T_TMP/lf")"
timeout 60 python3 "$CLIENT" --timeout 40 "$P2" host:killforward-all > "$T_TMP/ka" || t_fail "host:killforward-all: $?"
[ "$(cat "$T_TMP/ka")" = "OKAYOKAY" ] || t_fail "host:killforward-all with no device: $(cat -v "$T_TMP/ka")"
# And as Debian's adb shows it: nothing listed, status 0. (adb 29's
# `forward --remove-all` asks for a transport first, host:tport:any, and so
# says "no devices/emulators found" with adb's own server too.)
out=$(HOME=$T_TMP/home2 timeout 60 "$ADB_BIN" -P "$P2" forward --list 2>&1) || t_fail "adb forward --list: $out"
[ -z "$out" ] || t_fail "adb forward --list with no device: $out"
grep -q "host:list-forward" "$LOG2" || t_fail "adb's list-forward reached no adbc server"
kill -TERM "$SPID2"
wait "$SPID2"
grep -qE '(ERROR|WARNING): [A-Za-z]*Sanitizer|runtime error:' "$LOG2" &&
    t_fail "adbc-serve: $(grep -m3 -E 'Sanitizer|runtime error' "$LOG2")"

kill -0 "$SPID" || t_fail "adbc-serve died: $(tail "$LOG")"
grep -qE '(ERROR|WARNING): [A-Za-z]*Sanitizer|runtime error:' "$LOG" &&
    t_fail "adbc-serve: $(grep -m3 -E 'Sanitizer|runtime error' "$LOG")"
td_stop phone
echo "ok: $T_CHECKS checks"
