#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Shared helpers for the tests that need a real mDNS responder: Debian's
# avahi-daemon (enable-dbus=no, static service files bind-mounted over
# /etc/avahi/services in a mount namespace of its own). Source it after
# lib.sh and t_init, inside the private network and mount namespace the
# test made itself (`unshare -n -m`): nothing here touches the machine's
# own interfaces or its /etc.
#
# The phone the responder runs in is lib.sh's netns_phone (a second
# namespace joined to this one by a veth pair).
#
#   avahi_service FILE INSTANCE TYPE PORT [TXT-XML]
#   avahi_start IFACE v4|v6only WRAP...   avahi on IFACE, run through WRAP
#                             (nsenter into the phone, or unshare -m here)
#   avahi_wait N              until `adbc-snap -q mdns services` lists N
#                             services (30 s at most)
#
# Sets AVAHI (the daemon's pid).

AVAHI=

avahi_service()
{
    mkdir -p "$T_TMP/services"
    cat > "$T_TMP/services/$1.service" << XML
<?xml version="1.0" standalone='no'?>
<!DOCTYPE service-group SYSTEM "avahi-service.dtd">
<service-group>
  <name>$2</name>
  <service><type>$3</type><port>$4</port>${5:-}</service>
</service-group>
XML
}

avahi_start()
{
    local iface=$1 v4=yes
    [ "$2" = v6only ] && v4=no
    shift 2
    mkdir -p "$T_TMP/services"
    cat > "$T_TMP/avahi.conf" << CONF
[server]
host-name=adbcphone
domain-name=local
use-ipv4=$v4
use-ipv6=yes
allow-interfaces=$iface
enable-dbus=no
[wide-area]
enable-wide-area=no
[publish]
publish-addresses=yes
publish-hinfo=no
publish-workstation=no
CONF
    "$@" sh -c "mount --bind '$T_TMP/services' /etc/avahi/services &&
        mkdir -p /run/avahi-daemon && mount -t tmpfs tmpfs /run/avahi-daemon &&
        exec avahi-daemon -f '$T_TMP/avahi.conf' --no-drop-root --no-chroot --no-rlimits \
            --no-proc-title" > "$T_TMP/avahi.log" 2>&1 &
    AVAHI=$!
    T_BG_PIDS+=("$AVAHI")
}

avahi_log() { printf -- '--- avahi-daemon log ---\n%s\n' "$(tail -n 20 "$T_TMP/avahi.log")" >&2; }

# avahi_wait N: avahi answers SRV and TXT only once it has probed them
# (about 2 s after it starts); until then a browse sees the PTRs alone.
avahi_wait()
{
    local i out=
    for ((i = 0; i < 30; i++)); do
        out=$("$SNAP" -q mdns services 2> /dev/null)
        [ "$(grep -c . <<< "$out")" = $(($1 + 1)) ] && return 0
        kill -0 "$AVAHI" 2> /dev/null || { avahi_log; t_fail "avahi-daemon exited"; }
        sleep 0.25
    done
    avahi_log
    t_fail "avahi's $1 services not listed within 30 s: $out"
}
