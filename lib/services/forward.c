/* SPDX-License-Identifier: Apache-2.0 */
/* Forwards: a local listener whose connections are relayed to a device
 * destination (forward_relay.c), and host socket specs shared with
 * reverse.c. The listener is nonblocking; the caller drives it with
 * adbc_forward_run() or its own poll loop (adbc_forward_fd/dispatch). */
#include "services/forward_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct adbc_forward {
    adbc_conn *c;
    int lfd;
    int wake[2];      /* adbc_forward_stop writes here */
    char *local, *remote;
    int port;
    char unix_path[108]; /* a filesystem socket we created (removed at free) */
    fwd_relays relays;
};

static const char *const device_prefixes[] = {
    "tcp:", "localabstract:", "localreserved:", "localfilesystem:", "jdwp:", "vsock:", "dev:",
};

int forward_host_spec(const char *spec, int passive, struct addrinfo **ai, struct sockaddr_un *un,
                   socklen_t *unlen)
{
    *ai = NULL;
    *unlen = 0;
    if (strncmp(spec, "tcp:", 4) == 0) {
        const char *p = spec + 4;
        char host[256] = "127.0.0.1";
        const char *port = p;
        const char *colon = strrchr(p, ':');
        if (colon) {
            size_t hl = (size_t)(colon - p);
            const char *h = p;
            if (hl >= 2 && h[0] == '[' && h[hl - 1] == ']') {
                h++;
                hl -= 2;
            }
            if (hl == 0 || hl >= sizeof host)
                return core_fail(ADBC_EINVAL, "bad host in \"%s\"", spec);
            memcpy(host, h, hl);
            host[hl] = '\0';
            port = colon + 1;
        }
        char *end;
        long v = strtol(port, &end, 10);
        if (!*port || *end || v < 0 || v > 65535)
            return core_fail(ADBC_EINVAL, "bad port in \"%s\" (tcp:PORT or tcp:HOST:PORT)", spec);
        struct addrinfo hints = {.ai_socktype = SOCK_STREAM,
                                 .ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0)};
        int g = getaddrinfo(host, port, &hints, ai);
        if (g != 0)
            return core_fail(ADBC_EINVAL, "cannot resolve \"%s\": %s", host, gai_strerror(g));
        return 0;
    }
    memset(un, 0, sizeof *un);
    un->sun_family = AF_UNIX;
    const char *name = NULL;
    int abstract = 0;
    if (strncmp(spec, "localabstract:", 14) == 0) {
        name = spec + 14;
        abstract = 1;
    } else if (strncmp(spec, "localfilesystem:", 16) == 0) {
        name = spec + 16;
    } else if (strncmp(spec, "local:", 6) == 0) {
        name = spec + 6;
    } else {
        return core_fail(ADBC_EINVAL,
                         "unknown host socket \"%s\": use tcp:PORT, tcp:HOST:PORT, "
                         "localabstract:NAME or localfilesystem:PATH",
                         spec);
    }
    size_t n = strlen(name);
    if (n == 0 || n + (size_t)abstract >= sizeof un->sun_path)
        return core_fail(ADBC_EINVAL, "socket name in \"%s\" is empty or longer than %zu bytes",
                         spec, sizeof un->sun_path - 1 - (size_t)abstract);
    memcpy(un->sun_path + abstract, name, n);
    *unlen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + (size_t)abstract + n +
                         (abstract ? 0 : 1));
    return 0;
}

/* Connect with a deadline (nonblocking connect, then poll). */
static int connect_to(int family, const struct sockaddr *sa, socklen_t len, int timeout_ms,
                      const char *spec)
{
    int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return core_fail(ADBC_EIO, "cannot create a socket for %s: %s", spec, strerror(errno));
    if (connect(fd, sa, len) != 0) {
        if (errno != EINPROGRESS && errno != EAGAIN) {
            int e = errno;
            close(fd);
            return core_fail(ADBC_EREFUSED, "cannot connect to %s: %s", spec, strerror(e));
        }
        struct pollfd pf = {.fd = fd, .events = POLLOUT};
        int pr = poll(&pf, 1, timeout_ms);
        int err = 0;
        socklen_t el = sizeof err;
        if (pr <= 0) {
            close(fd);
            return core_fail(ADBC_ETIMEDOUT, "cannot connect to %s: no answer within %d ms",
                             spec, timeout_ms);
        }
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el);
        if (err) {
            close(fd);
            return core_fail(ADBC_EREFUSED, "cannot connect to %s: %s", spec, strerror(err));
        }
    }
    if (family != AF_UNIX) {
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    return fd;
}

