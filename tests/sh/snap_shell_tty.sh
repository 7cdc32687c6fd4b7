#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# adbc-snap shell as adb's shell, side by side with Debian's adb against the
# same test device: with no command and a terminal, a PTY shell (shell v2
# "pty"; shell v1 on a legacy device) with our terminal raw while it runs
# and restored after, the window size sent at start and on SIGWINCH, ^C
# delivered to the device, the exit status returned; adb's -t, -tt, -T, -x,
# -n, -e (the escape: ~. disconnects); an unknown option named. A terminal is a pseudo-terminal this test
# opens (python3's pty), so it runs without one.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
t_init
SNAP=${ADBC_SNAP:-$ADBC_BUILD_DIR/tools/adbc-snap}
[ -x "$SNAP" ] || t_fail "adbc-snap not built: $SNAP"
command -v python3 > /dev/null || t_fail "python3 not found"
export HOME=$T_TMP/home
mkdir -p "$HOME"
HAVE_ADB=
if command -v "$ADB_BIN" > /dev/null; then
    HAVE_ADB=1
    adb_server_start a
    cp "${ADB_HOME[a]}/.android/adbkey" "${ADB_HOME[a]}/.android/adbkey.pub" "$T_TMP/" 2>/dev/null
    mkdir -p "$HOME/.android"
    cp "${ADB_HOME[a]}/.android/adbkey" "${ADB_HOME[a]}/.android/adbkey.pub" "$HOME/.android/"
    td_start dev --authorized-keys-from a
    td_start old --authorized-keys-from a --legacy
    adb_run a connect "127.0.0.1:${TD_PORT[dev]}" > /dev/null
    adb_run a connect "127.0.0.1:${TD_PORT[old]}" > /dev/null
    adb_wait_state a "127.0.0.1:${TD_PORT[dev]}" device 120 || t_fail "adb: device not ready"
    adb_wait_state a "127.0.0.1:${TD_PORT[old]}" device 120 || t_fail "adb: legacy device not ready"
else
    echo "note: Debian's adb is not installed: adbc-snap is checked alone"
    td_start dev --accept-new-keys
    td_start old --accept-new-keys --legacy
fi
DEV=127.0.0.1:${TD_PORT[dev]}
OLD=127.0.0.1:${TD_PORT[old]}

# drive.py SCRIPT ARGV...: runs ARGV on a fresh pseudo-terminal of 33x101
# (set before the program starts), plays SCRIPT (a JSON list of steps:
# ["wait", REGEX], ["send", TEXT], ["send_until", TEXT, REGEX], ["resize",
# ROWS, COLS], ["term"]), then
# waits for the program's end. Prints the output (CRs removed) and a last
# line "exit N restored R": N the exit status (128+signal when killed), R
# 1 when the terminal is back in line mode with echo (as before).
cat > "$T_TMP/drive.py" << 'PY'
import fcntl, json, os, re, select, signal, struct, sys, termios, time
steps = json.loads(sys.argv[1])
argv = sys.argv[2:]
master, slave = os.openpty()
fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 33, 101, 0, 0))
before = termios.tcgetattr(slave)
pid = os.fork()
if pid == 0:
    os.setsid()
    fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
    for k in (0, 1, 2):
        os.dup2(slave, k)
    os.close(master)
    os.execvp(argv[0], argv)
out, pos = b"", 0
# One read: 1 data came, 0 nothing within t seconds, -1 end (EOF or EIO).
def pump(t):
    global out
    r, _, _ = select.select([master], [], [], t)
    if not r:
        return 0
    try:
        d = os.read(master, 65536)
    except OSError:
        return -1
    if not d:
        return -1
    out += d.replace(b"\r", b"")
    return 1
def fail(why):
    sys.stdout.write(out.replace(b"\r", b"").decode(errors="replace"))
    print("\nSTEP FAILED:", why)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    sys.exit(1)
for st in steps:
    if st[0] == "wait":
        deadline = time.time() + 300  # a bound on a hang, not a timing
        while True:
            m = re.search(st[1].encode(), out[pos:])
            if m:
                pos += m.end()
                break
            if time.time() > deadline or pump(0.2) < 0:
                fail("no %r" % st[1])
    elif st[0] == "send":
        os.write(master, st[1].encode())
    elif st[0] == "send_until":
        # Send TEXT again every second until REGEX shows: a ^C that comes
        # while the shell is between forking a command and handing it the
        # terminal reaches the shell, not the command, and the command
        # runs on; the next one reaches the command.
        deadline = time.time() + 300  # a bound on a hang, not a timing
        while True:
            os.write(master, st[1].encode())
            again = time.time() + 1
            m = None
            while time.time() < again:
                m = re.search(st[2].encode(), out[pos:])
                if m or pump(0.2) < 0:
                    break
            m = m or re.search(st[2].encode(), out[pos:])
            if m:
                pos += m.end()
                break
            if time.time() > deadline:
                fail("no %r after sending %r" % (st[2], st[1]))
    elif st[0] == "resize":
        fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", st[1], st[2], 0, 0))
    elif st[0] == "term":
        os.kill(pid, signal.SIGTERM)
