#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# adbc-serve --adb-server with Debian's adb as its client, side by side with
# Debian's own adb server on the same test device: the same command gives
# the same output and exit status through either server (devices -l with
# the transport ids as N, get-state, get-serialno, features, shell with its
# exit status and a PTY, push/pull of a tree and of a large file, install,
# forward and reverse with --list and --remove, logcat, wait-for-device,
# connect/disconnect, reconnect, reconnect offline and reconnect device),
# and kill-server stops adbc-serve.
#
# adb starts a server of its own when none answers: the adbc server must be
# the one answering, so every command through it must show in adbc-serve's
# request log (ADB_TRACE), its clients run with a HOME whose key the device
# does not know (a server adb started would not get in), and at the end no
# adb server was started on the adbc server's port.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
t_need_adb
SERVE=${ADBC_SERVE:-$ADBC_BUILD_DIR/tools/adbc-serve}
t_need_built SERVE "adbc-serve needs cJSON and libmicrohttpd"
t_init
interop_start
LOG=$T_TMP/serve.log

P=$(_t_free_port) || t_fail "no free port"
adbsrv_start "$LOG" "$P" --until "connected to $DEV" -t "$DEV"
SPID=$ASRV_PID

mkdir -p "$T_TMP/bhome"
# B ARGS...: Debian's adb through adbc's server (its own HOME, no key).
B()
{
    HOME=$T_TMP/bhome TMPDIR=$T_TMP/adb-a/tmp timeout "$ADB_TIMEOUT" "$ADB_BIN" -P "$P" "$@"
}
# run WHO OUT ARGS...: a (adb's own server) or b (adbc's); stdout OUT.out,
# stderr OUT.err, status RC. A run through b must reach adbc's server.
run()
{
    local who=$1 out=$2 before
    shift 2
    before=$(wc -l < "$LOG")
    if [ "$who" = a ]; then
        adb_run a "$@" > "$T_TMP/$out.out" 2> "$T_TMP/$out.err" < "${STDIN:-/dev/null}"
    else
        B "$@" > "$T_TMP/$out.out" 2> "$T_TMP/$out.err" < "${STDIN:-/dev/null}"
    fi
    RC=$?
    if [ "$who" = b ]; then
        [ "$(wc -l < "$LOG")" -gt "$before" ] || t_fail "adb $* reached no adbc server"
        ! grep -q "doesn't match this client" "$T_TMP/$out.err" ||
            t_fail "adb refused the server's version: $(cat "$T_TMP/$out.err")"
    fi
}
# same ARGS...: both servers give the same stdout and exit status.
same()
{
    t_check "adb $*: the same output and status through adbc's server"
    run a a "$@"
    local ra=$RC
    run b b "$@"
    [ "$ra" = "$RC" ] || t_fail "exit $ra with adb's server, $RC with adbc's ($(cat "$T_TMP/b.err"))"
    norm "$T_TMP/a.out" > "$T_TMP/a.norm"
    norm "$T_TMP/b.out" > "$T_TMP/b.norm"
    diff "$T_TMP/a.norm" "$T_TMP/b.norm" > "$T_TMP/diff" ||
        t_fail "outputs differ (< adb's server, > adbc's): $(cat "$T_TMP/diff")"
}
norm() { sed -E -e 's/transport_id:[0-9]+/transport_id:N/' -e 's/[0-9.]+ MB\/s \([0-9]+ bytes in [0-9.]+s\)/RATE/' "$1"; }

t_check "host:version answers 41, as adb's own server (a raw request)"
exec {fd}<> "/dev/tcp/127.0.0.1/$P" || t_fail "nothing listens on $P"
printf '000chost:version' >&$fd
read -r -N 12 -t 10 reply <&$fd
exec {fd}<&-
[ "$reply" = OKAY00040029 ] || t_fail "host:version answered '$reply'"

same devices
same devices -l
same -s "$DEV" get-state
same get-serialno
same -s "$DEV" get-devpath
t_check "features: the device's, as adb's server lists them"
run a a features
sort "$T_TMP/a.out" > "$T_TMP/fa"
run b b features
sort "$T_TMP/b.out" > "$T_TMP/fb"
diff "$T_TMP/fa" "$T_TMP/fb" || t_fail "features differ"

same shell echo hello
same shell 'exit 3'
same -s "$DEV" shell 'echo out; echo err >&2; exit 7'
same exec-out 'printf "a\0b"'
t_check "shell -tt: a PTY; an interactive session's input and exit status"
for who in a b; do
    run $who $who shell -tt tty
    grep -q '^/dev/' "$T_TMP/$who.out" || t_fail "$who: no PTY: $(cat "$T_TMP/$who.out")"
    printf 'echo pty-$((6*7))\nexit 4\n' > "$T_TMP/in"
    STDIN=$T_TMP/in run $who $who shell -tt
    [ $RC = 4 ] || t_fail "$who: interactive shell exit $RC: $(cat "$T_TMP/$who.err")"
    grep -q 'pty-42' "$T_TMP/$who.out" || t_fail "$who: interactive output: $(cat "$T_TMP/$who.out")"
