#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# mDNS against a real responder: Debian's avahi-daemon (enable-dbus=no,
# static service files bind-mounted over /etc/avahi/services) runs in a
# second network and mount namespace joined to this test's namespace by a
# veth pair, announcing test devices as _adb._tcp, _adb-tls-connect._tcp
# (the test device in TLS mode) and _adb-tls-pairing._tcp. adbc's queries
# cross a real multicast link: list, connect by instance name, pair with
# only the code. Then a hostile responder (truncated records, pointer loops,
# 10,000 answers, wrong lengths) takes avahi's place.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib_netns.sh"
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
t_need_cmds avahi-daemon ip nsenter python3 "$ADB_BIN"
t_init
SNAP=$ADBC_BUILD_DIR/tools/adbc-snap
[ -x "$SNAP" ] || t_fail "adbc-snap not built: $SNAP"
ms() { echo $(($(date +%s%N) / 1000000)); }

# ---- the two namespaces and the link between them ----
. "$(dirname "${BASH_SOURCE[0]}")/lib_avahi.sh"
netns_phone

# adbc-snap's key: the user key in a private HOME, trusted by the plain device.
adb_home_make a
export HOME=${ADB_HOME[a]}

TD_WRAP=(nsenter -t "$PHONE" -n)
td_start plain --host 0.0.0.0 --port 37001 --prop ro.product.model=Plain_Phone
cat "$HOME/.android/adbkey.pub" >> "${TD_KEYS[plain]}"
td_start tls --host 0.0.0.0 --port 37002 --tls --pair-port 37003 --pair-code 482913 \
    --prop ro.product.model=Tls_Phone
TD_WRAP=()

# ---- avahi-daemon in the phone's namespace ----
avahi_service plain adb-PLAIN0001-aBcDeF _adb._tcp 37001
avahi_service tls adb-TLS0002-xYz123 _adb-tls-connect._tcp 37002 '<txt-record>v=ADB_SECURE_SERVICE_VERSION</txt-record>'
avahi_service pair adb-TLS0002-xYz123 _adb-tls-pairing._tcp 37003
avahi_start vphone v4 "${IN_PHONE[@]}"

t_check "mdns check names this namespace's multicast interface, IPv4 and IPv6"
out=$("$SNAP" mdns check) || t_fail "mdns check: $out"
[ "$out" = "mdns daemon version [adbc built-in mDNS: vhost (IPv4, IPv6)]" ] || t_fail "mdns check: $out"

t_check "mdns services lists the three services avahi announces, in adb's format"
expect="List of discovered mdns services
adb-PLAIN0001-aBcDeF	_adb._tcp	10.77.0.2:37001
adb-TLS0002-xYz123	_adb-tls-connect._tcp	10.77.0.2:37002
adb-TLS0002-xYz123	_adb-tls-pairing._tcp	10.77.0.2:37003"
# The header, then the lines sorted (head must not read the here-string:
# it would swallow the lines after the first).
sorted() { sed -n 1p <<< "$1"; sed 1d <<< "$1" | sort; }
for ((i = 0; i < 400; i++)); do
    out=$("$SNAP" -q mdns services 2> /dev/null)
    [ "$(sorted "$out")" = "$(sorted "$expect")" ] && break
    kill -0 $AVAHI 2> /dev/null || { avahi_log; t_fail "avahi-daemon exited"; }
    sleep 0.25
