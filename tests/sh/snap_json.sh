#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# adbc-snap --json against the test device: shell and exec (exit status,
# streams apart, bytes that are not UTF-8 byte-exact as base64), getprop,
# logcat, push/pull summaries (with a failing source), grid, screenshot,
# app commands; and errors: with --json every command's failure is exactly
# one JSON object on stdout carrying the exit status it exits with.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
t_init
SNAP=${ADBC_SNAP:-$ADBC_BUILD_DIR/tools/adbc-snap}
[ -x "$SNAP" ] || t_fail "adbc-snap not built: $SNAP"
export HOME=$T_TMP/home XDG_CACHE_HOME=$T_TMP/cache
mkdir -p "$HOME"
td_start dev --no-auth --prop ro.product.model=JsonModel
DEV=127.0.0.1:${TD_PORT[dev]}
SB=${TD_SANDBOX[dev]}
ctl=$SB/data/local/tmp/.adbc-test
OUT=$T_TMP/out ERR=$T_TMP/err

S()
{
    timeout 60 "$SNAP" -t "$DEV" --timeout 20 "$@" > "$OUT" 2> "$ERR" < /dev/null
    rc=$?
}
# J PYTHON-EXPR: $OUT must be exactly one JSON document; the expression
# (over d, the document, and rc) must hold.
J()
{
    python3 - "$OUT" "$rc" "$1" << 'EOF' || t_fail "JSON check '$1' failed on: $(head -c 600 "$OUT"); stderr: $(head -c 300 "$ERR")"
import base64, json, sys
text = open(sys.argv[1], encoding="utf-8").read()
d = json.loads(text)  # raises on two documents or trailing garbage
rc = int(sys.argv[2])
assert eval(sys.argv[3]), "assertion false"
EOF
}

t_check "shell --json: exit code, stdout and stderr apart; exits with the command's status"
S shell --json 'echo out; echo err >&2; exit 7'
[ "$rc" = 7 ] || t_fail "exit status $rc, expected 7"
J 'd == {"exit_code": 7, "stdout": "out\n", "stderr": "err\n"}'

t_check "shell --json: output that is not UTF-8 comes as base64, byte for byte"
S shell --json "printf 'a\\377\\000b\\n'"
[ "$rc" = 0 ] || t_fail "exit status $rc"
J 'base64.b64decode(d["stdout_base64"]) == b"a\xff\x00b\n" and "stdout" not in d and d["stderr"] == ""'

t_check "shell --json: UTF-8 and control characters survive as a JSON string"
S shell --json "printf 'caf\\303\\251 \\001\\t\"q\"\\\\'"
J 'd["stdout"] == "caf\u00e9 \x01\t\"q\"\\"'

t_check "exec --json: binary output as base64, exact"
head -c 3000 /dev/urandom > "$SB/data/local/tmp/blob"
S exec --json cat /data/local/tmp/blob
[ "$rc" = 0 ] || t_fail "exit status $rc"
python3 - "$OUT" "$SB/data/local/tmp/blob" << 'EOF' || t_fail "exec --json bytes differ"
import base64, json, sys
d = json.load(open(sys.argv[1]))
assert base64.b64decode(d["stdout_base64"]) == open(sys.argv[2], "rb").read()
assert set(d) == {"stdout_base64"}
EOF

t_check "getprop --json: one property, and all of them"
S getprop --json ro.product.model
J 'd == {"ro.product.model": "JsonModel"}'
S getprop --json
J 'd["ro.product.model"] == "JsonModel" and len(d) >= 3'

t_check "logcat --json: the lines as strings"
printf 'I/one: first\nW/two: second \xff\n' > "$ctl/logcat.txt"
S logcat --json -t 2
[ "$rc" = 0 ] || t_fail "exit status $rc"
J 'd == {"lines": ["I/one: first", "W/two: second \ufffd"]}'

t_check "push --json: one object with totals and an entry per source; no summary lines"
head -c 100000 /dev/urandom > "$T_TMP/a"
head -c 2345 /dev/urandom > "$T_TMP/b"
mkdir -p "$SB/data/local/tmp/up"
S push --json "$T_TMP/a" "$T_TMP/b" /data/local/tmp/up
[ "$rc" = 0 ] || t_fail "exit status $rc"
J 'd["files"] == 2 and d["bytes"] == 102345 and d["exit_status"] == 0 and [s["target"] for s in d["sources"]] == ["/data/local/tmp/up/a", "/data/local/tmp/up/b"] and [s["bytes"] for s in d["sources"]] == [100000, 2345]'
cmp -s "$T_TMP/a" "$SB/data/local/tmp/up/a" || t_fail "pushed a differs"