deadline = time.time() + 300  # a bound on a hang, not a timing
while time.time() < deadline:
    done, status = os.waitpid(pid, os.WNOHANG)
    if done:
        break
    pump(0.1)
else:
    fail("the program did not end")
while pump(0) > 0:
    pass
code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)
after = termios.tcgetattr(slave)
restored = int(after[3] == before[3] and after[0] == before[0] and after[1] == before[1])
sys.stdout.write(out.replace(b"\r", b"").decode(errors="replace"))
print("\nexit %d restored %d" % (code, restored))
PY

PROMPT='[#$] $'
# run NAME SCRIPT ARGV...: drive.py into $T_TMP/NAME.out; sets LAST (its
# last line).
run()
{
    local name=$1 script=$2
    shift 2
    HOME=$HOME python3 "$T_TMP/drive.py" "$script" "$@" > "$T_TMP/$name.out" 2>&1 ||
        t_fail "$name: $(tail -n 15 "$T_TMP/$name.out")"
    LAST=$(tail -n 1 "$T_TMP/$name.out")
}
ADB=()
[ -n "$HAVE_ADB" ] && ADB=(env HOME="${ADB_HOME[a]}" TMPDIR="$T_TMP/adb-a/tmp" "$ADB_BIN" -P "${ADB_PORT[a]}")
# pick adb|adbc SERIAL: P is the program and its device option (1: no adb).
pick()
{
    if [ "$1" = adb ]; then
        [ -n "$HAVE_ADB" ] || return 1
        P=("${ADB[@]}" -s "$2")
    else
        P=("$SNAP" -t "$2")
    fi
}

t_check "shell with no command on a terminal: a PTY shell; window size at start and on SIGWINCH; ^C to the device; exit status; terminal restored"
# Debian's adb (29.0.6) does not pass SIGWINCH on: its run leaves the resize out.
RESIZE='["wait","'$PROMPT'"],["resize",40,120],["send","stty size\n"],["wait","\n40 120\n"],'
SCRIPT_A='[["wait","'$PROMPT'"],["send","stty size\n"],["wait","\n33 101\n"],'
SCRIPT_B='["wait","'$PROMPT'"],["send","echo sleeping-$((2+5)); sleep 600; echo after-sleep\n"],
 ["wait","\nsleeping-7\n"],["send_until","\u0003","'$PROMPT'"],["send","echo alive-$((1+1))\n"],["wait","\nalive-2\n"],
 ["wait","'$PROMPT'"],["send","exit 4\n"]]'
for who in adbc adb; do
    pick $who "$DEV" || continue
    if [ $who = adb ]; then
        run pty-$who "$SCRIPT_A$SCRIPT_B" "${P[@]}" shell
    else
        run pty-$who "$SCRIPT_A$RESIZE$SCRIPT_B" "${P[@]}" shell
    fi
    [ "$LAST" = "exit 4 restored 1" ] || t_fail "$who: $LAST: $(tail -n 20 "$T_TMP/pty-$who.out")"
    grep -qx "after-sleep" "$T_TMP/pty-$who.out" && t_fail "$who: ^C did not stop the sleep"
done

t_check "SIGTERM while the PTY shell runs: exit 143, terminal restored"
run term '[["wait","'"$PROMPT"'"],["term"]]' "$SNAP" -t "$DEV" shell
[ "$LAST" = "exit 143 restored 1" ] || t_fail "SIGTERM: $LAST"

t_check "a legacy device (no shell v2): the PTY shell through shell v1, exit status 0 as adb"
SCRIPT='[["wait","'$PROMPT'"],["send","echo v1-$((2*3))\n"],["wait","\nv1-6\n"],["wait","'$PROMPT'"],["send","exit 5\n"]]'
for who in adbc adb; do
    pick $who "$OLD" || continue
    run old-$who "$SCRIPT" "${P[@]}" shell
    echo "$who legacy: $LAST"
    case $LAST in "exit "*" restored 1") ;; *) t_fail "$who legacy: $LAST" ;; esac
    eval "old_$who='$LAST'"
