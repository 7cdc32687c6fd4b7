#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Forwards held by a session, side by side with Debian's adb (whose server
# holds them): `forward LOCAL REMOTE` returns at once and the forward
# outlives the command; tcp:0 prints the chosen port; `--list` prints adb's
# "SERIAL LOCAL REMOTE" lines and the same trailing empty line; rebinding,
# `--no-rebind`, `--remove`, `--remove-all` and a bad address give the same
# exit status and output (adb's words after "adb: error: " and after
# "adbc-snap: forward...: "); the forward ends with the session. reverse
# through a session is held the same way (the device's port printed, the
# rule relayed after the command ends, --no-rebind refused); with -v it
# relays on the command's own connection.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
t_need_adb
for bin in curl python3; do
    command -v "$bin" > /dev/null || { echo "SKIP: $bin is not installed"; exit 77; }
done
t_init
export XDG_RUNTIME_DIR=$T_TMP/run
mkdir -p "$XDG_RUNTIME_DIR"
chmod 700 "$XDG_RUNTIME_DIR"
interop_start
"$SNAP" -q -s "$DEV" session start || t_fail "session start failed"
stop_session() { "$SNAP" -q -s "$DEV" session stop > /dev/null 2>&1; return 0; }
t_at_exit stop_session

mkdir -p "$T_TMP/www"
printf 'held\n' > "$T_TMP/www/one.txt"
python3 "$ADBC_SOURCE_DIR/fixtures/forward/http_server.py" "$T_TMP/www" tcp:0 \
    > "$T_TMP/http.out" 2> "$T_TMP/http.err" &
T_BG_PIDS+=("$!")
for ((i = 0; i < 200; i++)); do [ -s "$T_TMP/http.out" ] && break; sleep 0.05; done
HP=$(sed -n 's/^listening on //p' "$T_TMP/http.out")
[ -n "$HP" ] || t_fail "http server did not start: $(cat "$T_TMP/http.err")"

# run WHO OUT ARGS...: adb or adbc-snap; stdout in OUT.out, stderr OUT.err,
# the exit status in RC; the error's words after the tool's prefix in OUT.msg.
run()
{
    local who=$1 out=$2
    shift 2
    if [ "$who" = adb ]; then
        adb_run a "$@" > "$T_TMP/$out.out" 2> "$T_TMP/$out.err" < /dev/null
    else
        timeout 60 "$SNAP" "$@" > "$T_TMP/$out.out" 2> "$T_TMP/$out.err" < /dev/null
    fi
    RC=$?
    sed -e 's/^adb: error: //' -e 's/^adbc-snap: forward[^:]*: //' -e 's/ (forwards are held.*//' \
        "$T_TMP/$out.err" > "$T_TMP/$out.msg"
}
# same ARGS...: both tools from an empty list; the same status and the same
# error up to its first colon ("cannot bind listener": the reason after it
# is each tool's own).
same()
{
    t_check "forward $*: adb and adbc-snap agree"
    run adb a -s "$DEV" forward "$@"
    local ra=$RC
    run snap b -s "$DEV" forward "$@"
    [ "$ra" = "$RC" ] || t_fail "adb exit $ra ($(cat "$T_TMP/a.err")), adbc-snap exit $RC ($(cat "$T_TMP/b.err"))"
    [ "$(cut -d: -f1 "$T_TMP/a.msg")" = "$(cut -d: -f1 "$T_TMP/b.msg")" ] ||
        t_fail "errors differ: adb '$(cat "$T_TMP/a.msg")', adbc-snap '$(cat "$T_TMP/b.msg")'"
}
listing() # WHO: the list with the ports as N
{
    run "$1" l forward --list
    [ $RC = 0 ] || t_fail "$1 forward --list: exit $RC $(cat "$T_TMP/l.err")"
    sed -e 's/tcp:[0-9]*/tcp:N/g' "$T_TMP/l.out"
}

# made WHO forward|reverse: VERB tcp:0 to the HTTP server returns at once
# with the chosen port (PORT), and the server answers through it after the
# command has ended. (The test device listens on this machine: a reverse
# rule's port is reachable here.)
made()
{
    run "$1" f -s "$DEV" "$2" tcp:0 "tcp:$HP"
    [ $RC = 0 ] || t_fail "$1 $2: exit $RC $(cat "$T_TMP/f.err")"
    PORT=$(cat "$T_TMP/f.out")
    case $PORT in [1-9]*) ;; *) t_fail "$1 $2 printed '$PORT', not a port" ;; esac
    local out
    out=$(curl -sS --max-time 10 "http://127.0.0.1:$PORT/one.txt") || t_fail "$1: curl through the held $2 failed"
    [ "$out" = held ] || t_fail "$1 $2: got '$out'"
}

