#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# adbc-snap against misbehaving devices (tests/sh/hostile_dev.py): what the
# tool does with a signal mid-pull (issue 13 item 3), a shell without an exit
# status (item 7), a device silent after OPEN (item 8), device bytes that are
# not UTF-8 or carry escape sequences (item 9).
. "$(dirname "$0")/lib.sh"
t_init
SNAP=${ADBC_SNAP:-$ADBC_BUILD_DIR/tools/adbc-snap}
[ -x "$SNAP" ] || t_fail "adbc-snap not built: $SNAP"
HDEV=$ADBC_SOURCE_DIR/tests/sh/hostile_dev.py
export HOME=$T_TMP/home
mkdir -p "$HOME"

# Start the hostile device with a scenario; HADDR gets its address.
hdev_start()
{
    local pf=$T_TMP/port.$1
    rm -f "$pf"
    python3 "$HDEV" "$1" --port-file "$pf" --lifetime 120 2> "$T_TMP/hdev.$1.err" &
    T_BG_PIDS+=($!)
    HDEV_PID=$!
    local i
    for i in $(seq 100); do
        [ -s "$pf" ] && break
        sleep 0.05
    done
    [ -s "$pf" ] || t_fail "hostile device $1 did not start: $(cat "$T_TMP/hdev.$1.err")"
    HADDR=127.0.0.1:$(cat "$pf")
}

hdev_stop()
{
    kill "$HDEV_PID" 2> /dev/null
    wait "$HDEV_PID" 2> /dev/null
}

# ---- item 3: a signal mid-pull removes the temporary, exit 128 + signal ----

pull_signal()
{
    local sig=$1 want=$2 dir=$T_TMP/sig-$1
    mkdir -p "$dir"
    "$SNAP" -t "$HADDR" pull /sdcard/big "$dir/big" > "$T_TMP/out" 2> "$T_TMP/err" &
    local pid=$! i tmp size=0
    for i in $(seq 6000); do # bounded looks, not a timing
        kill -0 $pid 2> /dev/null || break
        tmp=$(ls -A "$dir" | grep '\.adbc-' | head -1)
        if [ -n "$tmp" ]; then
            size=$(stat -c %s "$dir/$tmp" 2> /dev/null || echo 0)
            [ "$size" -ge 1048576 ] && break
        fi
        sleep 0.05
    done
    [ "$size" -ge 1048576 ] || { kill -9 $pid; t_fail "the pull never got 1 MiB in (temporary: '$tmp')"; }
    local t0=$(date +%s%N)
    kill -"$sig" $pid
    wait $pid
    local rc=$? ms=$((($(date +%s%N) - t0) / 1000000))
    [ "$rc" = "$want" ] || t_fail "SIG$sig: exit $rc, expected $want: $(cat "$T_TMP/err")"
    [ -z "$(ls -A "$dir")" ] || t_fail "SIG$sig left files behind: $(ls -la "$dir")"
    # the pull is endless: ending at all is the signal's doing; the bound
    # only keeps a hang from passing
    [ "$ms" -lt 60000 ] || t_fail "SIG$sig: took $ms ms to exit"
    grep -q "signal" "$T_TMP/err" || t_fail "SIG$sig: no message: $(cat "$T_TMP/err")"
    echo "  SIG$sig after $size bytes: exit $rc in $ms ms, directory empty"
}

t_check "SIGINT, SIGTERM, SIGHUP mid-pull: exit 130/143/129, no temporary left"
hdev_start endless-pull
pull_signal INT 130
pull_signal TERM 143
pull_signal HUP 129
hdev_stop

# ---- item 6: --timeout nan (and every other non-finite duration) is refused ----

t_check "--timeout, -t and --for refuse nan, inf, 1e999, 0, -1 with a usage error, at once"
hdev_start silent
for v in nan NaN -nan inf -inf infinity 1e999 0 -1 '' 5s; do
    timeout 10 "$SNAP" -t "$HADDR" --timeout "$v" shell true > /dev/null 2> "$T_TMP/err"
    rc=$?
    [ "$rc" = 2 ] || t_fail "--timeout '$v': exit $rc (expected the usage error 2): $(cat "$T_TMP/err")"
    grep -q "takes seconds" "$T_TMP/err" || t_fail "--timeout '$v': $(cat "$T_TMP/err")"
    timeout 10 "$SNAP" -t "$HADDR" wait-stable -t "$v" > /dev/null 2>&1
    [ "$?" = 2 ] || t_fail "wait-stable -t '$v' was not refused"
    timeout 10 "$SNAP" -t "$HADDR" logcat --for "$v" > /dev/null 2>&1
    [ "$?" = 2 ] || t_fail "logcat --for '$v' was not refused"
