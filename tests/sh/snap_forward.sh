#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# adbc-snap forward and reverse against the test device, with curl: 1 byte,
# 100 MB each way, 40 parallel connections, a client that stops reading
# (memory stays bounded, other connections keep going), a device service
# that closes mid-stream, reverse with a device-side curl, and the device
# vanishing (every local connection closes, the command exits with a
# message). HTTP servers: fixtures/forward/http_server.py (python3).
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
for bin in curl python3; do
    command -v "$bin" > /dev/null || { echo "SKIP: $bin is not installed"; exit 77; }
done
t_init
SNAP=${ADBC_SNAP:-$ADBC_BUILD_DIR/tools/adbc-snap}
[ -x "$SNAP" ] || t_fail "adbc-snap not built: $SNAP"
FIX=$ADBC_SOURCE_DIR/fixtures/forward
export HOME=$T_TMP/home
mkdir -p "$HOME"

# bg_start NAME CMD...: run CMD in the background (stdout/stderr in
# $T_TMP/NAME.out/.err), BG[NAME] = pid; wait for its first stdout line.
declare -A BG
bg_start()
{
    local name=$1 i
    shift
    "$@" > "$T_TMP/$name.out" 2> "$T_TMP/$name.err" &
    BG[$name]=$!
    T_BG_PIDS+=("$!")
    for ((i = 0; i < 200; i++)); do
        [ -s "$T_TMP/$name.out" ] && return 0
        kill -0 "${BG[$name]}" 2> /dev/null || t_fail "$name exited: $(cat "$T_TMP/$name.err")"
        sleep 0.05
    done
    t_fail "$name printed nothing within 10 s: $(cat "$T_TMP/$name.err")"
}
first_word() { head -n1 "$T_TMP/$1.out" | awk '{print $1}'; }
rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }

mkdir -p "$T_TMP/www"
printf x > "$T_TMP/www/one.bin"
head -c 100000000 /dev/urandom > "$T_TMP/www/big.bin"
head -c 2000000 /dev/urandom > "$T_TMP/www/mid.bin"
BIGSUM=$(sha256sum < "$T_TMP/www/big.bin" | awk '{print $1}')

td_start dev --no-auth
ADDR=127.0.0.1:${TD_PORT[dev]}
bg_start http python3 "$FIX/http_server.py" "$T_TMP/www" tcp:0
HP=$(sed -n 's/^listening on //p' "$T_TMP/http.out")
bg_start sac python3 "$FIX/send_and_close.py" 1000000
SACP=$(sed -n 's/^listening on //p' "$T_TMP/sac.out")

