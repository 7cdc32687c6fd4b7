#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# emu side by side with Debian's adb against an emulator console stand-in
# (fixtures/emu_console.py) on a free port P, named as adb names it,
# emulator-P: the same lines reach the console ("auth TOKEN" from
# ~/.emulator_console_auth_token, the command, "quit"), the same output is
# printed (after the greetings' OK lines), a wrong token and an unknown
# command give the console's KO as adb prints it; without a token no auth
# line is sent; a line break in the command is refused before connecting;
# a serial that is no emulator and a closed port fail.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
t_need_adb
command -v python3 > /dev/null || { echo "SKIP: python3 is not installed"; exit 77; }
t_init
SNAP=${ADBC_SNAP:-$ADBC_BUILD_DIR/tools/adbc-snap}
[ -x "$SNAP" ] || t_fail "adbc-snap not built: $SNAP"
adb_server_start a
# Both tools read the token from the same HOME.
export HOME=${ADB_HOME[a]}
echo "s3cr3t-token" > "$HOME/.emulator_console_auth_token"
P=$(_t_free_port) || t_fail "no free port"
python3 "$ADBC_SOURCE_DIR/fixtures/emu_console.py" "$P" "$HOME/.emulator_console_auth_token" \
    "$T_TMP/console.log" > "$T_TMP/console.out" 2>&1 &
T_BG_PIDS+=("$!")
for ((i = 0; i < 200; i++)); do grep -q listening "$T_TMP/console.out" && break; sleep 0.05; done
grep -q listening "$T_TMP/console.out" || t_fail "console stand-in did not start: $(cat "$T_TMP/console.out")"

# same ARGS...: both tools with -s emulator-P; the same status, output and
# console lines.
same()
{
    t_check "emu $*: adb and adbc-snap agree"
    local who
    for who in adb snap; do
        : > "$T_TMP/console.log"
        if [ $who = adb ]; then
            adb_run a -s "emulator-$P" emu "$@" > "$T_TMP/$who.out" 2> "$T_TMP/$who.err"
        else
            timeout 30 "$SNAP" -s "emulator-$P" emu "$@" > "$T_TMP/$who.out" 2> "$T_TMP/$who.err"
        fi
        echo $? > "$T_TMP/$who.rc"
        # Debian's adb (29) sends the token file's newline too (an empty
        # line after auth); adb since trims it, as adbc-snap does.
        grep -v '^$' "$T_TMP/console.log" > "$T_TMP/$who.log"
    done
    cmp -s "$T_TMP/adb.rc" "$T_TMP/snap.rc" || t_fail "exit: adb $(cat "$T_TMP/adb.rc"), adbc-snap $(cat "$T_TMP/snap.rc") ($(cat "$T_TMP/snap.err"))"
    # kill: the console closes with "quit" unread, and the reset may cut
    # what it said before (for adb as for adbc-snap): the status and the
    # lines sent are what is compared.
    [ "$1" = kill ] || cmp -s "$T_TMP/adb.out" "$T_TMP/snap.out" || t_fail "output: adb '$(cat "$T_TMP/adb.out")', adbc-snap '$(cat "$T_TMP/snap.out")'"
    cmp -s "$T_TMP/adb.log" "$T_TMP/snap.log" || t_fail "console lines: adb '$(cat "$T_TMP/adb.log")', adbc-snap '$(cat "$T_TMP/snap.log")'"
    printf '  exit %s, %s\n' "$(cat "$T_TMP/snap.rc")" "$(tr '\r\n' '  ' < "$T_TMP/snap.out")"
}
same avd name
grep -q "test_avd" "$T_TMP/snap.out" || t_fail "avd name: $(cat "$T_TMP/snap.out")"
grep -qx "auth s3cr3t-token" "$T_TMP/snap.log" || t_fail "no auth line: $(cat "$T_TMP/snap.log")"
same power capacity 50
same no-such-command
same kill
echo "wrong" > "$HOME/.emulator_console_auth_token"
same avd name
grep -q "^KO: authentication" "$T_TMP/snap.out" || t_fail "wrong token: $(cat "$T_TMP/snap.out")"
: > "$HOME/.emulator_console_auth_token"
same avd name
grep -q "^auth" "$T_TMP/snap.log" && t_fail "an auth line without a token"

t_check "a line break in the command is refused before connecting"
: > "$T_TMP/console.log"
"$SNAP" -s "emulator-$P" emu "$(printf 'avd name\nkill')" > /dev/null 2>&1
[ $? = 2 ] || t_fail "not a usage error"
[ ! -s "$T_TMP/console.log" ] || t_fail "something was sent: $(cat "$T_TMP/console.log")"

t_check "a serial that is no emulator, a closed port: exit 1 with a message"
"$SNAP" -s 127.0.0.1:5 emu avd name 2> "$T_TMP/e1" && t_fail "a TCP serial was taken"
grep -q "not an emulator" "$T_TMP/e1" || t_fail "$(cat "$T_TMP/e1")"
Q=$(_t_free_port)
"$SNAP" -s "emulator-$Q" emu avd name 2> "$T_TMP/e2"
[ $? = 1 ] && grep -q "cannot reach the emulator console" "$T_TMP/e2" || t_fail "$(cat "$T_TMP/e2")"

echo "ok: $T_CHECKS checks"
