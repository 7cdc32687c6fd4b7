#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Interop of the sync: service with Debian's real adb (29.0.6): adb push /
# pull / ls against the test device, compared byte for byte (empty, 1 byte,
# exact multiples of 64 KiB, 100 MB of random data), trees, the device's
# errors as adb prints them, and adbc-snap and adb reading each other's files.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

if ! command -v "$ADB_BIN" > /dev/null; then
    echo "SKIP: Debian's adb is not installed (apt install adb)"
    exit 77
fi
SNAP=$ADBC_BUILD_DIR/tools/adbc-snap/adbc-snap
[ -x "$SNAP" ] || SNAP=$ADBC_BUILD_DIR/tools/adbc-snap
t_init

adb_server_start a
td_start dev --authorized-keys-from a
DEV=127.0.0.1:${TD_PORT[dev]}
SB=${TD_SANDBOX[dev]}
A() { adb_run a -s "$DEV" "$@"; }
# adbc-snap with adb's key (the device only knows that one)
S() { HOME=${ADB_HOME[a]} timeout "$ADB_TIMEOUT" "$SNAP" -t "$DEV" "$@"; }

out=$(adb_run a connect "$DEV" 2>&1) || t_fail "adb connect: $out"
adb_wait_state a "$DEV" device 10 || t_fail "$DEV not online: $(adb_run a devices)"

t_check "the device advertises the sync features adb looks for"
feat=$(adb_run a -s "$DEV" features 2>&1)
for f in stat_v2 ls_v2 fixed_push_mkdir; do
    grep -qx "$f" <<< "$feat" || t_fail "feature $f missing from: $feat"
done

mkdir -p "$T_TMP/in" "$T_TMP/out"
sizes="0 1 65535 65536 65537 131072 1048576"
for n in $sizes; do
    head -c "$n" /dev/urandom > "$T_TMP/in/f$n"
done
head -c 104857600 /dev/urandom > "$T_TMP/in/f100M"

t_check "adb push: $sizes and 100 MB arrive byte for byte"
for f in $sizes 100M; do
    A push "$T_TMP/in/f$f" "/data/local/tmp/f$f" > "$T_TMP/push.log" 2>&1 ||
        t_fail "adb push f$f: $(cat "$T_TMP/push.log")"
    cmp "$T_TMP/in/f$f" "$SB/data/local/tmp/f$f" || t_fail "pushed f$f differs"
done
grep -q "1 file pushed" "$T_TMP/push.log" || t_fail "adb's summary: $(cat "$T_TMP/push.log")"

t_check "adb pull: the same files come back byte for byte"
for f in $sizes 100M; do
    A pull "/data/local/tmp/f$f" "$T_TMP/out/f$f" > "$T_TMP/pull.log" 2>&1 ||
        t_fail "adb pull f$f: $(cat "$T_TMP/pull.log")"
    cmp "$T_TMP/in/f$f" "$T_TMP/out/f$f" || t_fail "pulled f$f differs"
done

t_check "adb push keeps mtime; the mode is widened as adbd does (0640 -> 0666)"
echo mode > "$T_TMP/in/m"
chmod 0640 "$T_TMP/in/m"
touch -d @1500000000 "$T_TMP/in/m"
A push "$T_TMP/in/m" /data/local/tmp/m > /dev/null || t_fail "adb push m"
[ "$(stat -c %a "$SB/data/local/tmp/m")" = 666 ] || t_fail "mode $(stat -c %a "$SB/data/local/tmp/m")"
[ "$(stat -c %Y "$SB/data/local/tmp/m")" = 1500000000 ] || t_fail "mtime $(stat -c %Y "$SB/data/local/tmp/m")"

t_check "adb pull -a copies mtime and mode back"
A pull -a /data/local/tmp/m "$T_TMP/out/m" > /dev/null || t_fail "adb pull -a"
[ "$(stat -c %Y "$T_TMP/out/m")" = 1500000000 ] || t_fail "pulled mtime $(stat -c %Y "$T_TMP/out/m")"

t_check "adb ls lists what was pushed, with adb's format"
ls_out=$(A ls /data/local/tmp) || t_fail "adb ls"
grep -qE '^000081b6 00100000 [0-9a-f]{8} f1048576$' <<< "$ls_out" ||
    t_fail "no 'f1048576' line of mode 0100666, size 0x100000: $ls_out"
grep -qE '^000041ed [0-9a-f]{8} [0-9a-f]{8} \.$' <<< "$ls_out" || t_fail "no '.' entry: $ls_out"

