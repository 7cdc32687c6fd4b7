/* SPDX-License-Identifier: Apache-2.0 */
/* The Host check, against DNS rebinding: a page on evil.example whose name
 * is made to resolve to 127.0.0.1 reaches this server with "Host:
 * evil.example". Every request, every route (/health and the page too), is
 * refused unless its Host names the server by a loopback name (localhost,
 * 127.0.0.1, [::1]) or by the address it listens on; when that address is
 * the wildcard (0.0.0.0, ::), any address literal is taken, as a name is
 * what rebinding needs. The port is not compared: a tunnel (ssh -L 9000:...)
 * reaches the server under another port, and rebinding is in the name. */
#include "serve.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

void serve_host_listen(serve *s, const char *host, int any)
{
    snprintf(s->listen_host, sizeof s->listen_host, "%s", host);
    s->listen_any = any;
}

int serve_host_ok(const serve *s, const char *hdr)
{
    char name[256];
    const char *port;
    size_t n;
    if (!s || !hdr)
        return 0;
    if (hdr[0] == '[') { /* [v6]:port */
        const char *close = strchr(hdr, ']');
        if (!close)
            return 0;
        n = (size_t)(close - hdr - 1);
        if (n == 0 || n >= sizeof name)
            return 0;
        memcpy(name, hdr + 1, n);
        port = close + 1;
    } else {
        const char *colon = strchr(hdr, ':');
        n = colon ? (size_t)(colon - hdr) : strlen(hdr);
        if (n == 0 || n >= sizeof name)
            return 0;
        memcpy(name, hdr, n);
        port = hdr + n;
    }
    name[n] = '\0';
    if (*port) { /* ":" and 1 to 5 digits, nothing else */
        size_t d = strspn(port + 1, "0123456789");
        if (port[0] != ':' || d == 0 || d > 5 || port[1 + d])
            return 0;
    }
    if (strcasecmp(name, "localhost") == 0 || strcmp(name, "127.0.0.1") == 0)
        return 1;
    union {
        struct in_addr v4;
        struct in6_addr v6;
    } a, b;
    int v6 = hdr[0] == '[';
    if (inet_pton(v6 ? AF_INET6 : AF_INET, name, &a) != 1)
        return 0; /* a name other than localhost */
    if (v6 && IN6_IS_ADDR_LOOPBACK(&a.v6))
        return 1;
    if (s->listen_any)
        return 1;
    /* The listening address, compared as an address (::1 and 0::1 alike). */
    return inet_pton(v6 ? AF_INET6 : AF_INET, s->listen_host, &b) == 1 &&
           memcmp(&a, &b, v6 ? sizeof a.v6 : sizeof a.v4) == 0;
}
