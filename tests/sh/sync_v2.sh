#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Sync v2 (SND2/RCV2) between adbc-snap and the test device: push and pull
# with each compression (-z brotli/lz4/zstd/any) byte for byte, for log-like
# text (which must shrink on the wire) and random data, sizes around the
# 64 KiB chunk; -Z and the loopback default send plain v1; push -n (dry run)
# leaves nothing on the device; an algorithm the device does not advertise
# is a clear error; a device without sendrecv_v2 still works with -z any.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
t_init
SNAP=${ADBC_SNAP:-$ADBC_BUILD_DIR/tools/adbc-snap}
[ -x "$SNAP" ] || SNAP=$ADBC_BUILD_DIR/tools/adbc-snap/adbc-snap
[ -x "$SNAP" ] || t_fail "adbc-snap not built"
GEN=$(dirname "${BASH_SOURCE[0]}")/../bench/gen_logtext.py
export HOME=$T_TMP/home
mkdir -p "$HOME"

td_start dev --accept-new-keys
DEV=127.0.0.1:${TD_PORT[dev]}
SB=${TD_SANDBOX[dev]}
S() { timeout 60 "$SNAP" -t "$DEV" "$@"; }

feat=$(S info 2> "$T_TMP/err") || t_fail "info: $(cat "$T_TMP/err")"
algs=
for a in brotli lz4 zstd; do
    grep -q "sendrecv_v2_$a" <<< "$feat" && algs="$algs $a"
done
t_check "the device advertises sendrecv_v2 and dry_run_send as adbd does (found:$algs)"
grep -q 'sendrecv_v2,' <<< "$feat" || t_fail "no sendrecv_v2 in: $feat"
grep -q 'sendrecv_v2_dry_run_send' <<< "$feat" || t_fail "no sendrecv_v2_dry_run_send in: $feat"
[ -n "$algs" ] || t_log "this build has no compression library: only plain v2 is checked"

mkdir -p "$T_TMP/in" "$T_TMP/out"
python3 "$GEN" 3000000 "$T_TMP/in/log" || t_fail "gen_logtext"
for n in 0 1 65535 65536 65537 1048576; do
    head -c "$n" /dev/urandom > "$T_TMP/in/r$n"
done

for a in $algs any; do
    t_check "-z $a: push and pull of log-like text and random data, byte for byte"
    for f in log r0 r1 r65535 r65536 r65537 r1048576; do
        S push -z "$a" "$T_TMP/in/$f" "/data/local/tmp/$a-$f" > "$T_TMP/push.log" 2>&1 ||
            t_fail "push -z $a $f: $(cat "$T_TMP/push.log")"
        cmp "$T_TMP/in/$f" "$SB/data/local/tmp/$a-$f" || t_fail "push -z $a: $f differs"
        S pull -z "$a" "/data/local/tmp/$a-$f" "$T_TMP/out/$a-$f" > "$T_TMP/pull.log" 2>&1 ||
            t_fail "pull -z $a $f: $(cat "$T_TMP/pull.log")"
        cmp "$T_TMP/in/$f" "$T_TMP/out/$a-$f" || t_fail "pull -z $a: $f differs"
    done
    [ -z "$algs" ] && continue
    t_check "-z $a: log-like text crosses the link in under 50% of its bytes"
    S push -z "$a" "$T_TMP/in/log" /data/local/tmp/log > "$T_TMP/push.log" 2>&1 || t_fail push
    w=$(sed -n 's/.* \([0-9]*\) bytes on the wire.*/\1/p' "$T_TMP/push.log")
    [ -n "$w" ] && [ "$w" -gt 0 ] && [ "$w" -lt 1500000 ] ||
        t_fail "push -z $a: wire bytes '$w' from: $(cat "$T_TMP/push.log")"
    S pull -z "$a" /data/local/tmp/log "$T_TMP/out/log" > "$T_TMP/pull.log" 2>&1 || t_fail pull
    w=$(sed -n 's/.* \([0-9]*\) bytes on the wire.*/\1/p' "$T_TMP/pull.log")
    [ -n "$w" ] && [ "$w" -gt 0 ] && [ "$w" -lt 1500000 ] ||
        t_fail "pull -z $a: wire bytes '$w' from: $(cat "$T_TMP/pull.log")"
done

t_check "a tree pushed and pulled compressed (pipelined RCV2s) comes back whole"
mkdir -p "$T_TMP/tree/a/b"
for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
    head -c $((i * 7000)) "$T_TMP/in/log" > "$T_TMP/tree/a/f$i"
    head -c $((i * 300)) /dev/urandom > "$T_TMP/tree/a/b/g$i"
done
S push -z any "$T_TMP/tree" /data/local/tmp/tree > "$T_TMP/push.log" 2>&1 ||
    t_fail "tree push: $(cat "$T_TMP/push.log")"
S pull -z any /data/local/tmp/tree "$T_TMP/tree2" > "$T_TMP/pull.log" 2>&1 ||
    t_fail "tree pull: $(cat "$T_TMP/pull.log")"
diff -r "$T_TMP/tree" "$T_TMP/tree2" || t_fail "the pulled tree differs"

t_check "on loopback the default and -Z send no compressed bytes"
for opt in "" -Z; do
    S push $opt "$T_TMP/in/log" /data/local/tmp/plain > "$T_TMP/push.log" 2>&1 || t_fail "push $opt"
    ! grep -q "on the wire" "$T_TMP/push.log" || t_fail "push $opt compressed: $(cat "$T_TMP/push.log")"
    cmp "$T_TMP/in/log" "$SB/data/local/tmp/plain" || t_fail "push $opt differs"