t_check "push --json with a missing source: its entry holds the error, exit 1, one document"
S push --json "$T_TMP/nope" "$T_TMP/b" /data/local/tmp/up
[ "$rc" = 1 ] || t_fail "exit status $rc"
J 'd["exit_status"] == 1 and "nope" in d["sources"][0]["error"]["message"] and d["sources"][1]["bytes"] == 2345 and d["files"] == 1'

t_check "pull --json: byte-exact, with the totals"
mkdir "$T_TMP/down"
S pull --json /data/local/tmp/up/a /data/local/tmp/up/b "$T_TMP/down"
[ "$rc" = 0 ] || t_fail "exit status $rc"
J 'd["files"] == 2 and d["bytes"] == 102345'
cmp -s "$T_TMP/a" "$T_TMP/down/a" && cmp -s "$T_TMP/b" "$T_TMP/down/b" || t_fail "pulled files differ"

t_check "pull --json of a missing file: the error in its entry, exit 1"
S pull --json /data/local/tmp/none "$T_TMP/down"
[ "$rc" = 1 ] || t_fail "exit status $rc"
J 'd["exit_status"] == 1 and d["sources"][0]["error"]["code"] < 0 and d["files"] == 0'

t_check "ls --json of a missing directory: one JSON error, no partial listing"
S ls --json /data/local/tmp/none
[ "$rc" = 1 ] || t_fail "exit status $rc"
J 'set(d) == {"error", "exit_status"} and d["exit_status"] == 1 and d["error"]["code"] < 0'

t_check "grid --json: the screen's size and the cell centres"
S grid --json
[ "$rc" = 0 ] || t_fail "exit status $rc: $(cat "$ERR")"
J 'd["width"] == 1080 and d["height"] == 2400 and d["cols"] == 10 and len(d["column_centres"]) == 10 and d["column_centres"]["A"] == 53 and d["row_centres"]["1"] == 54 and len(d["row_centres"]) == d["rows"]'

t_check "screenshot --json -o FILE: path, size and bytes; --json without -o is a usage error"
python3 -c 'import struct,sys; open(sys.argv[1],"wb").write(struct.pack("<IIII",4,3,1,0)+b"\x10\x20\x30\xff"*12)' "$ctl/screencap.raw"
S screenshot --json -o "$T_TMP/s.png"
[ "$rc" = 0 ] || t_fail "exit status $rc: $(cat "$ERR")"
J "d == {'path': '$T_TMP/s.png', 'width': 4, 'height': 3, 'bytes': $(stat -c %s "$T_TMP/s.png")}"
S screenshot --json
[ "$rc" = 2 ] || t_fail "exit status $rc"
J 'd["exit_status"] == 2 and "usage" in d["error"]'

t_check "app commands --json: {ok} and the am call made"
rm -f "$ctl/calls"
S stop --json com.example.app
[ "$rc" = 0 ] || t_fail "exit status $rc: $(cat "$ERR")"
J 'd["ok"] is True and d["what"] == "com.example.app"'
grep -q "am force-stop com.example.app" "$ctl/calls" || t_fail "calls: $(cat "$ctl/calls")"

t_check "a ref act with --json and no snapshot: the error as JSON, exit 1"
S tap 3 --json
[ "$rc" = 1 ] || t_fail "exit status $rc"
J 'd["exit_status"] == 1 and "adbc-snap snapshot" in d["error"]["message"]'

t_check "a refused connection with --json: code, reason, message"
out=$(timeout 20 "$SNAP" -t 127.0.0.1:1 info --json 2> /dev/null)
rc=$?
echo "$out" > "$OUT"
[ "$rc" = 1 ] || t_fail "exit status $rc"
J 'd["error"]["code"] == -9 and d["error"]["reason"] and "refused" in d["error"]["message"]'

t_check "every command with --json and no device: one JSON document, its exit status inside"
cmds=$("$SNAP" help --commands) || t_fail "help --commands"
for c in $cmds; do
    timeout 20 "$SNAP" -t 127.0.0.1:1 --timeout 2 "$c" --json > "$OUT" 2> "$ERR" < /dev/null
    rc=$?
    [ "$rc" != 124 ] || t_fail "$c --json hung"
    if [ "$rc" = 0 ]; then
        J 'isinstance(d, (dict, list))'
    else
        J 'd["exit_status"] == rc and d["error"]["message"]' || t_fail "$c"
    fi
done

echo "ok: $T_CHECKS checks"