t_check "forward prints 'LOCAL REMOTE' per pair with tcp:0 resolved"
bg_start fw "$SNAP" -t "$ADDR" forward -v tcp:0 "tcp:$HP" tcp:0 "tcp:$SACP"
for ((i = 0; i < 100; i++)); do [ "$(wc -l < "$T_TMP/fw.out")" -ge 2 ] && break; sleep 0.05; done
L1=$(sed -n 1p "$T_TMP/fw.out" | awk '{print $1}')
L2=$(sed -n 2p "$T_TMP/fw.out" | awk '{print $1}')
case $L1 in tcp:[1-9]*) ;; *) t_fail "first line: $(cat "$T_TMP/fw.out")" ;; esac
[ "$(sed -n 1p "$T_TMP/fw.out" | awk '{print $2}')" = "tcp:$HP" ] || t_fail "remote not echoed"
P1=${L1#tcp:}
P2=${L2#tcp:}

t_check "1 byte through the forward"
out=$(curl -sS --max-time 10 "http://127.0.0.1:$P1/one.bin") || t_fail "curl failed"
[ "$out" = x ] || t_fail "got '$out'"

t_check "100 MB from the device side to the host, intact"
curl -sS --max-time 120 "http://127.0.0.1:$P1/big.bin" | sha256sum > "$T_TMP/sum" || t_fail "curl"
[ "$(awk '{print $1}' "$T_TMP/sum")" = "$BIGSUM" ] || t_fail "100 MB download differs"

t_check "100 MB from the host to the device side (PUT), intact"
out=$(curl -sS --max-time 120 -T "$T_TMP/www/big.bin" "http://127.0.0.1:$P1/up") || t_fail "curl -T"
[ "$out" = "100000000 $BIGSUM" ] || t_fail "upload: server saw '$out'"

t_check "40 parallel connections, each 2 MB, all intact"
pids=()
for ((k = 0; k < 40; k++)); do
    curl -sS --max-time 60 -o "$T_TMP/par$k" "http://127.0.0.1:$P1/mid.bin" &
    pids+=("$!")
done
for p in "${pids[@]}"; do wait "$p" || t_fail "a parallel curl failed"; done
for ((k = 0; k < 40; k++)); do
    cmp -s "$T_TMP/par$k" "$T_TMP/www/mid.bin" || t_fail "parallel download $k differs"
done

t_check "a client that stops reading: memory stays bounded, other connections still work"
rss0=$(rss_kb "${BG[fw]}")
python3 - "$P1" > "$T_TMP/stall.out" 2>&1 <<'PY' &
import socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
s.connect(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"GET /big.bin HTTP/1.1\r\nHost: x\r\n\r\n")
print("sent", flush=True)
time.sleep(6)
PY
STALL=$!
T_BG_PIDS+=("$STALL")
sleep 3
rss1=$(rss_kb "${BG[fw]}")
out=$(curl -sS --max-time 10 "http://127.0.0.1:$P1/one.bin") || t_fail "curl during the stall failed"
[ "$out" = x ] || t_fail "curl during the stall got '$out'"
sleep 1
rss2=$(rss_kb "${BG[fw]}")
echo "adbc-snap RSS before: ${rss0} kB; with a stalled 100 MB reader: ${rss1} kB, then ${rss2} kB"
# What the stalled connection may hold: the 4 MiB stream window and two
# 256 KiB buffers; 32 MiB leaves room for allocator slack, not for the file.
[ $((rss2 - rss0)) -lt 32768 ] || t_fail "RSS grew by $((rss2 - rss0)) kB for one stalled reader"
# Without sanitizers (whose quarantine keeps freed memory) an absolute bound.
if ! ldd "$SNAP" 2> /dev/null | grep -q 'lib[at]san'; then
    [ "$rss2" -lt 65536 ] || t_fail "RSS ${rss2} kB with one stalled reader (bound: 64 MiB)"
fi
[ $((rss2 - rss1)) -lt 8192 ] || t_fail "RSS grew from ${rss1} to ${rss2} kB while stalled"
wait "$STALL"

t_check "a device service that closes mid-stream: the bytes before arrive, then the end"
n=$(timeout 20 bash -c "exec 3<>/dev/tcp/127.0.0.1/$P2; cat <&3 | wc -c") || t_fail "read failed"
[ "$n" -eq 1000000 ] || t_fail "got $n bytes, expected 1000000"

t_check "-v prints a line per connection (open and closed with byte counts)"
grep -q "forward #1 127.0.0.1:[0-9]* -> tcp:$HP: open" "$T_TMP/fw.err" || t_fail "no open line"
grep -q "closed, [0-9]* bytes to the device, 100000[0-9]* from it" "$T_TMP/fw.err" ||
    t_fail "no closed line: $(tail -3 "$T_TMP/fw.err")"

t_check "LOCAL on IPv6 loopback, a unix socket path and an abstract name, one process"
USOCK=$T_TMP/fw.sock
ABS=adbc_snap_fw_$$
bg_start fw6 "$SNAP" -t "$ADDR" forward "tcp:[::1]:0" "tcp:$HP" "localfilesystem:$USOCK" \
    "tcp:$HP" "localabstract:$ABS" "tcp:$HP"
for ((i = 0; i < 100; i++)); do [ "$(wc -l < "$T_TMP/fw6.out")" -ge 3 ] && break; sleep 0.05; done
L6=$(sed -n 1p "$T_TMP/fw6.out" | awk '{print $1}')
case $L6 in "tcp:[::1]:"[1-9]*) ;; *) t_fail "IPv6 line: $(cat "$T_TMP/fw6.out")" ;; esac
out=$(curl -sS --max-time 10 "http://[::1]:${L6##*:}/one.bin") || t_fail "curl over IPv6 failed"
[ "$out" = x ] || t_fail "IPv6 got '$out'"
out=$(curl -sS --max-time 10 --unix-socket "$USOCK" "http://x/one.bin") || t_fail "curl unix failed"
[ "$out" = x ] || t_fail "unix path got '$out'"
out=$(curl -sS --max-time 10 --abstract-unix-socket "$ABS" "http://x/one.bin") ||
    t_fail "curl abstract failed"