int forward_host_connect(const char *spec, int timeout_ms)
{
    struct addrinfo *ai;
    struct sockaddr_un un;
    socklen_t unlen;
    int rc = forward_host_spec(spec, 0, &ai, &un, &unlen);
    if (rc < 0)
        return rc;
    if (!ai)
        return connect_to(AF_UNIX, (struct sockaddr *)&un, unlen, timeout_ms, spec);
    rc = ADBC_EREFUSED;
    for (struct addrinfo *a = ai; a; a = a->ai_next) {
        rc = connect_to(a->ai_family, a->ai_addr, a->ai_addrlen, timeout_ms, spec);
        if (rc >= 0)
            break;
    }
    freeaddrinfo(ai);
    return rc;
}

static int listen_spec(adbc_forward *f, const char *spec)
{
    struct addrinfo *ai;
    struct sockaddr_un un;
    socklen_t unlen;
    int rc = forward_host_spec(spec, 1, &ai, &un, &unlen);
    if (rc < 0)
        return rc;
    if (!ai) {
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd >= 0 && un.sun_path[0]) {
            /* A stale socket from an earlier run is replaced, as adb does;
             * anything else at the path is left alone (bind fails). */
            struct sockaddr_un probe = un;
            int t = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
            if (t >= 0 && connect(t, (struct sockaddr *)&probe, unlen) != 0 &&
                errno == ECONNREFUSED)
                unlink(un.sun_path);
            if (t >= 0)
                close(t);
        }
        if (fd < 0 || bind(fd, (struct sockaddr *)&un, unlen) != 0 || listen(fd, 128) != 0) {
            int e = errno;
            if (fd >= 0)
                close(fd);
            return core_fail(ADBC_EIO, "cannot listen on %s: %s", spec, strerror(e));
        }
        if (un.sun_path[0])
            snprintf(f->unix_path, sizeof f->unix_path, "%s", un.sun_path);
        f->lfd = fd;
        f->local = core_strdup(spec);
        return f->local ? 0 : core_fail(ADBC_ENOMEM, "out of memory");
    }
    int fd = -1, e = 0;
    for (struct addrinfo *a = ai; a && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0) {
            e = errno;
            continue;
        }
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, a->ai_addr, a->ai_addrlen) != 0 || listen(fd, 128) != 0) {
            e = errno;
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(ai);
    if (fd < 0)
        return core_fail(ADBC_EIO, "cannot listen on %s: %s", spec, strerror(e));
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    getsockname(fd, (struct sockaddr *)&ss, &sl);
    f->port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                             : ((struct sockaddr_in *)&ss)->sin_port);
    f->lfd = fd;
    /* tcp:0 -> tcp:PORT, keeping an explicit host. */
    char buf[300];
    const char *colon = strrchr(spec + 4, ':');
    if (colon)
        snprintf(buf, sizeof buf, "%.*s:%d", (int)(colon - spec), spec, f->port);
    else
        snprintf(buf, sizeof buf, "tcp:%d", f->port);
    f->local = core_strdup(buf);
    return f->local ? 0 : core_fail(ADBC_ENOMEM, "out of memory");
}

int adbc_forward_new(adbc_forward **out, adbc_conn *c, const char *local, const char *remote,
                     const adbc_forward_opts *opts)
{
    if (!out)
        return core_null(__func__, "out");
    *out = NULL;
    if (!c || !local || !remote)
        return core_fail(ADBC_EINVAL, "adbc_forward_new: need a connection, LOCAL and REMOTE");
    adbc_forward_opts own;
    adbc_forward_opts_init(&own);
    if (core_abi_take(&own, sizeof own, opts, "adbc_forward_opts") < 0)
        return ADBC_EINVAL;
    opts = &own;
    int known = 0;
    for (size_t i = 0; i < sizeof device_prefixes / sizeof device_prefixes[0]; i++)
        if (strncmp(remote, device_prefixes[i], strlen(device_prefixes[i])) == 0 &&
            remote[strlen(device_prefixes[i])])
            known = 1;
    if (!known)
        return core_fail(ADBC_EINVAL,
                         "unknown device destination \"%s\": use tcp:PORT, localabstract:NAME, "
                         "localreserved:NAME, localfilesystem:PATH, jdwp:PID or vsock:CID:PORT",
                         remote);
    adbc_forward *f = core_calloc(1, sizeof *f);
    if (!f)
        return core_fail(ADBC_ENOMEM, "out of memory creating a forward");
    f->c = c;
    f->lfd = -1;
    f->wake[0] = f->wake[1] = -1;
    relays_init(&f->relays, opts);
    int rc;
    if (pipe2(f->wake, O_CLOEXEC | O_NONBLOCK) != 0) {
        rc = core_fail(ADBC_EIO, "cannot create a pipe: %s", strerror(errno));
        goto fail;
    }
    if (!(f->remote = core_strdup(remote))) {
        rc = core_fail(ADBC_ENOMEM, "out of memory creating a forward");
        goto fail;
    }
    rc = listen_spec(f, local);
    if (rc < 0)
        goto fail;
    *out = f;
    return 0;
fail:
    adbc_forward_free(f);
    return core_fail_keep(rc);
}

