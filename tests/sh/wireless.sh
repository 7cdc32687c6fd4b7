#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Wireless debugging end to end with adbc-snap against the test device in
# TLS mode (--tls) with a pairing port (--pair-port/--pair-code), as a phone
# with "Wireless debugging" on: a key that is not paired is refused with the
# pairing message, a wrong code is refused and adds nothing, the right code
# adds the key, and then info, shell (output, stderr, exit status, stdin),
# exec and sync push/pull run inside TLS, byte for byte.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
t_init

SNAP=${ADBC_SNAP:-$ADBC_BUILD_DIR/tools/adbc-snap}
[ -x "$SNAP" ] || t_fail "adbc-snap not built: $SNAP"
CODE=482913
td_start dev --tls --pair-port 0 --pair-code "$CODE" --serial WLTEST01 -v
DEV=127.0.0.1:${TD_PORT[dev]}
line=$(grep -m1 '^pairing on ' "${TD_DIR[dev]}/stdout")
PAIR_PORT=${line##*:}
case $PAIR_PORT in
    '' | *[!0-9]*) t_fail "no 'pairing on HOST:PORT' line: '$line'" ;;
esac
PAIR=127.0.0.1:$PAIR_PORT
KEYS=${TD_KEYS[dev]}

# Each "computer" is a HOME with its own ~/.android/adbkey (adbc creates it
# on first use, as adb does).
export HOME=$T_TMP/home-a
mkdir -p "$HOME" "$T_TMP/home-b"
OUT=$T_TMP/out ERR=$T_TMP/err

# S ARGS...: adbc-snap; stdout in $OUT, stderr in $ERR, status in $rc.
S()
{
    timeout 60 "$SNAP" --timeout 20 "$@" > "$OUT" 2> "$ERR"
    rc=$?
}
expect_rc()
{
    [ "$rc" -eq "$1" ] || t_fail "exit status $rc, expected $1; stdout: $(cat "$OUT"); stderr: $(cat "$ERR")"
}
expect_err()
{
    grep -qF -- "$1" "$ERR" || t_fail "stderr lacks '$1': $(cat "$ERR")"
}
key_lines() { grep -c . "$KEYS"; }
# wait_keys N: the keys file has N lines within 5 s (the device stores a key
# just after it told the host its GUID, as a phone may).
wait_keys()
{
    local i
    for ((i = 0; i < 100; i++)); do
        [ "$(key_lines)" -eq "$1" ] && return 0
        sleep 0.05
    done
    t_fail "the keys file has $(key_lines) lines, expected $1: $(cat "$KEYS")"
}
# wait_log TEXT: the device logs TEXT within 5 s (its processes log after
# the host may already have seen the outcome).
wait_log()
{
    local i
    for ((i = 0; i < 100; i++)); do
        grep -qF -- "$1" "${TD_DIR[dev]}/stderr" && return 0
        sleep 0.05
    done
    t_fail "the device did not log '$1'"
}

t_check "a key that was never paired is refused with the pairing message"
S -t "$DEV" shell echo hi
expect_rc 1
expect_err "this computer's key is not paired with the device"
expect_err "run pairing"
[ ! -s "$OUT" ] || t_fail "output from a refused connection: $(cat "$OUT")"
wait_log "TLS: refused the host: its key is not paired"
[ -s "$HOME/.android/adbkey.pub" ] || t_fail "no user key was created"
MYKEY=$(cut -d' ' -f1 "$HOME/.android/adbkey.pub")

t_check "a wrong pairing code is refused and adds no key"
S pair "$PAIR" 111111
if grep -qF "built without libsodium" "$ERR"; then
    # Pairing needs libsodium; TLS does not. Pair by hand and go on.
    expect_rc 1
    t_log "SKIP pairing checks: adbc was built without libsodium"
    cat "$HOME/.android/adbkey.pub" >> "$KEYS"
    PAIRED_BY_HAND=1
else
    PAIRED_BY_HAND=
    expect_rc 1
    expect_err "failed to pair with $PAIR: wrong pairing code"
    [ ! -s "$OUT" ] || t_fail "output from a failed pairing: $(cat "$OUT")"
    wait_log "pairing refused: wrong pairing code"
    [ "$(key_lines)" -eq 0 ] || t_fail "a wrong code added a key: $(cat "$KEYS")"
fi

