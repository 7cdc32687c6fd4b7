#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# adbc-snap's per-command help: every command of the dispatch tables (as
# `help --commands` walks them) answers `COMMAND --help` and `help COMMAND`
# with exit 0, its usage line and a text from tools/adbc-snap/help.c, without
# touching a device; every entry of help.c names a real command; `--help`
# after a shell command's words goes to the device, not to adbc-snap.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
t_init
SNAP=${ADBC_SNAP:-$ADBC_BUILD_DIR/tools/adbc-snap}
[ -x "$SNAP" ] || t_fail "adbc-snap not built: $SNAP"
export HOME=$T_TMP/home XDG_CACHE_HOME=$T_TMP/cache
mkdir -p "$HOME"
HELP_C=$ADBC_SOURCE_DIR/tools/adbc-snap/help.c

t_check "help --commands lists the dispatch tables: the same names as --help"
cmds=$("$SNAP" help --commands) || t_fail "help --commands failed"
n=$(echo "$cmds" | wc -l)
[ "$n" -ge 30 ] || t_fail "only $n commands listed: $cmds"
listed=$("$SNAP" --help | sed -n '/^commands:/,/^$/p' | awk 'NF && !/^commands:/ { print $1 }')
[ "$listed" = "$cmds" ] || t_fail "--help lists
$listed
but help --commands
$cmds"
[ "$(echo "$cmds" | sort | uniq -d)" = "" ] || t_fail "a command name twice: $(echo "$cmds" | sort | uniq -d)"

t_check "every command answers COMMAND --help and help COMMAND (exit 0, no device)"
missing=
for c in $cmds; do
    # -t to a closed port: any attempt to reach a device would fail.
    out=$(timeout 10 "$SNAP" -t 127.0.0.1:1 "$c" --help 2> "$T_TMP/err")
    rc=$?
    if [ "$rc" != 0 ]; then
        missing="$missing $c(exit $rc: $(head -c 200 "$T_TMP/err"))"
        continue
    fi
    first=$(echo "$out" | head -n 1)
    case $first in
        "usage: adbc-snap "*" $c" | "usage: adbc-snap "*" $c "*) ;;
        *) t_fail "$c --help: first line is '$first'" ;;
    esac
    [ "$(echo "$out" | wc -l)" -ge 4 ] || t_fail "$c --help is too short: $out"
    [ -s "$T_TMP/err" ] && t_fail "$c --help wrote to stderr: $(cat "$T_TMP/err")"
    out2=$(timeout 10 "$SNAP" help "$c") || t_fail "help $c failed"
    [ "$out" = "$out2" ] || t_fail "help $c differs from $c --help"
done
[ -z "$missing" ] || t_fail "commands without help (add an entry to tools/adbc-snap/help.c):$missing"

t_check "--help anywhere before -- among a command's options is help"
"$SNAP" -t 127.0.0.1:1 pull -a /x /y --help > /dev/null || t_fail "pull -a /x /y --help did not show help"
"$SNAP" -t 127.0.0.1:1 shell -n --help > /dev/null || t_fail "shell -n --help did not show help"

t_check "every entry in help.c names a command"
[ -f "$HELP_C" ] || t_fail "no $HELP_C"
entries=$(sed -n '/^static const snap_help help_table/,/^};/p' "$HELP_C" |
    sed -n 's/^    {"\([a-z0-9-]*\)",.*/\1/p')
[ "$(echo "$entries" | wc -l)" -ge 30 ] || t_fail "could not read the entries of help.c: $entries"
for e in $entries; do
    echo "$cmds" | grep -qx -- "$e" || t_fail "help.c has an entry for '$e', which is no command"
done

t_check "help of an unknown command is a usage error (exit 2)"
"$SNAP" help no-such-command > /dev/null 2> "$T_TMP/err"
rc=$?
[ "$rc" = 2 ] || t_fail "exit $rc"
grep -q 'unknown command "no-such-command"' "$T_TMP/err" || t_fail "message: $(cat "$T_TMP/err")"

t_check "shell CMD --help runs CMD with --help on the device"
td_start dev --no-auth
got=$("$SNAP" -t "127.0.0.1:${TD_PORT[dev]}" shell echo --help) || t_fail "shell echo --help failed"
[ "$got" = "--help" ] || t_fail "shell echo --help printed '$got'"

echo "ok: $T_CHECKS checks"
