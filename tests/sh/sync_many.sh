#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Many small files between adbc-snap and the test device: a tree of 10,000
# files of 4 KiB (100 directories of 100) pushed and pulled, byte for byte;
# push --sync leaves out what the device already has (adb's rule: in a tree,
# the same size and mtime; a single file, the same mtime) and sends what
# changed; the tree caps (--max-entries, --max-depth) and --deadline end a
# command with a clear error, and their values are checked.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
t_init
SNAP=${ADBC_SNAP:-$ADBC_BUILD_DIR/tools/adbc-snap}
[ -x "$SNAP" ] || SNAP=$ADBC_BUILD_DIR/tools/adbc-snap/adbc-snap
[ -x "$SNAP" ] || t_fail "adbc-snap not built"
export HOME=$T_TMP/home
mkdir -p "$HOME"

td_start dev --accept-new-keys
DEV=127.0.0.1:${TD_PORT[dev]}
SB=${TD_SANDBOX[dev]}
S() { timeout 120 "$SNAP" -t "$DEV" "$@"; }

python3 - "$T_TMP/in/many" << 'EOF' || t_fail "cannot make the tree"
import os, random, sys
root = sys.argv[1]
rnd = random.Random(13)
for d in range(100):
    os.makedirs(f"{root}/d{d:02}")
    for f in range(100):
        with open(f"{root}/d{d:02}/f{f:02}", "wb") as out:
            out.write(rnd.randbytes(4096))
EOF

t_check "push of 10,000 files of 4 KiB: all arrive, byte for byte"
S push "$T_TMP/in/many" /data/local/tmp/many > "$T_TMP/push.log" 2>&1 ||
    t_fail "push: $(cat "$T_TMP/push.log")"
grep -q "10000 files pushed, 0 skipped" "$T_TMP/push.log" || t_fail "push said: $(cat "$T_TMP/push.log")"
diff -r "$T_TMP/in/many" "$SB/data/local/tmp/many" > "$T_TMP/diff" 2>&1 ||
    t_fail "the device's tree differs: $(head -n 5 "$T_TMP/diff")"

t_check "pull of the 10,000 files: all arrive, byte for byte, no temporary left"
S pull /data/local/tmp/many "$T_TMP/out" > "$T_TMP/pull.log" 2>&1 ||
    t_fail "pull: $(cat "$T_TMP/pull.log")"
grep -q "10000 files pulled, 0 skipped" "$T_TMP/pull.log" || t_fail "pull said: $(cat "$T_TMP/pull.log")"
diff -r "$T_TMP/in/many" "$T_TMP/out" > "$T_TMP/diff" 2>&1 ||
    t_fail "the pulled tree differs: $(head -n 5 "$T_TMP/diff")"
[ -z "$(find "$T_TMP/out" -name '.*adbc-*')" ] || t_fail "temporaries left in $T_TMP/out"

t_check "push --sync of the same tree sends nothing"
S push --sync "$T_TMP/in/many" /data/local/tmp > "$T_TMP/push.log" 2>&1 ||
    t_fail "push --sync: $(cat "$T_TMP/push.log")"
grep -q "0 files pushed, 10000 skipped" "$T_TMP/push.log" || t_fail "push --sync said: $(cat "$T_TMP/push.log")"

t_check "push --sync sends what changed: new contents, a new size, a new file"
head -c 4096 /dev/urandom > "$T_TMP/in/many/d03/f07"
touch -d '2001-02-03 04:05:06' "$T_TMP/in/many/d03/f07"
head -c 5000 /dev/urandom > "$T_TMP/in/many/d50/f50"
touch -r "$SB/data/local/tmp/many/d50/f50" "$T_TMP/in/many/d50/f50" # same mtime, new size
echo new > "$T_TMP/in/many/d99/new"
S push --sync "$T_TMP/in/many" /data/local/tmp > "$T_TMP/push.log" 2>&1 ||
    t_fail "push --sync: $(cat "$T_TMP/push.log")"
grep -q "3 files pushed, 9998 skipped" "$T_TMP/push.log" || t_fail "push --sync said: $(cat "$T_TMP/push.log")"
diff -r "$T_TMP/in/many" "$SB/data/local/tmp/many" > "$T_TMP/diff" 2>&1 ||
    t_fail "after push --sync the device's tree differs: $(head -n 5 "$T_TMP/diff")"

