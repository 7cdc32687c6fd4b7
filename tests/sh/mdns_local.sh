#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The Termux shape, as close as a machine without a phone can come: the
# wireless-debugging service runs in this very namespace, and its responder
# (avahi-daemon, in a mount namespace of its own but the same network
# namespace) announces it at an address of this namespace's own interface
# (10.77.0.1 on vhost, as a phone announces its Wi-Fi address). The test
# device listens on 127.0.0.1 only, so the announced address itself cannot be
# used: adbc must see that the answer is its own address (`local`), and reach
# the service over 127.0.0.1: pair with only the code, then, with nothing
# named (no USB device, no emulator), use it as the only device (found by a
# host-only query) for a snapshot; by instance name too.
#
# What this does not prove: that a phone's own mDNS responder (Android's
# mdnsd / adbd) hears queries looped back on its Wi-Fi interface and answers
# them as avahi does here, and that Android lets an app's process send and
# receive multicast on that interface. Only a phone can show that.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib_netns.sh"
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/lib_avahi.sh"
t_need_cmds avahi-daemon ip nsenter
t_init
SNAP=$ADBC_BUILD_DIR/tools/adbc-snap
[ -x "$SNAP" ] || t_fail "adbc-snap not built: $SNAP"
export XDG_CACHE_HOME=$T_TMP/cache

# The link needs a peer to be up; nothing listens there.
netns_phone
adb_home_make a
export HOME=${ADB_HOME[a]}
td_start phone --host 127.0.0.1 --port 37002 --tls --pair-port 37003 --pair-code 314159 \
    --prop ro.product.model=Self_Phone
avahi_service tls adb-SELF0001-cCdDeE _adb-tls-connect._tcp 37002 '<txt-record>v=ADB_SECURE_SERVICE_VERSION</txt-record>'
avahi_service pair adb-SELF0001-cCdDeE _adb-tls-pairing._tcp 37003
avahi_start vhost v4 unshare -m

t_check "the phone's own services are found and marked local, connect address 127.0.0.1"
avahi_wait 2
json=$("$SNAP" -q mdns services --json)
for want in '"instance":"adb-SELF0001-cCdDeE","service":"_adb-tls-connect._tcp","host":"adbcphone.local","address":"10.77.0.1","port":37002,"connect":"127.0.0.1:37002","interface":"vhost"' \
    '"instance":"adb-SELF0001-cCdDeE","service":"_adb-tls-pairing._tcp","host":"adbcphone.local","address":"10.77.0.1","port":37003,"connect":"127.0.0.1:37003"'; do
    case $json in *"$want"*'"local":true'*) ;; *) t_fail "no $want (local) in $json" ;; esac
done
grep -q '"local":false' <<< "$json" && t_fail "a service not marked local: $json"

t_check "a host-only query (unicast to this machine's own addresses) reaches its responder"
out=$("$SNAP" -q mdns services --host-only)
expect="List of discovered mdns services
adb-SELF0001-cCdDeE	_adb-tls-connect._tcp	10.77.0.1:37002
adb-SELF0001-cCdDeE	_adb-tls-pairing._tcp	10.77.0.1:37003"
[ "$out" = "$expect" ] || t_fail "--host-only listed: $out"

t_check "the announced address itself is closed (the service listens on 127.0.0.1 only)"
"$SNAP" --timeout 3 -t 10.77.0.1:37002 info > /dev/null 2> "$T_TMP/closed.err" &&
    t_fail "10.77.0.1:37002 answered"
grep -qi "refused" "$T_TMP/closed.err" || t_fail "not refused: $(cat "$T_TMP/closed.err")"

t_check "pair CODE with no address: the own pairing service, over 127.0.0.1"
out=$("$SNAP" pair 314159 2>&1) || t_fail "pair: $out"
case $out in
    *"pairing with adb-SELF0001-cCdDeE (127.0.0.1:37003, announced by mDNS)"*"Successfully paired to 127.0.0.1:37003 [guid="*) ;;
    *) t_fail "pair said: $out" ;;
esac

t_check "no serial at all: the only device is this machine's own service (no USB, no emulator)"
out=$("$SNAP" get-serialno) || t_fail "get-serialno: $out"
[ "$out" = adb-SELF0001-cCdDeE._adb-tls-connect._tcp ] || t_fail "get-serialno said '$out'"
out=$("$SNAP" info) || t_fail "info: $out"
case $out in *"transport:        tls:tcp:127.0.0.1:37002"*) ;; *) t_fail "info: $out" ;; esac

t_check "adbc-snap snapshot, nothing named, after the one-time pairing"
fx=$ADBC_SOURCE_DIR/fixtures/snapshot/009-settings-small
ctl=${TD_SANDBOX[phone]}/data/local/tmp/.adbc-test
mkdir -p "$ctl"
cp "$fx.xml" "$ctl/screen.xml"
echo "dump=screen.xml" > "$ctl/uiautomator.conf"
"$SNAP" snapshot > "$T_TMP/snap.txt" 2> "$T_TMP/snap.err" || t_fail "snapshot: $(cat "$T_TMP/snap.err")"
cmp -s <(cat "$fx.txt"; echo) "$T_TMP/snap.txt" ||
    t_fail "snapshot differs from $fx.txt: $(head -c 400 "$T_TMP/snap.txt")"

t_check "ANDROID_SERIAL=INSTANCE names it too"
out=$(ANDROID_SERIAL=adb-SELF0001-cCdDeE "$SNAP" shell getprop ro.product.model) || t_fail "shell: $out"
[ "$out" = Self_Phone ] || t_fail "got '$out'"

t_check "-s INSTANCE._adb-tls-connect._tcp: a shell command"
out=$("$SNAP" -s adb-SELF0001-cCdDeE._adb-tls-connect._tcp shell getprop ro.product.model) ||
    t_fail "shell: $out"
[ "$out" = Self_Phone ] || t_fail "got '$out'"

td_stop phone
echo "ok: $T_CHECKS checks"
