#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Shared by the agent's tests (agent.sh, serve_tasks.sh, openapi.sh),
# sourced after lib.sh's t_init: the scripted model (tests/model_server.py),
# and agent_dev, a test device playing an emulator whose screens change as
# the input goes (the screen graph, docs/testdevice.md).
MODEL_SERVER=$ADBC_SOURCE_DIR/tests/model_server.py
KEY=sk-test-$RANDOM$RANDOM-secret-key-never-shown
unset OPENAI_BASE_URL OPENAI_API_KEY ANTHROPIC_BASE_URL ANTHROPIC_API_KEY

agent_node()
{
    # class text resource-id clickable checked bounds
    printf '<node class="%s" text="%s" resource-id="%s" package="com.example" clickable="%s" checked="%s" enabled="true" bounds="%s"/>' "$@"
}
agent_screen()
{
    printf '%s' "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\"><node class=\"android.widget.FrameLayout\" package=\"com.example\" bounds=\"[0,0][1080,2400]\">$*</node></hierarchy>"
}
# agent_dev: the device (DEV, ctl) and its screens: home -> (tap Settings)
# settings -> (tap the switch) bt_on; BACK returns; pay is a checkout.
agent_dev()
{
    # An emulator, as the allowlist tells them (ro.kernel.qemu=1).
    td_start dev --no-auth --prop ro.kernel.qemu=1
    DEV=127.0.0.1:${TD_PORT[dev]}
    ctl=${TD_SANDBOX[dev]}/data/local/tmp/.adbc-test

    agent_screen "$(agent_node android.widget.TextView "Home" "" false false "[0,0][1080,100]")$(agent_node android.widget.Button "Settings" com.example:id/settings true false "[0,100][1080,300]")" > "$ctl/screen.home.xml"
    agent_screen "$(agent_node android.widget.TextView "Settings" "" false false "[0,0][1080,100]")$(agent_node android.widget.Switch "Bluetooth" com.example:id/bt true false "[0,400][1080,600]")" > "$ctl/screen.settings.xml"
    agent_screen "$(agent_node android.widget.TextView "Settings" "" false false "[0,0][1080,100]")$(agent_node android.widget.Switch "Bluetooth" com.example:id/bt true true "[0,400][1080,600]")" > "$ctl/screen.bt_on.xml"
    agent_screen "$(agent_node android.widget.TextView "Checkout" "" false false "[0,0][1080,100]")$(agent_node android.widget.Button "Pay now" com.example:id/pay true false "[0,400][1080,600]")" > "$ctl/screen.pay.xml"
    cat > "$ctl/screen.graph" << 'EOG'
home tap 0 100 1080 300 settings
settings tap 0 400 1080 600 bt_on
settings key 4 home
bt_on key 4 settings
EOG
}

# phone_dev: a second device, physical (no ro.kernel.qemu): PHONE, pctl,
# showing agent_dev's home screen (its graph's, or as the plain dump).
phone_dev()
{
    td_start phone --no-auth
    PHONE=127.0.0.1:${TD_PORT[phone]}
    pctl=${TD_SANDBOX[phone]}/data/local/tmp/.adbc-test
    mkdir -p "$pctl"
    cp "$ctl/screen.home.xml" "$pctl/"
    echo home > "$pctl/screen"
}

# reset SCREEN: the graph at SCREEN, no calls recorded.
reset()
{
    echo "$1" > "$ctl/screen"
    rm -f "$ctl/calls" "$ctl/screen.log"
}

MS_PID=
# model SCRIPT_JSON: (re)start the scripted model with this script; its
# record in $REC, its base URL in $BASE.
model()
{
    [ -n "$MS_PID" ] && kill "$MS_PID" 2> /dev/null && wait "$MS_PID" 2> /dev/null
    printf '%s\n' "$1" > "$T_TMP/script.json"
    REC=$T_TMP/record.$RANDOM.jsonl
    rm -f "$T_TMP/model.port"
    python3 "$MODEL_SERVER" --script "$T_TMP/script.json" --record "$REC" \
        --port-file "$T_TMP/model.port" --key "$KEY" 2>> "$T_TMP/model.err" &
    MS_PID=$!
    T_BG_PIDS+=("$MS_PID")
    local i
    for ((i = 0; i < 200; i++)); do
        [ -s "$T_TMP/model.port" ] && break
        sleep 0.05
    done
    [ -s "$T_TMP/model.port" ] || t_fail "model server did not start: $(cat "$T_TMP/model.err")"
    BASE=http://127.0.0.1:$(cat "$T_TMP/model.port")/v1
    : > "$REC"
}

# The input commands the device got, one a line (`cmd input` written as
# `input`: the device's Android version decides which one adbc sends).
inputs()
{
    grep -E '^(input|cmd input)' "$ctl/calls" 2> /dev/null | sed 's/^cmd input/input/'
}
requests()
{
    wc -l < "$REC"
}
# model_waits [N]: until the model holds N requests (default 1) it will not
# answer ("hang").
model_waits()
{
    local i n=${1:-1}
    for ((i = 0; i < 400; i++)); do
        [ "$(grep -c '"check": "hang"' "$REC" 2> /dev/null)" -ge "$n" ] && return 0
        sleep 0.05
    done
    t_fail "the model was never asked the request it holds"
}