done

# ---- item 8: --timeout bounds every command against a device silent after OPEN ----

# The bound on how long each took only keeps a hang from passing: the
# device is silent for ever, so ending at all is --timeout's doing.
t_check "a silent device: every command ends (--timeout 2), non-zero, with a message"
echo data > "$T_TMP/local"
while IFS= read -r cmd; do
    t0=$(date +%s%N)
    # shellcheck disable=SC2086
    timeout 120 "$SNAP" -t "$HADDR" --timeout 2 $cmd > /dev/null 2> "$T_TMP/err" < /dev/null
    rc=$?
    ms=$((($(date +%s%N) - t0) / 1000000))
    [ "$rc" != 0 ] || t_fail "'$cmd' against a silent device succeeded"
    [ "$rc" != 124 ] || t_fail "'$cmd' hung (killed after 120 s)"
    [ -s "$T_TMP/err" ] || t_fail "'$cmd' failed without a message"
    printf '  %-28s exit %3d  %5d ms  %s\n' "$cmd" "$rc" "$ms" "$(head -1 "$T_TMP/err" | cut -c1-90)"
done << CMDS
shell echo hi
exec cat
ls /sdcard
stat /sdcard
pull /sdcard/x $T_TMP/pulled
push $T_TMP/local /sdcard/x
snapshot
find --text x
tap-xy 1 1
grid
press back
swipe 1 1 2 2
screenshot -o $T_TMP/s.png
launch com.x
stop com.x
top
getprop
uninstall com.x
logcat -d
CMDS
hdev_stop

# ---- item 7: a shell v2 stream without a valid exit status is not success ----

t_check "shell: no exit packet or an empty one gives exit 255 and a message; the status is the first byte"
for sc in shell-noexit shell-emptyexit; do
    hdev_start $sc
    out=$("$SNAP" -t "$HADDR" shell echo hi 2> "$T_TMP/err")
    rc=$?
    [ "$rc" = 255 ] || t_fail "$sc: exit $rc, expected 255: $(cat "$T_TMP/err")"
    [ "$out" = hi ] || t_fail "$sc: output '$out'"
    grep -q "without an exit status" "$T_TMP/err" || t_fail "$sc: message: $(cat "$T_TMP/err")"
    hdev_stop
done
hdev_start shell-exit3
"$SNAP" -t "$HADDR" shell echo hi > /dev/null 2> "$T_TMP/err"
rc=$?
[ "$rc" = 3 ] || t_fail "exit packet [3,0,0]: exit $rc, expected 3 (the status is the first byte)"
hdev_stop

# ---- item 9: device bytes that are not UTF-8, or are escape sequences ----

t_check "--json stays valid UTF-8 JSON (invalid bytes become U+FFFD); a terminal gets no ESC"
hdev_start names
json_ok()
{
    python3 -c 'import json,sys; d=sys.stdin.buffer.read(); d.decode("utf-8"); json.loads(d)' ||
        t_fail "$1: not valid UTF-8 JSON"
}
"$SNAP" -t "$HADDR" ls --json /sdcard | json_ok "ls --json"
"$SNAP" -t "$HADDR" ls --json /sdcard | python3 -c 'import json,sys; n=[e["name"] for e in json.load(sys.stdin)]; assert "caf\ufffd" in n and "\x1b[31mred\x1b[0m" in n, n' ||
    t_fail "ls --json: names not as the documented rule says"
"$SNAP" -t "$HADDR" info --json | json_ok "info --json"
"$SNAP" devices -l --json "$HADDR" | json_ok "devices -l --json"
# On a terminal (script gives the tool a pty) control characters are neutralised...
script -qc "'$SNAP' -t '$HADDR' ls /sdcard; '$SNAP' -t '$HADDR' info" /dev/null > "$T_TMP/tty" ||
    t_fail "ls on a pty failed"
grep -q 'red' "$T_TMP/tty" || t_fail "ls on a pty printed no names: $(cat "$T_TMP/tty")"
! grep -q $'\x1b' "$T_TMP/tty" || t_fail "ESC reached the terminal: $(od -c "$T_TMP/tty" | head)"
! grep -q $'\x07' "$T_TMP/tty" || t_fail "BEL reached the terminal"
# ...while a pipe gets the device's bytes as they are.
"$SNAP" -t "$HADDR" ls /sdcard | grep -q $'\x1b\[31mred' || t_fail "a pipe did not get the bytes as sent"
hdev_stop

echo "ok: $T_CHECKS checks"
