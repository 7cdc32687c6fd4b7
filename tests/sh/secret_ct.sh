#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The bearer-token compare (ops_secret_equal) under Valgrind's memcheck with
# the secret marked undefined: no branch and no address may depend on the
# secret, while an early-exit compare run the same way must be caught
# (tests/unit/test_ops_secret.c judges both; this runs it under valgrind).
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
t_init

BIN=$ADBC_BUILD_DIR/tests/test_ops_secret
t_need_built OPS_JSON "tools/ops's JSON layer needs cJSON"
[ -x "$BIN" ] || t_fail "test_ops_secret not built: $BIN"
command -v valgrind > /dev/null || t_fail "valgrind is not installed (scripts/packages.txt)"
# Sanitizer builds cannot run under valgrind; the plain build checks this.
if t_built SANITIZE || t_built TSAN; then
    echo "SKIP: a sanitizer build (the plain build runs this check)"
    exit 77
fi

t_check "ops_secret_equal: nothing depends on the secret's bytes; an early-exit compare is caught"
timeout 120 valgrind -q --tool=memcheck "$BIN" > "$T_TMP/out" 2> "$T_TMP/err"
rc=$?
[ "$rc" = 0 ] || t_fail "status $rc: $(cat "$T_TMP/out" "$T_TMP/err")"
grep -q "^ok: memcheck errors: early-exit compare [1-9][0-9]*, ops_secret_equal 0$" "$T_TMP/out" ||
    t_fail "not the expected verdict: $(cat "$T_TMP/out" "$T_TMP/err")"
cat "$T_TMP/out"
echo "ok: $T_CHECKS checks"
