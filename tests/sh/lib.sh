#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Shared helpers for the shell tests: start and stop the test device, run
# Debian's adb against a private server, report checks. Source it:
#
#   . "$(dirname "$0")/lib.sh"
#   t_init
#   adb_server_start a                   # private server, own HOME and key
#   td_start dev --authorized-keys-from a --prop ro.product.model=X
#   adb_run a connect "127.0.0.1:${TD_PORT[dev]}"
#
# Everything lives in one temporary directory; an EXIT trap stops every
# device and adb server started here (by process id) and removes it, so a
# test never touches the user's adb server (port 5037) or ~/.android.
#
# Run directly (bash tests/sh/lib.sh) it tests its own helpers.

: "${ADBC_SOURCE_DIR:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
: "${ADBC_BUILD_DIR:=$PWD}"
TD_BIN=${TD_BIN:-$ADBC_BUILD_DIR/fixtures/adbc-testdevice}
ADB_BIN=${ADB_BIN:-adb}
# Bound for every single adb invocation (seconds).
ADB_TIMEOUT=${ADB_TIMEOUT:-120} # a bound on a hang: a busy machine slows adb too

declare -A TD_PID TD_PORT TD_ADDR TD_DIR TD_KEYS TD_SANDBOX
declare -A ADB_PID ADB_PORT ADB_HOME
TD_WRAP=()
T_TMP=
TD_FD=
TD_REPLY=
ADB_BG_PID=
T_BG_PIDS=()
T_CHECKS=0

# ---- reporting ----

t_log() { printf '%s\n' "$*" >&2; }

# Print what is being checked (one line per check).
t_check()
{
    T_CHECKS=$((T_CHECKS + 1))
    printf 'check %d: %s\n' "$T_CHECKS" "$*"
}

# Fail the test: message, the logs of every device and server, exit 1.
t_fail()
{
    printf 'FAIL: %s\n' "$*" >&2
    local n
    for n in "${!TD_DIR[@]}"; do
        if [ -s "${TD_DIR[$n]}/stderr" ]; then
            printf -- '--- test device %s stderr (last 30 lines) ---\n' "$n" >&2
            tail -n 30 "${TD_DIR[$n]}/stderr" >&2
        fi
    done
    for n in "${!ADB_HOME[@]}"; do
        if [ -s "$T_TMP/adb-$n/server.log" ]; then
            printf -- '--- adb server %s log (last 15 lines) ---\n' "$n" >&2
            tail -n 15 "$T_TMP/adb-$n/server.log" >&2
        fi
    done
    exit 1
}

# ---- setup / teardown ----

t_init()
{
    T_TMP=$(mktemp -d "${TMPDIR:-/tmp}/adbc-sh.XXXXXX") || { echo "mktemp failed" >&2; exit 1; }
    # A subshell (a `( ... ) &` watchdog, say) killed before it runs a
    # command can still run the traps it copied: only this shell cleans up.
    T_MAIN_PID=$BASHPID
    trap t_cleanup EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    # Nothing of the user's adb setup may leak into the private servers.
    unset ANDROID_SERIAL ANDROID_ADB_SERVER_PORT ADB_SERVER_SOCKET ANDROID_ADB_SERVER_ADDRESS \
        ADB_VENDOR_KEYS ANDROID_SDK_HOME ANDROID_USER_HOME ANDROID_EMULATOR_HOME ADB_TRACE \
        ADB_MDNS ADB_MDNS_AUTO_CONNECT ADB_LIBUSB ADB_BURST_MODE
    # A session server runs detached: one left by a test killed before its
    # EXIT trap ends on its own 20 s after its (killed) device is gone.
    export ADBC_SESSION_IDLE_EXIT=20
    # The remembered devices (adbc-snap connect) are the test's own.
    unset ADBC_DEVICES_FILE
    export XDG_STATE_HOME=$T_TMP/state
}