done

t_check "shell output larger than the client's socket takes, read slowly: every byte"
# The relay sends the device's data from the connection's reader thread
# while the socket takes it, and starts its own reading thread only when
# the socket is full: this output fills it.
n=$(B shell 'head -c 3000000 /dev/zero' | (sleep 0.3; wc -c))
[ "$n" = 3000000 ] || t_fail "a slowly read 3 MB shell output arrived as $n bytes"

t_check "push and pull a tree and a 24 MiB file through adbc's server"
mkdir -p "$T_TMP/tree/a/b"
printf 'one\n' > "$T_TMP/tree/a/f1"
printf 'two\n' > "$T_TMP/tree/a/b/f2"
head -c $((24 << 20)) /dev/urandom > "$T_TMP/tree/big"
run b b push "$T_TMP/tree" /data/local/tmp/tree
[ $RC = 0 ] || t_fail "push: $(cat "$T_TMP/b.err")"
cmp "$T_TMP/tree/big" "${TD_SANDBOX[dev]}/data/local/tmp/tree/big" || t_fail "the device's copy differs"
run b b pull /data/local/tmp/tree "$T_TMP/back"
[ $RC = 0 ] || t_fail "pull: $(cat "$T_TMP/b.err")"
diff -r "$T_TMP/tree" "$T_TMP/back" || t_fail "the tree pulled back differs"
same push "$T_TMP/tree/a/f1" /data/local/tmp/f1
same pull /data/local/tmp/nonexistent "$T_TMP/nothing"

t_check "install: the device's installer gets the same calls"
head -c 150000 /dev/urandom > "$T_TMP/app.apk"
for who in a b; do
    : > "$CTL/calls"
    run $who $who install -r "$T_TMP/app.apk"
    [ $RC = 0 ] || t_fail "$who install: exit $RC $(cat "$T_TMP/$who.err")"
    grep -E '^(cmd|pm) ' "$CTL/calls" > "$T_TMP/$who.calls"
done
[ -s "$T_TMP/a.calls" ] || t_fail "adb's install reached no installer"
diff "$T_TMP/a.calls" "$T_TMP/b.calls" || t_fail "installer calls differ"
diff "$T_TMP/a.out" "$T_TMP/b.out" || t_fail "install output differs"

printf 'a\nb\nc\n' > "$CTL/logcat.txt"
same logcat -d
same logcat -t 2

t_check "forward: made, listed, relayed, removed (held by adbc's server)"
python3 "$ADBC_SOURCE_DIR/fixtures/forward/http_server.py" "$T_TMP/tree/a" tcp:0 \
    > "$T_TMP/http.out" 2> "$T_TMP/http.err" &
