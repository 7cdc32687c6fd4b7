#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# adbc-snap sync [-l] [PARTITION] beside Debian's adb (29): a build tree in
# $ANDROID_PRODUCT_OUT (data and system; the test device's /system is
# read-only, as a device's is before remount) synced by each tool from the
# same device state. Both list the same files to push in the same order
# (-l), push the same ones and print the same summary lines (the rate
# aside), and skip what the other pushed; both fail on the read-only
# partition and without $ANDROID_PRODUCT_OUT or the partition's directory.
# Lines adb prints about itself ("adb: warning: ...", its progress line)
# are left out: adbc-snap says its own on stderr.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
t_need_adb
t_init
interop_start
SB=${TD_SANDBOX[dev]}
OUT=$T_TMP/product
export ANDROID_PRODUCT_OUT=$OUT
mkdir -p "$OUT/data/local/tmp/build/app/lib" "$OUT/data/local/tmp/build/empty" \
    "$OUT/data/local/tmp/build/etc" "$OUT/system/bin" "$OUT/system/etc/init"
for i in 1 2 3 4 5 6 7 8; do
    echo "file $i" > "$OUT/data/local/tmp/build/etc/f$i"
    head -c $((i * 9000)) /dev/urandom > "$OUT/data/local/tmp/build/app/lib/lib$i.so"
done
head -c 300000 /dev/urandom > "$OUT/data/local/tmp/build/app/base.apk"
ln -s etc/f1 "$OUT/data/local/tmp/build/link"
mkfifo "$OUT/data/local/tmp/build/fifo" # a special file: skipped by both
echo sh > "$OUT/system/bin/tool"
echo rc > "$OUT/system/etc/init/x.rc"

# norm FILE: the output without adb's own lines, the rate as RATE.
norm()
{
    tr -d '\r' < "$1" | grep -v -e '^adb: ' -e '^\[' |
        sed -E 's| [0-9.]+ MB/s \(([0-9]+) bytes in [0-9.]+s\)| RATE (\1 bytes)|'
}

# both ARGS...: adb sync ARGS, then adbc-snap sync ARGS, from the same
# device state (the files adb pushed removed again unless -l); the same exit
# status and output. A.out / B.out hold them.
clean() { rm -rf "$SB/data/local/tmp/build"; }
both()
{
    adb_run a -s "$DEV" sync "$@" > "$T_TMP/A.out" 2> "$T_TMP/A.err"
    ra=$?
    [[ " $* " == *" -l "* ]] || clean
    timeout 120 "$SNAP" -s "$DEV" sync "$@" > "$T_TMP/B.out" 2> "$T_TMP/B.err"
    rb=$?
    [ $ra = $rb ] || t_fail "sync $*: adb exit $ra ($(cat "$T_TMP/A.out" "$T_TMP/A.err")), adbc-snap exit $rb ($(cat "$T_TMP/B.err"))"
    norm "$T_TMP/A.out" > "$T_TMP/A.txt"
    norm "$T_TMP/B.out" > "$T_TMP/B.txt"
    cmp -s "$T_TMP/A.txt" "$T_TMP/B.txt" ||
        t_fail "sync $*: adb printed '$(cat "$T_TMP/A.txt")', adbc-snap '$(cat "$T_TMP/B.txt")'"
}

t_check "sync -l data: the same files listed in the same order, nothing pushed"
both -l data
[ "$(grep -c '^would push: ' "$T_TMP/B.txt")" = 18 ] || t_fail "listed: $(cat "$T_TMP/B.txt")"
grep -qx "/data/: 0 files pushed, 1 skipped." "$T_TMP/B.txt" || t_fail "summary: $(cat "$T_TMP/B.txt")"
[ ! -e "$SB/data/local/tmp/build" ] || t_fail "-l pushed something"
[ ! -s "$T_TMP/B.err" ] || t_fail "adbc-snap said: $(cat "$T_TMP/B.err")"

t_check "sync data: the same files pushed, the same summary; contents and mtimes arrive"
both data
grep -qx "/data/: 18 files pushed, 1 skipped. RATE ([0-9]* bytes)" "$T_TMP/B.txt" ||
    t_fail "summary: $(cat "$T_TMP/B.txt")"
for f in app/base.apk app/lib/lib8.so etc/f3; do
    cmp "$OUT/data/local/tmp/build/$f" "$SB/data/local/tmp/build/$f" || t_fail "$f differs"
    [ "$(stat -c %Y "$OUT/data/local/tmp/build/$f")" = "$(stat -c %Y "$SB/data/local/tmp/build/$f")" ] ||
        t_fail "$f: mtime not kept"
done
[ "$(readlink "$SB/data/local/tmp/build/link")" = etc/f1 ] || t_fail "the link did not arrive as a link"

t_check "what adbc-snap pushed, adb finds in place (and the other way round)"
adb_run a -s "$DEV" sync -l data > "$T_TMP/A.out" 2>&1 || t_fail "adb sync -l: $(cat "$T_TMP/A.out")"
[ "$(norm "$T_TMP/A.out")" = "/data/: 0 files pushed, 19 skipped." ] || t_fail "adb: $(cat "$T_TMP/A.out")"
clean
adb_run a -s "$DEV" sync data > "$T_TMP/A.out" 2>&1 || t_fail "adb sync: $(cat "$T_TMP/A.out")"
timeout 120 "$SNAP" -s "$DEV" sync data > "$T_TMP/B.out" 2>&1 || t_fail "adbc-snap sync: $(cat "$T_TMP/B.out")"
[ "$(cat "$T_TMP/B.out")" = "/data/: 0 files pushed, 19 skipped." ] || t_fail "adbc-snap: $(cat "$T_TMP/B.out")"

