#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Build the BoringSSL reference program (adbc-ref) by hand, without touching
# the main build: tests/ref/build.sh [BUILD_DIR]   (default: $ADBC_BUILD_DIR,
# else ./build). The binary lands in BUILD_DIR/tests/ref/adbc-ref, where the
# tests look for it. It links only Android's BoringSSL (Debian's
# android-libboringssl-dev), never OpenSSL or libadbc: their symbols clash.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-${ADBC_BUILD_DIR:-build}}
inc=/usr/include/android
lib=/usr/lib/$(${CC:-cc} -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)/android
if [ ! -f "$inc/openssl/curve25519.h" ] || [ ! -e "$lib/libcrypto.so" ]; then
    echo "tests/ref/build.sh: Android BoringSSL not found ($inc, $lib):" >&2
    echo "  apt-get install android-libboringssl-dev" >&2
    exit 1
fi
mkdir -p "$build/tests/ref"
${CC:-cc} -std=c11 -D_GNU_SOURCE -Wall -Wextra -O1 -g -I"$inc" \
    -o "$build/tests/ref/adbc-ref" "$here"/ref_*.c \
    -L"$lib" -lssl -lcrypto -Wl,-rpath,"$lib"
echo "built $build/tests/ref/adbc-ref"
