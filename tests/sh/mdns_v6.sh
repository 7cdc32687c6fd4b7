#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# mDNS over IPv6 alone: the link between this test's namespace and the
# phone's carries only link-local IPv6 addresses (no IPv4 address anywhere
# on it), and avahi-daemon runs with use-ipv4=no, so every query, answer and
# connection goes over fe80:: with the interface as its scope. adbc must
# discover the services (AAAA, no A), connect by instance name, pair with
# only the code and reach the TLS service, all over IPv6.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib_netns.sh"
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/lib_avahi.sh"
t_need_cmds avahi-daemon ip nsenter
t_init
SNAP=$ADBC_BUILD_DIR/tools/adbc-snap
[ -x "$SNAP" ] || t_fail "adbc-snap not built: $SNAP"

netns_phone v6only
adb_home_make a
export HOME=${ADB_HOME[a]}
TD_WRAP=(nsenter -t "$PHONE" -n)
td_start plain --host :: --port 37001 --prop ro.product.model=Plain_V6
cat "$HOME/.android/adbkey.pub" >> "${TD_KEYS[plain]}"
td_start tls --host :: --port 37002 --tls --pair-port 37003 --pair-code 271828 \
    --prop ro.product.model=Tls_V6
TD_WRAP=()
avahi_service plain adb-V6PLAIN-aaaaaa _adb._tcp 37001
avahi_service tls adb-V6TLS-bbbbbb _adb-tls-connect._tcp 37002
avahi_service pair adb-V6TLS-bbbbbb _adb-tls-pairing._tcp 37003
avahi_start vphone v6only "${IN_PHONE[@]}"

t_check "no IPv4 address on the link: mdns check names the interface for IPv6 only"
ip -4 addr show dev vhost | grep -q inet && t_fail "vhost has an IPv4 address"
out=$("$SNAP" mdns check) || t_fail "mdns check: $out"
[ "$out" = "mdns daemon version [adbc built-in mDNS: vhost (IPv6)]" ] || t_fail "mdns check: $out"

t_check "discovery over IPv6: the three services, each at the scoped link-local address"
avahi_wait 3
out=$("$SNAP" -q mdns services)
expect="List of discovered mdns services
adb-V6TLS-bbbbbb	_adb-tls-connect._tcp	[fe80::b%vhost]:37002
adb-V6TLS-bbbbbb	_adb-tls-pairing._tcp	[fe80::b%vhost]:37003
adb-V6PLAIN-aaaaaa	_adb._tcp	[fe80::b%vhost]:37001"
[ "$out" = "$expect" ] || t_fail "mdns services:
$out"
times=()
for i in 1 2 3 4 5; do
    t0=$(date +%s%N)
    out=$("$SNAP" -q mdns services)
    times+=($((($(date +%s%N) - t0) / 1000000)))
    [ "$out" = "$expect" ] || t_fail "run $i listed: $out"
done
echo "mDNS discovery over IPv6 only: ${times[*]} ms (median $(printf '%s\n' "${times[@]}" | sort -n | sed -n 3p) ms)"
json=$("$SNAP" -q mdns services --json)
case $json in
    *'"instance":"adb-V6PLAIN-aaaaaa","service":"_adb._tcp","host":"adbcphone.local","address":"fe80::b%vhost","port":37001'*) ;;
    *) t_fail "json: $json" ;;
esac

t_check "-s INSTANCE connects over IPv6"
out=$("$SNAP" -s adb-V6PLAIN-aaaaaa shell getprop ro.product.model) || t_fail "shell: $out"
[ "$out" = Plain_V6 ] || t_fail "got '$out'"
out=$("$SNAP" -s adb-V6PLAIN-aaaaaa._adb._tcp info) || t_fail "info: $out"
case $out in *"transport:        tcp:[fe80::b%vhost]:37001"*) ;; *) t_fail "info: $out" ;; esac

t_check "pair CODE with no address, then the TLS service, over IPv6"
out=$("$SNAP" pair 271828 2>&1) || t_fail "pair: $out"
case $out in *"Successfully paired to [fe80::b%vhost]:37003 [guid="*) ;; *) t_fail "pair said: $out" ;; esac
out=$("$SNAP" -s adb-V6TLS-bbbbbb._adb-tls-connect._tcp info) || t_fail "info: $out"
case $out in *"transport:        tls:tcp:[fe80::b%vhost]:37002"*) ;; *) t_fail "info: $out" ;; esac
out=$("$SNAP" -s adb-V6TLS-bbbbbb shell getprop ro.product.model) || t_fail "shell: $out"
[ "$out" = Tls_V6 ] || t_fail "got '$out'"

td_stop plain
td_stop tls
echo "ok: $T_CHECKS checks"