done
[ -z "$HAVE_ADB" ] || [ "$old_adbc" = "$old_adb" ] || t_fail "legacy: adbc-snap '$old_adbc', adb '$old_adb'"

t_check "-t, -tt, -T with a command as adb: a PTY only when asked and possible"
# On a terminal: -t gives a PTY, -T does not; from a pipe -t does not (with
# a note), -tt does.
for who in adbc adb; do
    pick $who "$DEV" || continue
    run t-$who '[["wait","(^|\\n)/dev/"]]' "${P[@]}" shell -t tty
    [ "$LAST" = "exit 0 restored 1" ] || t_fail "$who shell -t tty: $LAST"
    run T-$who '[["wait","not a tty"]]' "${P[@]}" shell -T tty
    case $LAST in "exit "[1-9]*" restored 1") ;; *) t_fail "$who shell -T tty: $LAST" ;; esac
    out=$(echo | "${P[@]}" shell -t tty 2> "$T_TMP/t.err")
    [ "$out" = "not a tty" ] || t_fail "$who: -t from a pipe: $out"
    grep -qi "stdin is not a terminal" "$T_TMP/t.err" || t_fail "$who -t note: $(cat "$T_TMP/t.err")"
    out=$(echo | "${P[@]}" shell -tt tty 2> /dev/null | tr -d '\r' | grep -m1 .)
    case $out in /dev/*) ;; *) t_fail "$who: -tt from a pipe: '$out'" ;; esac
done

t_check "-e: ~. at a line's start disconnects (exit 0, terminal restored); -e C changes it; -e none passes ~. on; as adb"
for who in adbc adb; do
    pick $who "$DEV" || continue
    run esc-$who '[["wait","'"$PROMPT"'"],["send","echo a~.b\n"],["wait","\na~.b\n"],["wait","'"$PROMPT"'"],["send","~."]]' "${P[@]}" shell
    [ "$LAST" = "exit 0 restored 1" ] || t_fail "$who ~.: $LAST"
    grep -q "\[ disconnected \]" "$T_TMP/esc-$who.out" || t_fail "$who ~.: $(tail -n 5 "$T_TMP/esc-$who.out")"
    run escp-$who '[["wait","'"$PROMPT"'"],["send","%."]]' "${P[@]}" shell -e %
    [ "$LAST" = "exit 0 restored 1" ] || t_fail "$who -e % then %.: $LAST"
    run escn-$who '[["wait","'"$PROMPT"'"],["send","~.\n"],["wait","'"$PROMPT"'"],["send","exit 6\n"]]' "${P[@]}" shell -e none
    [ "$LAST" = "exit 6 restored 1" ] || t_fail "$who -e none: $LAST"
    "${P[@]}" shell -e ab true > /dev/null 2> "$T_TMP/e.err" && t_fail "$who: -e ab accepted"
    grep -q "single-character" "$T_TMP/e.err" || t_fail "$who -e ab: $(cat "$T_TMP/e.err")"
done

t_check "-x (shell v1: no exit status, stderr mixed in), -n (stdin not read), as adb"
for who in adbc adb; do
    pick $who "$DEV" || continue
    out=$("${P[@]}" shell -x 'echo out; echo err >&2; exit 3' 2> /dev/null)
    rc=$?
    [ $rc = 0 ] || t_fail "$who shell -x: exit $rc"
    [ "$(printf '%s' "$out" | tr -d '\r' | sort | tr '\n' ' ')" = "err out " ] ||
        t_fail "$who shell -x output: '$out'"
    out=$(echo from-stdin | "${P[@]}" shell -n cat)
    [ -z "$out" ] || t_fail "$who shell -n cat read stdin: '$out'"
    out=$(echo from-stdin | "${P[@]}" shell -nT cat)
    [ -z "$out" ] || t_fail "$who shell -nT cat read stdin: '$out'"
done

t_check "shell with no command and stdin a pipe: the device's shell reads the script (no PTY)"
for who in adbc adb; do
    pick $who "$DEV" || continue
    out=$(printf 'echo script-$((3+4))\nexit 6\n' | "${P[@]}" shell)
    rc=$?
    [ "$out" = script-7 ] && [ $rc = 6 ] || t_fail "$who: script via stdin: '$out', exit $rc"
done

t_check "an unknown shell option names itself; -- ends the options"
out=$("$SNAP" -t "$DEV" shell -q true 2>&1)
[ $? = 2 ] || t_fail "shell -q: exit $?"
case $out in *"unknown option -q"*) ;; *) t_fail "shell -q said: $out" ;; esac
[ "$("$SNAP" -t "$DEV" shell -- echo -n x)" = x ] || t_fail "shell -- echo -n x"

echo "ok: $T_CHECKS checks"
