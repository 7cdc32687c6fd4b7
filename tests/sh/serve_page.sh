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
serve_start -t "$A" --settle 0
PORT=$(cat "$T_TMP/port")
AUTH="Authorization: Bearer $(cat "$TOK")"

# hdr PATH [CURL ARGS...]: the answer's headers in $T_TMP/h, body in $T_TMP/b; the status.
hdr()
{
    local path=$1
    shift
    curl -s -m 30 -D "$T_TMP/h" -o "$T_TMP/b" -w '%{http_code}' "$@" "$URL$path"
}
header() { grep -i "^$1:" "$T_TMP/h" | head -n1 | cut -d' ' -f2- | tr -d '\r'; }

t_check "GET / is the page, its script and style sheet are separate same-origin files"
[ "$(hdr /)" = 200 ] || t_fail "GET / answered $(head -c 300 "$T_TMP/b")"
case $(header Content-Type) in text/html*) ;; *) t_fail "GET /: Content-Type $(header Content-Type)" ;; esac
grep -q '<script src="/page.js"' "$T_TMP/b" || t_fail "the page does not load /page.js"
grep -q '<script>' "$T_TMP/b" && t_fail "the page has an inline script"
grep -qi ' on[a-z]*=' "$T_TMP/b" && t_fail "the page has an inline event handler"
grep -q "$(cat "$TOK")" "$T_TMP/b" && t_fail "the page carries the token"
[ "$(hdr /page.js)" = 200 ] || t_fail "GET /page.js: $(head -c 300 "$T_TMP/b")"
case $(header Content-Type) in text/javascript*) ;; *) t_fail "/page.js: Content-Type $(header Content-Type)" ;; esac
[ "$(hdr /page.css)" = 200 ] || t_fail "GET /page.css: $(head -c 300 "$T_TMP/b")"
case $(header Content-Type) in text/css*) ;; *) t_fail "/page.css: Content-Type $(header Content-Type)" ;; esac
[ "$(hdr / -X POST)" = 405 ] || t_fail "POST / was not refused"

t_check "every answer, the page's and the API's, carries the strict CSP, nosniff and no-referrer"
for p in / /page.js /health /v1/devices /no-such; do
    hdr "$p" -H "$AUTH" > /dev/null
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
rm -f "$CA/calls"
for host in evil.example "evil.example:$PORT" "localhost.evil.example" "127.0.0.1.nip.io:$PORT" \
    "10.1.2.3:$PORT" "[::2]:$PORT" "localhost:x" "" ; do
    for p in / /page.js /health /v1/devices /v1/observe "/v1/screenshot?marks=1" /v1/no-such; do
        st=$(hdr "$p" -H "$AUTH" -H "Host: $host")
        [ "$st" = 403 ] || t_fail "Host '$host' $p: answered $st: $(head -c 200 "$T_TMP/b")"
        [ "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["error"]["code"])' "$T_TMP/b")" = bad_host ] ||
            t_fail "Host '$host' $p: $(head -c 200 "$T_TMP/b")"
    done
    st=$(hdr /v1/act -H "$AUTH" -H "Host: $host" -d '{"action":"tap","x":1,"y":2}')
    [ "$st" = 403 ] || t_fail "Host '$host' POST /v1/act: answered $st"
done
[ -z "$(grep -v -e '^uiautomator' -e '^dumpsys' "$CA/calls" 2> /dev/null)" ] ||
    t_fail "a refused request reached the device: $(cat "$CA/calls")"

t_check "the loopback names and the listening address, with any port, are served"
for host in localhost "localhost:$PORT" LOCALHOST 127.0.0.1 "127.0.0.1:$PORT" "[::1]:$PORT" "[::1]" \
    "127.0.0.1:9000"; do
    st=$(hdr /health -H "Host: $host")
    [ "$st" = 200 ] || t_fail "Host '$host': answered $st: $(head -c 200 "$T_TMP/b")"
done

CHROMIUM=$(command -v chromium || command -v chromium-browser) ||
    { echo "SKIP: chromium is not installed (scripts/packages.txt); the curl checks above passed"; exit 77; }
# evil.test resolves to 127.0.0.1 in this browser: a DNS-rebinding page.
"$CHROMIUM" --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run \
    --remote-debugging-port=0 --user-data-dir="$T_TMP/chromium" --window-size=1280,860 \
    --host-resolver-rules="MAP evil.test 127.0.0.1" about:blank > "$T_TMP/chromium.out" 2>&1 &
T_BG_PIDS+=("$!")
for ((i = 0; i < 300; i++)); do
    [ -s "$T_TMP/chromium/DevToolsActivePort" ] && break
    sleep 0.1
done
DT=$(head -n1 "$T_TMP/chromium/DevToolsActivePort" 2> /dev/null)
[ -n "$DT" ] || t_fail "chromium did not start: $(tail -5 "$T_TMP/chromium.out")"

mkdir -p "$ADBC_BUILD_DIR/test-artefacts"
t_check "the page in chromium: token, marked screen, snapshot, hover, one tap per click, rebinding refused"
python3 "$ADBC_SOURCE_DIR/tests/sh/serve_page.py" "$DT" "$URL" "$TOK" "$CA" \
    "$ADBC_BUILD_DIR/test-artefacts/serve_page.png" ||
    t_fail "the page in chromium (above); adbc-serve's log: $(tail -n 20 "$T_TMP/serve.log")"