const char *adbc_forward_local(const adbc_forward *f)
{
    if (!f)
        return "";
    return f->local;
}

const char *adbc_forward_remote(const adbc_forward *f)
{
    if (!f)
        return "";
    return f->remote;
}

int adbc_forward_port(const adbc_forward *f)
{
    if (!f)
        return 0;
    return f->port;
}

int adbc_forward_fd(const adbc_forward *f)
{
    if (!f)
        return -1;
    return f->lfd;
}

static void peer_name(const struct sockaddr_storage *ss, char *out, size_t len)
{
    char host[INET6_ADDRSTRLEN] = "?";
    if (ss->ss_family == AF_INET) {
        const struct sockaddr_in *s4 = (const struct sockaddr_in *)ss;
        inet_ntop(AF_INET, &s4->sin_addr, host, sizeof host);
        snprintf(out, len, "%s:%u", host, ntohs(s4->sin_port));
    } else if (ss->ss_family == AF_INET6) {
        const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)ss;
        inet_ntop(AF_INET6, &s6->sin6_addr, host, sizeof host);
        snprintf(out, len, "[%s]:%u", host, ntohs(s6->sin6_port));
    } else {
        snprintf(out, len, "unix");
    }
}

int adbc_forward_dispatch(adbc_forward *f)
{
    if (!f)
        return core_null(__func__, "the forwarder");
    relays_reap(&f->relays);
    char why[512];
    int st = conn_status_msg(f->c, why, sizeof why);
    if (st != 0)
        return core_fail(st, "the device connection ended: %s", why);
    while (relays_active(&f->relays) < f->relays.opts.max_connections) {
        struct sockaddr_storage ss;
        socklen_t sl = sizeof ss;
        int fd = accept4(f->lfd, (struct sockaddr *)&ss, &sl, SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ECONNABORTED)
                return 0;
            /* EMFILE and the like: leave it in the backlog, try later. */
            return 0;
        }
        if (ss.ss_family != AF_UNIX) {
            int one = 1;
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        }
        char peer[96];
        peer_name(&ss, peer, sizeof peer);
        char *dest = core_strdup(f->remote);
        if (!dest) {
            close(fd);
            continue;
        }
        relay_start(&f->relays, f->c, fd, NULL, dest, peer);
    }
    return 0;
}

int adbc_forward_run(adbc_forward *f, int timeout_ms)
{
    if (!f)
        return core_null(__func__, "the forwarder");
    int64_t deadline = core_deadline(timeout_ms);
    for (;;) {
        int rc = adbc_forward_dispatch(f);
        if (rc < 0)
            return rc;
        int wait = 200;
        if (timeout_ms >= 0) {
            int left = core_remaining(deadline);
            if (left == 0)
                return 0;
            if (left < wait)
                wait = left;
        }
        int full = relays_active(&f->relays) >= f->relays.opts.max_connections;
        struct pollfd pf[2] = {{.fd = f->wake[0], .events = POLLIN},
                               {.fd = full ? -1 : f->lfd, .events = POLLIN}};
        if (poll(pf, 2, wait) > 0 && (pf[0].revents & POLLIN)) {
            char b[64];
            while (read(f->wake[0], b, sizeof b) > 0) {
            }
            return 0;
        }
    }
}

void adbc_forward_stop(adbc_forward *f)
{
    if (!f)
        return;
    char b = 1;
    if (write(f->wake[1], &b, 1) < 0) {
        /* full pipe: a stop is already pending */
    }
}

size_t adbc_forward_active(adbc_forward *f)
{
    if (!f)
        return 0;
    relays_reap(&f->relays);
    return relays_active(&f->relays);
}

void adbc_forward_free(adbc_forward *f)
{
    if (!f)
        return;
    if (f->lfd >= 0)
        close(f->lfd);
    f->lfd = -1;
    relays_stop_all(&f->relays);
    if (f->unix_path[0])
        unlink(f->unix_path);
    if (f->wake[0] >= 0)
        close(f->wake[0]);
    if (f->wake[1] >= 0)
        close(f->wake[1]);
    core_free(f->local);
    core_free(f->remote);
    core_free(f);
}
