#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# adbc-serve's inspector page: its security headers and the Host check on
# every route with curl, then the page itself in Debian's chromium, headless,
# driven over the DevTools protocol (serve_page.py) against the test device:
# the token asked for and kept in the tab, the marked screen and the
# snapshot, a ref's box on hover, a click on a ref sending exactly one
# `input tap` at its point, the page refused under another name. The page's
# screenshot is kept in the build directory (test-artefacts/serve_page.png).
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
t_init
. "$(dirname "${BASH_SOURCE[0]}")/lib_serve.sh"
command -v python3 > /dev/null || t_fail "python3 is needed (scripts/packages.txt)"

td_start a --no-auth
CA=${TD_SANDBOX[a]}/data/local/tmp/.adbc-test
setup_dev a
screen "$CA" Send Reply Forward
grey_frame "$CA/screencap.raw"
A=127.0.0.1:${TD_PORT[a]}
# The agent's panel: a scripted model that taps Send, then says done.
. "$(dirname "${BASH_SOURCE[0]}")/lib_agent.sh"
model '{"turns":[
 {"answer":{"text":"Send the draft.","tool":"tap","args":{"ref":3}}},
 {"answer":{"tool":"done","args":{"answer":"The draft is sent."}}}]}'
OPENAI_API_KEY=$KEY serve_start -t "$A" --settle 0 --provider openai --base-url "$BASE" \
    --model scripted --agent-allow "$A"
PORT=$(cat "$T_TMP/port")
command -v jq > /dev/null || t_fail "jq is needed (scripts/packages.txt)"

# HD [CURL ARGS...] PATH: H (lib_serve.sh) keeping the answer's headers.
HD() { H -D "$T_TMP/h" "$@"; }
header() { grep -i "^$1:" "$T_TMP/h" | head -n1 | cut -d' ' -f2- | tr -d '\r'; }
ctype_is() { case $(header Content-Type) in "$1"*) ;; *) t_fail "$2: Content-Type $(header Content-Type)" ;; esac; }

t_check "GET / is the page, its script and style sheet are separate same-origin files"
HD /
[ "$code" = 200 ] || t_fail "GET / answered $code: $(head -c 300 "$OUT")"
ctype_is text/html /
grep -q '<script src="/page.js"' "$OUT" || t_fail "the page does not load /page.js"
grep -q '<script>' "$OUT" && t_fail "the page has an inline script"
grep -qi ' on[a-z]*=' "$OUT" && t_fail "the page has an inline event handler"
grep -q "$(cat "$TOK")" "$OUT" && t_fail "the page carries the token"
HD /page.js
[ "$code" = 200 ] || t_fail "GET /page.js answered $code"
ctype_is text/javascript /page.js
HD /page.css
[ "$code" = 200 ] || t_fail "GET /page.css answered $code"
ctype_is text/css /page.css
H -X POST /
expect 405 method_not_allowed

t_check "every answer, the page's and the API's, carries the strict CSP, nosniff and no-referrer"
for p in / /page.js /health /v1/devices /no-such; do
    HD "$p"
    csp=$(header Content-Security-Policy)
    for want in "default-src 'none'" "script-src 'self'" "style-src 'self'" "img-src 'self' blob: data:" \
        "connect-src 'self'" "frame-ancestors 'none'"; do
        case $csp in *"$want"*) ;; *) t_fail "$p: the CSP '$csp' lacks $want" ;; esac
    done
    case $csp in *unsafe*) t_fail "$p: the CSP allows $csp" ;; esac
    [ "$(header X-Content-Type-Options)" = nosniff ] || t_fail "$p: no X-Content-Type-Options: nosniff"
    [ "$(header Referrer-Policy)" = no-referrer ] || t_fail "$p: no Referrer-Policy: no-referrer"
done

t_check "a Host that is not the server's is refused on every route, before the token or a device"
calls "$CA" > /dev/null
for host in evil.example "evil.example:$PORT" "localhost.evil.example" "127.0.0.1.nip.io:$PORT" \
    "10.1.2.3:$PORT" "[::2]:$PORT" "localhost:x" ""; do
    for p in / /page.js /health /v1/devices /v1/observe "/v1/screenshot?marks=1" /v1/no-such; do
        H -H "Host: $host" "$p"
        expect 403 bad_host
    done
    H -H "Host: $host" -d '{"action":"tap","x":1,"y":2}' /v1/act
    expect 403 bad_host
done
[ -z "$(calls "$CA")" ] || t_fail "a refused request reached the device"

t_check "the loopback names and the listening address, with any port, are served"
for host in localhost "localhost:$PORT" LOCALHOST 127.0.0.1 "127.0.0.1:$PORT" "[::1]:$PORT" "[::1]" \
    "127.0.0.1:9000"; do
    H -H "Host: $host" /health
    expect 200
done

command -v chromium > /dev/null || command -v chromium-browser > /dev/null ||
    { echo "SKIP: chromium is not installed (scripts/packages.txt); the curl checks above passed"; exit 77; }
# evil.test resolves to 127.0.0.1 in this browser: a DNS-rebinding page.
chromium_start --window-size=1280,860 --host-resolver-rules="MAP evil.test 127.0.0.1" about:blank

mkdir -p "$ADBC_BUILD_DIR/test-artefacts"
t_check "the page in chromium: token, marked screen, snapshot, hover, one tap per click, a task followed live, rebinding refused"
python3 "$ADBC_SOURCE_DIR/tests/sh/serve_page.py" "$CDP_PORT" "$URL" "$TOK" "$CA" \
    "$ADBC_BUILD_DIR/test-artefacts/serve_page.png" ||
    t_fail "the page in chromium (above); adbc-serve's log: $(tail -n 20 "$T_TMP/serve.log")"