for who in adb snap; do
    t_check "$who: forward tcp:0 returns at once with the port; the forward outlives the command"
    made $who forward
    echo "$PORT" > "$T_TMP/$who.port"

    t_check "$who: a fixed port prints the port; rebinding it prints nothing; --no-rebind fails"
    fixed=$(_t_free_port)
    run $who f -s "$DEV" forward "tcp:$fixed" tcp:81
    [ $RC = 0 ] && [ "$(cat "$T_TMP/f.out")" = "$fixed" ] || t_fail "$who: exit $RC '$(cat "$T_TMP/f.out")'"
    run $who f -s "$DEV" forward "tcp:$fixed" tcp:82
    [ $RC = 0 ] && [ ! -s "$T_TMP/f.out" ] || t_fail "$who rebind: exit $RC '$(cat "$T_TMP/f.out")'"
    run $who f -s "$DEV" forward --no-rebind "tcp:$fixed" tcp:83
    [ $RC = 1 ] && [ "$(cat "$T_TMP/f.msg")" = "cannot rebind existing socket" ] ||
        t_fail "$who --no-rebind: exit $RC '$(cat "$T_TMP/f.err")'"
    printf '%s tcp:N tcp:N\n%s tcp:N tcp:N\n\n' "$DEV" "$DEV" > "$T_TMP/want"
    listing $who > "$T_TMP/$who.list"
    cmp -s "$T_TMP/want" "$T_TMP/$who.list" || t_fail "$who --list: $(cat "$T_TMP/l.out")"
    grep -q "^$DEV tcp:$fixed tcp:82\$" "$T_TMP/l.out" || t_fail "$who --list lacks the rebound forward: $(cat "$T_TMP/l.out")"

    t_check "$who: --remove of an unknown listener fails with adb's words; --remove takes one"
    run $who f forward --remove tcp:1
    [ $RC = 1 ] && [ "$(cat "$T_TMP/f.msg")" = "listener 'tcp:1' not found" ] ||
        t_fail "$who --remove tcp:1: exit $RC '$(cat "$T_TMP/f.err")'"
    run $who f -s "$DEV" forward --remove "tcp:$fixed"
    [ $RC = 0 ] || t_fail "$who --remove: exit $RC $(cat "$T_TMP/f.err")"
    [ "$(listing $who | grep -c .)" = 1 ] || t_fail "$who: --remove left $(cat "$T_TMP/l.out")"

    t_check "$who: --remove-all empties the list (an empty line, as adb)"
    run $who f -s "$DEV" forward --remove-all
    [ $RC = 0 ] || t_fail "$who --remove-all: exit $RC $(cat "$T_TMP/f.err")"
    listing $who > "$T_TMP/$who.empty"
    printf '\n' | cmp -s - "$T_TMP/$who.empty" || t_fail "$who: after --remove-all: '$(cat "$T_TMP/l.out")'"
    curl -sS --max-time 5 "http://127.0.0.1:$(cat "$T_TMP/$who.port")/one.txt" > /dev/null 2>&1 &&
        t_fail "$who: the removed forward still answers"
done

same tcp:99999 tcp:80
same bogus:1 tcp:80

for who in adb snap; do
    t_check "$who: reverse tcp:0 returns at once with the device's port; the rule outlives the command"
    made $who reverse
    dp=$PORT
    run $who f -s "$DEV" reverse --no-rebind "tcp:$dp" tcp:1
    [ $RC = 1 ] && grep -q "cannot rebind existing socket" "$T_TMP/f.err" ||
        t_fail "$who reverse --no-rebind: exit $RC $(cat "$T_TMP/f.err")"
    echo "$dp" > "$T_TMP/$who.rport"
done
rport=$(cat "$T_TMP/snap.rport")

t_check "reverse -v while a session runs relays on the command's own connection"
"$SNAP" -s "$DEV" reverse -v tcp:0 "tcp:$HP" > "$T_TMP/rv.out" 2> "$T_TMP/rv.err" &
T_BG_PIDS+=("$!")
rvpid=$!
for ((i = 0; i < 200; i++)); do [ -s "$T_TMP/rv.out" ] && break; sleep 0.05; done
dp=$(awk '{print $1}' "$T_TMP/rv.out")
dp=${dp#tcp:}
[ -n "$dp" ] || t_fail "reverse -v printed nothing: $(cat "$T_TMP/rv.err")"
out=$(curl -sS --max-time 10 "http://127.0.0.1:$dp/one.txt") || t_fail "curl through the reverse failed"
[ "$out" = held ] || t_fail "reverse -v: got '$out'"
kill "$rvpid"

t_check "a held forward and a held reverse end with their session"
"$SNAP" -s "$DEV" forward tcp:0 "tcp:$HP" > "$T_TMP/p" || t_fail "forward failed"
port=$(cat "$T_TMP/p")
curl -sS --max-time 10 "http://127.0.0.1:$port/one.txt" > /dev/null || t_fail "curl failed"
stop_session
curl -sS --max-time 5 "http://127.0.0.1:$port/one.txt" > /dev/null 2>&1 &&
    t_fail "the forward still answers after session stop"
curl -sS --max-time 5 "http://127.0.0.1:$rport/one.txt" > /dev/null 2>&1 &&
    t_fail "the held reverse still answers after session stop"
run snap f forward --list
[ $RC = 0 ] && [ "$(cat "$T_TMP/f.out")" = "" ] || t_fail "--list without a session: exit $RC '$(cat "$T_TMP/f.out")'"
echo "ok: $T_CHECKS checks"