[ "$out" = x ] || t_fail "abstract got '$out'"
kill -TERM "${BG[fw6]}"
wait "${BG[fw6]}"
[ ! -e "$USOCK" ] || t_fail "the unix socket $USOCK was left behind"

t_check "--half-close: a client that shuts down its sending side still gets the answer"
bg_start fwh "$SNAP" -t "$ADDR" forward --half-close tcp:0 "tcp:$HP"
PH=$(first_word fwh)
n=$(python3 - "${PH#tcp:}" << 'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
s.sendall(b"GET /mid.bin HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
s.shutdown(socket.SHUT_WR)
data = b""
while True:
    b = s.recv(65536)
    if not b:
        break
    data += b
print(len(data.split(b"\r\n\r\n", 1)[1]))
PY
) || t_fail "half-close client failed"
[ "$n" = 2000000 ] || t_fail "half-closed client got $n body bytes, expected 2000000"
kill -TERM "${BG[fwh]}"
wait "${BG[fwh]}"

t_check "reverse tcp:0 -> host server; a curl inside the device's sandbox reaches it"
bg_start rv "$SNAP" -t "$ADDR" reverse -v tcp:0 "tcp:$HP"
R=$(first_word rv)
case $R in tcp:[1-9]*) ;; *) t_fail "reverse printed: $(cat "$T_TMP/rv.out")" ;; esac
out=$("$SNAP" -t "$ADDR" shell "curl -sS --max-time 10 http://127.0.0.1:${R#tcp:}/one.bin") ||
    t_fail "device-side curl failed: $out"
[ "$out" = x ] || t_fail "device-side curl got '$out'"
sum=$("$SNAP" -t "$ADDR" shell "curl -sS --max-time 60 http://127.0.0.1:${R#tcp:}/big.bin | sha256sum")
[ "${sum%% *}" = "$BIGSUM" ] || t_fail "100 MB through reverse differs"
grep -q "reverse #1 device -> tcp:$HP: open" "$T_TMP/rv.err" || t_fail "no reverse -v line"
# The host server sent the 100 MB: they went to the device, the request came from it.
for ((i = 0; i < 100; i++)); do grep -q "reverse #2 .*: closed" "$T_TMP/rv.err" && break; sleep 0.05; done
grep -Eq "reverse #2 device -> tcp:$HP: closed, 1000[0-9]{5} bytes to the device, [0-9]{2,3} from it" \
    "$T_TMP/rv.err" || t_fail "reverse -v byte counts: $(tail -3 "$T_TMP/rv.err")"
kill -INT "${BG[rv]}"
wait "${BG[rv]}"
rc=$?
[ $rc -eq 130 ] || t_fail "reverse exited $rc after SIGINT, expected 130"

t_check "reverse --remove errors carry the device's message; --list and --remove-all answer"
out=$("$SNAP" -t "$ADDR" reverse --remove tcp:1 2>&1) && t_fail "--remove of nothing succeeded"
case $out in *"listener 'tcp:1' not found"*) ;; *) t_fail "said: $out" ;; esac
out=$("$SNAP" -t "$ADDR" reverse --list) || t_fail "--list failed"
"$SNAP" -t "$ADDR" reverse --remove-all || t_fail "--remove-all failed"

