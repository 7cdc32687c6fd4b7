#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Every public function checks what it is given: each ADBC_API function of
# include/adbc/ is called with NULL for every pointer and 0 for every number
# (null_args.py writes the calls), each in a child process, against the
# built libadbc.so. None may crash or hang; they return an error (NULL
# handles and out-pointers are ADBC_EINVAL), or nothing for void functions.
. "$(dirname "$0")/lib.sh"
t_init
so=$ADBC_BUILD_DIR/libadbc.so
t_need_built SHARED "libadbc.so: BUILD_SHARED_LIBS"
[ -e "$so" ] || t_fail "libadbc.so not built: $so"
command -v cc > /dev/null || t_fail "no C compiler (cc) to build the calls with"

t_check "every public function called with NULL and 0: no crash, no hang"
python3 "$ADBC_SOURCE_DIR/tests/sh/null_args.py" "$ADBC_SOURCE_DIR" > "$T_TMP/calls.c" ||
    t_fail "could not write the calls"
n=$(grep -c '^    case ' "$T_TMP/calls.c")
[ "$n" -gt 150 ] || t_fail "only $n functions found: the header scan is broken"
# A sanitized libadbc.so needs its runtime in the program too.
san=()
t_built SANITIZE && san=(-fsanitize=address,undefined)
t_built TSAN && san=(-fsanitize=thread)
cc -w ${san[@]+"${san[@]}"} -I"$ADBC_SOURCE_DIR/include" "$ADBC_SOURCE_DIR/tests/sh/null_args_main.c" "$T_TMP/calls.c" \
    -L"$ADBC_BUILD_DIR" -ladbc -Wl,-rpath,"$ADBC_BUILD_DIR" -o "$T_TMP/null_args" 2> "$T_TMP/cc.err" ||
    t_fail "the calls do not compile: $(head -20 "$T_TMP/cc.err")"
out=$(HOME=$T_TMP ADB_VENDOR_KEYS= "$T_TMP/null_args") || t_fail "$out"
echo "$out" | tail -1

echo "ok: $T_CHECKS checks"
