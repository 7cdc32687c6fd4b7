#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# One list of forwards with adbc's adb server running (`adbc-snap
# start-server`): a forward Debian's adb (29) makes through the server is
# listed by a later `adbc-snap forward --list` exactly as `adb forward
# --list` lists it, and removed by `adbc-snap forward --remove`; a forward
# `adbc-snap forward` makes is held by the server (the command returns, the
# forward relays after it), listed by adb and removed by adb; --no-rebind
# and --remove-all agree.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
t_need_adb
t_need_built SERVE "adbc-serve needs cJSON and libmicrohttpd"
for bin in curl python3; do
    command -v "$bin" > /dev/null || { echo "SKIP: $bin is not installed"; exit 77; }
done
t_init
interop_start
export XDG_RUNTIME_DIR=$T_TMP/run
mkdir -p -m 700 "$XDG_RUNTIME_DIR"
PIDF=$XDG_RUNTIME_DIR/adbc/session-adb-server.pid
stop_started() { [ -s "$PIDF" ] && kill "$(cat "$PIDF")" 2> /dev/null; return 0; }
t_at_exit stop_started

mkdir -p "$T_TMP/www"
printf 'held\n' > "$T_TMP/www/one.txt"
python3 "$ADBC_SOURCE_DIR/fixtures/forward/http_server.py" "$T_TMP/www" tcp:0 \
    > "$T_TMP/http.out" 2> "$T_TMP/http.err" &
T_BG_PIDS+=("$!")
for ((i = 0; i < 200; i++)); do [ -s "$T_TMP/http.out" ] && break; sleep 0.05; done
HP=$(sed -n 's/^listening on //p' "$T_TMP/http.out")
[ -n "$HP" ] || t_fail "http server did not start: $(cat "$T_TMP/http.err")"

P=$(_t_free_port) || t_fail "no free port"
export ANDROID_ADB_SERVER_PORT=$P
# B ARGS...: Debian's adb client of adbc's server (a HOME whose key the
# device does not know: a server of its own would not get in).
mkdir -p "$T_TMP/bhome"
B() { HOME=$T_TMP/bhome timeout 30 adb "$@"; }
S() { timeout 60 "$SNAP" "$@"; }
timeout 60 "$SNAP" -t "$DEV" start-server 2> "$T_TMP/s.err" || t_fail "start-server: $(cat "$T_TMP/s.err")"
for ((i = 0; i < 100; i++)); do
    B devices | grep -q "^${DEV}[[:space:]]device$" && break
    sleep 0.1
done
B devices | grep -q "^${DEV}[[:space:]]device$" || t_fail "adb devices through it: $(B devices 2>&1)"
get() { curl -s --max-time 20 "http://127.0.0.1:$1/one.txt"; }

# lists_agree WHAT: adb's and adbc-snap's --list are the same text; it is
# left in $T_TMP/list.
lists_agree()
{
    B forward --list > "$T_TMP/la" 2>&1 || t_fail "adb forward --list: $(cat "$T_TMP/la")"
    S forward --list > "$T_TMP/lb" 2> "$T_TMP/lb.err" || t_fail "adbc-snap forward --list: $(cat "$T_TMP/lb.err")"
    cmp -s "$T_TMP/la" "$T_TMP/lb" || t_fail "$1: adb lists '$(cat "$T_TMP/la")', adbc-snap '$(cat "$T_TMP/lb")'"
    cp "$T_TMP/la" "$T_TMP/list"
}

t_check "a forward adb made through adbc's server: a later adbc-snap lists it as adb does"
pa=$(B -s "$DEV" forward tcp:0 "tcp:$HP") || t_fail "adb forward tcp:0"
[ "$(get "$pa")" = held ] || t_fail "adb's forward does not relay"
lists_agree "adb's forward"
grep -qx "$DEV tcp:$pa tcp:$HP" "$T_TMP/list" || t_fail "not listed: $(cat "$T_TMP/list")"

