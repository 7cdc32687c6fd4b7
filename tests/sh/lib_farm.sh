#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Shared by the farm's tests and scripts/bench-farm (docs/farm.md), sourced
# after lib.sh's t_init and lib_serve.sh: a real redis-server on a loopback
# port (AOF on, every write synced, a password, its files in a temporary
# directory), and adbc-serve nodes joined to it.
REDIS_SERVER=$(command -v redis-server) || t_fail "redis-server is needed (scripts/packages.txt)"
REDIS_CLI=$(command -v redis-cli) || t_fail "redis-cli is needed (redis-tools, scripts/packages.txt)"
RPASS=farm-pass-$RANDOM$RANDOM
RDIR=$T_TMP/redis
printf '%s\n' "$RPASS" > "$T_TMP/farm.pass"
chmod 600 "$T_TMP/farm.pass"
RPID=
RPORT=

# redis_start: start (or start again, on the same port and files) the farm's Redis.
redis_start()
{
    mkdir -p "$RDIR"
    local try i
    for ((try = 0; try < 5; try++)); do
        [ -n "$RPORT" ] || RPORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
        "$REDIS_SERVER" --port "$RPORT" --bind 127.0.0.1 --dir "$RDIR" --appendonly yes \
            --appendfsync always --save '' --requirepass "$RPASS" --daemonize no \
            --logfile "$RDIR/log" &
        RPID=$!
        T_BG_PIDS+=("$RPID")
        for ((i = 0; i < 200; i++)); do
            [ "$(R PING 2> /dev/null)" = PONG ] && return 0
            kill -0 "$RPID" 2> /dev/null || break
            sleep 0.05
        done
        kill "$RPID" 2> /dev/null
        wait "$RPID" 2> /dev/null
        grep -q "Address already in use" "$RDIR/log" 2> /dev/null && RPORT=
    done
    t_fail "redis-server did not start: $(tail -n 5 "$RDIR/log")"
}
# redis_kill: SIGKILL (nothing flushed at exit: the AOF has what was synced).
redis_kill()
{
    kill -KILL "$RPID"
    wait "$RPID" 2> /dev/null
}
R() { "$REDIS_CLI" -h 127.0.0.1 -p "$RPORT" -a "$RPASS" --no-auth-warning "$@"; }

declare -A NPID NURL
# node_start NAME ARGS...: an adbc-serve node NAME of the farm with ARGS
# (its devices, its model); NURL[NAME] once it listens, log in $T_TMP/node.NAME.log.
# FARM_URL: another farm's URL than the Redis redis_start started.
node_start()
{
    local n=$1 i
    shift
    rm -f "$T_TMP/port.$n"
    "$SERVE" "$@" --farm "${FARM_URL:-redis://127.0.0.1:$RPORT}" --farm-node "$n" \
        --farm-password-file "$T_TMP/farm.pass" --listen 127.0.0.1:0 --token-file "$TOK" \
        --ready-file "$T_TMP/port.$n" 2>> "$T_TMP/node.$n.log" &
    NPID[$n]=$!
    T_BG_PIDS+=("${NPID[$n]}")
    for ((i = 0; i < 400; i++)); do
        [ -s "$T_TMP/port.$n" ] && break
        kill -0 "${NPID[$n]}" 2> /dev/null || t_fail "node $n exited: $(cat "$T_TMP/node.$n.log")"
        sleep 0.05
    done
    [ -s "$T_TMP/port.$n" ] || t_fail "node $n did not start: $(cat "$T_TMP/node.$n.log")"
    NURL[$n]=http://127.0.0.1:$(cat "$T_TMP/port.$n")
}
# N NODE [CURL ARGS...] PATH: a request to NODE; body in $OUT, status in $code.
N()
{
    URL=${NURL[$1]}
    shift
    H "$@"
}
# node_joined NODE: until NODE says it is in the farm.
node_joined()
{
    local i
    for ((i = 0; i < 400; i++)); do
        N "$1" /v1/farm
        [ "$code" = 200 ] && [ "$(J .result.available)" = true ] && return 0
        sleep 0.05
    done
    t_fail "node $1 did not join the farm: $(cat "$OUT"); $(tail -n 5 "$T_TMP/node.$1.log")"
}
# node_refused NODE WORDS: until NODE says the farm is unavailable for a
# reason that holds WORDS (an extended regular expression).
node_refused()
{
    local i
    for ((i = 0; i < 200; i++)); do
        N "$1" /v1/farm
        [ "$code" = 200 ] && [ "$(J .result.available)" = false ] &&
            J .result.error | grep -qE "$2" && return 0
        sleep 0.05
    done
    t_fail "node $1 did not say '$2': $(cat "$OUT")"
}
# farm_wait NODE ID [SECONDS]: until farm task ID has ended (asked of NODE); its JSON in $OUT.
farm_wait()
{
    local i end=$(( ${3:-60} * 10 ))
    for ((i = 0; i < end; i++)); do
        N "$1" "/v1/farm/tasks/$2"
        if [ "$code" = 200 ]; then
            case $(J .result.status) in queued | running) ;; *) return 0 ;; esac
        fi
        sleep 0.1
    done
    t_fail "farm task $2 did not end: $(cat "$OUT")"
}
# nodes_stop_clean: SIGTERM every node still running; each must exit 0
# within 30 s, and no node's log may hold a sanitizer's report (a TSan or
# ASan build halts a node on one, which the farm would otherwise take for
# a dead node).
nodes_stop_clean()
{
    local n pid rc i st
    for n in "${!NPID[@]}"; do
        pid=${NPID[$n]}
        _t_ours "$pid" || continue
        kill -TERM "$pid"
        for ((i = 0; i < 600; i++)); do
            st=$(cat "/proc/$pid/stat" 2> /dev/null) || break
            st=${st##*) }
            [ "${st%% *}" = Z ] && break
            sleep 0.05
        done
        if [ "$i" = 600 ]; then
            kill -KILL "$pid"
            wait "$pid" 2> /dev/null
            t_fail "node $n did not stop within 30 s of SIGTERM: $(tail -n 5 "$T_TMP/node.$n.log")"
        fi
        wait "$pid"
        rc=$?
        [ "$rc" = 0 ] || t_fail "node $n exited $rc on SIGTERM: $(tail -n 5 "$T_TMP/node.$n.log")"
    done
    if grep -qE '(ERROR|WARNING): [A-Za-z]*Sanitizer|runtime error:' "$T_TMP"/node.*.log; then
        t_fail "a node logged a sanitizer report: $(grep -m3 -E 'Sanitizer|runtime error' "$T_TMP"/node.*.log)"
    fi
}
