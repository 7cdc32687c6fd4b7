#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# One version for everything: each program's --version and adbc-mcp's MCP
# serverInfo say the version include/adbc/version.h declares (the one place
# a release edits), and the adbc-snap front end answers --version without
# adbc-snap-core.
. "$(dirname "$0")/lib.sh"
t_init
ver=$(sed -n 's/^#define ADBC_VERSION_STRING "\(.*\)"$/\1/p' "$ADBC_SOURCE_DIR/include/adbc/version.h")
[[ $ver =~ ^[0-9]+\.[0-9]+\.[0-9]+ ]] || t_fail "no ADBC_VERSION_STRING in include/adbc/version.h: '$ver'"

B=$ADBC_BUILD_DIR
progs=("adbc-snap $B/tools/adbc-snap" "adbc-snap $B/tools/adbc-snap-core" "adbc-testdevice $TD_BIN")
for p in adbc-serve adbc-mcp; do
    if [ -x "$B/tools/$p" ]; then
        progs+=("$p $B/tools/$p")
    else
        t_log "$p not built (its optional dependency is off): not checked"
    fi
done
for p in "${progs[@]}"; do
    name=${p%% *} bin=${p#* }
    t_check "$name --version ($bin) prints '$name $ver'"
    [ -x "$bin" ] || t_fail "$bin not built"
    out=$(timeout 10 "$bin" --version 2> "$T_TMP/err") || t_fail "$bin --version: status $?, $(cat "$T_TMP/err")"
    [ "$out" = "$name $ver" ] || t_fail "$bin --version printed '$out', expected '$name $ver'"
done

t_check "the adbc-snap front end answers --version alone (no adbc-snap-core beside it)"
mkdir -p "$T_TMP/front"
cp "$B/tools/adbc-snap" "$T_TMP/front/adbc-snap"
out=$(timeout 10 "$T_TMP/front/adbc-snap" --version 2>&1) || t_fail "front end alone: $out"
[ "$out" = "adbc-snap $ver" ] || t_fail "front end alone printed '$out'"

if [ -x "$B/tools/adbc-mcp" ]; then
    t_check "adbc-mcp's initialize reply gives serverInfo.version $ver"
    # A bare initialize on stdin; adbc-mcp answers it without a device.
    printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}' |
        HOME=$T_TMP XDG_CONFIG_HOME=$T_TMP/config timeout 20 "$B/tools/adbc-mcp" --no-usb > "$T_TMP/mcp.out" 2> "$T_TMP/mcp.err"
    python3 - "$T_TMP/mcp.out" "$ver" <<'PY' || t_fail "initialize: $(head -c 600 "$T_TMP/mcp.out") $(tail -n 5 "$T_TMP/mcp.err")"
import json, sys
lines = [l for l in open(sys.argv[1]) if l.strip()]
m = json.loads(lines[0])
info = m["result"]["serverInfo"]
assert info["name"] == "adbc-mcp" and info["version"] == sys.argv[2], info
PY
fi
echo "version: ${#progs[@]} programs say $ver"
