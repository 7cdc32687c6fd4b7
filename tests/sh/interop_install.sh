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
# The device advertises abb_exec: both tools install through it (the
# device's log shows the service each stream opened); a second device
# without the feature checks the exec:cmd package path.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
t_need_adb
t_init
interop_start -v
LOG=${TD_DIR[dev]}/stderr

head -c 150000 /dev/urandom > "$T_TMP/base.apk"
head -c 70001 /dev/urandom > "$T_TMP/split_config.en.apk"

# run WHO ARGS...: stdout/stderr in $T_TMP/WHO.out/.err, status in RC, the
# device's installer calls of this run in $T_TMP/WHO.calls.
run()
{
    local who=$1
    shift
    : > "$CTL/calls"
    : > "$LOG"
    if [ "$who" = adb ]; then
        adb_run a -s "$DEV" "$@" > "$T_TMP/$who.out" 2> "$T_TMP/$who.err" < /dev/null
    else
        timeout 60 "$SNAP" -s "$DEV" "$@" > "$T_TMP/$who.out" 2> "$T_TMP/$who.err" < /dev/null
    fi
    RC=$?
    grep -E '^(cmd|pm) ' "$CTL/calls" > "$T_TMP/$who.calls"
    # The installer services the streams opened (abb_exec's NULs logged \0).
    grep -oE 'stream [0-9]+: (abb_exec:|exec:(cmd|pm) |shell[^:]*:(cmd|pm) ).*' "$LOG" |
        sed -E 's/^stream [0-9]+: //' > "$T_TMP/$who.svcs"
}
# via WHO PATTERN WHAT: every installer stream of WHO's last run matched
# PATTERN (a grep -E at the start of the service name), and there was one.
via()
{
    [ -s "$T_TMP/$1.svcs" ] || t_fail "$1 $3: no installer stream in the device's log"
    if grep -vE "^($2)" "$T_TMP/$1.svcs" > /dev/null; then
        t_fail "$1 $3: not all through $2: $(tr '\n' '|' < "$T_TMP/$1.svcs")"
    fi
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
t_check "install with abb_exec advertised: both tools go through abb_exec, arguments NUL-separated"
via adb 'abb_exec:package\\0install\\0' install
via snap 'abb_exec:package\\0install\\0' install
grep -q 'abb_exec:package\\0install\\0-S\\0150000$' "$T_TMP/snap.svcs" ||
    t_fail "adbc-snap's abb_exec name: $(cat "$T_TMP/snap.svcs")"
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
# adb_install.cpp's install-multiple takes abb_exec; Debian's adb 29 still
# sends its session commands over exec:cmd package.
via snap 'abb_exec:package\\0install-(create|write|commit)\\0' install-multiple
via adb 'abb_exec:package\\0|exec:cmd package ' install-multiple

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

t_check "uninstall: the same calls; adbc-snap through abb_exec (adb: a shell running cmd package)"
printf 'com.example.gone\ncom.example.kept\n' > "$CTL/packages"
run adb uninstall com.example.gone
ra=$RC
cp "$T_TMP/adb.calls" "$T_TMP/adb.ucalls"
printf 'com.example.gone\ncom.example.kept\n' > "$CTL/packages"
run snap uninstall com.example.gone
[ $ra = 0 ] && [ $RC = 0 ] || t_fail "uninstall: adb exit $ra, adbc-snap exit $RC $(cat "$T_TMP/snap.err")"
cmp -s "$T_TMP/adb.ucalls" "$T_TMP/snap.calls" ||
    t_fail "uninstall calls: adb '$(cat "$T_TMP/adb.ucalls")', adbc-snap '$(cat "$T_TMP/snap.calls")'"
via snap 'abb_exec:package\\0uninstall\\0com\.example\.gone$' uninstall
grep -qx com.example.gone "$CTL/packages" && t_fail "the package is still there"

# The same device without abb_exec (--features without it): the exec:
# path, side by side again.
td_start old --authorized-keys-from a --features \
    shell_v2,cmd,delayed_ack,stat_v2,ls_v2,fixed_push_mkdir,fixed_push_symlink_timestamp,sendrecv_v2 -v
DEV=127.0.0.1:${TD_PORT[old]}
CTL=${TD_SANDBOX[old]}/data/local/tmp/.adbc-test
LOG=${TD_DIR[old]}/stderr
adb_run a connect "$DEV" > /dev/null
adb_wait_state a "$DEV" device 10 || t_fail "adb: $DEV not ready"
same install -r -g "$T_TMP/base.apk"
t_check "without abb_exec: both tools stream into exec:cmd package"
via adb 'exec:cmd package ' install
via snap 'exec:cmd package ' install
cmp -s "$CTL/cmd-installed.apk" "$T_TMP/base.apk" || t_fail "the device did not get the APK intact"
for who in adb snap; do
    t_check "$who install-multiple without abb_exec: exec:cmd package, committed"
    rm -rf "$CTL/committed-"*
    run $who install-multiple "$T_TMP/base.apk" "$T_TMP/split_config.en.apk"
    [ $RC = 0 ] || t_fail "$who install-multiple: exit $RC $(cat "$T_TMP/$who.err")"
    via $who 'exec:cmd package ' install-multiple
    dir=$(ls -d "$CTL/committed-"* | head -n 1)
    cmp -s "$dir/split_config.en.apk" "$T_TMP/split_config.en.apk" || t_fail "$who: split not committed intact"
done
t_check "uninstall without abb_exec: adbc-snap's pm uninstall"
echo com.example.gone > "$CTL/packages"
run snap uninstall com.example.gone
[ $RC = 0 ] || t_fail "uninstall: exit $RC $(cat "$T_TMP/snap.err")"
via snap 'exec:pm ' uninstall

echo "ok: $T_CHECKS checks"
