#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# adb's daily commands side by side: each command adbc-snap implements
# (docs/adb-compat.md) runs through Debian's adb and through adbc-snap
# against the same test device, from the same device state, and the two
# must agree on the exit status and on the output: exactly where the
# device's words are printed as they are, else in shape (the same number
# of lines, the same leading words).
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
t_need_adb
t_init
SNAP=${ADBC_SNAP:-$ADBC_BUILD_DIR/tools/adbc-snap}
[ -x "$SNAP" ] || t_fail "adbc-snap not built: $SNAP"
adb_server_start a
home_with_adb_key a
td_start dev --authorized-keys-from a
td_start prod --authorized-keys-from a --prop ro.debuggable=0
DEV=127.0.0.1:${TD_PORT[dev]}
PROD=127.0.0.1:${TD_PORT[prod]}
CTL=${TD_SANDBOX[dev]}/data/local/tmp/.adbc-test
adb_run a connect "$DEV" > /dev/null
adb_run a connect "$PROD" > /dev/null
adb_wait_state a "$DEV" device 10 || t_fail "adb: $DEV not ready"
adb_wait_state a "$PROD" device 10 || t_fail "adb: $PROD not ready"

# A device state both tools start from.
set_prop()
{
    local f=$CTL/props
    grep -v "^$1=" "$f" > "$f.new"
    echo "$1=$2" >> "$f.new"
    mv "$f.new" "$f"
}
reset() { set_prop service.adb.root "${1:-0}"; rm -f "$CTL/verity-disabled"; }

# shape: digits and the device's port out, then the first two words a line.
shape() { sed -e 's/[0-9]\+/N/g' "$1" | awk '{print $1, $2}'; }

# same MODE SERIAL STATE ARGS...: run ARGS through both from STATE
# (root or user); MODE exact, shape (the first two words a line, numbers
# aside), lines (as many lines, the last one's first two words) or status.
same()
{
    local mode=$1 serial=$2 state=$3
    shift 3
    t_check "$* (-s ${serial##*:}): adb and adbc-snap agree ($mode)"
    reset "$([ "$state" = root ] && echo 1 || echo 0)"
    adb_run a -s "$serial" "$@" > "$T_TMP/a.out" 2> "$T_TMP/a.err" < /dev/null
    local ra=$?
    # A command that restarts adbd or reboots closes adb's connection; adb
    # notices after a moment and reconnects: wait for both, so the next
    # command does not meet adb's stale "device" turning "offline".
    if [ $ra = 0 ] && { [ "$1" = reboot ] || grep -q restarting "$T_TMP/a.out"; }; then
        local i
        for ((i = 0; i < 100; i++)); do
            adb_run a devices | grep -q "^$serial[[:space:]]\+device\$" || break
            sleep 0.1
        done
    fi
    [ "$mode" = status ] || adb_wait_state a "$serial" device 15 ||
        t_fail "adb: $serial did not come back after $*"
    reset "$([ "$state" = root ] && echo 1 || echo 0)"
    timeout 60 "$SNAP" -s "$serial" "$@" > "$T_TMP/b.out" 2> "$T_TMP/b.err" < /dev/null
    local rb=$?
    tr -d '\r' < "$T_TMP/a.out" > "$T_TMP/a.txt"
    tr -d '\r' < "$T_TMP/b.out" > "$T_TMP/b.txt"
    [ $ra = $rb ] || t_fail "$*: adb exit $ra ($(cat "$T_TMP/a.err")), adbc-snap exit $rb ($(cat "$T_TMP/b.err"))"
    case $mode in
        exact) cmp -s "$T_TMP/a.txt" "$T_TMP/b.txt" ||
            t_fail "$*: adb printed '$(cat "$T_TMP/a.txt")', adbc-snap '$(cat "$T_TMP/b.txt")'" ;;
        shape) [ "$(shape "$T_TMP/a.txt")" = "$(shape "$T_TMP/b.txt")" ] ||
            t_fail "$*: adb printed '$(cat "$T_TMP/a.txt")', adbc-snap '$(cat "$T_TMP/b.txt")'" ;;
        lines) [ "$(wc -l < "$T_TMP/a.txt")" = "$(wc -l < "$T_TMP/b.txt")" ] &&
            [ "$(tail -n 1 "$T_TMP/a.txt" | cut -d' ' -f1-2)" = "$(tail -n 1 "$T_TMP/b.txt" | cut -d' ' -f1-2)" ] ||
            t_fail "$*: adb printed '$(cat "$T_TMP/a.txt")', adbc-snap '$(cat "$T_TMP/b.txt")'" ;;
    esac
    printf '  adb: exit %d %s | adbc-snap: exit %d %s\n' $ra "$(head -c 60 "$T_TMP/a.txt" | tr '\n' '/')" \
        $rb "$(head -c 60 "$T_TMP/b.txt" | tr '\n' '/')"
}

