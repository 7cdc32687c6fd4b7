#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# adbc-snap agent's model settings from a config file's [model] table: read
# from --config FILE or from agent.toml in adbc's config directory (a missing
# default is fine), checked by the tools' one config reader (errors name the
# file and line), and overridden by the command line. No device is reached:
# the model is set up before the device is.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
t_init
SNAP=${ADBC_SNAP:-$ADBC_BUILD_DIR/tools/adbc-snap}
[ -x "$SNAP" ] || t_fail "adbc-snap not built: $SNAP"
t_need_built AGENT "the agent needs libcurl and cJSON"
export HOME=$T_TMP/home XDG_CONFIG_HOME=$T_TMP/xdg
mkdir -p "$HOME" "$XDG_CONFIG_HOME/adbc"
unset OPENAI_API_KEY OPENAI_BASE_URL ANTHROPIC_API_KEY ANTHROPIC_BASE_URL
# A target nobody listens on: a run that gets past the model fails there.
NODEV=127.0.0.1:1

agent() { # agent ARGS...: exit status in RC, stderr in ERR
    "$SNAP" -t $NODEV --timeout 2 agent "$@" "a goal" > "$T_TMP/out" 2> "$T_TMP/err" < /dev/null
    RC=$?
    ERR=$(cat "$T_TMP/err")
}

t_check "--config FILE: an unknown key is an error naming the file and line"
printf '[model]\nmodel = "m"\nmodle = "x"\n' > "$T_TMP/bad.toml"
agent --config "$T_TMP/bad.toml"
[ "$RC" = 2 ] || t_fail "exit $RC, want 2: $ERR"
[[ "$ERR" == *"$T_TMP/bad.toml:3: [model] unknown model setting 'modle'"* ]] || t_fail "stderr: $ERR"

t_check "--config FILE that does not exist is an error; the default one may be missing"
agent --config "$T_TMP/none.toml" --base-url http://127.0.0.1:9/v1 --model m
[ "$RC" = 2 ] && [[ "$ERR" == *"none.toml: cannot open"* ]] || t_fail "exit $RC: $ERR"
agent --base-url http://127.0.0.1:9/v1 --model m
[ "$RC" = 1 ] || t_fail "no default file: exit $RC, want 1 (the device): $ERR"
[[ "$ERR" != *model* ]] || t_fail "no default file: a model error: $ERR"

t_check "the default agent.toml is read: its setting is checked (plain http off loopback)"
printf '[model]\nbase_url = "http://10.9.8.7:8080/v1"\nmodel = "m"\n' > "$XDG_CONFIG_HOME/adbc/agent.toml"
agent
[ "$RC" = 2 ] && [[ "$ERR" == *"plain http"* ]] || t_fail "exit $RC: $ERR"

t_check "the command line wins over the file"
agent --base-url http://127.0.0.1:9/v1
[ "$RC" = 1 ] || t_fail "exit $RC, want 1 (the device): $ERR"
[[ "$ERR" != *"plain http"* ]] || t_fail "the file's base_url was used: $ERR"

t_check "a key is never a setting, and a key file others may read is refused"
printf '[model]\nmodel = "m"\napi_key = "sk-in-a-file-123"\n' > "$T_TMP/key.toml"
agent --config "$T_TMP/key.toml"
[ "$RC" = 2 ] && [[ "$ERR" == *"key.toml:3:"* ]] || t_fail "exit $RC: $ERR"
[[ "$ERR" != *sk-in-a-file-123* ]] || t_fail "the key was echoed: $ERR"
echo "sk-file-456" > "$T_TMP/llm.key"
chmod 644 "$T_TMP/llm.key"
printf '[model]\nmodel = "m"\nbase_url = "http://127.0.0.1:9/v1"\napi_key_file = "%s"\n' "$T_TMP/llm.key" > "$T_TMP/kf.toml"
agent --config "$T_TMP/kf.toml"
[ "$RC" = 2 ] && [[ "$ERR" == *"chmod 600"* ]] || t_fail "exit $RC: $ERR"
chmod 600 "$T_TMP/llm.key"
agent --config "$T_TMP/kf.toml"
[ "$RC" = 1 ] || t_fail "a 0600 key file: exit $RC, want 1 (the device): $ERR"
[[ "$ERR" != *sk-file-456* ]] || t_fail "the key was echoed: $ERR"
echo ok