done

t_check "push -n (dry run) sends everything and the device writes nothing"
S push -n -z any "$T_TMP/in/log" /data/local/tmp/dry > "$T_TMP/push.log" 2>&1 ||
    t_fail "push -n: $(cat "$T_TMP/push.log")"
grep -q "1 file pushed" "$T_TMP/push.log" || t_fail "push -n summary: $(cat "$T_TMP/push.log")"
[ ! -e "$SB/data/local/tmp/dry" ] || t_fail "a dry run wrote /data/local/tmp/dry"
S push -n "$T_TMP/tree" /data/local/tmp/drytree > "$T_TMP/push.log" 2>&1 || t_fail "push -n tree"
[ ! -e "$SB/data/local/tmp/drytree" ] || t_fail "a dry run made /data/local/tmp/drytree"

t_check "a link that dies mid-transfer (linkemu --drop-after): a clear error, no file left"
EMU=$(dirname "${BASH_SOURCE[0]}")/../bench/linkemu.py
python3 "$EMU" relay --target "$DEV" --delay-ms 1 --rate-mbit 400 --drop-after 400000 \
    --max-seconds 120 > "$T_TMP/relay.out" 2>&1 &
T_BG_PIDS+=($!)
for i in $(seq 100); do grep -q '^listening on ' "$T_TMP/relay.out" && break; sleep 0.05; done
LINK=$(sed -n 's/^listening on //p' "$T_TMP/relay.out")
[ -n "$LINK" ] || t_fail "linkemu did not start: $(cat "$T_TMP/relay.out")"
mkdir -p "$T_TMP/cut"
timeout 60 "$SNAP" -t "$LINK" pull -z any /data/local/tmp/any-r1048576 "$T_TMP/cut/f" > "$T_TMP/o" 2>&1 &&
    t_fail "pull through a dying link succeeded"
grep -qi "lost\|closed" "$T_TMP/o" || t_fail "message: $(cat "$T_TMP/o")"
[ -z "$(ls -A "$T_TMP/cut")" ] || t_fail "left behind: $(ls -A "$T_TMP/cut")"
timeout 60 "$SNAP" -t "$LINK" push -z any "$T_TMP/in/r1048576" /data/local/tmp/cut > "$T_TMP/o" 2>&1 &&
    t_fail "push through a dying link succeeded"
for i in $(seq 50); do [ -e "$SB/data/local/tmp/cut" ] || break; sleep 0.1; done
[ ! -e "$SB/data/local/tmp/cut" ] || t_fail "the device kept a partial file"

t_check "an unknown algorithm is a usage error naming the accepted ones"
S push -z gzip "$T_TMP/in/r1" /data/local/tmp/x > "$T_TMP/o" 2>&1
[ $? = 2 ] || t_fail "push -z gzip did not exit 2"
grep -q "any, none, brotli, lz4 or zstd" "$T_TMP/o" || t_fail "message: $(cat "$T_TMP/o")"
td_stop dev

t_check "a device that offers only lz4: -z zstd is refused clearly, -z any uses lz4"
base=shell_v2,stat_v2,ls_v2,fixed_push_mkdir,sendrecv_v2
td_start lz --accept-new-keys --features "$base,sendrecv_v2_lz4"
DEV=127.0.0.1:${TD_PORT[lz]}
SB=${TD_SANDBOX[lz]}
S push -z zstd "$T_TMP/in/log" /data/local/tmp/z > "$T_TMP/o" 2>&1 && t_fail "-z zstd worked"
grep -q "does not offer it" "$T_TMP/o" || t_fail "message: $(cat "$T_TMP/o")"
if grep -q lz4 <<< "$algs"; then
    S push -z any "$T_TMP/in/log" /data/local/tmp/z > "$T_TMP/o" 2>&1 || t_fail "-z any: $(cat "$T_TMP/o")"
    grep -q "lz4:" "$T_TMP/o" || t_fail "-z any did not pick lz4: $(cat "$T_TMP/o")"
    cmp "$T_TMP/in/log" "$SB/data/local/tmp/z" || t_fail "lz4 push differs"
fi
S push -n "$T_TMP/in/r1" /data/local/tmp/n > "$T_TMP/o" 2>&1 && t_fail "push -n without dry_run_send worked"
grep -q "dry-run not supported by the device" "$T_TMP/o" || t_fail "message: $(cat "$T_TMP/o")"
td_stop lz

t_check "a device without sendrecv_v2: -z any falls back to v1 and the bytes arrive"
td_start old --accept-new-keys --features shell_v2,stat_v2,ls_v2,fixed_push_mkdir
DEV=127.0.0.1:${TD_PORT[old]}
SB=${TD_SANDBOX[old]}
S push -z any "$T_TMP/in/log" /data/local/tmp/v1 > "$T_TMP/o" 2>&1 || t_fail "push: $(cat "$T_TMP/o")"
cmp "$T_TMP/in/log" "$SB/data/local/tmp/v1" || t_fail "v1 push differs"
S pull -z any /data/local/tmp/v1 "$T_TMP/out/v1" > "$T_TMP/o" 2>&1 || t_fail "pull: $(cat "$T_TMP/o")"
cmp "$T_TMP/in/log" "$T_TMP/out/v1" || t_fail "v1 pull differs"
td_stop old
echo "ok: $T_CHECKS checks"
