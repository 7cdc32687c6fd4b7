#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# adbc's adb server with no device named adds the devices mDNS finds, as
# adb's server auto-connects them (ADB_MDNS_AUTO_CONNECT, by default the
# wireless-debugging service _adb-tls-connect._tcp): avahi-daemon announces
# a test device speaking TLS that knows adbc's key (as after pairing) in a
# private network namespace (lib_avahi.sh, as mdns_local.sh sets it up).
# Debian's adb (29) through the server lists it under adb's serial
# ("INSTANCE._adb-tls-connect._tcp") and runs a shell on it; a plain
# _adb._tcp device announced beside it is not connected by default, and is
# with ADB_MDNS_AUTO_CONNECT=adb,adb-tls-connect; ADB_MDNS=0 adds none (and
# host:server-status says mDNS is off, host:mdns:check answers adb's
# "discovery disabled", host:mdns:services lists nothing); when the announcement ends the
# device leaves the list.
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
export XDG_CACHE_HOME=$T_TMP/cache HOME=$T_TMP/home
mkdir -p "$HOME/.android"
"$SNAP" keygen "$HOME/.android/adbkey" > /dev/null 2>&1 || t_fail "adbc-snap keygen"
ADB_HOME["snap"]=$HOME # the devices below trust adbc's key

netns_phone
td_start phone --authorized-keys-from snap --host 127.0.0.1 --port 37002 --tls \
    --serial MDNSDEV1 --prop ro.product.model=Mdns_Phone
td_start plain --authorized-keys-from snap --host 127.0.0.1 --port 37004 \
    --serial MDNSDEV2 --prop ro.product.model=Plain_Phone
TLSDEV=adb-MDNSDEV1-aBcDeF._adb-tls-connect._tcp
PLAINDEV=adb-MDNSDEV2-gHiJkL._adb._tcp
avahi_service tls adb-MDNSDEV1-aBcDeF _adb-tls-connect._tcp 37002 '<txt-record>v=ADB_SECURE_SERVICE_VERSION</txt-record>'
avahi_service plain adb-MDNSDEV2-gHiJkL _adb._tcp 37004
avahi_start vhost v4 unshare -m
avahi_wait 2

mkdir -p "$T_TMP/bhome"
# B PORT ARGS...: Debian's adb client of adbc's server on PORT; its HOME
# holds no key a device knows.
B() { local p=$1; shift; HOME=$T_TMP/bhome timeout 30 adb -P "$p" "$@"; }
# until_listed PORT PATTERN [absent]: until adb devices through the server
# on PORT lists (or no longer lists) PATTERN; bounded looks (60 s).
until_listed()
{
    local i
    for ((i = 0; i < 600; i++)); do
        if B "$1" devices | grep -q "$2"; then
            [ "${3:-}" = absent ] || return 0
        else
            [ "${3:-}" = absent ] && return 0
        fi
        sleep 0.1
    done
    return 1
}

P0=$(_t_free_port) || t_fail "no free port"
ADB_MDNS=0 adbsrv_start "$T_TMP/serve0.log" "$P0"
P0PID=$ASRV_PID
P=$(_t_free_port) || t_fail "no free port"
LOG=$T_TMP/serve.log
adbsrv_start "$LOG" "$P"
SPID=$ASRV_PID

t_check "the announced TLS device is listed under adb's serial and reached through the server"
until_listed "$P" "^${TLSDEV}[[:space:]]device$" ||
    t_fail "$TLSDEV not listed: $(B "$P" devices; tail -5 "$LOG")"
[ "$(B "$P" -s "$TLSDEV" shell echo hello)" = hello ] || t_fail "shell through the server"
B "$P" devices -l | grep -q "^${TLSDEV} .*model:Mdns_Phone" ||
    t_fail "devices -l: $(B "$P" devices -l)"