if [ -z "$PAIRED_BY_HAND" ]; then
    t_check "nothing listening on the pairing port: a clear error"
    closed=$(_t_free_port) || t_fail "no free port"
    S pair "127.0.0.1:$closed" "$CODE"
    expect_rc 1
    expect_err "nothing listens on 127.0.0.1:$closed"

    t_check "an empty code is refused before any connection"
    n=$(grep -c "pairing refused" "${TD_DIR[dev]}/stderr")
    S pair "$PAIR" ""
    expect_rc 1
    expect_err "no pairing code given"
    [ "$(grep -c "pairing refused" "${TD_DIR[dev]}/stderr")" -eq "$n" ] ||
        t_fail "an empty code reached the device"

    t_check "the right code pairs (adb's message, the device's GUID) and adds exactly our key"
    S pair "$PAIR" "$CODE"
    expect_rc 0
    grep -qxE "Successfully paired to $PAIR \[guid=adb-WLTEST01-[A-Za-z0-9]{6}\]" "$OUT" ||
        t_fail "pair printed: $(cat "$OUT")"
    wait_keys 1
    [ "$(cut -d' ' -f1 "$KEYS")" = "$MYKEY" ] || t_fail "the device stored another key"

    t_check "pairing again (code from stdin) keeps one copy of the key"
    echo "$CODE" | timeout 60 "$SNAP" --timeout 20 pair "$PAIR" > "$OUT" 2> "$ERR"
    rc=$?
    expect_rc 0
    grep -q "^Successfully paired to $PAIR " "$OUT" || t_fail "pair printed: $(cat "$OUT")"
    # The second pairing is done on the device side once it logs it.
    n=$(grep -c "paired a host" "${TD_DIR[dev]}/stderr")
    for ((i = 0; i < 100 && n < 2; i++)); do
        sleep 0.05
        n=$(grep -c "paired a host" "${TD_DIR[dev]}/stderr")
    done
    [ "$n" -eq 2 ] || t_fail "the device did not finish the second pairing"
    [ "$(key_lines)" -eq 1 ] || t_fail "keys file after pairing twice: $(cat "$KEYS")"
fi

t_check "info over TLS with the paired key"
S -t "$DEV" info
expect_rc 0
grep -qx "transport: *tls:tcp:$DEV" "$OUT" || t_fail "info: $(cat "$OUT")"
grep -qx "state: *device" "$OUT" || t_fail "info: $(cat "$OUT")"
wait_log "TLS 1.3 up; the host's key is paired"

t_check "shell inside TLS: stdout, stderr and exit status kept apart"
S -t "$DEV" shell 'echo out; echo err >&2; getprop ro.serialno; exit 7'
expect_rc 7
[ "$(cat "$OUT")" = "out
WLTEST01" ] || t_fail "stdout: $(cat "$OUT")"
[ "$(cat "$ERR")" = "err" ] || t_fail "stderr: $(cat "$ERR")"

t_check "shell stdin round trip inside TLS (256 KiB)"
head -c 196608 /dev/urandom | base64 > "$T_TMP/text"
timeout 60 "$SNAP" -t "$DEV" --timeout 20 shell cat < "$T_TMP/text" > "$OUT" 2> "$ERR"
rc=$?
expect_rc 0
cmp -s "$T_TMP/text" "$OUT" || t_fail "shell cat changed the data"

t_check "sync push and pull round trip inside TLS (5 MiB, binary)"
head -c 5242880 /dev/urandom > "$T_TMP/blob"
S -t "$DEV" push "$T_TMP/blob" /sdcard/blob
expect_rc 0
cmp -s "$T_TMP/blob" "${TD_SANDBOX[dev]}/sdcard/blob" || t_fail "the pushed file differs on the device"
S -t "$DEV" pull /sdcard/blob "$T_TMP/blob.back"
expect_rc 0
cmp -s "$T_TMP/blob" "$T_TMP/blob.back" || t_fail "the pulled file differs"
grep -q "1 file pulled" "$OUT" || t_fail "pull printed: $(cat "$OUT")"

t_check "exec inside TLS is binary-safe (5 MiB back)"
timeout 60 "$SNAP" -t "$DEV" --timeout 20 exec cat /sdcard/blob > "$OUT" 2> "$ERR"
rc=$?
expect_rc 0
cmp -s "$T_TMP/blob" "$OUT" || t_fail "exec cat changed the data"

t_check "another computer's key is still refused after ours was paired"
HOME=$T_TMP/home-b S -t "$DEV" shell echo hi
expect_rc 1
expect_err "not paired with the device"
[ "$(key_lines)" -eq 1 ] || t_fail "a refused host changed the keys file"

t_check "the paired key survives a restart of the device"
td_stop dev
td_start dev --tls --serial WLTEST01
DEV=127.0.0.1:${TD_PORT[dev]}
S -t "$DEV" shell echo again
expect_rc 0
[ "$(cat "$OUT")" = again ] || t_fail "stdout: $(cat "$OUT")"

td_stop dev
echo "PASS: $T_CHECKS checks"