t_check "adbc-snap forward: held by the server (the command returns, the forward relays), listed by adb"
pb=$(S -s "$DEV" forward tcp:0 "tcp:$HP") || t_fail "adbc-snap forward tcp:0"
case $pb in '' | *[!0-9]*) t_fail "adbc-snap printed '$pb', not a port" ;; esac
[ "$(get "$pb")" = held ] || t_fail "adbc-snap's forward does not relay after the command"
lists_agree "both forwards"
grep -qx "$DEV tcp:$pb tcp:$HP" "$T_TMP/list" || t_fail "not listed: $(cat "$T_TMP/list")"
[ "$(grep -c . "$T_TMP/list")" = 2 ] || t_fail "listed: $(cat "$T_TMP/list")"

t_check "--no-rebind on a held local: refused by both, as adb's server refuses it"
B -s "$DEV" forward --no-rebind "tcp:$pb" tcp:1 > /dev/null 2> "$T_TMP/nr.a"
ra=$?
S -s "$DEV" forward --no-rebind "tcp:$pa" tcp:1 > /dev/null 2> "$T_TMP/nr.b"
rb=$?
[ $ra = 1 ] && [ $rb = 1 ] || t_fail "adb exit $ra, adbc-snap exit $rb"
grep -q "cannot rebind existing socket" "$T_TMP/nr.a" && grep -q "cannot rebind existing socket" "$T_TMP/nr.b" ||
    t_fail "adb: $(cat "$T_TMP/nr.a"); adbc-snap: $(cat "$T_TMP/nr.b")"

t_check "each removes the other's forward"
S -s "$DEV" forward --remove "tcp:$pa" || t_fail "adbc-snap forward --remove adb's"
B -s "$DEV" forward --remove "tcp:$pb" || t_fail "adb forward --remove adbc-snap's"
lists_agree "after the removals"
[ "$(cat "$T_TMP/list")" = "" ] || t_fail "still listed: $(cat "$T_TMP/list")"
S -s "$DEV" forward --remove "tcp:$pa" 2> "$T_TMP/rm.err" && t_fail "a second --remove succeeded"
grep -q "not found" "$T_TMP/rm.err" || t_fail "adbc-snap said: $(cat "$T_TMP/rm.err")"

t_check "--remove-all from adbc-snap ends adb's forwards too"
B -s "$DEV" forward tcp:0 "tcp:$HP" > /dev/null || t_fail "adb forward"
S -s "$DEV" forward tcp:0 "tcp:$HP" > /dev/null || t_fail "adbc-snap forward"
lists_agree "two again"
[ "$(grep -c . "$T_TMP/list")" = 2 ] || t_fail "listed: $(cat "$T_TMP/list")"
S -s "$DEV" forward --remove-all || t_fail "adbc-snap forward --remove-all"
lists_agree "after --remove-all"
[ "$(cat "$T_TMP/list")" = "" ] || t_fail "still listed: $(cat "$T_TMP/list")"

t_check "--no-session: adbc-snap's own relay, not the server's"
S --no-session -s "$DEV" forward tcp:0 "tcp:$HP" > "$T_TMP/own.out" 2>&1 &
own=$!
T_BG_PIDS+=("$own")
for ((i = 0; i < 200; i++)); do [ -s "$T_TMP/own.out" ] && break; sleep 0.05; done
po=$(sed -n 's/^tcp:\([0-9]*\) .*/\1/p' "$T_TMP/own.out")
[ -n "$po" ] && [ "$(get "$po")" = held ] || t_fail "no relay: $(cat "$T_TMP/own.out")"
kill "$own" 2> /dev/null
wait "$own" 2> /dev/null
lists_agree "with a relay of its own"
[ "$(cat "$T_TMP/list")" = "" ] || t_fail "the server lists the relay: $(cat "$T_TMP/list")"
timeout 60 "$SNAP" kill-server || t_fail "kill-server"
echo "ok: $T_CHECKS checks"
