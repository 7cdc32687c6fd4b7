#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The layers of docs/design.md, checked on the sources:
#  - a file in lib/<layer>/ includes nothing of a layer above its own, neither
#    that layer's internal headers ("ui/ui_internal.h") nor its public header
#    ("adbc/ui.h");
#  - an internal header of another folder is included only where the list
#    below allows it (a layer's declared interface to the ones above);
#  - only public functions are named adbc_*: an internal one is named after
#    its layer or its file (conn_kick, sync_enc_hdr, dns_parse, core_fail);
#  - the tools (tools/) include no lib/ header and call no function libadbc
#    does not export: they are front ends of the public API. The one folder
#    of lib/ they compile is lib/portable (plain POSIX, no library state,
#    nothing of lib/ included), so lib/core and tools/ops keep no copies.
. "$(dirname "$0")/lib.sh"
t_init
src=$ADBC_SOURCE_DIR

# Rank of each folder of lib/ (docs/design.md draws the same stack).
declare -A RANK=([portable]=0 [core]=0 [auth]=1 [session]=1 [transport]=2 [tls]=3 [conn]=4
                 [devices]=5 [mdns]=5 [services]=6 [sync]=6 [ui]=7 [act]=8)
# Which layer each public header belongs to.
declare -A PUB=([error.h]=core [version.h]=core [alloc.h]=core [auth.h]=auth [session.h]=session
                [banner.h]=session [transport.h]=transport [usb.h]=transport
                [tls.h]=tls [pair.h]=tls [conn.h]=conn [devices.h]=devices
                [mdns.h]=mdns [shell.h]=services [forward.h]=services
                [webview.h]=services [sync.h]=sync [ui.h]=ui [act.h]=act)
# Internal headers a folder other than their own may include: "header user-folder".
ALLOWED="
portable/portable.h *
core/internal.h *
core/testhooks.h *
core/jread.h *
transport/fd_int.h conn
transport/fd_int.h devices
auth/auth_internal.h tls
auth/auth_internal.h devices
conn/conn_svc.h services
session/session_conn.h conn
conn/conn_svc.h sync
conn/conn_facts.h act
conn/conn_facts.h ui
services/cdp_int.h ui
ui/ui_observe.h act
"

t_check "every folder of lib/ has a rank"
for d in "$src"/lib/*/; do
    f=$(basename "$d")
    [ -n "${RANK[$f]:-}" ] || t_fail "lib/$f/ has no rank in tests/sh/layers.sh (and none in docs/design.md?)"
done
t_check "every public header has a layer"
for h in "$src"/include/adbc/*.h; do
    b=$(basename "$h")
    [ "$b" = adbc.h ] && continue
    [ -n "${PUB[$b]:-}" ] || t_fail "include/adbc/$b has no layer in tests/sh/layers.sh"
done

t_check "no file in lib/ includes a layer above its own"
bad=
while IFS= read -r line; do
    file=${line%%:*}
    inc=${line#*:}
    rel=${file#"$src"/lib/}
    own=${rel%%/*}
    case $inc in
        adbc/adbc.h) bad+="$rel includes adbc/adbc.h (every layer); "; continue ;;
        adbc/*) b=${inc#adbc/}; layer=${PUB[$b]:-} ;;
        */*) layer=${inc%%/*} ;;
        *) continue ;;
    esac
    [ -n "$layer" ] || continue
    if [ "${RANK[$layer]}" -gt "${RANK[$own]}" ]; then
        bad+="$rel includes $inc ($layer is above $own); "
    fi
    if [ "$layer" != "$own" ] && [[ $inc != adbc/* ]]; then
        ok=
        while read -r h who; do
            [ -n "$h" ] || continue
            if [ "$h" = "$inc" ] && { [ "$who" = '*' ] || [ "$who" = "$own" ]; }; then ok=1; fi
        done <<<"$ALLOWED"
        [ -n "$ok" ] || bad+="$rel includes $inc, an internal header of $layer not declared as its interface; "
    fi
done < <(grep -rHoE '^#include "[^"]+"' "$src"/lib --include='*.c' --include='*.h' |
         sed -E 's/:#include "([^"]+)"$/:\1/')
[ -z "$bad" ] || t_fail "$bad"

t_check "lib/portable includes nothing of lib/ (the tools compile it too)"
p=$(grep -rnE '^#include "' "$src"/lib/portable || true)
[ -z "$p" ] || t_fail "lib/portable must stay plain POSIX: $p"

t_check "the tools include no header of lib/"
leaks=$(grep -rnE '^#include "(core|auth|session|transport|tls|conn|devices|mdns|services|sync|ui|act)/' \
        "$src"/tools --include='*.c' --include='*.h' || true)
[ -z "$leaks" ] || t_fail "tools include lib/ internals: $leaks"
# adbc-snap's front end (tools/adbc-snap/front/) compiles the sans-IO
# session engine and the shell v2 framing from lib/ into a static program of
# its own, with no libadbc to call (its CMake rule says why); its own source
# still uses them only through include/adbc/ (adbc/session.h, adbc/shell.h),
# as any program would.

if [ -e "$ADBC_BUILD_DIR/libadbc.so" ]; then
    t_check "only public functions are named adbc_* (internal ones: <layer or file>_*)"
    exported=$T_TMP/exported
    nm -D --defined-only "$ADBC_BUILD_DIR/libadbc.so" | awk '{print $3}' | sed 's/@.*//' | sort -u >"$exported"
    named=$(nm --defined-only "$ADBC_BUILD_DIR/libadbc-internal.a" 2>/dev/null |
            awk '$2 ~ /^[TDBR]$/ && $3 ~ /^adbc_/ {print $3}' | sort -u | comm -23 - "$exported")
    [ -z "$named" ] || t_fail "internal functions named like public ones (rename to <layer>_...): $(echo $named)"

    t_check "the tools call only functions libadbc.so exports"
    objs=$(find "$ADBC_BUILD_DIR/tools/CMakeFiles" -name '*.o' ! -path '*adbc-snap-front*' 2>/dev/null)
    [ -n "$objs" ] || t_fail "no tool objects under $ADBC_BUILD_DIR/tools: build the tools first"
    defined=$T_TMP/defined
    # shellcheck disable=SC2086
    nm --defined-only $objs | awk 'NF == 3 {print $3}' | sort -u >"$defined"
    # shellcheck disable=SC2086
    internal=$(nm -u $objs | awk '{print $2}' | sort -u | comm -23 - "$defined" |
               grep -E '^(adbc|ui|act|sync|conn|core|session|auth|tls|usb|mdns|dns|shell|fwd|dev)_' |
               comm -23 - "$exported" || true)
    [ -z "$internal" ] || t_fail "tools call library functions that are not exported: $(echo $internal)"
fi
echo "layers: lib/ and tools/ keep to their layers"