t_check "adb push of a tree (nested dirs, a symlink) and adb pull of it back"
mkdir -p "$T_TMP/tree/a/b"
echo top > "$T_TMP/tree/top"
head -c 300000 /dev/urandom > "$T_TMP/tree/a/b/big"
ln -s b/big "$T_TMP/tree/a/link"
A push "$T_TMP/tree" /sdcard/tree > "$T_TMP/tp.log" 2>&1 || t_fail "adb push tree: $(cat "$T_TMP/tp.log")"
grep -q "3 files pushed" "$T_TMP/tp.log" || t_fail "summary: $(cat "$T_TMP/tp.log")"
cmp "$T_TMP/tree/a/b/big" "$SB/sdcard/tree/a/b/big" || t_fail "tree file differs"
[ "$(readlink "$SB/sdcard/tree/a/link")" = b/big ] || t_fail "link not pushed as a link"
A pull /sdcard/tree "$T_TMP/tree2" > "$T_TMP/tl.log" 2>&1 || t_fail "adb pull tree: $(cat "$T_TMP/tl.log")"
cmp "$T_TMP/tree/a/b/big" "$T_TMP/tree2/a/b/big" || t_fail "pulled tree file differs"
cmp "$T_TMP/tree/a/b/big" "$T_TMP/tree2/a/link" || t_fail "pulled link is not its target's copy"
cmp "$T_TMP/tree/top" "$T_TMP/tree2/top" || t_fail "pulled top differs"

t_check "adb push to a read-only place reports the device's message"
if A push "$T_TMP/in/f1" /system/f1 > "$T_TMP/ro.log" 2>&1; then
    t_fail "adb push to /system succeeded"
fi
grep -q "Read-only file system" "$T_TMP/ro.log" || t_fail "message: $(cat "$T_TMP/ro.log")"

t_check "adb pull of a missing file fails and creates nothing"
if A pull /data/local/tmp/missing "$T_TMP/out/missing" > "$T_TMP/miss.log" 2>&1; then
    t_fail "adb pull of a missing file succeeded"
fi
[ ! -e "$T_TMP/out/missing" ] || t_fail "a file was created"

t_check "adbc-snap push, adb pull: byte for byte (100 MB); summary in adb's format"
S push "$T_TMP/in/f100M" /sdcard/snap100M > "$T_TMP/sp.log" 2>&1 || t_fail "adbc-snap push: $(cat "$T_TMP/sp.log")"
grep -qE '^.*f100M: 1 file pushed, 0 skipped\. [0-9.]+ MB/s \(104857600 bytes in [0-9.]+s\)$' \
    "$T_TMP/sp.log" || t_fail "summary: $(cat "$T_TMP/sp.log")"
A pull /sdcard/snap100M "$T_TMP/out/snap100M" > /dev/null || t_fail "adb pull"
cmp "$T_TMP/in/f100M" "$T_TMP/out/snap100M" || t_fail "differs"

t_check "adb push, adbc-snap pull: byte for byte for every size"
for f in $sizes; do
    S pull "/data/local/tmp/f$f" "$T_TMP/out/s$f" > /dev/null 2>&1 || t_fail "adbc-snap pull f$f"
    cmp "$T_TMP/in/f$f" "$T_TMP/out/s$f" || t_fail "adbc-snap pull f$f differs"
done

t_check "adbc-snap pull into a directory, like adb; push of several files into one"
mkdir -p "$T_TMP/dir"
S pull /data/local/tmp/f1 /data/local/tmp/f65536 "$T_TMP/dir" > /dev/null || t_fail "pull two"
cmp "$T_TMP/in/f65536" "$T_TMP/dir/f65536" || t_fail "f65536 in dir differs"
S push "$T_TMP/in/f1" "$T_TMP/in/f65537" /sdcard/ > /dev/null || t_fail "push two"
cmp "$T_TMP/in/f65537" "$SB/sdcard/f65537" || t_fail "f65537 differs"
if S push "$T_TMP/in/f1" "$T_TMP/in/f0" /sdcard/nodir 2> "$T_TMP/nd.log"; then
    t_fail "several sources to a non-directory were accepted"
fi
grep -q "is not a directory" "$T_TMP/nd.log" || t_fail "message: $(cat "$T_TMP/nd.log")"

t_check "adbc-snap ls and stat (--json too) agree with adb ls"
snap_ls=$(S ls /data/local/tmp) || t_fail "adbc-snap ls"
[ "$(sort <<< "$snap_ls" | awk '{print $1, $2, $4}')" = "$(sort <<< "$(A ls /data/local/tmp)" | awk '{print $1, $2, $4}')" ] ||
    t_fail "adbc-snap ls and adb ls differ:
$snap_ls
---
$(A ls /data/local/tmp)"
S stat --json /data/local/tmp/f65536 | grep -q '"type":"file","mode":33206,"perm":"0666","size":65536' ||
    t_fail "stat --json: $(S stat --json /data/local/tmp/f65536)"
S ls --json /sdcard/tree/a | grep -q '"name":"link","type":"link"' || t_fail "ls --json: $(S ls --json /sdcard/tree/a)"

t_check "adbc-snap: the device's errors, with the path"
if S push "$T_TMP/in/f1" /system/x 2> "$T_TMP/e1.log"; then t_fail "push to /system succeeded"; fi
grep -q "Read-only file system" "$T_TMP/e1.log" && grep -q "/system/x" "$T_TMP/e1.log" ||
    t_fail "message: $(cat "$T_TMP/e1.log")"
if S stat /data/none 2> "$T_TMP/e2.log"; then t_fail "stat of a missing path succeeded"; fi
grep -q "No such file or directory" "$T_TMP/e2.log" || t_fail "message: $(cat "$T_TMP/e2.log")"

td_stop dev
echo "ok: $T_CHECKS checks"
