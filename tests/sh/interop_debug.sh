#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# jdwp, bugreport and sideload side by side with Debian's adb against the
# test device (its jdwp and sideload-host: services and bugreportz
# stand-in, from AOSP's daemon/jdwp_service.cpp, client/bugreport.cpp and
# commandline.cpp's adb_sideload_install): the same pid list; the same zip
# pulled to the same place (a file, a name without .zip, a directory) with
# and says so as adb (30 and later) does; a failed report fails both; the
# device gets the same package bytes from both with the same requests and
# the same "Total xfer" line; FAILFAIL fails both.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
t_need_adb
t_init
interop_start

# run WHO ARGS...: stdout/stderr in $T_TMP/WHO.out/.err (stdout with the
# progress lines' carriage returns cut to their last part), status in RC.
run()
{
    local who=$1
    shift
    if [ "$who" = adb ]; then
        (cd "$T_TMP/cwd-$who" && adb_run a -s "$DEV" "$@") > "$T_TMP/$who.raw" 2> "$T_TMP/$who.err" < /dev/null
    else
        (cd "$T_TMP/cwd-$who" && timeout 60 "$SNAP" -s "$DEV" "$@") > "$T_TMP/$who.raw" 2> "$T_TMP/$who.err" < /dev/null
    fi
    RC=$?
    sed 's/.*\r//' "$T_TMP/$who.raw" > "$T_TMP/$who.out"
}
mkdir -p "$T_TMP/cwd-adb" "$T_TMP/cwd-snap"

t_check "jdwp: the same pid list as adb (and an empty one)"
printf '1234\n5678\n' > "$CTL/jdwp"
run adb jdwp; ra=$RC; cp "$T_TMP/adb.out" "$T_TMP/a"
run snap jdwp
[ $ra = 0 ] && [ $RC = 0 ] || t_fail "jdwp: adb exit $ra, adbc-snap exit $RC $(cat "$T_TMP/snap.err")"
cmp -s "$T_TMP/a" "$T_TMP/snap.out" || t_fail "jdwp: adb '$(cat "$T_TMP/a")', adbc-snap '$(cat "$T_TMP/snap.out")'"
[ "$(cat "$T_TMP/snap.out")" = "$(printf '1234\n5678')" ] || t_fail "jdwp printed '$(cat "$T_TMP/snap.out")'"
: > "$CTL/jdwp"
run snap jdwp
[ $RC = 0 ] && [ ! -s "$T_TMP/snap.out" ] || t_fail "empty jdwp: exit $RC '$(cat "$T_TMP/snap.out")'"

printf 'PK\003\004 zip of the test device\n' > "$CTL/bugreport.content"
for dest in "" report.zip report dir; do
    t_check "bugreport ${dest:-(no PATH)}: the zip where adb puts it, and says where"
    for who in adb snap; do
        rm -rf "$T_TMP/cwd-$who"/*
        [ "$dest" = dir ] && mkdir "$T_TMP/cwd-$who/dir"
        run $who bugreport $dest
        [ $RC = 0 ] || t_fail "$who bugreport $dest: exit $RC $(cat "$T_TMP/$who.err")"
        (cd "$T_TMP/cwd-$who" && find . -type f | sort) > "$T_TMP/$who.files"
    done
    cmp -s "$T_TMP/adb.files" "$T_TMP/snap.files" ||
        t_fail "files: adb '$(cat "$T_TMP/adb.files")', adbc-snap '$(cat "$T_TMP/snap.files")'"
    f=$(head -n 1 "$T_TMP/snap.files")
    # Debian's adb (29) prints sync's summary; adb since 30 and adbc-snap this.
    case $(tail -n 1 "$T_TMP/snap.out") in
        "Bug report copied to ${f#./}" | "Bug report copied to $T_TMP/cwd-snap/${f#./}") ;;
        *) t_fail "adbc-snap's last line: '$(tail -n 1 "$T_TMP/snap.out")'" ;;
    esac
    cmp -s "$T_TMP/cwd-snap/$f" "$CTL/bugreport.content" || t_fail "the pulled zip differs"
done

t_check "bugreport: a FAIL: line fails both"
echo "dumpstate is busy" > "$CTL/bugreport.fail"
run adb bugreport; ra=$RC
run snap bugreport
[ $ra != 0 ] && [ $RC != 0 ] || t_fail "FAIL: adb exit $ra, adbc-snap exit $RC"
grep -q "dumpstate is busy" "$T_TMP/snap.err" || t_fail "adbc-snap did not say why: $(cat "$T_TMP/snap.err")"
rm -f "$CTL/bugreport.fail"

head -c 200000 /dev/urandom > "$T_TMP/ota.zip"
t_check "sideload: the device gets the package from both with the same requests"
for who in adb snap; do
    run $who sideload "$T_TMP/ota.zip"
    [ $RC = 0 ] || t_fail "$who sideload: exit $RC $(cat "$T_TMP/$who.err")"
    cmp -s "$CTL/sideload.bin" "$T_TMP/ota.zip" || t_fail "$who: the device got other bytes"
    cp "$CTL/sideload.log" "$T_TMP/$who.log"
    tail -n 1 "$T_TMP/$who.out" > "$T_TMP/$who.last"
done
cmp -s "$T_TMP/adb.log" "$T_TMP/snap.log" || t_fail "requests differ: $(cat "$T_TMP/adb.log") / $(cat "$T_TMP/snap.log")"
cmp -s "$T_TMP/adb.last" "$T_TMP/snap.last" ||
    t_fail "last line: adb '$(cat "$T_TMP/adb.last")', adbc-snap '$(cat "$T_TMP/snap.last")'"

t_check "sideload: FAILFAIL fails both"
touch "$CTL/sideload.fail"
run adb sideload "$T_TMP/ota.zip"; ra=$RC
run snap sideload "$T_TMP/ota.zip"
[ $ra = 1 ] && [ $RC = 1 ] || t_fail "FAILFAIL: adb exit $ra, adbc-snap exit $RC"
rm -f "$CTL/sideload.fail"

echo "ok: $T_CHECKS checks"