done
[ "$(sorted "$out")" = "$(sorted "$expect")" ] || { avahi_log; t_fail "mdns services:
$out"; }

# The times are printed for a person to read; the bounds below only keep a
# hang from passing (a busy machine may slow anything many times over).
t_check "discovery lists the services every time once avahi is announcing (times of 5 printed)"
times=()
for i in 1 2 3 4 5; do
    t0=$(ms)
    out=$("$SNAP" -q mdns services)
    t1=$(ms)
    [ "$(sorted "$out")" = "$(sorted "$expect")" ] || t_fail "run $i listed: $out"
    times+=($((t1 - t0)))
done
median=$(printf '%s\n' "${times[@]}" | sort -n | sed -n 3p)
echo "mDNS discovery against avahi: ${times[*]} ms (median $median ms)"
[ "$median" -lt 60000 ] || t_fail "median discovery $median ms"

t_check "mdns services --json carries the host, TXT and interface"
json=$("$SNAP" -q mdns services --json)
for want in '"instance":"adb-TLS0002-xYz123","service":"_adb-tls-connect._tcp","host":"adbcphone.local","address":"10.77.0.2","port":37002,"connect":"10.77.0.2:37002","interface":"vhost","txt":"v=ADB_SECURE_SERVICE_VERSION","local":false' \
    '"instance":"adb-PLAIN0001-aBcDeF","service":"_adb._tcp"'; do
    case $json in *"$want"*) ;; *) t_fail "no $want in $json" ;; esac
done

t_check "-s INSTANCE and -s INSTANCE._adb._tcp reach the plain device"
out=$("$SNAP" -s adb-PLAIN0001-aBcDeF shell getprop ro.product.model) || t_fail "-s instance: $out"
[ "$out" = Plain_Phone ] || t_fail "-s adb-PLAIN0001-aBcDeF got '$out'"
out=$("$SNAP" -s adb-PLAIN0001-aBcDeF._adb._tcp get-serialno) || t_fail "get-serialno: $out"
[ "$out" = adb-PLAIN0001-aBcDeF._adb._tcp ] || t_fail "get-serialno said '$out'"
out=$(ANDROID_SERIAL=adb-PLAIN0001-aBcDeF._adb._tcp "$SNAP" info) || t_fail "info: $out"
case $out in *"transport:        tcp:10.77.0.2:37001"*) ;; *) t_fail "info: $out" ;; esac

t_check "the TLS service before pairing: refused, saying to pair"
"$SNAP" --timeout 5 -s adb-TLS0002-xYz123._adb-tls-connect._tcp info > /dev/null 2> "$T_TMP/np.err" &&
    t_fail "an unpaired key got in"
grep -qi "pair" "$T_TMP/np.err" || t_fail "message: $(cat "$T_TMP/np.err")"

t_check "pair CODE with no address pairs with the only announced pairing service"
out=$("$SNAP" pair 482913) || t_fail "pair: $out"
case $out in "Successfully paired to 10.77.0.2:37003 [guid="*) ;; *) t_fail "pair said: $out" ;; esac

t_check "-s INSTANCE reaches the TLS device after pairing, over TLS"
out=$("$SNAP" -s adb-TLS0002-xYz123 info) || t_fail "info: $out"
case $out in *"transport:        tls:tcp:10.77.0.2:37002"*) ;; *) t_fail "info: $out" ;; esac
out=$("$SNAP" -s adb-TLS0002-xYz123._adb-tls-connect._tcp shell getprop ro.product.model) ||
    t_fail "shell: $out"
[ "$out" = Tls_Phone ] || t_fail "got '$out'"

t_check "a host-only query does not cross the link: avahi next door never hears it"
out=$("$SNAP" -q mdns services --host-only --wait 600)
[ "$out" = "List of discovered mdns services" ] || t_fail "--host-only listed: $out"

t_check "nothing named: a phone on the network is never the only device (host-only query)"
t0=$(ms)
"$SNAP" info > /dev/null 2> "$T_TMP/none.err" && t_fail "a phone on the network became the default"
t1=$(ms)
grep -q "no device found" "$T_TMP/none.err" || t_fail "message: $(cat "$T_TMP/none.err")"
[ $((t1 - t0)) -lt 60000 ] || t_fail "no device found took $((t1 - t0)) ms"

t_check "an instance nobody announces: not found within the bound, naming what was found"
t0=$(ms)
"$SNAP" -s adb-NOPE-000000._adb-tls-connect._tcp info 2> "$T_TMP/nope.err" && t_fail "found NOPE"
t1=$(ms)
grep -q 'no mDNS service "adb-NOPE-000000._adb-tls-connect._tcp"' "$T_TMP/nope.err" ||
    t_fail "message: $(cat "$T_TMP/nope.err")"