t_check "push --sync of one file: the same mtime is skipped, another is sent"
S push --sync "$T_TMP/in/many/d01/f01" /data/local/tmp/many/d01/f01 > "$T_TMP/push.log" 2>&1 ||
    t_fail "push --sync file: $(cat "$T_TMP/push.log")"
grep -q "0 files pushed, 1 skipped" "$T_TMP/push.log" || t_fail "push --sync file said: $(cat "$T_TMP/push.log")"
touch -d '2002-01-01' "$T_TMP/in/many/d01/f01"
S push --sync "$T_TMP/in/many/d01/f01" /data/local/tmp/many/d01/f01 > "$T_TMP/push.log" 2>&1 ||
    t_fail "push --sync file: $(cat "$T_TMP/push.log")"
grep -q "1 file pushed, 0 skipped" "$T_TMP/push.log" || t_fail "push --sync file said: $(cat "$T_TMP/push.log")"

t_check "--max-entries and --max-depth refuse a larger tree, naming the cap"
rc=0
S pull --max-entries 500 /data/local/tmp/many "$T_TMP/capped" > "$T_TMP/cap.log" 2>&1 || rc=$?
[ "$rc" = 1 ] && grep -q "more than 500 entries" "$T_TMP/cap.log" ||
    t_fail "pull --max-entries 500 gave $rc: $(cat "$T_TMP/cap.log")"
rc=0
S push --max-entries 500 "$T_TMP/in/many" /data/local/tmp/capped > "$T_TMP/cap.log" 2>&1 || rc=$?
[ "$rc" = 1 ] && grep -q "more than 500 entries" "$T_TMP/cap.log" ||
    t_fail "push --max-entries 500 gave $rc: $(cat "$T_TMP/cap.log")"
rc=0
S pull --max-depth 0x /data/local/tmp/many "$T_TMP/capped" > "$T_TMP/cap.log" 2>&1 || rc=$?
[ "$rc" = 2 ] || t_fail "--max-depth 0x gave $rc: $(cat "$T_TMP/cap.log")"
mkdir -p "$SB/data/local/tmp/deep/a/b/c"
echo x > "$SB/data/local/tmp/deep/a/b/c/f"
rc=0
S pull --max-depth 2 /data/local/tmp/deep "$T_TMP/deep" > "$T_TMP/cap.log" 2>&1 || rc=$?
[ "$rc" = 1 ] && grep -q "deeper than 2 levels" "$T_TMP/cap.log" ||
    t_fail "pull --max-depth 2 gave $rc: $(cat "$T_TMP/cap.log")"
S pull --max-depth 3 /data/local/tmp/deep "$T_TMP/deep3" > "$T_TMP/cap.log" 2>&1 ||
    t_fail "pull --max-depth 3: $(cat "$T_TMP/cap.log")"
cmp "$T_TMP/deep3/a/b/c/f" "$SB/data/local/tmp/deep/a/b/c/f" || t_fail "deep file differs"

t_check "--deadline ends a pull with a message naming it; bad values are usage errors"
rc=0
S pull --deadline 0.02 /data/local/tmp/many "$T_TMP/late" > "$T_TMP/dl.log" 2>&1 || rc=$?
[ "$rc" = 1 ] && grep -q "did not finish within its deadline" "$T_TMP/dl.log" &&
    grep -q "stopped at --deadline 0.02 s" "$T_TMP/dl.log" ||
    t_fail "pull --deadline 0.02 gave $rc: $(cat "$T_TMP/dl.log")"
[ -z "$(find "$T_TMP/late" -name '.*adbc-*' 2> /dev/null)" ] || t_fail "temporaries left in $T_TMP/late"
for v in nan inf 0 -1 ''; do
    rc=0
    S pull --deadline "$v" /data/local/tmp/many "$T_TMP/late" > "$T_TMP/dl.log" 2>&1 || rc=$?
    [ "$rc" = 2 ] || t_fail "--deadline '$v' gave $rc: $(cat "$T_TMP/dl.log")"
done
echo "ok: $T_CHECKS checks"
