#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The suite itself: a test that cannot run here is counted as a skip (it
# exits 77 and ctest knows 77 as SKIP_RETURN_CODE), never as a pass or a
# failure; and tests learn what the build has from build-features, the file
# the configure step writes, never from CMakeCache.txt (AUTO leaves no trace
# there of what it found).
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
t_init
command -v python3 > /dev/null || t_fail "python3 is needed"

t_check "build-features lists every optional feature ON or OFF, and agrees with what was built"
f=$ADBC_BUILD_DIR/build-features
[ -r "$f" ] || t_fail "$f is missing"
for n in SODIUM ZSTD LZ4 BROTLI WSLAY CJSON CURL SANITIZE TSAN SHARED MCP SERVE AGENT OPS_JSON; do
    t_built "$n" || true # fails the test when the file does not name it
done
bad=$(grep -v '^#' "$f" | grep -Ev '^[A-Z0-9_]+=(ON|OFF)$') && t_fail "lines of $f not NAME=ON|OFF: $bad"
t_built SERVE && { [ -x "$ADBC_BUILD_DIR/tools/adbc-serve" ] || t_fail "SERVE=ON but no adbc-serve"; }
t_built SERVE || { [ ! -e "$ADBC_BUILD_DIR/tools/adbc-serve" ] || t_fail "SERVE=OFF but adbc-serve exists"; }
t_built SHARED && { [ -e "$ADBC_BUILD_DIR/libadbc.so" ] || t_fail "SHARED=ON but no libadbc.so"; }
if [ -r "$ADBC_BUILD_DIR/CMakeCache.txt" ]; then
    for n in SODIUM ZSTD LZ4 BROTLI WSLAY CJSON CURL; do
        # ON in the cache means required: the feature must then be there.
        if grep -q "^ADBC_WITH_$n:STRING=ON$" "$ADBC_BUILD_DIR/CMakeCache.txt"; then
            t_built "$n" || t_fail "ADBC_WITH_$n=ON but build-features says $n=OFF"
        fi
        if grep -q "^ADBC_WITH_$n:STRING=OFF$" "$ADBC_BUILD_DIR/CMakeCache.txt"; then
            t_built "$n" && t_fail "ADBC_WITH_$n=OFF but build-features says $n=ON"
        fi
    done
fi

t_check "every shell test that can exit 77 is declared with SKIP_RETURN_CODE 77"
command -v ctest > /dev/null || t_fail "ctest is needed"
(cd "$ADBC_BUILD_DIR" && ctest --show-only=json-v1) > "$T_TMP/tests.json" 2> "$T_TMP/ctest.err" ||
    t_fail "ctest --show-only failed: $(cat "$T_TMP/ctest.err")"
python3 - "$T_TMP/tests.json" "$ADBC_SOURCE_DIR" << 'EOF' || t_fail "a test that can skip is not declared as one"
import json, os, re, sys
tests = json.load(open(sys.argv[1]))["tests"]
src = sys.argv[2]
libs = {}
def text(path):
    try:
        return open(path, errors="replace").read()
    except OSError:
        return ""
skips = re.compile(r"exit 77|t_need_adb|t_need_built")
bad = []
n = 0
for t in tests:
    cmd = t.get("command") or []
    script = next((c for c in cmd if c.endswith(".sh")), None)
    if not script:
        continue
    body = text(script)
    # the helpers a test sources can skip for it (lib_serve.sh: t_need_built)
    for m in re.finditer(r'/(lib_[a-z0-9]+\.sh)"', body):
        body += text(os.path.join(os.path.dirname(script), m.group(1)))
    if not skips.search(body):
        continue
    n += 1
    props = {p["name"]: p["value"] for p in t.get("properties", [])}
    if str(props.get("SKIP_RETURN_CODE")) != "77":
        bad.append(t["name"])
if bad:
    print("no SKIP_RETURN_CODE 77: " + ", ".join(bad))
    sys.exit(1)
if n < 5:
    print("only %d tests that can skip found: the scan is broken" % n)
    sys.exit(1)
print("%d tests that can skip, each declared" % n)
EOF

t_check "no test decides what the build has from CMakeCache.txt, and none passes off a skip as a pass"
hits=$(grep -ln 'CMakeCache' "$ADBC_SOURCE_DIR"/tests/sh/*.sh "$ADBC_SOURCE_DIR"/tests/usb/*.sh 2> /dev/null |
    grep -v '/suite\.sh$')
[ -z "$hits" ] || t_fail "these read CMakeCache.txt (read build-features with t_built): $hits"
hits=$(grep -n -i -E 'skip[^|]*exit 0|exit 0.*skip' "$ADBC_SOURCE_DIR"/tests/sh/*.sh | grep -v '/suite\.sh:')
[ -z "$hits" ] || t_fail "a skip that exits 0 (exit 77 instead): $hits"
hits=$(grep -n -B3 'exit 0' "$ADBC_SOURCE_DIR"/tests/sh/*.sh | grep -i 'skipped' | grep -v '/suite\.sh')
[ -z "$hits" ] || t_fail "a skip that exits 0 (exit 77 instead): $hits"

echo "ok: $T_CHECKS checks"
