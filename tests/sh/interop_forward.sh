#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Forwarding interop with Debian's real adb against the test device:
# `adb forward` to tcp:, localabstract: and localfilesystem: destinations served on the device
# side, and `adb reverse` (reverse:forward, list-forward, killforward,
# killforward-all, norebind, tcp:0) with curl run inside the device's
# sandbox reaching an HTTP server on the host through the reverse rule.
# The HTTP servers are python3's http.server (fixtures/forward/http_server.py).
# The test device's sandbox shares the host's network namespace, so a
# "device-side" server is one on 127.0.0.1 or an abstract socket here.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

for bin in "$ADB_BIN" curl python3; do
    if ! command -v "$bin" > /dev/null; then
        echo "SKIP: $bin is not installed"
        exit 77
    fi
done
t_init
SRV=$ADBC_SOURCE_DIR/fixtures/forward/http_server.py

# http_start NAME DIR SPEC [--devtools]: start a server; HTTP_WHERE[NAME] is
# what it printed after "listening on " (the port for tcp:0).
declare -A HTTP_WHERE
http_start()
{
    local name=$1 dir=$2 spec=$3 i
    shift 3
    python3 "$SRV" "$dir" "$spec" "$@" > "$T_TMP/http-$name.out" 2> "$T_TMP/http-$name.err" &
    T_BG_PIDS+=("$!")
    for ((i = 0; i < 100; i++)); do
        if grep -q '^listening on ' "$T_TMP/http-$name.out" 2> /dev/null; then
            HTTP_WHERE[$name]=$(sed -n 's/^listening on //p' "$T_TMP/http-$name.out")
            return 0
        fi
        sleep 0.05
    done
    t_fail "HTTP server $name did not start: $(cat "$T_TMP/http-$name.err")"
}

mkdir -p "$T_TMP/devroot" "$T_TMP/hostroot"
echo "served by the device" > "$T_TMP/devroot/hello.txt"
echo "served by the host" > "$T_TMP/hostroot/hello.txt"
head -c 3000000 /dev/urandom > "$T_TMP/devroot/big.bin"
head -c 3000000 /dev/urandom > "$T_TMP/hostroot/big.bin"

adb_server_start a
td_start dev --authorized-keys-from a
DEV=127.0.0.1:${TD_PORT[dev]}
A() { adb_run a -s "$DEV" "$@"; }
adb_run a connect "$DEV" > /dev/null 2>&1 || t_fail "adb connect failed"
adb_wait_state a "$DEV" device 10 || t_fail "$DEV not online: $(adb_run a devices)"

http_start devtcp "$T_TMP/devroot" tcp:0
DEVPORT=${HTTP_WHERE[devtcp]}
ABS=adbc_fwd_test_$$
http_start devabs "$T_TMP/devroot" "localabstract:$ABS"

t_check "adb forward tcp:0 tcp:PORT prints the chosen port; curl through it gets the device's file"
LPORT=$(A forward tcp:0 "tcp:$DEVPORT") || t_fail "adb forward failed"
case $LPORT in '' | *[!0-9]*) t_fail "adb forward printed '$LPORT'" ;; esac
out=$(curl -sS --max-time 10 "http://127.0.0.1:$LPORT/hello.txt") || t_fail "curl failed"
[ "$out" = "served by the device" ] || t_fail "curl got '$out'"

t_check "3 MB through adb forward arrive intact"
curl -sS --max-time 30 -o "$T_TMP/got.bin" "http://127.0.0.1:$LPORT/big.bin" || t_fail "curl failed"
cmp -s "$T_TMP/got.bin" "$T_TMP/devroot/big.bin" || t_fail "big.bin differs"

t_check "adb forward to localabstract: reaches the abstract socket"
LPORT2=$(A forward tcp:0 "localabstract:$ABS") || t_fail "adb forward failed"
out=$(curl -sS --max-time 10 "http://127.0.0.1:$LPORT2/hello.txt") || t_fail "curl failed"
[ "$out" = "served by the device" ] || t_fail "curl got '$out'"

t_check "adb forward to localfilesystem: reaches a socket file in the device's filesystem"
mkdir -p "${TD_SANDBOX[dev]}/data/local/tmp"
http_start devfs "$T_TMP/devroot" "localfilesystem:${TD_SANDBOX[dev]}/data/local/tmp/web.sock"
LPORT4=$(A forward tcp:0 localfilesystem:/data/local/tmp/web.sock) || t_fail "adb forward failed"
out=$(curl -sS --max-time 10 "http://127.0.0.1:$LPORT4/hello.txt") || t_fail "curl failed"
[ "$out" = "served by the device" ] || t_fail "curl got '$out'"
curl -sS --max-time 30 -o "$T_TMP/got4.bin" "http://127.0.0.1:$LPORT4/big.bin" || t_fail "curl failed"
cmp -s "$T_TMP/got4.bin" "$T_TMP/devroot/big.bin" || t_fail "big.bin differs (localfilesystem:)"

