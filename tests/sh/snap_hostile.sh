#!/bin/bash
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
    for i in $(seq 200); do
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
    [ "$ms" -lt 2000 ] || t_fail "SIG$sig: took $ms ms to exit"
    grep -q "signal" "$T_TMP/err" || t_fail "SIG$sig: no message: $(cat "$T_TMP/err")"
    echo "  SIG$sig after $size bytes: exit $rc in $ms ms, directory empty"
}

t_check "SIGINT, SIGTERM, SIGHUP mid-pull: exit 130/143/129, no temporary left"
hdev_start endless-pull
pull_signal INT 130
pull_signal TERM 143
pull_signal HUP 129
hdev_stop

echo "ok: $T_CHECKS checks"
