#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Install adbc into a temporary prefix and use it as an outside project
# would: build examples/ with pkg-config and with find_package(adbc), each
# shared and static, outside this tree; run them against the test device.
# The full build is configured for one prefix and installed with
# `cmake --install --prefix` into another, so adbc.pc and the CMake package
# must find their files from where they lie (relocatable).
# Also: the library alone configures and builds with every optional
# dependency off and without tools or tests (libusb, OpenSSL, zlib only).
# Usage: tests/install.sh [BUILD_DIR_FOR_THE_TEST_DEVICE]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
tdbuild=${1:-$top/build}
work=$(mktemp -d "${TMPDIR:-/tmp}/adbc-install.XXXXXX")
td_pid=
cleanup() { [ -n "$td_pid" ] && kill "$td_pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
pass=0
ok() { echo "ok   $*"; pass=$((pass + 1)); }

mapfile -t opts < <(grep -v '^#' "$top/scripts/build-options")
prefix=$work/prefix
echo "== library-only build, every optional dependency off"
cmake -S "$top" -B "$work/libonly" -DCMAKE_BUILD_TYPE=Release -DADBC_BUILD_TOOLS=OFF -DBUILD_TESTING=OFF \
    -DADBC_WITH_SODIUM=OFF -DADBC_WITH_ZSTD=OFF -DADBC_WITH_LZ4=OFF -DADBC_WITH_BROTLI=OFF \
    -DADBC_WITH_CJSON=OFF -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_INSTALL_LIBDIR=lib64 >"$work/libonly.log" 2>&1 ||
    { cat "$work/libonly.log"; fail "library-only configure"; }
cmake --build "$work/libonly" -j"$(nproc)" >>"$work/libonly.log" 2>&1 || { tail -30 "$work/libonly.log"; fail "library-only build"; }
[ ! -e "$work/libonly/tools" ] || fail "ADBC_BUILD_TOOLS=OFF still configured tools/"
ok "library alone builds (no tools, no tests, no optional dependency)"
cmake --install "$work/libonly" >/dev/null
[ -f "$prefix/lib64/libadbc.a" ] && [ -f "$prefix/lib64/pkgconfig/adbc.pc" ] &&
    [ -f "$prefix/lib64/cmake/adbc/adbcConfig.cmake" ] && [ -f "$prefix/include/adbc/adbc.h" ] ||
    fail "install tree incomplete: $(cd "$prefix" && find . -type f | head -20)"
ok "CMAKE_INSTALL_LIBDIR=lib64 honoured: library, adbc.pc and CMake package under lib64/"
grep -q '^Requires.private: libusb-1.0 libssl libcrypto zlib$' "$prefix/lib64/pkgconfig/adbc.pc" ||
    fail "adbc.pc without optional deps: $(grep Requires "$prefix/lib64/pkgconfig/adbc.pc")"
ok "adbc.pc of a build without optional dependencies lists only libusb, OpenSSL, zlib"

echo "== full build installed (the configuration the tests use), elsewhere than configured"
rm -rf "$prefix"
configured=$work/configured-prefix
cmake -S "$top" -B "$work/full" -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF "${opts[@]}" \
    -DCMAKE_INSTALL_PREFIX="$configured" >"$work/full.log" 2>&1 || { cat "$work/full.log"; fail "configure"; }
cmake --build "$work/full" -j"$(nproc)" >>"$work/full.log" 2>&1 || { tail -30 "$work/full.log"; fail "build"; }
cmake --install "$work/full" --prefix "$prefix" >>"$work/full.log" 2>&1 || fail "install"
[ ! -e "$configured" ] || fail "cmake --install --prefix still wrote to the configured prefix: $(find "$configured" | head -5)"
libdir=$(ls -d "$prefix"/lib*/pkgconfig | head -1); libdir=${libdir%/pkgconfig}
! grep -rqF "$configured" "$libdir/pkgconfig/adbc.pc" "$libdir/cmake/adbc" ||
    fail "the installed adbc.pc or CMake package names the configured prefix $configured: $(grep -rF "$configured" "$libdir/pkgconfig/adbc.pc" "$libdir/cmake/adbc" | head -3)"
cflags=$(PKG_CONFIG_PATH=$libdir/pkgconfig pkg-config --cflags adbc) || fail "pkg-config --cflags adbc"
libs=$(PKG_CONFIG_PATH=$libdir/pkgconfig pkg-config --libs adbc) || fail "pkg-config --libs adbc"
inc=$(sed -n 's/^-I\([^ ]*\) .*/\1/p' <<<"$cflags "); lib=$(sed -n 's/^-L\([^ ]*\) .*/\1/p' <<<"$libs ")
[ -n "$inc" ] && [ "$(realpath "$inc")" = "$(realpath "$prefix/include")" ] && [ -f "$inc/adbc/adbc.h" ] ||
    fail "pkg-config --cflags adbc gives '$cflags', not $prefix/include"
[ -n "$lib" ] && [ "$(realpath "$lib")" = "$(realpath "$libdir")" ] && [ -f "$lib/libadbc.a" ] ||
    fail "pkg-config --libs adbc gives '$libs', not $libdir"
ok "cmake --install --prefix elsewhere than configured: pkg-config --cflags --libs adbc point into it ($cflags $libs)"
grep -q 'libsodium' "$libdir/pkgconfig/adbc.pc" || fail "libsodium used but not in adbc.pc"
ok "adbc.pc lists the optional dependencies this build uses: $(grep Requires.private "$libdir/pkgconfig/adbc.pc")"
[ -x "$prefix/bin/adbc-snap" ] || fail "adbc-snap not installed"
[ -x "$prefix/libexec/adbc/adbc-snap-core" ] || fail "adbc-snap-core not installed in libexec/adbc"
[ ! -e "$prefix/bin/adbc-snap-core" ] || fail "adbc-snap-core installed in bin/ too"
[ "$("$prefix/bin/adbc-snap" --help)" = "$("$prefix/libexec/adbc/adbc-snap-core" --help)" ] ||
    fail "the installed adbc-snap does not run adbc-snap-core: $("$prefix/bin/adbc-snap" --help 2>&1 | head -3)"
ok "adbc-snap (front end) in bin/, adbc-snap-core in libexec/adbc/, found through the install's layout"

export PKG_CONFIG_PATH=$libdir/pkgconfig
export LD_LIBRARY_PATH=$libdir
for mode in shared static; do
    d=$work/pc-$mode; cp -r "$top/examples" "$d"
    mk=(); [ $mode = static ] && mk=(STATIC=1)
    make -C "$d" "${mk[@]}" >"$d.log" 2>&1 || { cat "$d.log"; fail "pkg-config $mode build"; }
    ok "examples built with pkg-config ($mode)"
    d=$work/cm-$mode
    cmake -S "$top/examples" -B "$d" -DCMAKE_PREFIX_PATH="$prefix" \
        -DADBC_EXAMPLES_STATIC=$([ $mode = static ] && echo ON || echo OFF) >"$d.log" 2>&1 &&
        cmake --build "$d" >>"$d.log" 2>&1 || { cat "$d.log"; fail "find_package $mode build"; }
    ok "examples built with find_package(adbc) ($mode)"
done
# ldd's output is read whole before grep looks at it: `ldd | grep -q` under
# pipefail fails when grep's early exit cuts ldd off with SIGPIPE.
deps=$(ldd "$work/cm-shared/shell")
grep -q "libadbc.so.0.2 => $libdir" <<<"$deps" || fail "shared example does not use the installed libadbc.so.0.2: $deps"
deps=$(ldd "$work/cm-static/shell")
! grep -q libadbc <<<"$deps" || fail "static example still needs libadbc.so: $deps"
ok "the shared examples load the installed libadbc.so.0.2; the static ones need no libadbc.so"

echo "== run against the test device"
export HOME=$work/home; mkdir -p "$HOME/.android" "$work/sandbox"
"$prefix/bin/adbc-snap" --help >/dev/null 2>&1 || true
"$tdbuild/fixtures/adbc-testdevice" --sandbox "$work/sandbox" --no-auth --port 0 >"$work/td.out" 2>"$work/td.err" &
td_pid=$!
for _ in $(seq 100); do grep -q '^listening on' "$work/td.out" && break; sleep 0.05; done
addr=$(sed -n 's/^listening on //p' "$work/td.out")
[ -n "$addr" ] || { cat "$work/td.err"; fail "test device did not start"; }
for b in cm-shared cm-static pc-shared pc-static; do
    set +e
    out=$("$work/$b/shell" -s "$addr" 'echo hello from $((6*7)); exit 3' 2>&1); st=$?
    set -e
    [ "$out" = "hello from 42" ] && [ $st -eq 3 ] || fail "$b/shell: status $st, output '$out'"
done
ok "shell example (4 builds) prints the command's output and exits with its status"
head -c 300000 /dev/urandom >"$work/blob"
"$work/cm-static/pushpull" -s "$addr" "$work/blob" /data/local/tmp/blob "$work/blob.back" >/dev/null 2>&1 ||
    fail "pushpull"
cmp -s "$work/blob" "$work/blob.back" || fail "pulled copy differs"
ok "push/pull example round-trips 300000 random bytes"
out=$("$work/pc-shared/poll_session" "$addr" 'echo polled' 2>&1) || fail "poll_session: $out"
[ "$out" = "polled" ] || fail "poll_session printed '$out'"
ok "poll()-driven sans-IO client runs exec: to completion"
export XDG_RUNTIME_DIR=$work/run ADBC_SESSION_IDLE_EXIT=20
mkdir -m 700 "$XDG_RUNTIME_DIR"
"$prefix/bin/adbc-snap" -q -t "$addr" session start || fail "installed adbc-snap: session start (adbc-serve from bin/)"
set +e
out=$("$prefix/bin/adbc-snap" -t "$addr" shell 'echo through the session; exit 4' 2>&1); st=$?
"$prefix/bin/adbc-snap" -q -t "$addr" session stop
set -e
[ "$out" = "through the session" ] && [ $st -eq 4 ] || fail "installed adbc-snap through a session: status $st, output '$out'"
ok "installed adbc-snap: session start finds adbc-serve in bin/, shell goes through the session"
echo "$pass passed, 0 failed"
