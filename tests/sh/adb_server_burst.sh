#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# adbc's adb server and ADB_BURST_MODE, which adb's server reads: set and
# not 1, adbc-serve --adb-server connects its devices without delayed_ack
# (as adb's server does unless ADB_BURST_MODE=1), and says so in
# host:server-status; unset or 1, with it (adbc's default). The test device
# logs whether each connection came online with delayed_ack; a push and a
# pull through the server by Debian's adb (29) arrive whole either way.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/lib_pb.sh"
t_need_adb
SERVE=${ADBC_SERVE:-$ADBC_BUILD_DIR/tools/adbc-serve}
t_need_built SERVE "adbc-serve needs cJSON and libmicrohttpd"
t_init
SNAP=$ADBC_BUILD_DIR/tools/adbc-snap
export HOME=$T_TMP/home
mkdir -p "$HOME/.android" "$T_TMP/bhome"
"$SNAP" keygen "$HOME/.android/adbkey" > /dev/null 2>&1 || t_fail "adbc-snap keygen"
ADB_HOME["snap"]=$HOME # the device trusts adbc's key
td_start dev --authorized-keys-from snap --verbose
DEV=127.0.0.1:${TD_PORT[dev]}
DLOG=${TD_DIR[dev]}/stderr
head -c $((8 * 1048576)) /dev/urandom > "$T_TMP/big"
# B PORT ARGS...: Debian's adb client of adbc's server on PORT.
B() { local p=$1; shift; HOME=$T_TMP/bhome timeout 60 adb -P "$p" -s "$DEV" "$@"; }
# onlines: how many connections came online with (delayed_ack) and without.
onlines() { echo "$(grep -c ': online (delayed_ack)$' "$DLOG") $(grep -c ': online$' "$DLOG")"; }
# run_with VALUE|unset WANT: a server with ADB_BURST_MODE=VALUE (or unset)
# connects the device with delayed_ack (WANT=1) or without (0), says so,
# and relays a push and a pull whole.
run_with()
{
    local val=$1 want=$2 before after p
    before=$(onlines)
    p=$(_t_free_port) || t_fail "no free port"
    if [ "$val" = unset ]; then # lib.sh unsets it
        adbsrv_start "$T_TMP/serve-$val.log" "$p" --until "connected to" -t "$DEV"
    else
        ADB_BURST_MODE=$val adbsrv_start "$T_TMP/serve-$val.log" "$p" --until "connected to" -t "$DEV"
    fi
    # The device logs its side's online as the server connects: looked at
    # until a new connection shows (bounded), then which kind it was.
    local i wa na wb nb
    read -r wa na <<< "$before"
    for ((i = 0; i < 100; i++)); do
        after=$(onlines)
        read -r wb nb <<< "$after"
        [ $((wb + nb)) -gt $((wa + na)) ] && break
        sleep 0.1
    done
    if [ "$want" = 1 ]; then
        [ "$wb" -gt "$wa" ] && [ "$nb" = "$na" ] ||
            t_fail "ADB_BURST_MODE=$val: the device saw '$before' then '$after' (with, without)"
    else
        [ "$wb" = "$wa" ] && [ "$nb" -gt "$na" ] ||
            t_fail "ADB_BURST_MODE=$val: the device saw '$before' then '$after' (with, without)"
    fi
    [ "$(status_field "$p" 11)" = "$want" ] || t_fail "ADB_BURST_MODE=$val: server-status burst_mode"
    B "$p" push "$T_TMP/big" /data/local/tmp/big > /dev/null 2>&1 || t_fail "push through $val"
    B "$p" pull /data/local/tmp/big "$T_TMP/back" > /dev/null 2>&1 || t_fail "pull through $val"
    cmp -s "$T_TMP/big" "$T_TMP/back" || t_fail "ADB_BURST_MODE=$val: the pulled file differs"
    rm -f "$T_TMP/back"
    B "$p" kill-server > /dev/null 2>&1
}

t_check "ADB_BURST_MODE=0: the device is connected without delayed_ack, as by adb's server"
run_with 0 0
t_check "ADB_BURST_MODE=2 (set, not 1): without delayed_ack, as adb reads it"
run_with 2 0
t_check "ADB_BURST_MODE=1: with delayed_ack"
run_with 1 1
t_check "ADB_BURST_MODE unset: with delayed_ack (adbc's default)"
run_with unset 1
echo "ok: $T_CHECKS checks"