[ $((t1 - t0)) -lt 60000 ] || t_fail "took $((t1 - t0)) ms"

_t_stop_pid $AVAHI 5
td_stop plain
td_stop tls

t_check "pair CODE with no pairing service announced: a clear error"
"$SNAP" pair 482913 > /dev/null 2> "$T_TMP/nopair.err" && t_fail "pair with nothing announced"
grep -q "no pairing service" "$T_TMP/nopair.err" || t_fail "message: $(cat "$T_TMP/nopair.err")"

# ---- a hostile responder in avahi's place ----
"${IN_PHONE[@]}" python3 "$ADBC_SOURCE_DIR/tests/sh/mdns_hostile.py" 10.77.0.2 10.77.0.2 37001 \
    > "$T_TMP/hostile.out" 2>&1 &
T_BG_PIDS+=($!)
for ((i = 0; i < 100; i++)); do grep -q ready "$T_TMP/hostile.out" && break; sleep 0.05; done
grep -q ready "$T_TMP/hostile.out" || t_fail "hostile responder: $(cat "$T_TMP/hostile.out")"

t_check "hostile answers (loops, bad lengths, 10,000 records): bounded time and count, the valid one kept"
t0=$(ms)
json=$("$SNAP" -q mdns services --json --wait 1500) || t_fail "mdns services failed"
t1=$(ms)
[ $((t1 - t0)) -lt 60000 ] || t_fail "browse took $((t1 - t0)) ms"
case $json in
    *'"instance":"adb-GOOD-1","service":"_adb._tcp","host":"good-host.local","address":"10.77.0.2","port":37001'*) ;;
    *) t_fail "the valid service is missing: ${json:0:600}" ;;
esac
n=$(grep -o '"instance"' <<< "$json" | wc -l)
[ "$n" -le 256 ] && [ "$n" -ge 2 ] || t_fail "$n services kept (bound 256)"
grep -q 'adb-CLAIM\|xxxxx\|yyyy' <<< "$json" && t_fail "records from a malformed message were kept"
for inst in adb-LOOP-1 adb-ZERO-1 adb-LOOP6-1 adb-ZERO6-1; do
    grep -Eq "\"instance\":\"$inst\",[^}]*\"address\":\"\"" <<< "$json" ||
        t_fail "$inst: a loopback or unspecified address from the network was taken: ${json:0:2000}"
done
text=$("$SNAP" -q mdns services --wait 1500)
# The header, GOOD, and the hostile name on one escaped row; the loopback
# and unspecified ones are not resolved, so not listed.
[ "$(grep -c . <<< "$text")" = 3 ] || t_fail "only the resolved services may be listed: ${text:0:600}"
grep -q "^adb-?]0;pwned??forged?row?	_adb._tcp	10.77.0.2:37001\$" <<< "$text" ||
    t_fail "the hostile instance name is not escaped: $(od -c <<< "$text" | head -20)"
LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' <<< "$text" && t_fail "control characters printed"
iconv -f UTF-8 -t UTF-8 <<< "$text" > /dev/null || t_fail "mdns services printed bytes that are not UTF-8"
# An adbd on this machine's loopback (a local emulator's, say) at the port
# the hostile answers name: -s must not reach it through them.
td_start loopdev --host 127.0.0.1 --port 5555 --no-auth --prop ro.product.model=Loopback_Device
for inst in adb-LOOP-1 adb-ZERO-1; do
    out=$(timeout 20 "$SNAP" -s "$inst._adb._tcp" --timeout 3 info 2>&1) &&
        t_fail "-s $inst (announced at a loopback/unspecified address) connected: $out"
    case $out in *Loopback_Device*) t_fail "-s $inst reached the local device: $out" ;; esac
done
echo "hostile: $n services kept, browse $((t1 - t0)) ms"

echo "ok: $T_CHECKS checks"