t_check "changed files (a new mtime, a new size): listed and pushed alike, the rest skipped"
touch -d @1600000000 "$OUT/data/local/tmp/build/etc/f2"
echo longer >> "$OUT/data/local/tmp/build/app/lib/lib3.so"
touch -d @1600000000 "$OUT/data/local/tmp/build/app/lib/lib3.so" # size alone tells it
touch -d @1600000000 "$SB/data/local/tmp/build/app/lib/lib3.so"
both -l
grep -c "^would push: " "$T_TMP/B.txt" | grep -qx 4 || t_fail "listed: $(cat "$T_TMP/B.txt")"
grep -q "^would push: .*/etc/f2 -> /data/local/tmp/build/etc/f2$" "$T_TMP/B.txt" ||
    t_fail "f2 not listed: $(cat "$T_TMP/B.txt")"
adb_run a -s "$DEV" sync data > "$T_TMP/A.out" 2>&1 || t_fail "adb sync: $(cat "$T_TMP/A.out")"
grep -q "^/data/: 2 files pushed, 17 skipped" "$T_TMP/A.out" || t_fail "adb: $(cat "$T_TMP/A.out")"
touch -d @1500000000 "$OUT/data/local/tmp/build/etc/f2" "$OUT/data/local/tmp/build/app/lib/lib3.so"
timeout 120 "$SNAP" -s "$DEV" sync data > "$T_TMP/B.out" 2>&1 || t_fail "adbc-snap sync: $(cat "$T_TMP/B.out")"
grep -q "^/data/: 2 files pushed, 17 skipped" "$T_TMP/B.out" || t_fail "adbc-snap: $(cat "$T_TMP/B.out")"
cmp "$OUT/data/local/tmp/build/app/lib/lib3.so" "$SB/data/local/tmp/build/app/lib/lib3.so" ||
    t_fail "lib3.so not pushed"

t_check "sync (all) -l: every partition there, in adb's order"
both -l
grep -q "^/data/: " "$T_TMP/B.txt" && grep -q "^/system/: " "$T_TMP/B.txt" ||
    t_fail "partitions: $(cat "$T_TMP/B.txt")"

t_check "sync system: the read-only partition fails both (exit 1), nothing is printed as pushed"
both system
[ $rb = 1 ] || t_fail "exit $rb"
grep -q "Read-only file system" "$T_TMP/B.err" || t_fail "adbc-snap said: $(cat "$T_TMP/B.err")"

t_check "sync: data, then system fails: the same lines and exit status"
both
grep -q "^/data/: " "$T_TMP/B.txt" || t_fail "no data summary: $(cat "$T_TMP/B.txt")"

t_check "a partition without a directory, no \$ANDROID_PRODUCT_OUT: exit 1 from both"
both vendor
grep -q "vendor" "$T_TMP/B.err" || t_fail "adbc-snap said: $(cat "$T_TMP/B.err")"
(unset ANDROID_PRODUCT_OUT; both -l)
ANDROID_PRODUCT_OUT='' both -l
grep -q "ANDROID_PRODUCT_OUT" "$T_TMP/B.err" || t_fail "adbc-snap said: $(cat "$T_TMP/B.err")"

t_check "a word that is no partition, two partitions: usage errors (adbc-snap's exit 2, adb's 1)"
for args in "bogus" "data system"; do
    # shellcheck disable=SC2086 # the words are arguments
    adb_run a -s "$DEV" sync $args > /dev/null 2>&1
    ra=$?
    # shellcheck disable=SC2086
    timeout 30 "$SNAP" -s "$DEV" sync $args > /dev/null 2> "$T_TMP/u.err"
    rb=$?
    [ $ra = 1 ] && [ $rb = 2 ] || t_fail "sync $args: adb exit $ra, adbc-snap exit $rb"
    grep -q "usage: adbc-snap sync" "$T_TMP/u.err" || t_fail "adbc-snap said: $(cat "$T_TMP/u.err")"
done

t_check "sync -n: a dry run sends the changed file, the device keeps its copy"
timeout 120 "$SNAP" -s "$DEV" sync data > "$T_TMP/B.out" 2>&1 || t_fail "sync: $(cat "$T_TMP/B.out")"
echo changed >> "$OUT/data/local/tmp/build/etc/f5"
timeout 120 "$SNAP" -s "$DEV" sync -n data > "$T_TMP/B.out" 2>&1 || t_fail "sync -n: $(cat "$T_TMP/B.out")"
grep -q "^/data/: 1 file pushed, 18 skipped" "$T_TMP/B.out" || t_fail "sync -n said: $(cat "$T_TMP/B.out")"
! cmp -s "$OUT/data/local/tmp/build/etc/f5" "$SB/data/local/tmp/build/etc/f5" || t_fail "-n wrote f5"
echo "ok: $T_CHECKS checks"