printf 'a\nb\nc\n' > "$CTL/logcat.txt"
same exact "$DEV" user get-state
same exact "$DEV" user get-serialno
same exact "$DEV" user shell echo hi
same exact "$DEV" user shell 'echo out; exit 3'
same exact "$DEV" user shell -x 'echo v1; exit 3'
same exact "$DEV" user shell -T tty
same exact "$DEV" user exec-out echo binary-safe
same exact "$DEV" user logcat -d
same exact "$DEV" user logcat -t 2
same exact "$DEV" user logcat -d -v brief '*:E'
same exact "$DEV" user root
same exact "$DEV" root root
same exact "$DEV" root unroot
same exact "$DEV" user unroot
same exact "$PROD" user root
same exact "$DEV" root remount
same exact "$DEV" root disable-verity
same exact "$DEV" root enable-verity
same exact "$DEV" user tcpip 5555
same exact "$DEV" user usb
same exact "$DEV" user reboot
same exact "$DEV" user reboot bootloader
same lines "$DEV" user version
same exact "$DEV" user wait-for-device
same status nosuchserial user get-state
grep -q "^reboot bootloader$" "$CTL/calls" || t_fail "reboot bootloader not run: $(cat "$CTL/calls")"

t_check "keygen FILE: a key adb takes (adb connects with adbc-snap's key), FILE.pub in adb's format"
"$SNAP" keygen "$T_TMP/k" || t_fail "adbc-snap keygen failed"
adb_run a keygen "$T_TMP/ka" > /dev/null 2>&1 || t_fail "adb keygen failed"
[ "$(stat -c %a "$T_TMP/k")" = "$(stat -c %a "$T_TMP/ka")" ] || t_fail "mode $(stat -c %a "$T_TMP/k")"
[ "$(wc -c < "$T_TMP/k.pub")" = "$(wc -c < "$T_TMP/ka.pub")" ] ||
    [ "$(cut -d' ' -f1 "$T_TMP/k.pub" | wc -c)" = "$(cut -d' ' -f1 "$T_TMP/ka.pub" | wc -c)" ] ||
    t_fail "adbkey.pub shapes differ: $(cat "$T_TMP/k.pub") / $(cat "$T_TMP/ka.pub")"
mkdir -p "$T_TMP/h2/.android"
cp "$T_TMP/k" "$T_TMP/h2/.android/adbkey"
cp "$T_TMP/k.pub" "$T_TMP/h2/.android/adbkey.pub"
cat "$T_TMP/k.pub" >> "${TD_KEYS[dev]}"
echo >> "${TD_KEYS[dev]}"
[ "$(HOME=$T_TMP/h2 "$SNAP" -s "$DEV" shell echo with-new-key)" = with-new-key ] ||
    t_fail "adbc-snap with the new key was not let in"

t_check "connect / disconnect: adb's words, the device remembered, listed, the default when alone"
export XDG_STATE_HOME=$T_TMP/state
for who in adb adbc; do
    if [ $who = adb ]; then
        adb_run a disconnect > /dev/null
        C() { adb_run a "$@"; }
    else
        C() { "$SNAP" "$@"; }
    fi
    out=$(C connect "$DEV" 2> /dev/null) || t_fail "$who connect: $out"
    [ "$out" = "connected to $DEV" ] || t_fail "$who connect said: $out"
    out=$(C connect "$DEV" 2> /dev/null)
    [ "$out" = "already connected to $DEV" ] || t_fail "$who connect again said: $out"
    [ "$(C devices | grep -c "^$DEV[[:space:]]\+device$")" = 1 ] || t_fail "$who devices: $(C devices)"
    [ "$(C shell echo default)" = default ] || t_fail "$who: the one device is not the default"
    C connect 127.0.0.1:1 > "$T_TMP/$who.c1" 2>&1
    echo "$who connect 127.0.0.1:1: exit $? $(cat "$T_TMP/$who.c1")"
    out=$(C disconnect "$DEV" 2> /dev/null) || t_fail "$who disconnect: $out"
    [ "$out" = "disconnected $DEV" ] || t_fail "$who disconnect said: $out"
    C disconnect "$DEV" > /dev/null 2>&1 && t_fail "$who: disconnect of an unknown device succeeded"
done
grep -q "failed to connect to '127.0.0.1:1'" "$T_TMP/adbc.c1" || t_fail "adbc connect 127.0.0.1:1: $(cat "$T_TMP/adbc.c1")"
"$SNAP" connect "$DEV" > /dev/null || t_fail "connect"
"$SNAP" devices -l | grep -q "^$DEV .* transport:tcp" || t_fail "devices -l: $("$SNAP" devices -l)"
"$SNAP" disconnect > "$T_TMP/o" || t_fail "disconnect everything"
[ "$(cat "$T_TMP/o")" = "disconnected everything" ] || t_fail "disconnect: $(cat "$T_TMP/o")"
"$SNAP" devices | grep -q "^$DEV" && t_fail "still listed after disconnect"

echo "ok: $T_CHECKS checks"
