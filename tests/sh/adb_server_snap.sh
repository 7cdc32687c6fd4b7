#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# adbc-snap where scripts expect adb, beside Debian's adb: `version`'s first
# line is adb's ("Android Debug Bridge version 1.0.41"); `features` lists the
# device's features as adb does; `shell` takes the last of -T and -t as adb;
# ADB_COMPRESSION is honoured by push and pull, and a variable of adb's
# that has no effect here is named when set; two commands through one
# session run side by side; `start-server` starts adbc-serve as adb's
# server on ANDROID_ADB_SERVER_PORT (adb's own client then uses it; a
# second start-server says nothing, as adb's), and `kill-server` stops it,
# as adb's kill-server does, and again with nothing to stop (exit 0 both).
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
t_need_adb
t_need_built SERVE "adbc-serve needs cJSON and libmicrohttpd"
t_init
interop_start
export XDG_RUNTIME_DIR=$T_TMP/run
mkdir -p -m 700 "$XDG_RUNTIME_DIR"
PIDF=$XDG_RUNTIME_DIR/adbc/session-adb-server.pid
stop_started() { [ -s "$PIDF" ] && kill "$(cat "$PIDF")" 2> /dev/null; return 0; }
t_at_exit stop_started

t_check "version: adb's first line"
a=$(adb_run a version | head -n 1)
b=$("$SNAP" version | head -n 1)
[ "$a" = "$b" ] || t_fail "adb: '$a', adbc-snap: '$b'"
"$SNAP" version | sed -n 2p | grep -q "^Version .*adbc" || t_fail "no adbc version on line 2"

t_check "features: those common to the client and the device, as adb lists them"
# Each client lists what it can use: adb 29 does not know sync v2 or
# delayed_ack (adbc does), adbc does not act on the rest.
ADBC_ONLY="delayed_ack sendrecv_v2 sendrecv_v2_brotli sendrecv_v2_lz4 sendrecv_v2_zstd sendrecv_v2_dry_run_send"
ADB_ONLY="fixed_push_symlink_timestamp apex abb remount_shell track_app"
adb_run a -s "$DEV" features | sort > "$T_TMP/fa"
"$SNAP" -s "$DEV" features | sort > "$T_TMP/fb"
grep -qx shell_v2 "$T_TMP/fa" && grep -qx shell_v2 "$T_TMP/fb" || t_fail "shell_v2 not listed by both"
for f in $(comm -13 "$T_TMP/fa" "$T_TMP/fb"); do
    [[ " $ADBC_ONLY " == *" $f "* ]] || t_fail "adbc-snap lists $f, adb does not"
done
for f in $(comm -23 "$T_TMP/fa" "$T_TMP/fb"); do
    [[ " $ADB_ONLY " == *" $f "* ]] || t_fail "adb lists $f, adbc-snap does not"
done

t_check "shell -T and -t: the last one counts, as adb's (-T -tt: a PTY; -tt -T: none)"
for opts in "-T -tt" "-tt -T" "-T -t" "-t -T -tt" "-Ttt" "-ttT"; do
    # shellcheck disable=SC2086 # the options are words
    a=$(adb_run a -s "$DEV" shell $opts tty < /dev/null 2> /dev/null | sed 's|^/dev/.*|PTY|')
    # shellcheck disable=SC2086
    b=$(timeout 30 "$SNAP" -s "$DEV" shell $opts tty < /dev/null 2> /dev/null | sed 's|^/dev/.*|PTY|')
    [ -n "$a" ] && [ "$a" = "$b" ] || t_fail "shell $opts tty: adb '$a', adbc-snap '$b'"
done

t_check "adb's environment: ADB_COMPRESSION honoured, one without effect refused by name"
head -c 300000 /dev/zero > "$T_TMP/zeros"
ADB_COMPRESSION=lz4 timeout 30 "$SNAP" -s "$DEV" push "$T_TMP/zeros" /data/local/tmp/z > "$T_TMP/z.out" 2>&1 ||
    t_fail "push with ADB_COMPRESSION=lz4: $(cat "$T_TMP/z.out")"
grep -q "lz4: [0-9]* bytes on the wire" "$T_TMP/z.out" || t_fail "not lz4: $(cat "$T_TMP/z.out")"
ADB_COMPRESSION=0 timeout 30 "$SNAP" -s "$DEV" push "$T_TMP/zeros" /data/local/tmp/z > "$T_TMP/z.out" 2>&1 ||
    t_fail "push with ADB_COMPRESSION=0: $(cat "$T_TMP/z.out")"
! grep -q "on the wire" "$T_TMP/z.out" || t_fail "compressed with ADB_COMPRESSION=0: $(cat "$T_TMP/z.out")"
ADB_COMPRESSION=bogus timeout 30 "$SNAP" -s "$DEV" pull /data/local/tmp/z "$T_TMP/z2" > "$T_TMP/z.out" 2>&1
[ $? = 2 ] && grep -q "ADB_COMPRESSION=bogus" "$T_TMP/z.out" || t_fail "a bad ADB_COMPRESSION: $(cat "$T_TMP/z.out")"
[ ! -e "$T_TMP/z2" ] || t_fail "pulled despite a bad ADB_COMPRESSION"
ADB_MDNS_OPENSCREEN=1 timeout 30 "$SNAP" -s "$DEV" get-state > "$T_TMP/e.out" 2> "$T_TMP/e.err" ||
    t_fail "get-state with ADB_MDNS_OPENSCREEN set: $(cat "$T_TMP/e.err")"