t_check "adb forward to a device port nobody listens on: the connection closes, no data"
DEAD=$(_t_free_port)
LPORT3=$(A forward tcp:0 "tcp:$DEAD") || t_fail "adb forward failed"
if out=$(curl -sS --max-time 10 "http://127.0.0.1:$LPORT3/" 2>&1); then
    t_fail "curl succeeded through a refused forward: '$out'"
fi
case $out in *"Empty reply"* | *"reset"* | *"closed"* | *"Recv failure"*) ;;
    *) t_fail "curl said: $out" ;; esac

http_start hosttcp "$T_TMP/hostroot" tcp:0
HOSTPORT=${HTTP_WHERE[hosttcp]}
RPORT=$(_t_free_port)

t_check "adb reverse tcp:R tcp:H; curl inside the device's sandbox reaches the host's server"
out=$(A reverse "tcp:$RPORT" "tcp:$HOSTPORT" 2>&1) || t_fail "adb reverse failed: $out"
out=$(A shell "curl -sS --max-time 10 http://127.0.0.1:$RPORT/hello.txt") ||
    t_fail "device-side curl failed: $out"
[ "$out" = "served by the host" ] || t_fail "device-side curl got '$out'"

t_check "3 MB from the host to the device side through adb reverse arrive intact"
A shell "curl -sS --max-time 30 http://127.0.0.1:$RPORT/big.bin" > "$T_TMP/rgot.bin" ||
    t_fail "device-side curl failed"
cmp -s "$T_TMP/rgot.bin" "$T_TMP/hostroot/big.bin" || t_fail "reverse big.bin differs"

t_check "adb reverse --list shows the rule (from reverse:list-forward)"
out=$(A reverse --list) || t_fail "reverse --list failed"
case $out in *" tcp:$RPORT tcp:$HOSTPORT"*) ;; *) t_fail "reverse --list: '$out'" ;; esac

t_check "adb reverse tcp:0 prints the port the device picked, and it works"
RPORT0=$(A reverse tcp:0 "tcp:$HOSTPORT") || t_fail "adb reverse tcp:0 failed"
case $RPORT0 in '' | *[!0-9]*) t_fail "adb reverse tcp:0 printed '$RPORT0'" ;; esac
out=$(A shell "curl -sS --max-time 10 http://127.0.0.1:$RPORT0/hello.txt")
[ "$out" = "served by the host" ] || t_fail "device-side curl via tcp:$RPORT0 got '$out'"
out=$(A reverse --list)
case $out in *" tcp:$RPORT0 tcp:$HOSTPORT"*) ;; *) t_fail "list lacks tcp:$RPORT0: '$out'" ;; esac

t_check "adb reverse --no-rebind on an existing rule fails with adbd's message"
if out=$(A reverse --no-rebind "tcp:$RPORT" "tcp:$HOSTPORT" 2>&1); then
    t_fail "--no-rebind succeeded: $out"
fi
case $out in *"cannot rebind existing socket"*) ;; *) t_fail "adb said: $out" ;; esac

t_check "adb reverse --remove removes one rule; removing it again fails 'listener ... not found'"
A reverse --remove "tcp:$RPORT" > /dev/null 2>&1 || t_fail "--remove failed"
out=$(A reverse --list)
case $out in *"tcp:$RPORT "*) t_fail "rule still listed: '$out'" ;; esac
if out=$(A reverse --remove "tcp:$RPORT" 2>&1); then t_fail "second --remove succeeded"; fi
case $out in *"listener 'tcp:$RPORT' not found"*) ;; *) t_fail "adb said: $out" ;; esac
out=$(A shell "curl -sS --max-time 5 http://127.0.0.1:$RPORT/hello.txt 2>&1")
case $out in *"served by the host"*) t_fail "removed rule still answers" ;; esac

t_check "adb reverse to a host port nobody listens on: the device-side connection closes"
A reverse "tcp:$RPORT" "tcp:$DEAD" > /dev/null 2>&1 || t_fail "adb reverse failed"
out=$(A shell "curl -sS --max-time 10 http://127.0.0.1:$RPORT/ 2>&1; echo rc=\$?")
case $out in *"rc=0"*) t_fail "device-side curl succeeded: $out" ;; esac
case $out in *"Empty reply"* | *"reset"* | *"rc=52"* | *"rc=56"*) ;; *) t_fail "curl: $out" ;; esac

t_check "adb reverse --remove-all empties the list"
A reverse --remove-all > /dev/null 2>&1 || t_fail "--remove-all failed"
out=$(A reverse --list)
[ -z "$out" ] || t_fail "list after --remove-all: '$out'"

td_check_log dev
echo "PASS: $T_CHECKS checks"