t_check "ADB_MDNS=0: no device added (its server started first, so it had as long)"
[ -z "$(B "$P0" devices | tail -n +2 | grep .)" ] || t_fail "ADB_MDNS=0 listed: $(B "$P0" devices)"
grep -q "_adb" "$T_TMP/serve0.log" && t_fail "ADB_MDNS=0 tried mDNS devices: $(cat "$T_TMP/serve0.log")"
# host:server-status's mdns_enabled (field 12) says so, as adb's server's does.
[ "$(status_field "$P0" 12)" = 0 ] || t_fail "ADB_MDNS=0: server-status mdns_enabled not 0"
[ "$(status_field "$P" 12)" = 1 ] || t_fail "server-status mdns_enabled not 1"

t_check "ADB_MDNS=0: host:mdns:check and host:mdns:services answer as adb's server with mDNS off"
# adb's server never starts its discovery: check says so, services lists
# nothing, though both devices are announced (the server beside lists them).
R() { timeout 60 python3 "$ADBC_SOURCE_DIR/tests/sh/hostproto_client.py" --timeout 40 "$@"; }
R "$P0" host:mdns:check > "$T_TMP/check0" || t_fail "host:mdns:check: no answer"
printf 'OKAY%04x%s' 30 "ERROR: mdns discovery disabled" | cmp -s - "$T_TMP/check0" ||
    t_fail "mdns:check with ADB_MDNS=0: '$(cat -v "$T_TMP/check0")'"
R "$P0" host:mdns:services > "$T_TMP/services0" || t_fail "host:mdns:services: no answer"
[ "$(cat "$T_TMP/services0")" = OKAY0000 ] ||
    t_fail "mdns:services with ADB_MDNS=0: '$(cat -v "$T_TMP/services0")'"
R "$P" host:mdns:services > "$T_TMP/services1" || t_fail "host:mdns:services: no answer"
grep -q "adb-MDNSDEV1-aBcDeF" "$T_TMP/services1" ||
    t_fail "with mDNS on, the announced device is not in mdns:services: '$(cat -v "$T_TMP/services1")'"
grep -q "mdns" "$T_TMP/serve0.log" || t_fail "the requests reached no adbc server: $(cat "$T_TMP/serve0.log")"
kill "$P0PID"

t_check "a plain _adb._tcp device is not connected by default (adb's ADB_MDNS_AUTO_CONNECT)"
B "$P" devices | grep -q "$PLAINDEV" && t_fail "$PLAINDEV listed: $(B "$P" devices)"
grep -q "$PLAINDEV" "$LOG" && t_fail "$PLAINDEV tried: $(grep "$PLAINDEV" "$LOG")"

t_check "ADB_MDNS_AUTO_CONNECT=adb,adb-tls-connect: both, in adb's order"
P2=$(_t_free_port) || t_fail "no free port"
ADB_MDNS_AUTO_CONNECT=adb,adb-tls-connect adbsrv_start "$T_TMP/serve2.log" "$P2"
until_listed "$P2" "^${PLAINDEV}[[:space:]]device$" ||
    t_fail "$PLAINDEV not listed: $(B "$P2" devices; tail -5 "$T_TMP/serve2.log")"
until_listed "$P2" "^${TLSDEV}[[:space:]]device$" || t_fail "$TLSDEV not listed: $(B "$P2" devices)"
ORDER=$(B "$P2" devices | tail -n +2 | cut -f1 | grep . | tr '\n' ' ')
[ "$ORDER" = "$TLSDEV $PLAINDEV " ] || t_fail "not in adb's order (by serial): '$ORDER'"
[ "$(B "$P2" -s "$PLAINDEV" shell echo plain)" = plain ] || t_fail "shell on $PLAINDEV"
kill "$ASRV_PID"

t_check "the announcement ends: the device leaves the server's list"
kill "$AVAHI" # avahi says goodbye (TTL 0) as it exits
wait "$AVAHI" 2> /dev/null
until_listed "$P" "^${TLSDEV}[[:space:]]" absent || t_fail "$TLSDEV still listed: $(B "$P" devices)"
kill -0 "$SPID" || t_fail "adbc-serve exited: $(tail -5 "$LOG")"
echo "ok: $T_CHECKS checks"