t_check "reverse rules are one list for every connection, as adbd's: list, remove, move, remove all"
bg_start rv2 "$SNAP" -t "$ADDR" reverse tcp:0 "tcp:$HP"
R2=$(first_word rv2)
out=$("$SNAP" -t "$ADDR" reverse --list) || t_fail "--list failed"
case $out in *"$R2 tcp:$HP"*) ;; *) t_fail "another connection's rule not listed: $out" ;; esac
out=$("$SNAP" -t "$ADDR" shell "curl -sS --max-time 10 http://127.0.0.1:${R2#tcp:}/one.bin") ||
    t_fail "device-side curl through the rule failed: $out"
out=$("$SNAP" -t "$ADDR" reverse --no-rebind "$R2" "tcp:$HP" 2>&1) &&
    t_fail "--no-rebind on another connection's rule succeeded"
case $out in *"cannot rebind existing socket"*) ;; *) t_fail "--no-rebind said: $out" ;; esac
"$SNAP" -t "$ADDR" reverse --remove "$R2" || t_fail "--remove of another connection's rule failed"
out=$("$SNAP" -t "$ADDR" reverse --list) || t_fail "--list failed"
case $out in *"$R2 "*) t_fail "a removed rule is still listed: $out" ;; esac
"$SNAP" -t "$ADDR" shell "curl -sS --max-time 5 http://127.0.0.1:${R2#tcp:}/one.bin" > /dev/null 2>&1 &&
    t_fail "the removed rule still answers on the device"
bg_start rv3 "$SNAP" -t "$ADDR" reverse tcp:0 "tcp:$HP"
R3=$(first_word rv3)
bg_start rv4 "$SNAP" -t "$ADDR" reverse "$R3" "tcp:$HP"
out=$("$SNAP" -t "$ADDR" reverse --list) || t_fail "--list failed"
[ "$(printf '%s\n' "$out" | grep -c " $R3 ")" = 1 ] || t_fail "a moved rule is not listed once: $out"
out=$("$SNAP" -t "$ADDR" shell "curl -sS --max-time 10 http://127.0.0.1:${R3#tcp:}/one.bin") ||
    t_fail "device-side curl through the moved rule failed: $out"
"$SNAP" -t "$ADDR" reverse --remove-all || t_fail "--remove-all failed"
out=$("$SNAP" -t "$ADDR" reverse --list) || t_fail "--list failed"
case $out in *tcp:*) t_fail "--remove-all from another connection left: $out" ;; esac
for n in rv2 rv3 rv4; do
    kill -INT "${BG[$n]}"
    wait "${BG[$n]}"
done

t_check "the device vanishing: local connections close, forward exits 1 with a message"
curl -sS --max-time 60 --limit-rate 2M -o /dev/null "http://127.0.0.1:$P1/big.bin" \
    2> "$T_TMP/vanish.err" &
CURL=$!
sleep 1
for p in $(ps --ppid "${TD_PID[dev]}" -o pid=); do kill -KILL "$p"; done # its connections
kill -KILL "${TD_PID[dev]}"
for ((i = 0; i < 100; i++)); do kill -0 "${BG[fw]}" 2> /dev/null || break; sleep 0.1; done
kill -0 "${BG[fw]}" 2> /dev/null && t_fail "forward still running 10 s after the device vanished"
wait "${BG[fw]}"
rc=$?
[ $rc -eq 1 ] || t_fail "forward exited $rc, expected 1"
grep -q "device connection ended" "$T_TMP/fw.err" || t_fail "no message: $(tail -2 "$T_TMP/fw.err")"
# curl notices between its rate-limiting pauses; on a loaded machine that
# can take a few seconds.
for ((i = 0; i < 200; i++)); do kill -0 "$CURL" 2> /dev/null || break; sleep 0.1; done
kill -0 "$CURL" 2> /dev/null && t_fail "the local connection stayed open 20 s after the exit"
wait "$CURL" && t_fail "curl reported success for a cut transfer"
echo "PASS: $T_CHECKS checks"
