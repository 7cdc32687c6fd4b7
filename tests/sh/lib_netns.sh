# SPDX-License-Identifier: Apache-2.0
# Sourced first by a test that makes its own network: it runs the test
# again inside private network and mount namespaces (unshare -n -m, as
# root; CI runs as root), or skips it (exit 77) where they cannot be made.
# Sourced with no arguments, "$@" is the test's own.
if [ -z "${ADBC_IN_NETNS:-}" ]; then
    if [ "$(id -u)" != 0 ] || ! unshare -n -m true 2>/dev/null; then
        echo "SKIP: needs root for private network and mount namespaces"
        exit 77
    fi
    ADBC_IN_NETNS=1 exec unshare -n -m bash "$0" "$@"
fi