# _t_ours PID: PID is alive and still a child of this test's shell. Once
# bash has reaped a child that ended, its number is free, and on a busy
# machine (pid_max may be 32768, and ctest runs tests side by side) it soon
# names another test's process: a signal sent by number alone could stop
# that one (a model server, a device). Signal only what this passes.
_t_ours()
{
    local stat
    stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
    # "pid (comm) state ppid ...": comm may hold spaces and parentheses.
    stat=${stat##*) }
    stat=${stat#* }
    stat=${stat%% *}
    [ "$stat" = "$T_MAIN_PID" ] || [ "$stat" = "$BASHPID" ]
}

# adbsrv_start LOG PORT [--until TEXT] ARGS...: adbc-serve as adb's server
# on tcp:127.0.0.1:PORT (no HTTP API) with ARGS and ADB_TRACE=1 (each
# request in LOG); returns once it listens (its --ready-file) and, with
# --until, once TEXT is in LOG ("connected to SERIAL"). ASRV_PID; stopped at
# the test's end. Bounded looks, not a timing; fails if it exits first.
adbsrv_start()
{
    local log=$1 port=$2 until= i
    shift 2
    [ "${1:-}" = --until ] && until=$2 && shift 2
    rm -f "$log.ready"
    ADB_TRACE=1 "${SERVE:-$ADBC_BUILD_DIR/tools/adbc-serve}" --no-http --adb-server "tcp:$port" \
        --ready-file "$log.ready" "$@" 2> "$log" &
    ASRV_PID=$!
    T_BG_PIDS+=("$ASRV_PID")
    for ((i = 0; i < 2400; i++)); do
        [ -e "$log.ready" ] && { [ -z "$until" ] || grep -qF "$until" "$log"; } && return 0
        kill -0 "$ASRV_PID" 2>/dev/null || t_fail "adbc-serve exited: $(cat "$log")"
        sleep 0.05
    done
    t_fail "adbc-serve's adb server: no ${until:-ready file} after 2400 looks: $(tail -n 5 "$log")"
}

# Wait until a process id is gone (it must be our child). $2: timeout s.
_t_wait_gone()
{
    local pid=$1 i
    for ((i = 0; i < ${2:-5} * 20; i++)); do
        _t_ours "$pid" || { wait "$pid" 2>/dev/null; return 0; }
        sleep 0.05
    done
    return 1
}

# Stop a process we started: SIGTERM, then SIGKILL after the timeout.
_t_stop_pid()
{
    local pid=$1
    [ -n "$pid" ] || return 0
    _t_ours "$pid" || { wait "$pid" 2>/dev/null; return 0; }
    kill -TERM "$pid" 2>/dev/null
    _t_wait_gone "$pid" "${2:-5}" && return 0
    _t_ours "$pid" && kill -KILL "$pid" 2>/dev/null
    _t_wait_gone "$pid" 2
    return 1
}

# t_at_exit CMD: run CMD (in this shell, not a subshell) when the test
# exits, before the devices and servers it started are stopped.
T_AT_EXIT=()
t_at_exit() { T_AT_EXIT+=("$1"); }

t_cleanup()
{
    local rc=$? n
    [ "$BASHPID" = "$T_MAIN_PID" ] || exit $rc
    for n in "${T_AT_EXIT[@]}"; do eval "$n"; done
    for n in "${T_BG_PIDS[@]}"; do _t_stop_pid "$n" 2; done
    for n in "${!TD_PID[@]}"; do _t_stop_pid "${TD_PID[$n]}"; done
    for n in "${!ADB_PID[@]}"; do _t_stop_pid "${ADB_PID[$n]}"; done
    if [ -n "$T_TMP" ] && [ -d "$T_TMP" ] && [ -z "${T_KEEP:-}" ]; then
        rm -rf "$T_TMP"
    elif [ -n "$T_TMP" ]; then
        t_log "kept $T_TMP"
    fi
    exit $rc
}

# ---- the test device ----

# td_start NAME [--authorized-keys-from ADBNAME]... [adbc-testdevice options]
# (TD_WRAP, an array, is put in front of the command when set: e.g.
# TD_WRAP=(nsenter -t PID -n) runs the device in another network namespace;
# nsenter execs the device, so its pid is still the device's.)
# Starts a device on a kernel-chosen loopback port with its own sandbox
# and authorized-keys file ($T_TMP/dev-NAME/). --authorized-keys-from adds
# that adb server's public key to the file first. Waits (10 s at most) for
# "listening on" and sets TD_PORT[NAME], TD_ADDR[NAME] (HOST:PORT, as the
# device printed it), TD_PID[NAME], TD_SANDBOX[NAME], TD_KEYS[NAME]. An existing keys file of the same NAME is kept (restart).
td_start()
{
    local name=$1
    shift
    local dir=$T_TMP/dev-$name
    mkdir -p "$dir"
    TD_DIR[$name]=$dir
    TD_SANDBOX[$name]=$dir/sandbox
    TD_KEYS[$name]=$dir/adb_keys
    touch "$dir/adb_keys"
    local args=()
    while [ $# -gt 0 ]; do
        if [ "$1" = --authorized-keys-from ]; then
            cat "${ADB_HOME[$2]}/.android/adbkey.pub" >> "$dir/adb_keys" ||
                t_fail "td_start $name: no key for adb server '$2'"
            echo >> "$dir/adb_keys"
            shift 2
        else
            args+=("$1")
            shift
        fi
    done
    [ -x "$TD_BIN" ] || t_fail "test device not built: $TD_BIN (build the adbc-testdevice target)"
    : > "$dir/stdout"
    : > "$dir/stderr"
    # Appending, so a test may truncate the log of a running device.
    ${TD_WRAP[@]+"${TD_WRAP[@]}"} \
        "$TD_BIN" --port 0 --sandbox "$dir/sandbox" --authorized-keys "$dir/adb_keys" \
        --pidfile "$dir/pid" "${args[@]}" >> "$dir/stdout" 2>> "$dir/stderr" &
    local pid=$!
    TD_PID[$name]=$pid
    local i line=
    for ((i = 0; i < 2400; i++)); do # bounded looks; the exit check ends it early
        line=$(grep -m1 '^listening on ' "$dir/stdout" 2>/dev/null)
        [ -n "$line" ] && break
        kill -0 "$pid" 2>/dev/null || t_fail "test device $name exited at start"
        sleep 0.05
    done
    [ -n "$line" ] || t_fail "test device $name: no 'listening on' line after 2400 looks 0.05 s apart"
    TD_PORT[$name]=${line##*:}
    TD_ADDR[$name]=${line#listening on }
    case ${TD_PORT[$name]} in
        '' | *[!0-9]*) t_fail "test device $name: bad line '$line'" ;;
    esac
}

# td_kill NAME: the device dies at once, as a phone pulled away does: its
# whole process tree (the listener, each connection's process, the commands
# they run) is sent SIGKILL, parents first. Killed after the command they
# run, a connection's process could see the command end and close its
# stream cleanly before it died itself. TD_KILLED holds the pids.
td_kill()
{
    local name=$1
    _td_tree() { local k; for k in $(ps --ppid "$1" -o pid=); do _td_tree "$k"; done; echo "$1"; }
    TD_KILLED=$(_td_tree "${TD_PID[$name]}" | tac | tr '\n' ' ')
    kill -9 $TD_KILLED 2> /dev/null
    wait "${TD_PID[$name]}" 2> /dev/null
    unset "TD_PID[$name]"
}

# td_stop NAME: SIGTERM, wait (60 s: a bound on a hang), and fail if it
# does not exit cleanly.
td_stop()
{
    local name=$1 pid=${TD_PID[$1]}
    [ -n "$pid" ] || return 0
    _t_ours "$pid" && kill -TERM "$pid" 2>/dev/null
    _t_wait_gone "$pid" 60 || {
        _t_ours "$pid" && kill -KILL "$pid" 2>/dev/null
        t_fail "test device $name (pid $pid) did not exit within 60 s of SIGTERM"
    }
    unset "TD_PID[$name]"
    td_check_log "$name"
}

# Fail if a device's log holds a sanitizer report or a protocol error (in
# any of its processes: connection processes log to the same stderr).
td_check_log()
{
    local log=${TD_DIR[$1]}/stderr
    if grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error:|protocol error' "$log"; then
        t_fail "test device $1 logged an error: $(grep -m3 -E 'Sanitizer|runtime error|protocol error' "$log")"
    fi
}

# td_hello PORT: open a connection (its descriptor in TD_FD), send a host
# CNXN and wait (5 s) for the device's first packet; TD_REPLY gets its
# command ("CNXN" with --no-auth, "AUTH" otherwise). Not in $(...): the
# descriptor must stay in this shell. Close with: exec {TD_FD}<&-
td_hello()
{
    local banner='host::features=shell_v2' len
    TD_REPLY=
    exec {TD_FD}<>"/dev/tcp/127.0.0.1/$1" || return 1
    # CNXN, version 0x01000001, max payload 1 MiB, banner length, no data
    # check (allowed before the handshake), magic = ~CNXN.
    printf -v len '\\x%02x' "${#banner}"
    printf "CNXN\\x01\\x00\\x00\\x01\\x00\\x00\\x10\\x00${len}\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\xbc\\xb1\\xa7\\xb1%s" \
        "$banner" >&$TD_FD || return 1
    read -r -N 4 -t 5 TD_REPLY <&$TD_FD
}

# Children of a process (connection processes of a test device).
_t_children() { ps --ppid "$1" -o pid= | wc -l; }
_t_zombies() { ps --ppid "$1" -o stat= | grep -c '^Z'; }

# ---- a second network namespace ----

# netns_phone [v6only]: inside the test's own private network namespace
# (tests/sh/lib_netns.sh, or an `unshare -n` of the script's own), a second
# one (the "phone") joined to it by a veth pair: vhost here (10.77.0.1,
# fe80::a), vphone there (10.77.0.2, fe80::b); v6only: link-local IPv6
# only, no IPv4 at all. Brings lo up here. Sets PHONE (the namespace's
# holder pid, stopped at exit, which ends the namespace and its veth) and
# IN_PHONE (nsenter into it: network and mount namespaces).
PHONE=
IN_PHONE=()
netns_phone()
{
    local v6only=${1:-}
    ip link set lo up || t_fail "cannot bring lo up"
    unshare -n -m bash -c 'exec sleep 600' &
    PHONE=$!
    T_BG_PIDS+=("$PHONE")
    local i
    for ((i = 0; i < 100; i++)); do
        [ "$(readlink "/proc/$PHONE/ns/net")" != "$(readlink /proc/self/ns/net)" ] && break
        sleep 0.02
    done
    IN_PHONE=(nsenter -t "$PHONE" -n -m)
    ip link add vhost type veth peer name vphone || t_fail "cannot make a veth pair"
    ip link set vphone netns "$PHONE" || t_fail "cannot move vphone"
    # Only the addresses given here: no kernel-made link-local address (its
    # duplicate detection would change the interface while a test runs).
    ip link set dev vhost addrgenmode none
    [ "$v6only" = v6only ] || ip addr add 10.77.0.1/24 dev vhost
    ip -6 addr add fe80::a/64 dev vhost nodad
    ip link set vhost up
    local v4='ip addr add 10.77.0.2/24 dev vphone &&'
    [ "$v6only" = v6only ] && v4=
    "${IN_PHONE[@]}" sh -c "ip link set lo up && ip link set dev vphone addrgenmode none &&
        $v4 ip -6 addr add fe80::b/64 dev vphone nodad && ip link set vphone up" ||
        t_fail "cannot set up the phone's namespace"
}

# ---- private adb servers ----

# A TCP port nobody listens on, outside adb's emulator range 5555-5585.
_t_free_port()
{
    local p i
    for ((i = 0; i < 50; i++)); do
        p=$((20000 + RANDOM % 10000))
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
            echo "$p"
            return 0
        fi
    done
    return 1
}

# adb_home_make NAME: the HOME (and ~/.android/adbkey) of adb server NAME,
# made before the server starts (a test device that must be up before the
# server, such as an emulator port adb scans only at start, can then trust
# the key). Sets ADB_HOME[NAME]; adb_server_start NAME keeps the key.
adb_home_make()
{
    local name=$1
    local dir=$T_TMP/adb-$name
    command -v "$ADB_BIN" > /dev/null || t_fail "adb not found (Debian: apt install adb)"
    mkdir -p "$dir/home/.android" "$dir/tmp"
    ADB_HOME[$name]=$dir/home
    HOME=$dir/home TMPDIR=$dir/tmp timeout "$ADB_TIMEOUT" "$ADB_BIN" keygen \
        "$dir/home/.android/adbkey" > "$dir/keygen.log" 2>&1 ||
        t_fail "adb keygen failed: $(cat "$dir/keygen.log")"
}

# adb_server_start NAME: an adb server on a private port with its own HOME
# (and so its own ~/.android/adbkey, generated here) and TMPDIR (its log).
# Sets ADB_PORT[NAME], ADB_PID[NAME], ADB_HOME[NAME].
adb_server_start()
{
    local name=$1
    local dir=$T_TMP/adb-$name
    [ -s "$dir/home/.android/adbkey" ] || adb_home_make "$name"
    local attempt port pid i
    for ((attempt = 0; attempt < 5; attempt++)); do
        port=$(_t_free_port) || t_fail "no free port for an adb server"
        # nodaemon: the server is our child, so its pid is known and it can
        # be stopped by pid instead of `adb kill-server`.
        HOME=$dir/home TMPDIR=$dir/tmp "$ADB_BIN" -P "$port" nodaemon server \
            > "$dir/server.log" 2>&1 < /dev/null &
        pid=$!
        for ((i = 0; i < 200; i++)); do
            kill -0 "$pid" 2>/dev/null || break
            if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
                ADB_PID[$name]=$pid
                ADB_PORT[$name]=$port
                return 0
            fi
            sleep 0.05
        done
        _t_stop_pid "$pid" 2 # lost a race for the port, or too slow: retry
    done
    t_fail "adb server $name did not start: $(tail -n 5 "$dir/server.log")"
}

# t_need_adb: skip the test (status 77) when Debian's adb is not installed.
t_need_adb()
{
    command -v "$ADB_BIN" > /dev/null && return 0
    echo "SKIP: Debian's adb is not installed (apt install adb)"
    exit 77
}

# t_need_cmds CMD...: skip the test (exit 77) unless every command is
# installed (scripts/packages.txt lists them).
t_need_cmds()
{
    local c
    for c in "$@"; do
        command -v "$c" > /dev/null && continue
        echo "SKIP: $c not installed (scripts/packages.txt)"
        exit 77
    done
}

# t_built NAME: whether the build has the optional feature NAME (SODIUM,
# WSLAY, CURL, MCP, SERVE, AGENT, SANITIZE, TSAN, SHARED, MUSL, SCDOC...),
# read from build-features, the file the configure step writes in the build
# directory (cmake/AdbcOptionalDep.cmake, adbc_feature). A name the file
# does not list fails the test: a misspelt feature must not read as "off".
t_built()
{
    local f=$ADBC_BUILD_DIR/build-features line
    [ -r "$f" ] || t_fail "$f is missing: configure the build again (cmake -S . -B build)"
    line=$(grep -E "^$1=(ON|OFF)\$" "$f") ||
        t_fail "$f does not say whether the build has $1"
    [ "$line" = "$1=ON" ]
}

# t_need_built NAME WHY: skip the test (status 77) when the build lacks the
# optional feature NAME; WHY says what it is.
t_need_built()
{
    t_built "$1" && return 0
    echo "SKIP: built without $1 ($2)"
    exit 77
}

# home_with_adb_key NAME: HOME=$T_TMP/home holding adb server NAME's key, so
# adbc-snap and that adb are let in by the same authorised key.
home_with_adb_key()
{
    export HOME=$T_TMP/home
    mkdir -p "$HOME/.android"
    cp "${ADB_HOME[$1]}/.android/adbkey" "${ADB_HOME[$1]}/.android/adbkey.pub" "$HOME/.android/"
}

# interop_start [TD_ARGS...]: adbc-snap and Debian's adb side by side: adb
# server "a", HOME with its key, test device "dev" authorising it and
# connected in adb; SNAP, DEV (its address: 127.0.0.1:PORT, or the --host
# given) and CTL (its control directory).
interop_start()
{
    SNAP=${ADBC_SNAP:-$ADBC_BUILD_DIR/tools/adbc-snap}
    [ -x "$SNAP" ] || t_fail "adbc-snap not built: $SNAP"
    adb_server_start a
    home_with_adb_key a
    td_start dev --authorized-keys-from a "$@"
    DEV=${TD_ADDR[dev]}
    CTL=${TD_SANDBOX[dev]}/data/local/tmp/.adbc-test
    adb_run a connect "$DEV" > /dev/null
    adb_wait_state a "$DEV" device 10 || t_fail "adb: $DEV not ready"
}

# adb_run NAME ARGS...: Debian's adb against server NAME, bounded by
# ADB_TIMEOUT seconds. The client gets the server's HOME too.
adb_run()
{
    local name=$1
    shift
    HOME=${ADB_HOME[$name]} TMPDIR=$T_TMP/adb-$name/tmp \
        timeout "$ADB_TIMEOUT" "$ADB_BIN" -P "${ADB_PORT[$name]}" "$@"
}

# adb_bg NAME ARGS...: like adb_run, in the background; ADB_BG_PID is the
# adb client's own pid (kill it to make adb close its stream). Stopped at
# exit if still running.
adb_bg()
{
    local name=$1
    shift
    HOME=${ADB_HOME[$name]} TMPDIR=$T_TMP/adb-$name/tmp \
        "$ADB_BIN" -P "${ADB_PORT[$name]}" "$@" &
    ADB_BG_PID=$!
    T_BG_PIDS+=("$ADB_BG_PID")
}

# adb_wait_state NAME SERIAL STATE [SECONDS]: poll `adb devices` until
# SERIAL is listed in STATE (device, unauthorized, offline).
adb_wait_state()
{
    local name=$1 serial=$2 state=$3 secs=${4:-10} i
    # SECS is what the state should take; every caller fails without it, so
    # the bound is at least 120 s: a busy machine may slow adb many times over.
    ((secs < 120)) && secs=120
    for ((i = 0; i < secs * 10; i++)); do
        if adb_run "$name" devices | grep -q "^$serial[[:space:]]\+$state\$"; then
            return 0
        fi
        sleep 0.1
    done
    return 1
}

adb_server_stop()
{
    local name=$1
    _t_stop_pid "${ADB_PID[$name]}" 5 || t_fail "adb server $name needed SIGKILL"
    unset "ADB_PID[$name]"
}

# ---- a real browser ----

# chromium_start ARGS...: Debian's chromium, headless, its DevTools on a
# kernel-chosen port (CDP_PORT once it listens), its profile in
# $T_TMP/chromium, with ARGS added (a window size, the first page). A test
# that needs it checks `command -v chromium` first and skips without.
chromium_start()
{
    local bin i
    bin=$(command -v chromium || command -v chromium-browser) || t_fail "chromium is not installed"
    "$bin" --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run \
        --remote-debugging-port=0 --user-data-dir="$T_TMP/chromium" "$@" > "$T_TMP/chromium.out" 2>&1 &
    T_BG_PIDS+=("$!")
    for ((i = 0; i < 300; i++)); do
        [ -s "$T_TMP/chromium/DevToolsActivePort" ] && break
        sleep 0.1
    done
    CDP_PORT=$(head -n1 "$T_TMP/chromium/DevToolsActivePort" 2> /dev/null)
    [ -n "$CDP_PORT" ] || t_fail "chromium did not start: $(tail -5 "$T_TMP/chromium.out")"
}

# ---- self-test ----

_t_selftest()
{
    t_init
    t_check "td_start brings a device up on a loopback port outside 5555-5585"
    td_start self --no-auth
    local port=${TD_PORT[self]} pid=${TD_PID[self]}
    [ "$port" -gt 0 ] && { [ "$port" -lt 5555 ] || [ "$port" -gt 5585 ]; } ||
        t_fail "port $port"
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null || t_fail "nothing listens on $port"
    [ "$(cat "${TD_DIR[self]}/pid")" = "$pid" ] || t_fail "pidfile does not hold $pid"
    [ -f "${TD_SANDBOX[self]}/data/local/tmp/.adbc-test/props" ] || t_fail "no props file"

    t_check "the device answers a raw CNXN (no auth) and hangs up cleanly"
    td_hello "$port"
    [ "$TD_REPLY" = CNXN ] || t_fail "no CNXN answer (got '$TD_REPLY')"
    exec {TD_FD}<&-

    t_check "td_stop ends it by pid; port closed, pidfile removed"
    td_stop self
    kill -0 "$pid" 2>/dev/null && t_fail "device pid $pid still alive"
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && t_fail "port $port still open"
    [ -e "${TD_DIR[self]}/pid" ] && t_fail "pidfile left behind"

    t_check "a bad option makes td_start's device exit with a message"
    if "$TD_BIN" --sandbox "$T_TMP/x" --port nope > /dev/null 2> "$T_TMP/bad.err"; then
        t_fail "--port nope was accepted"
    fi
    grep -q -- "--port" "$T_TMP/bad.err" || t_fail "no message naming --port"

    if command -v "$ADB_BIN" > /dev/null; then
        t_check "adb_server_start runs a private server with its own key; stopped by pid"
        adb_server_start self
        local apid=${ADB_PID[self]} aport=${ADB_PORT[self]}
        [ -s "${ADB_HOME[self]}/.android/adbkey.pub" ] || t_fail "no adbkey.pub"
        [ "$aport" != 5037 ] || t_fail "used the default adb port"
        adb_run self devices > /dev/null || t_fail "adb devices against the private server"
        adb_server_stop self
        kill -0 "$apid" 2>/dev/null && t_fail "adb server $apid still alive"
        (exec 3<>"/dev/tcp/127.0.0.1/$aport") 2>/dev/null && t_fail "adb port $aport still open"
    else
        echo "adb not installed: adb helpers not checked"
    fi
    echo "ok: $T_CHECKS checks"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    set -u
    _t_selftest
fi