T_BG_PIDS+=("$!")
for ((i = 0; i < 200; i++)); do [ -s "$T_TMP/http.out" ] && break; sleep 0.05; done
HP=$(sed -n 's/^listening on //p' "$T_TMP/http.out")
[ -n "$HP" ] || t_fail "http server did not start"
run b b forward tcp:0 "tcp:$HP"
[ $RC = 0 ] || t_fail "forward: $(cat "$T_TMP/b.err")"
FP=$(cat "$T_TMP/b.out")
[ "$(curl -s -m 10 "http://127.0.0.1:$FP/f1")" = one ] || t_fail "nothing relayed through tcp:$FP"
run b b forward --list
[ "$(cat "$T_TMP/b.out")" = "$DEV tcp:$FP tcp:$HP" ] || t_fail "forward --list: $(cat "$T_TMP/b.out")"
run b b forward --remove "tcp:$FP"
[ $RC = 0 ] || t_fail "forward --remove: $(cat "$T_TMP/b.err")"
same forward --list
same forward --remove tcp:1

t_check "reverse: made (the device's port), listed, relayed, removed"
run b b reverse tcp:0 "tcp:$HP"
[ $RC = 0 ] || t_fail "reverse: $(cat "$T_TMP/b.err")"
RP=$(cat "$T_TMP/b.out")
[ "$(curl -s -m 10 "http://127.0.0.1:$RP/f1")" = one ] || t_fail "nothing relayed from the device's tcp:$RP"
run b b reverse --list
grep -q " tcp:$RP tcp:$HP\$" "$T_TMP/b.out" || t_fail "reverse --list: $(cat "$T_TMP/b.out")"
run b b reverse --remove "tcp:$RP"
[ $RC = 0 ] || t_fail "reverse --remove: $(cat "$T_TMP/b.err")"
same reverse --list
same reverse --remove tcp:1

same wait-for-device
same -s "$DEV" wait-for-device
t_check "wait-for-device for a device that is not there waits"
ADB_TIMEOUT=2 run b b -s 127.0.0.1:1 wait-for-device
[ $RC = 124 ] || t_fail "wait-for-device returned ($RC) for a missing device"
same -s 127.0.0.1:1 get-state
same -s 127.0.0.1:1 shell true

t_check "reconnect: adb's answer; adbc's server connects the device again (a new transport id)"
run b b devices -l
id1=$(sed -n 's/.*transport_id:\([0-9]*\)$/\1/p' "$T_TMP/b.out")
[ -n "$id1" ] || t_fail "devices -l: $(cat "$T_TMP/b.out")"
same reconnect
grep -qx "reconnecting $DEV \[device\]" "$T_TMP/b.out" || t_fail "reconnect said: $(cat "$T_TMP/b.out")"
# adb's own server drops a TCP device it kicks; there it is connected again.
adb_run a connect "$DEV" > /dev/null
adb_wait_state a "$DEV" device 10 || t_fail "adb: $DEV not back after reconnect"
run b b wait-for-device
[ $RC = 0 ] || t_fail "wait-for-device after reconnect: $RC $(cat "$T_TMP/b.err")"
run b b devices -l
id2=$(sed -n 's/.*transport_id:\([0-9]*\)$/\1/p' "$T_TMP/b.out")
[ -n "$id2" ] && [ "$id2" != "$id1" ] || t_fail "not a new connection: transport id $id1, then '$id2'"
grep -q "adb server: host:reconnect" "$LOG" || t_fail "no host:reconnect in the request log"
same shell echo reconnected
same -s 127.0.0.1:1 reconnect
same reconnect offline
grep -q "adb server: host:reconnect-offline" "$LOG" || t_fail "no host:reconnect-offline in the log"

t_check "reconnect device: the device drops the connection itself; the server connects again"
id1=$id2
same reconnect device
grep -q "adb server: reconnect$" "$LOG" || t_fail "the device service did not go through adbc's server"
for ((i = 0; i < 200; i++)); do
    run b b devices -l
    id2=$(sed -n 's/.*transport_id:\([0-9]*\) *$/\1/p' "$T_TMP/b.out")
    [ -n "$id2" ] && [ "$id2" != "$id1" ] && grep -q " device " "$T_TMP/b.out" && break
    sleep 0.05
done
[ -n "$id2" ] && [ "$id2" != "$id1" ] || t_fail "not connected again: transport id $id1, then '$id2'"
adb_wait_state a "$DEV" device 10 || t_fail "adb: $DEV not back after reconnect device"
same shell echo device-reconnected

t_check "disconnect and connect, as adb's server answers them"
for who in a b; do
    run $who $who disconnect "$DEV"
    [ $RC = 0 ] && [ "$(cat "$T_TMP/$who.out")" = "disconnected $DEV" ] ||
        t_fail "$who disconnect: $RC $(cat "$T_TMP/$who.out" "$T_TMP/$who.err")"
done
same devices
for who in a b; do
    run $who $who connect "$DEV"
    [ $RC = 0 ] && [ "$(cat "$T_TMP/$who.out")" = "connected to $DEV" ] ||
        t_fail "$who connect: $RC $(cat "$T_TMP/$who.out" "$T_TMP/$who.err")"
done
adb_wait_state a "$DEV" device 10 || t_fail "adb: $DEV not back"
same devices
same connect "$DEV"
same shell echo back

t_check "ADB_SERVER_SOCKET and ANDROID_ADB_SERVER_PORT reach adbc's server"
before=$(wc -l < "$LOG")
out=$(HOME=$T_TMP/bhome ADB_SERVER_SOCKET=tcp:127.0.0.1:$P timeout 30 adb get-state)
[ "$out" = device ] || t_fail "ADB_SERVER_SOCKET: '$out'"
out=$(HOME=$T_TMP/bhome ANDROID_ADB_SERVER_PORT=$P timeout 30 adb get-state)
[ "$out" = device ] || t_fail "ANDROID_ADB_SERVER_PORT: '$out'"
[ "$(grep -c 'host:get-state' <(tail -n +"$((before + 1))" "$LOG"))" = 2 ] ||
    t_fail "the requests did not reach adbc's server"

t_check "kill-server stops adbc-serve (status 0) and no adb server took its place"
run b b kill-server
[ $RC = 0 ] || t_fail "kill-server: $(cat "$T_TMP/b.err")"
_t_wait_gone "$SPID" 10 || t_fail "adbc-serve still runs after kill-server"
wait "$SPID"
st=$?
[ $st = 0 ] || t_fail "adbc-serve exited $st: $(tail -5 "$LOG")"
if pgrep -f -- "fork-server" | while read -r pid; do
    tr '\0' ' ' < "/proc/$pid/cmdline" 2> /dev/null | grep -q ":$P " && echo "$pid"
done | grep -q .; then
    t_fail "an adb server was started on port $P"
fi
grep -qE '(ERROR|WARNING): [A-Za-z]*Sanitizer|runtime error:' "$LOG" &&
    t_fail "adbc-serve: $(grep -m3 -E 'Sanitizer|runtime error' "$LOG")"
echo "ok: $T_CHECKS checks"
