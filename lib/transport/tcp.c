/* SPDX-License-Identifier: Apache-2.0 */
/* TCP transport: resolve host:port (IPv4 or IPv6), connect with a timeout,
 * TCP_NODELAY, then carry the connection as a descriptor transport. */
#include "transport/fd_int.h"

#include "portable/portable.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int adbc_parse_hostport(char *host, size_t hostlen, unsigned *port, const char *addr,
                        unsigned default_port)
{
    if (!addr || !*addr)
        return core_fail(ADBC_EINVAL, "empty address: give HOST:PORT");
    const char *p = NULL;
    size_t hl;
    if (addr[0] == '[') {
        const char *close = strchr(addr, ']');
        if (!close)
            return core_fail(ADBC_EINVAL, "bad address \"%s\": missing ']'", addr);
        hl = (size_t)(close - addr - 1);
        if (close[1] == ':')
            p = close + 2;
        else if (close[1] != '\0')
            return core_fail(ADBC_EINVAL, "bad address \"%s\": expected [IPv6]:PORT", addr);
        addr++;
    } else {
        const char *colon = strrchr(addr, ':');
        if (colon && strchr(addr, ':') != colon)
            colon = NULL; /* a bare IPv6 address: no port */
        hl = colon ? (size_t)(colon - addr) : strlen(addr);
        p = colon ? colon + 1 : NULL;
    }
    if (hl == 0 || hl >= hostlen)
        return core_fail(ADBC_EINVAL, "bad address: host part is empty or too long");
    memcpy(host, addr, hl);
    host[hl] = '\0';
    if (!p) {
        *port = default_port;
        return 0;
    }
    char *end;
    errno = 0;
    unsigned long v = strtoul(p, &end, 10);
    if (*p == '\0' || *end != '\0' || errno || v == 0 || v > 65535)
        return core_fail(ADBC_EINVAL, "bad port \"%s\": expected a number from 1 to 65535", p);
    *port = (unsigned)v;
    return 0;
}

static int connect_one(const struct addrinfo *ai, int timeout_ms, int *err)
{
    int fd = portable_dial(ai->ai_addr, ai->ai_addrlen, timeout_ms);
    if (fd < 0) {
        *err = errno;
        return -1;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    /* Connected: back to blocking, so the connection's reader can wait in
     * recv() itself (fd.c); every write passes MSG_DONTWAIT. */
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    return fd;
}

int adbc_transport_tcp(adbc_transport **out, const char *addr, int timeout_ms)
{
    if (!out)
        return core_null(__func__, "out");
    *out = NULL;
    char host[256];
    unsigned port;
    int rc = adbc_parse_hostport(host, sizeof host, &port, addr, 5555);
    if (rc < 0)
        return rc;
    char portstr[8];
    snprintf(portstr, sizeof portstr, "%u", port);
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    struct addrinfo *res = NULL;
    int g = getaddrinfo(host, portstr, &hints, &res);
    if (g != 0)
        return core_fail(ADBC_ENOTFOUND, "cannot resolve \"%s\": %s", host, gai_strerror(g));
    int64_t deadline = core_deadline(timeout_ms);
    int fd = -1, err = 0;
    for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
        int left = core_remaining(deadline);
        if (left == 0) {
            err = ETIMEDOUT;
            break;
        }
        fd = connect_one(ai, left, &err);
    }
    freeaddrinfo(res);
    if (fd < 0) {
        if (err == ETIMEDOUT)
            return core_fail(ADBC_ETIMEDOUT,
                             "connecting to %s:%u timed out after %d ms: check the address and "
                             "that the device is reachable",
                             host, port, timeout_ms);
        if (err == ECONNREFUSED)
            return core_fail(ADBC_EREFUSED,
                             "connection to %s:%u refused: is adbd listening there? (on a phone: "
                             "enable wireless debugging, or over USB run `adbc-snap tcpip %u`)",
                             host, port, port);
        return core_fail(ADBC_EIO, "cannot connect to %s:%u: %s", host, port, strerror(err));
    }
    char desc[300];
    if (strchr(host, ':'))
        snprintf(desc, sizeof desc, "tcp:[%s]:%u", host, port);
    else
        snprintf(desc, sizeof desc, "tcp:%s:%u", host, port);
    rc = transport_fd_named(out, fd, 1, desc);
    if (rc < 0)
        close(fd);
    return rc;
}
