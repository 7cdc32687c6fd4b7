#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# adbc-mcp through the official MCP TypeScript SDK (tests/mcp/test.mjs):
# starts the test devices it needs (emulators by ro.kernel.qemu and
# ro.boot.qemu, physical devices on and off the allowlist, one to kill
# mid-call), installs the pinned SDK with `npm ci` into tests/mcp/node_modules
# when it is not there, and runs the Node test against them.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# adbc-mcp with no configuration, in a private network namespace: the test
# device on the emulator ports (5555, then 5557 too) is found as emulator-N,
# used as the only device, chosen by ANDROID_SERIAL and by -s; an emulator
# by what it says (ro.kernel.qemu, ro.boot.qemu), never by that name: a
# phone on port 5555 is listed as emulator-5554 and refused all the same.
if [ "${1:-}" = --noconfig ]; then
    t_init
    ip link set lo up || t_fail "cannot bring lo up in the private namespace"
    mkdir -p "$T_TMP/home"
    devjson() {
        local sep= n out={
        for n in "$@"; do
            out+="$sep\"$n\":{\"addr\":\"127.0.0.1:${TD_PORT[$n]}\",\"ctl\":\"${TD_SANDBOX[$n]}/data/local/tmp/.adbc-test\",\"sandbox\":\"${TD_SANDBOX[$n]}\",\"pid\":${TD_PID[$n]}}"
            sep=,
        done
        echo "$out}"
    }
    t_check "no configuration, one device on port 5555"
    td_start emuport --no-auth --port 5555 --prop ro.kernel.qemu=1
    MCP_BIN=$2 T_TMP=$T_TMP MCP_DEVICES=$(devjson emuport) MCP_STEPS='no config: one emulator' \
        timeout 300 node "$ADBC_SOURCE_DIR/tests/mcp/test.mjs" || t_fail "no-config step failed"
    t_check "two devices, on ports 5555 and 5557: ANDROID_SERIAL and -s choose"
    td_start emuport2 --no-auth --port 5557 --prop ro.boot.qemu=1
    MCP_BIN=$2 T_TMP=$T_TMP MCP_DEVICES=$(devjson emuport emuport2) \
        MCP_STEPS='no config: two emulators' \
        timeout 300 node "$ADBC_SOURCE_DIR/tests/mcp/test.mjs" || t_fail "two-emulator step failed"
    t_check "the only device is unauthorized: it is still the only device, and the call says so"
    td_stop emuport
    td_stop emuport2
    t_check "a phone on port 5555 (adb tcpip 5555, a forwarded port): emulator-5554 by name, refused"
    td_start phoneport --no-auth --port 5555 --serial PHONE5555 --prop ro.kernel.qemu=0
    MCP_BIN=$2 T_TMP=$T_TMP MCP_DEVICES=$(devjson phoneport) MCP_STEPS='no config: a phone on an emulator port' \
        timeout 300 node "$ADBC_SOURCE_DIR/tests/mcp/test.mjs" || t_fail "phone-on-5555 step failed"
    td_stop phoneport
    td_start emulocked --port 5559
    MCP_BIN=$2 T_TMP=$T_TMP MCP_DEVICES=$(devjson emulocked) MCP_STEPS='no config: only device unauthorized' \
        timeout 300 node "$ADBC_SOURCE_DIR/tests/mcp/test.mjs" || t_fail "unauthorized step failed"
    td_stop emulocked
    echo "ok: $T_CHECKS checks (namespace part)"
    exit 0
fi
# adbc-mcp and phones announced by mDNS: avahi-daemon in a second network
# and mount namespace (tests/sh/lib_avahi.sh) announces two test devices as
# _adb._tcp, a third under both _adb-tls-connect._tcp and _adb._tcp on
# one address, and a fourth, a phone, under the instance name emulator-5554;
# the allowlist names them by their instances.
if [ "${1:-}" = --mdns ]; then
    t_init
    . "$(dirname "${BASH_SOURCE[0]}")/lib_avahi.sh"
    SNAP=$ADBC_BUILD_DIR/tools/adbc-snap
    netns_phone
    mkdir -p "$T_TMP/home"
    TD_WRAP=(nsenter -t "$PHONE" -n)
    td_start mdns_ok --no-auth --host 0.0.0.0 --port 37001 --serial SN-OK-1
    td_start mdns_no --no-auth --host 0.0.0.0 --port 37004 --serial SN-NO-2
    td_start mdns_both --no-auth --host 0.0.0.0 --port 37007 --serial SN-BOTH-3
    td_start mdns_emuname --no-auth --host 0.0.0.0 --port 37010 --serial SN-EMUNAME-4
    TD_WRAP=()
    avahi_service ok adb-ALLOWED-111111 _adb._tcp 37001
    avahi_service no adb-DENIED-222222 _adb._tcp 37004
    avahi_service both_tls adb-BOTH-333333 _adb-tls-connect._tcp 37007
    avahi_service both_adb adb-BOTH-333333 _adb._tcp 37007
    avahi_service emuname emulator-5554 _adb._tcp 37010
    avahi_start vphone v4 "${IN_PHONE[@]}"
    t_check "avahi announces the four phones (five services)"
    avahi_wait 5
    t_check "adbc-mcp: mDNS phones listed, chosen only by name, and only when allowlisted"
    devs={
    sep=
    for n in mdns_ok mdns_no mdns_both mdns_emuname; do
        devs+="$sep\"$n\":{\"addr\":\"10.77.0.2:${TD_PORT[$n]}\",\"ctl\":\"${TD_SANDBOX[$n]}/data/local/tmp/.adbc-test\",\"sandbox\":\"${TD_SANDBOX[$n]}\",\"pid\":${TD_PID[$n]}}"
        sep=,
    done
    devs+="}"
    MCP_BIN=$2 T_TMP=$T_TMP MCP_DEVICES=$devs MCP_STEPS='mdns: allowlist' \
        timeout 300 node "$ADBC_SOURCE_DIR/tests/mcp/test.mjs" || t_fail "the mDNS step failed"
    td_stop mdns_ok
    td_stop mdns_no
    td_stop mdns_both
    td_stop mdns_emuname
    echo "ok: $T_CHECKS checks (mDNS part)"
    exit 0
fi
t_init

MCP=${ADBC_MCP:-$ADBC_BUILD_DIR/tools/adbc-mcp}
DIR=$ADBC_SOURCE_DIR/tests/mcp
[ -x "$MCP" ] || t_fail "adbc-mcp not built: $MCP"
command -v node > /dev/null || t_fail "node not found (Debian: apt install nodejs npm)"
command -v npm > /dev/null || t_fail "npm not found (Debian: apt install npm)"

t_check "the pinned SDK is installed (npm ci, once)"
if [ ! -f "$DIR/node_modules/@modelcontextprotocol/sdk/package.json" ]; then
    # Two builds testing at once must not run npm ci over each other.
    (
        flock -w 600 9 || exit 1
        [ -f "$DIR/node_modules/@modelcontextprotocol/sdk/package.json" ] ||
            (cd "$DIR" && timeout 600 npm ci --no-audit --no-fund --loglevel=error)
    ) 9> "$DIR/.npm-ci.lock" >&2 || t_fail "npm ci in $DIR failed"
fi
want=$(sed -n 's/.*"@modelcontextprotocol\/sdk": "\([^"]*\)".*/\1/p' "$DIR/package.json")
have=$(node -p "require(process.argv[1]).version" "$DIR/node_modules/@modelcontextprotocol/sdk/package.json")
[ -n "$want" ] && [ "$want" = "$have" ] || t_fail "SDK $have installed, package.json pins $want: rm -rf $DIR/node_modules"

t_check "test devices: two emulators, two physical devices, one to kill, one logging its connections"
td_start emu --no-auth --prop ro.kernel.qemu=1
td_start emu2 --no-auth --prop ro.boot.qemu=1
td_start phone_ok --no-auth --serial ALLOWED123 --prop ro.kernel.qemu=0
td_start phone_no --no-auth --serial DENIED456
td_start victim --no-auth --prop ro.kernel.qemu=1
td_start crowd --no-auth --prop ro.kernel.qemu=1 -v
devs={
sep=
for n in emu emu2 phone_ok phone_no victim crowd; do
    devs+="$sep\"$n\":{\"addr\":\"127.0.0.1:${TD_PORT[$n]}\",\"ctl\":\"${TD_SANDBOX[$n]}/data/local/tmp/.adbc-test\",\"sandbox\":\"${TD_SANDBOX[$n]}\",\"pid\":${TD_PID[$n]}}"
    sep=,
done
devs+="}"
mkdir -p "$T_TMP/home"

t_check "the SDK-driven test"
MCP_BIN=$MCP T_TMP=$T_TMP MCP_DEVICES=$devs timeout 600 node "$DIR/test.mjs" ||
    t_fail "the SDK-driven test failed (output above)"
for n in emu emu2 phone_ok phone_no; do td_check_log "$n"; done

t_check "no configuration: emulators on their ports, in a private network namespace"
if [ "$(id -u)" = 0 ] && command -v ip > /dev/null && unshare -n true 2> /dev/null; then
    unshare -n bash "${BASH_SOURCE[0]}" --noconfig "$MCP" || t_fail "the no-configuration part failed"
else
    echo "not root (or no iproute2): the no-configuration part needs unshare -n; skipped"
fi

t_check "phones announced by mDNS: avahi-daemon in private network namespaces"
if [ "$(id -u)" = 0 ] && command -v avahi-daemon > /dev/null && command -v nsenter > /dev/null &&
    unshare -n -m true 2> /dev/null; then
    unshare -n -m bash "${BASH_SOURCE[0]}" --mdns "$MCP" || t_fail "the mDNS part failed"
else
    echo "not root (or no avahi-daemon): the mDNS part needs private namespaces; skipped"
fi
echo "ok: $T_CHECKS checks"
