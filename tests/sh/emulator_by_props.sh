#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The emulator allowlist decided by what the device says, never by its name,
# in the agent (adbc-snap agent) and adbc-serve's tasks as in adbc-mcp
# (tests/mcp/test.mjs "no config: a phone on an emulator port"): an adbd on
# 127.0.0.1:5555 is listed as emulator-5554 whatever it is (a phone after
# `adb tcpip 5555` reached from Termux on itself, a forwarded port). Without
# ro.kernel.qemu or ro.boot.qemu = 1 it is refused by -s emulator-5554 and
# as the only device, and nothing reaches it, the model not even asked;
# with ro.boot.qemu=1 (newer emulator images) it is used. Runs in a private
# network namespace of its own (port 5555 is the machine's otherwise).
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

if [ "${1:-}" != --inside ]; then
    if [ "$(id -u)" != 0 ] || ! command -v ip > /dev/null || ! unshare -n true 2> /dev/null; then
        echo "SKIP: needs root and unshare -n (port 5555 in a private network namespace)"
        exit 77
    fi
    exec unshare -n bash "${BASH_SOURCE[0]}" --inside
fi

t_init
ip link set lo up || t_fail "cannot bring lo up in the private namespace"
SNAP=${ADBC_SNAP:-$ADBC_BUILD_DIR/tools/adbc-snap}
[ -x "$SNAP" ] || t_fail "adbc-snap not built: $SNAP"
t_need_built AGENT "the agent needs libcurl and cJSON"
command -v jq > /dev/null || t_fail "jq is needed (scripts/packages.txt)"
export HOME=$T_TMP/home XDG_CACHE_HOME=$T_TMP/cache XDG_RUNTIME_DIR=$T_TMP/run
mkdir -p "$HOME" "$XDG_RUNTIME_DIR"
chmod 700 "$XDG_RUNTIME_DIR"
. "$(dirname "${BASH_SOURCE[0]}")/lib_serve.sh"
. "$(dirname "${BASH_SOURCE[0]}")/lib_agent.sh"
OUT=$T_TMP/out ERR=$T_TMP/err

# port5555 [PROP...]: the test device on 127.0.0.1:5555 showing one button,
# with the given properties and no other qemu one; ctl its control folder.
port5555()
{
    [ -n "${TD_PID[p5555]:-}" ] && td_stop p5555
    td_start p5555 --no-auth --port 5555 --serial PHONE5555 "$@"
    ctl=${TD_SANDBOX[p5555]}/data/local/tmp/.adbc-test
    mkdir -p "$ctl"
    agent_screen "$(agent_node android.widget.Button "Settings" com.example:id/settings true false "[0,100][1080,300]")" > "$ctl/screen.xml"
    printf 'dump=screen.xml\n' > "$ctl/uiautomator.conf"
    rm -f "$ctl/calls"
}
DONE='{"turns":[{"answer":{"tool":"tap","args":{"ref":1}}},{"answer":{"tool":"done","args":{"answer":"ok"}}}]}'
# agent [ARGS...]: adbc-snap agent on the device with the scripted model.
agent()
{
    model "$DONE"
    OPENAI_API_KEY=$KEY timeout 120 "$SNAP" "$@" --timeout 20 agent --provider openai \
        --base-url "$BASE" --model scripted --max-steps 3 "tap it" > "$OUT" 2> "$ERR"
    rc=$?
}
# task [SERVE ARGS...]: one task on adbc-serve, its final state in $OUT.
task()
{
    model "$DONE"
    OPENAI_API_KEY=$KEY serve_start "$@" --provider openai --base-url "$BASE" --model scripted
    H -d '{"goal":"tap it","max_steps":3}' /v1/tasks
    expect 202
    local id i
    id=$(J .result.id)
    for ((i = 0; i < 600; i++)); do
        H "/v1/tasks/$id"
        expect 200
        case $(J .result.status) in pending | running) sleep 0.1 ;; *) break ;; esac
    done
    kill -TERM "$SPID"
    wait "$SPID"
}

for how in "ro.kernel.qemu unset" "ro.kernel.qemu=0"; do
    if [ "$how" = "ro.kernel.qemu=0" ]; then port5555 --prop ro.kernel.qemu=0; else port5555; fi
    t_check "a phone on port 5555 ($how), listed as emulator-5554"
    "$SNAP" --timeout 10 devices > "$OUT" 2> "$ERR" || t_fail "devices: $(cat "$ERR")"
    grep -q '^emulator-5554[[:space:]]*device' "$OUT" || t_fail "not listed as emulator-5554: $(cat "$OUT")"

    t_check "the agent refuses it ($how): -s emulator-5554 and as the only device"
    for sel in "-s emulator-5554" ""; do
        # shellcheck disable=SC2086 # an empty selection is no argument
        agent $sel
        [ "$rc" = 2 ] || t_fail "agent ${sel:-(only device)}: exit $rc, expected 2; $(cat "$OUT" "$ERR")"
        grep -q "physical device" "$ERR" || t_fail "agent ${sel:-(only device)}: the refusal: $(cat "$ERR")"
        [ "$(requests)" -eq 0 ] || t_fail "agent ${sel:-(only device)}: the model was asked"
        [ -z "$(inputs)" ] || t_fail "agent ${sel:-(only device)}: the phone got $(inputs)"
    done

    t_check "adbc-serve's task refuses it ($how), saying how to allow it"
    task -s emulator-5554
    [ "$(J .result.status)" = failed ] || t_fail "task: $(cat "$OUT")"
    J .result.error | grep -q "physical device" || t_fail "task error: $(cat "$OUT")"
    J .result.error | grep -q -- "--agent-allow" || t_fail "task error: $(cat "$OUT")"
    [ "$(requests)" -eq 0 ] || t_fail "task: the model was asked"
    [ -z "$(inputs)" ] || t_fail "task: the phone got $(inputs)"
done

t_check "an emulator by ro.boot.qemu=1 on port 5555: the agent and the task use it"
port5555 --prop ro.boot.qemu=1
agent -s emulator-5554
[ "$rc" = 0 ] || t_fail "agent on an emulator: exit $rc; $(cat "$OUT" "$ERR")"
[ "$(inputs)" = "input tap 540 200" ] || t_fail "agent: the emulator got '$(inputs)'"
rm -f "$ctl/calls"
task -s emulator-5554
[ "$(J .result.status)" = completed ] || t_fail "task on an emulator: $(cat "$OUT")"
[ "$(inputs)" = "input tap 540 200" ] || t_fail "task: the emulator got '$(inputs)'"
td_stop p5555
echo "ok: $T_CHECKS checks"
