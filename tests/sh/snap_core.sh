#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# adbc-snap's core commands against the test device: info (text and JSON),
# shell (stdout/stderr apart, exit status, stdin), exec (binary-safe),
# ANDROID_SERIAL, IPv6, a real key prompt accepted, and the messages for a
# missing device and an unauthorized key.
. "$(dirname "$0")/lib.sh"
t_init
SNAP=${ADBC_SNAP:-$ADBC_BUILD_DIR/tools/adbc-snap}
[ -x "$SNAP" ] || t_fail "adbc-snap not built: $SNAP"
export HOME=$T_TMP/home
mkdir -p "$HOME"

t_check "with no key, adbc-snap generates ~/.android/adbkey (0600) and the device prompts"
td_start dev --accept-new-keys --prop ro.product.model=CoreModel
addr=127.0.0.1:${TD_PORT[dev]}
out=$("$SNAP" -t "$addr" info 2> "$T_TMP/err") || t_fail "info failed: $(cat "$T_TMP/err")"
[ "$(stat -c %a "$HOME/.android/adbkey")" = 600 ] || t_fail "adbkey is not 0600"
grep -q "accept the prompt on the device (waiting up to [0-9]* s)" "$T_TMP/err" && ! grep -q USB "$T_TMP/err" ||
    t_fail "the prompt message (no USB over TCP, the wait stated): $(cat "$T_TMP/err")"

t_check "info shows state, model and features"
echo "$out" | grep -q '^state: *device$' || t_fail "no state line: $out"
echo "$out" | grep -q 'ro.product.model *CoreModel' || t_fail "no model: $out"
echo "$out" | grep -q '^features:.*shell_v2' || t_fail "no features: $out"

t_check "info --json is one JSON object with the properties"
json=$("$SNAP" -t "$addr" info --json) || t_fail "info --json failed"
python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert d["state"]=="device"; assert d["properties"]["ro.product.model"]=="CoreModel"; assert "shell_v2" in d["features"]' "$json" ||
    t_fail "bad JSON: $json"

t_check "shell keeps stdout and stderr apart and exits with the command's status"
"$SNAP" -t "$addr" shell 'echo out; echo err >&2; exit 7' > "$T_TMP/o" 2> "$T_TMP/e"
rc=$?
[ "$rc" = 7 ] || t_fail "exit status $rc, expected 7"
[ "$(cat "$T_TMP/o")" = out ] || t_fail "stdout: $(cat "$T_TMP/o")"
[ "$(cat "$T_TMP/e")" = err ] || t_fail "stderr: $(cat "$T_TMP/e")"

t_check "shell forwards stdin and closes it at EOF"
got=$(printf 'line1\nline2\n' | "$SNAP" -t "$addr" shell 'wc -l') || t_fail "shell wc failed"
[ "$(echo "$got" | tr -d ' ')" = 2 ] || t_fail "wc -l said '$got'"

t_check "exec returns 2 MiB of binary data byte for byte"
head -c 2097152 /dev/urandom > "${TD_SANDBOX[dev]}/data/local/tmp/blob"
"$SNAP" -t "$addr" exec cat /data/local/tmp/blob > "$T_TMP/blob" || t_fail "exec failed"
cmp -s "$T_TMP/blob" "${TD_SANDBOX[dev]}/data/local/tmp/blob" || t_fail "exec output differs"

t_check "ANDROID_SERIAL=HOST:PORT selects the device"
[ "$(ANDROID_SERIAL=$addr "$SNAP" shell 'echo via-env')" = via-env ] || t_fail "ANDROID_SERIAL ignored"

t_check "with no device, the message says how to connect one"
out=$(ANDROID_SERIAL= "$SNAP" -s nosuchserial info 2>&1)
rc=$?
[ "$rc" != 0 ] || t_fail "info without a device succeeded"
echo "$out" | grep -qi "nosuchserial" || t_fail "message does not name the serial: $out"

t_check "a refused connection names the address and what to check"
out=$("$SNAP" -t 127.0.0.1:1 info 2>&1) && t_fail "connecting to port 1 succeeded"
echo "$out" | grep -q "refused" || t_fail "no 'refused' in: $out"

t_check "get-state: the state and 0, or adb's error words and 1 (unreachable, unknown serial)"
[ "$("$SNAP" -t "$addr" get-state)" = device ] || t_fail "get-state of a ready device"
out=$("$SNAP" -s 127.0.0.1:1 get-state 2>&1)
rc=$?
[ $rc = 1 ] || t_fail "get-state of a closed port exited $rc: $out"
case $out in "adbc-snap: device '127.0.0.1:1' not found: "*) ;; *) t_fail "get-state said: $out" ;; esac
out=$(ADB_LOCAL_TRANSPORT_MAX_PORT=5555 "$SNAP" -s nosuchserial get-state 2>&1)
[ $? = 1 ] || t_fail "get-state of an unknown serial succeeded: $out"
case $out in "adbc-snap: device 'nosuchserial' not found: "*) ;; *) t_fail "get-state said: $out" ;; esac

t_check "-s and -t together are refused (neither is silently ignored)"
out=$("$SNAP" -s nosuchserial -t "$addr" shell echo hi 2>&1)
[ $? = 2 ] || t_fail "-s and -t: exit $?: $out"
case $out in *"-s and -t both name the device"*) ;; *) t_fail "-s and -t said: $out" ;; esac
out=$("$SNAP" -t "$addr" -s "$addr" get-state 2>&1) && t_fail "-t then -s accepted: $out"

t_check "IPv6: [::1]:PORT works"
td_start six --no-auth --host ::1
[ "$("$SNAP" -t "[::1]:${TD_PORT[six]}" shell 'echo v6')" = v6 ] || t_fail "IPv6 shell failed"

t_check "an unknown key without --accept-new-keys ends as unauthorized with advice"
td_start strict
out=$("$SNAP" --timeout 2 -t "127.0.0.1:${TD_PORT[strict]}" info 2>&1) && t_fail "unauthorized info succeeded"
echo "$out" | grep -qi "unauthorized" || t_fail "no 'unauthorized' in: $out"

echo "ok: $T_CHECKS checks"