[ "$(cat "$T_TMP/e.out")" = device ] || t_fail "get-state: $(cat "$T_TMP/e.out")"
grep -q "ADB_MDNS_OPENSCREEN is set but has no effect" "$T_TMP/e.err" || t_fail "not named: $(cat "$T_TMP/e.err")"
ADB_MDNS_OPENSCREEN=1 timeout 30 "$SNAP" -q -s "$DEV" get-state 2> "$T_TMP/e.err" > /dev/null
[ ! -s "$T_TMP/e.err" ] || t_fail "-q still said: $(cat "$T_TMP/e.err")"

t_check "two commands through one session run side by side, as two adb commands do"
# The first waits for a file only the second makes: run one after the
# other, the second would wait for the first and the first never end.
GO=/data/local/tmp/go
FIRST="while [ ! -e $GO ]; do sleep 0.1; done; echo first"
SECOND="echo second; touch $GO"
"$SNAP" -q -s "$DEV" session start || t_fail "session start failed"
stop_session() { "$SNAP" -q -s "$DEV" session stop > /dev/null 2>&1; return 0; }
t_at_exit stop_session
for who in adb snap; do
    rm -f "${TD_SANDBOX[dev]}$GO"
    if [ $who = adb ]; then
        adb_run a -s "$DEV" shell "$FIRST" > "$T_TMP/first.out" 2>&1 &
    else
        timeout 60 "$SNAP" -s "$DEV" shell "$FIRST" > "$T_TMP/first.out" 2>&1 &
    fi
    bg=$!
    if [ $who = adb ]; then
        out=$(adb_run a -s "$DEV" shell "$SECOND" 2>&1)
    else
        out=$(timeout 60 "$SNAP" -s "$DEV" shell "$SECOND" 2>&1)
    fi
    [ "$out" = second ] || t_fail "$who: the second command: '$out'"
    wait "$bg" || t_fail "$who: the first command failed: $(cat "$T_TMP/first.out")"
    [ "$(cat "$T_TMP/first.out")" = first ] || t_fail "$who: the first said '$(cat "$T_TMP/first.out")'"
done
# Neither command was turned away by the session (a client it refuses
# falls back to a connection of its own, after the wait).
slog=$(ls "$XDG_RUNTIME_DIR"/adbc/session-*.log | grep -v adb-server)
[ -s "$slog" ] || t_fail "no session log"
! grep -q "refused" "$slog" || t_fail "the session refused a command: $(grep refused "$slog")"
stop_session

P=$(_t_free_port) || t_fail "no free port"
export ANDROID_ADB_SERVER_PORT=$P
# B ARGS...: Debian's adb client on port P (a HOME whose key the device
# does not know: a server it started would not get in).
mkdir -p "$T_TMP/bhome"
B() { HOME=$T_TMP/bhome timeout 30 adb "$@"; }

t_check "start-server: adbc-serve as adb's server on ANDROID_ADB_SERVER_PORT"
timeout 60 "$SNAP" -t "$DEV" start-server > "$T_TMP/s.out" 2> "$T_TMP/s.err" ||
    t_fail "start-server: $(cat "$T_TMP/s.err")"
grep -q "^\* daemon started successfully" "$T_TMP/s.err" || t_fail "start-server said: $(cat "$T_TMP/s.err")"
[ -s "$PIDF" ] && grep -q adbc-serve "/proc/$(cat "$PIDF")/cmdline" ||
    t_fail "no adbc-serve runs ($PIDF)"
for ((i = 0; i < 100; i++)); do
    B devices | grep -q "^$DEV[[:space:]]device$" && break
    sleep 0.1
done
B devices | grep -q "^$DEV[[:space:]]device$" || t_fail "adb devices through it: $(B devices 2>&1)"
[ "$(B -s "$DEV" shell echo through)" = through ] || t_fail "adb shell through it"

t_check "start-server again: nothing to do, nothing said (as adb)"
timeout 60 "$SNAP" start-server > "$T_TMP/s2.out" 2> "$T_TMP/s2.err" || t_fail "start-server again failed"
[ ! -s "$T_TMP/s2.out" ] && [ ! -s "$T_TMP/s2.err" ] || t_fail "it said: $(cat "$T_TMP/s2.out" "$T_TMP/s2.err")"

t_check "kill-server: the server stops; with none, exit 0 as adb's"
pid=$(cat "$PIDF")
timeout 60 "$SNAP" kill-server || t_fail "kill-server failed"
for ((i = 0; i < 100; i++)); do kill -0 "$pid" 2> /dev/null || break; sleep 0.1; done
kill -0 "$pid" 2> /dev/null && t_fail "adbc-serve $pid still runs"
(exec 3<> "/dev/tcp/127.0.0.1/$P") 2> /dev/null && t_fail "something still answers on $P"
timeout 30 "$SNAP" kill-server 2> "$T_TMP/k.err"
st=$?
B kill-server 2> "$T_TMP/ka.err"
sa=$?
[ $sa = $st ] || t_fail "with no server: adbc-snap exit $st, adb exit $sa"
grep -q "cannot connect to daemon" "$T_TMP/k.err" || t_fail "adbc-snap said: $(cat "$T_TMP/k.err")"

t_check "adb's own kill-server stops the server adbc-snap started"
timeout 60 "$SNAP" -t "$DEV" start-server 2> /dev/null || t_fail "start-server (2) failed"
pid=$(cat "$PIDF")
B kill-server || t_fail "adb kill-server failed"
for ((i = 0; i < 100; i++)); do kill -0 "$pid" 2> /dev/null || break; sleep 0.1; done
kill -0 "$pid" 2> /dev/null && t_fail "adbc-serve $pid still runs after adb kill-server"
echo "ok: $T_CHECKS checks"
