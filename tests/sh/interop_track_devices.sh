#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# adbc-snap track-devices [-l] beside Debian's adb (29): both print the
# device list framed as adb's server sends it to a tracker (4 hex digits of
# length, then the list), at once and again each time it changes, while a
# second device is connected and disconnected; the same lists in the same
# order, the same usage error. adb lists a device "offline" for a moment
# while its server connects it; adbc-snap lists it once its handshake
# answers, so frames with an offline device are left out of the comparison.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
t_need_adb
t_init
interop_start
td_start two --authorized-keys-from a
TWO=127.0.0.1:${TD_PORT[two]}
"$SNAP" connect "$DEV" > /dev/null || t_fail "adbc-snap connect $DEV"

# frames FILE: each frame's list on one line ("|" between devices), after
# checking that every frame's length is its list's; transport ids as N.
frames()
{
    python3 - "$1" << 'PY'
import re, sys
b = open(sys.argv[1], 'rb').read()
i = 0
while i < len(b):
    if len(b) - i < 4:
        sys.exit("a frame cut short: %r" % b[i:])
    n = int(b[i:i + 4], 16)
    body = b[i + 4:i + 4 + n]
    if len(body) != n:
        sys.exit("a frame of %d bytes holds %d" % (n, len(body)))
    text = re.sub(rb'transport_id:[0-9]+', b'transport_id:N', body).decode()
    print('|'.join(text.splitlines()))
    i += 4 + n
PY
}

# changes FILE: the lists a tracker saw, those with an offline device left
# out, a list repeated one after the other once.
changes() { frames "$1" | grep -v offline | uniq; }

# wait_for FILE PATTERN [absent]: until the last list in FILE holds (or no
# longer holds) PATTERN; bounded looks, never a measure of speed.
wait_for()
{
    local i last
    for ((i = 0; i < 600; i++)); do
        last=$(frames "$1" 2> /dev/null | tail -n 1)
        if [ -n "$last" ]; then
            if [ "${3:-}" = absent ]; then
                [[ $last != *"$2"* ]] && return 0
            else
                [[ $last == *"$2"* ]] && return 0
            fi
        fi
        sleep 0.1
    done
    return 1
}

# run WHO OUT ARGS...: a tracker (adb's or adbc-snap's) in the background,
# two connected and then disconnected by the same tool while it runs.
run()
{
    local who=$1 out=$2 pid
    shift 2
    if [ "$who" = adb ]; then
        adb_bg a track-devices "$@" > "$out" 2> "$out.err"
        pid=$ADB_BG_PID
    else
        "$SNAP" track-devices "$@" > "$out" 2> "$out.err" &
        pid=$!
        T_BG_PIDS+=("$pid")
    fi
    wait_for "$out" "$DEV" || t_fail "$who track-devices $*: no first list: $(cat "$out" "$out.err")"
    if [ "$who" = adb ]; then adb_run a connect "$TWO"; else "$SNAP" connect "$TWO"; fi > /dev/null ||
        t_fail "$who connect $TWO"
    wait_for "$out" "$TWO" || t_fail "$who track-devices $*: $TWO not listed: $(cat "$out")"
    if [ "$who" = adb ]; then adb_run a disconnect "$TWO"; else "$SNAP" disconnect "$TWO"; fi > /dev/null ||
        t_fail "$who disconnect $TWO"
    wait_for "$out" "$TWO" absent || t_fail "$who track-devices $*: $TWO still listed: $(cat "$out")"
    kill "$pid" 2> /dev/null
    wait "$pid" 2> /dev/null
    [ ! -s "$out.err" ] || t_fail "$who track-devices $* said: $(cat "$out.err")"
}

for opt in "" -l; do
    t_check "track-devices $opt: the same lists, framed as adb's server frames them"
    # shellcheck disable=SC2086 # no option is no word
    run adb "$T_TMP/a$opt" $opt
    # shellcheck disable=SC2086
    run snap "$T_TMP/b$opt" $opt
    changes "$T_TMP/a$opt" > "$T_TMP/a$opt.lists" || t_fail "adb's frames: $(cat "$T_TMP/a$opt")"
    changes "$T_TMP/b$opt" > "$T_TMP/b$opt.lists" || t_fail "adbc-snap's frames: $(cat "$T_TMP/b$opt")"
    [ "$(wc -l < "$T_TMP/a$opt.lists")" = 3 ] || t_fail "adb saw: $(cat "$T_TMP/a$opt.lists")"
    cmp -s "$T_TMP/a$opt.lists" "$T_TMP/b$opt.lists" ||
        t_fail "adb saw '$(cat "$T_TMP/a$opt.lists")', adbc-snap '$(cat "$T_TMP/b$opt.lists")'"
    sed -n 1p "$T_TMP/b$opt.lists"
done

t_check "track-devices -l: the transport ids a device keeps while listed, a new one when back"
ids=$(frames "$T_TMP/b-l" | grep -o "transport_id:N" | wc -l)
[ "$ids" -ge 4 ] || t_fail "no transport ids: $(cat "$T_TMP/b-l")"
python3 - "$T_TMP/b-l" "$DEV" << 'PY' || t_fail "transport ids: $(cat "$T_TMP/b-l")"
import re, sys
b = open(sys.argv[1], 'rb').read().decode()
ids = set(re.findall(re.escape(sys.argv[2]) + r' .*?transport_id:([0-9]+)', b))
sys.exit(0 if len(ids) == 1 else "the first device's ids: %s" % ids)
PY

t_check "track-devices with a wrong option: refused by both"
adb_run a track-devices -x > /dev/null 2>&1
ra=$?
timeout 30 "$SNAP" track-devices -x > /dev/null 2> "$T_TMP/x.err"
rb=$?
# adbc-snap's usage errors exit 2 (adb: 1): docs/adb-compat.md
[ $ra = 1 ] && [ $rb = 2 ] || t_fail "adb exit $ra, adbc-snap exit $rb"
grep -q "track-devices \[-l\]" "$T_TMP/x.err" || t_fail "adbc-snap said: $(cat "$T_TMP/x.err")"
echo "ok: $T_CHECKS checks"
