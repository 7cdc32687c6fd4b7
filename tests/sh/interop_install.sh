#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# install, install-multiple and uninstall side by side with Debian's adb
# against the test device: pm install's flags (-r -t -g -d -l -s --instant
# --user) reach the device's installer as the same command line from both
# tools (the stand-ins record it); install-multiple runs the same install
# session (install-create, install-write per file streamed on stdin,
# install-commit) and the device ends with the same files; a refusal
# ("Failure [...]") fails both; uninstall -k is refused by both with the
# device untouched. An option pm does not know is sent by adb (the device
# refuses it) and refused by adbc-snap before anything is sent.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
t_need_adb
t_init
interop_start

head -c 150000 /dev/urandom > "$T_TMP/base.apk"
head -c 70001 /dev/urandom > "$T_TMP/split_config.en.apk"

# run WHO ARGS...: stdout/stderr in $T_TMP/WHO.out/.err, status in RC, the
# device's installer calls of this run in $T_TMP/WHO.calls.
run()
{
    local who=$1
    shift
    : > "$CTL/calls"
    if [ "$who" = adb ]; then
        adb_run a -s "$DEV" "$@" > "$T_TMP/$who.out" 2> "$T_TMP/$who.err" < /dev/null
    else
        timeout 60 "$SNAP" -s "$DEV" "$@" > "$T_TMP/$who.out" 2> "$T_TMP/$who.err" < /dev/null
    fi
    RC=$?
    grep -E '^(cmd|pm) ' "$CTL/calls" > "$T_TMP/$who.calls"
}
# words FILE: each call's words sorted (adbc-snap sends pm's flags in one
# order, adb in the user's; pm takes them in any).
words() { while read -r l; do tr ' ' '\n' <<< "$l" | sort | tr '\n' ' '; echo; done < "$1"; }
# same ARGS...: both exit alike and the device saw the same installer calls.
same()
{
    t_check "$*: adb and adbc-snap send the device the same installer calls"
    run adb "$@"
    local ra=$RC
    run snap "$@"
    [ "$ra" = "$RC" ] || t_fail "adb exit $ra ($(cat "$T_TMP/adb.err")), adbc-snap exit $RC ($(cat "$T_TMP/snap.err"))"
    [ "$(words "$T_TMP/adb.calls")" = "$(words "$T_TMP/snap.calls")" ] ||
        t_fail "calls differ: adb '$(cat "$T_TMP/adb.calls")', adbc-snap '$(cat "$T_TMP/snap.calls")'"
    [ -s "$T_TMP/adb.calls" ] || t_fail "no installer call recorded"
    printf '  exit %s: %s\n' "$RC" "$(tr '\n' '/' < "$T_TMP/snap.calls")"
}

same install "$T_TMP/base.apk"
cmp -s "$CTL/cmd-installed.apk" "$T_TMP/base.apk" || t_fail "the device did not get the APK intact"
same install -r -t -g -d "$T_TMP/base.apk"
same install -l -s --instant "$T_TMP/base.apk"
same install --user 10 -r "$T_TMP/base.apk"
same install --user all "$T_TMP/base.apk"
echo "Failure [INSTALL_FAILED_VERSION_DOWNGRADE]" > "$CTL/install.fail"
same install -r "$T_TMP/base.apk"
grep -q "INSTALL_FAILED_VERSION_DOWNGRADE" "$T_TMP/snap.err" || t_fail "adbc-snap did not show the device's failure: $(cat "$T_TMP/snap.err")"
rm -f "$CTL/install.fail"

# The session ids differ between the runs: compared with the id as ID.
for who in adb snap; do
    t_check "$who install-multiple -r -g: one session, each file written, committed"
    rm -rf "$CTL/committed-"*
    run $who install-multiple -r -g "$T_TMP/base.apk" "$T_TMP/split_config.en.apk"
    [ $RC = 0 ] || t_fail "$who install-multiple: exit $RC $(cat "$T_TMP/$who.err")"
    sed -E 's/ 10[0-9][0-9] / ID /; s/ 10[0-9][0-9]$/ ID/' "$T_TMP/$who.calls" > "$T_TMP/$who.mcalls"
    dir=$(ls -d "$CTL/committed-"* | head -n 1)
    cmp -s "$dir/base.apk" "$T_TMP/base.apk" && cmp -s "$dir/split_config.en.apk" "$T_TMP/split_config.en.apk" ||
        t_fail "$who: the committed session lacks the files intact: $(ls -l "$dir")"
done
[ "$(words "$T_TMP/adb.mcalls")" = "$(words "$T_TMP/snap.mcalls")" ] ||
    t_fail "install-multiple calls differ: adb '$(cat "$T_TMP/adb.mcalls")', adbc-snap '$(cat "$T_TMP/snap.mcalls")'"
tr '\n' '/' < "$T_TMP/snap.mcalls"; echo

t_check "install-multiple: a refused commit fails both"
echo "Failure [INSTALL_FAILED_INVALID_APK: Split lib_slice0_apk was defined multiple times]" > "$CTL/install.fail"
run adb install-multiple "$T_TMP/base.apk" "$T_TMP/split_config.en.apk"
ra=$RC
run snap install-multiple "$T_TMP/base.apk" "$T_TMP/split_config.en.apk"
[ $ra = 1 ] && [ $RC = 1 ] || t_fail "refused commit: adb exit $ra, adbc-snap exit $RC"
grep -q "INSTALL_FAILED_INVALID_APK" "$T_TMP/snap.err" || t_fail "adbc-snap: $(cat "$T_TMP/snap.err")"
rm -f "$CTL/install.fail"

t_check "an option pm does not know: adb sends it and the device refuses; adbc-snap refuses it first"
run adb install -x "$T_TMP/base.apk"
[ $RC != 0 ] || t_fail "adb install -x succeeded"
run snap install -x "$T_TMP/base.apk"
[ $RC = 2 ] || t_fail "adbc-snap install -x: exit $RC"
[ ! -s "$T_TMP/snap.calls" ] || t_fail "adbc-snap sent something: $(cat "$T_TMP/snap.calls")"
run snap install --user 'x; reboot' "$T_TMP/base.apk"
[ $RC = 1 ] && [ ! -s "$T_TMP/snap.calls" ] || t_fail "--user 'x; reboot': exit $RC, calls $(cat "$T_TMP/snap.calls")"

t_check "uninstall -k: refused by both, the same first line, nothing sent"
echo com.example.kept > "$CTL/packages"
run adb uninstall -k com.example.kept
ra=$RC
head -n 1 "$T_TMP/adb.out" > "$T_TMP/a1"
run snap uninstall -k com.example.kept
[ $ra = 1 ] && [ $RC = 1 ] || t_fail "uninstall -k: adb exit $ra, adbc-snap exit $RC"
head -n 1 "$T_TMP/snap.out" | cmp -s - "$T_TMP/a1" || t_fail "first lines: '$(cat "$T_TMP/a1")' / '$(head -n 1 "$T_TMP/snap.out")'"
[ ! -s "$T_TMP/snap.calls" ] || t_fail "adbc-snap sent something: $(cat "$T_TMP/snap.calls")"
grep -q "adbc-snap shell cmd package uninstall -k" "$T_TMP/snap.out" || t_fail "adbc-snap's way out: $(cat "$T_TMP/snap.out")"
grep -qx com.example.kept "$CTL/packages" || t_fail "the package went"

echo "ok: $T_CHECKS checks"
