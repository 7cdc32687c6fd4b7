/* SPDX-License-Identifier: Apache-2.0 */
/* A transport over a connected file descriptor (a TCP socket, one end of a
 * socketpair, a descriptor another program handed over). Reads and writes
 * poll() the descriptor together with a wake-up pipe, so shutdown() from any
 * thread releases a blocked reader or writer whatever the descriptor is.
 * A read may also wait on an alarm (a timerfd) that its reader sets once
 * for many reads: arming a timer is one of the dearest things a blocking
 * wait does (on a virtual machine it can cost more than the read), so a
 * reader that wants "wake me within 1 ms" across a run of packets pays for
 * it once, not on every read as a poll() timeout would. */
#include "transport/fd_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stddef.h>
#include <fcntl.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>

typedef struct fd_transport {
    adbc_transport base;
    int fd;
    int own;
    int wake[2];
    atomic_int down;
    int is_socket;
    int recv_first;  /* a socket that blocks: wait in recv() (cleared on EAGAIN) */
    int alarm;       /* timerfd, made on first use; -1 before */
    int alarm_armed; /* set and not yet gone off (the reading thread's) */
} fd_transport;

/* Wait until fd is ready for `events`, the transport is shut down, or the
 * timeout passes. 1 ready, 0 timeout, 2 the alarm went off (reads only),
 * negative error. */
static int wait_fd(fd_transport *t, short events, int timeout_ms)
{
    struct pollfd p[3] = {{.fd = t->fd, .events = events},
                          {.fd = t->wake[0], .events = POLLIN},
                          {.fd = t->alarm, .events = POLLIN}};
    nfds_t np = events == POLLIN && t->alarm_armed ? 3 : 2;
    for (;;) {
        if (atomic_load(&t->down))
            return ADBC_ECLOSED;
        int r = poll(p, np, timeout_ms);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return core_fail(ADBC_EIO, "%s: poll failed: %s", t->base.desc, strerror(errno));
        if (atomic_load(&t->down) || (p[1].revents & POLLIN))
            return ADBC_ECLOSED;
        if (r == 0)
            return 0;
        if (np == 3 && !p[0].revents && (p[2].revents & POLLIN)) {
            uint64_t ticks;
            ssize_t k = read(t->alarm, &ticks, sizeof ticks);
            (void)k;
            t->alarm_armed = 0;
            return 2;
        }
        return 1;
    }
}

static int fd_read(adbc_transport *bt, void *buf, size_t len, int timeout_ms)
{
    fd_transport *t = (fd_transport *)bt;
    if (len > 0x7fffffff)
        len = 0x7fffffff;
    for (;;) {
        if (t->recv_first && timeout_ms < 0 && !t->alarm_armed) {
            /* No deadline and no alarm: block in the read itself, one
             * system call per wake-up instead of poll() and then read().
             * fd_shutdown() releases it with shutdown(SHUT_RD). A socket
             * the caller made non-blocking answers EAGAIN: from then on
             * its reads go through poll() below. */
            if (atomic_load(&t->down))
                return core_fail(ADBC_ECLOSED, "%s: connection shut down", t->base.desc);
            ssize_t n = recv(t->fd, buf, len, 0);
            if (n > 0)
                return (int)n;
            if (atomic_load(&t->down))
                return core_fail(ADBC_ECLOSED, "%s: connection shut down", t->base.desc);
            if (n == 0)
                return core_fail(ADBC_ECLOSED, "%s: the device closed the connection",
                                 t->base.desc);
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK)
                return core_fail(errno == ECONNRESET ? ADBC_ECLOSED : ADBC_EIO,
                                 "%s: read failed: %s", t->base.desc, strerror(errno));
            t->recv_first = 0;
        }
        int w = wait_fd(t, POLLIN, timeout_ms);
        if (w < 0)
            return w == ADBC_ECLOSED ? core_fail(ADBC_ECLOSED, "%s: connection shut down",
                                                 t->base.desc)
                                     : w;
        if (w == 0)
            return core_fail(ADBC_ETIMEDOUT, "%s: nothing received for %d ms", t->base.desc,
                             timeout_ms);
        if (w == 2)
            return core_fail(ADBC_ETIMEDOUT, "%s: the read's alarm went off", t->base.desc);
        ssize_t n = read(t->fd, buf, len);
        if (n > 0)
            return (int)n;
        if (n == 0)
            return core_fail(ADBC_ECLOSED, "%s: the device closed the connection", t->base.desc);
        if (errno == EINTR || errno == EAGAIN)
            continue;
        return core_fail(errno == ECONNRESET ? ADBC_ECLOSED : ADBC_EIO,
                         "%s: read failed: %s", t->base.desc, strerror(errno));
    }
}

static int fd_writev(adbc_transport *bt, const struct iovec *iov_in, int iovcnt, int timeout_ms)
{
    fd_transport *t = (fd_transport *)bt;
    struct iovec iov[64];
    if (iovcnt > 64)
        iovcnt = 64;
    memcpy(iov, iov_in, (size_t)iovcnt * sizeof *iov);
    struct iovec *v = iov;
    while (iovcnt > 0) {
        while (iovcnt > 0 && v->iov_len == 0) {
            v++;
            iovcnt--;
        }
        if (iovcnt == 0)
            break;
        struct msghdr mh = {.msg_iov = v, .msg_iovlen = (size_t)iovcnt};
        ssize_t n = t->is_socket ? sendmsg(t->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT)
                                 : writev(t->fd, v, iovcnt);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                int w = wait_fd(t, POLLOUT, timeout_ms);
                if (w < 0)
                    return w == ADBC_ECLOSED ? core_fail(ADBC_ECLOSED, "%s: connection shut down",
                                                         t->base.desc)
                                             : w;
                if (w == 0)
                    return core_fail(ADBC_ETIMEDOUT,
                                     "%s: the device accepted no data for %d ms: it is stalled "
                                     "or gone",
                                     t->base.desc, timeout_ms);
                continue;
            }
            return core_fail(errno == EPIPE || errno == ECONNRESET ? ADBC_ECLOSED : ADBC_EIO,
                             "%s: write failed: %s", t->base.desc, strerror(errno));
        }
        size_t left = (size_t)n;
        while (iovcnt > 0 && left >= v->iov_len) {
            left -= v->iov_len;
            v++;
            iovcnt--;
        }
        if (iovcnt > 0) {
            v->iov_base = (char *)v->iov_base + left;
            v->iov_len -= left;
        }
    }
    return 0;
}

static const adbc_transport_ops fd_ops;

long transport_try_writev(adbc_transport *bt, const struct iovec *iov, int iovcnt)
{
    if (bt->ops != &fd_ops)
        return ADBC_EINVAL;
    fd_transport *t = (fd_transport *)bt;
    if (atomic_load(&t->down))
        return core_fail(ADBC_ECLOSED, "%s: connection shut down", t->base.desc);
    for (;;) {
        ssize_t n;
        if (t->is_socket) {
            struct msghdr mh = {.msg_iov = (struct iovec *)iov, .msg_iovlen = (size_t)iovcnt};
            n = sendmsg(t->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
        } else {
            n = writev(t->fd, iov, iovcnt); /* the descriptor is non-blocking */
        }
        if (n >= 0)
            return (long)n;
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK)
            return 0;
        return core_fail(errno == EPIPE || errno == ECONNRESET ? ADBC_ECLOSED : ADBC_EIO,
                         "%s: write failed: %s", t->base.desc, strerror(errno));
    }
}

int transport_fd_alarm(adbc_transport *bt, int ms)
{
    if (bt->ops != &fd_ops)
        return core_fail(ADBC_EINVAL, "%s: this transport has no read alarm", bt->desc);
    fd_transport *t = (fd_transport *)bt;
    if (ms <= 0 && !t->alarm_armed)
        return 0;
    if (t->alarm < 0 && (t->alarm = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK)) < 0)
        return core_fail(ADBC_EIO, "%s: cannot create a timer: %s", bt->desc, strerror(errno));
    struct itimerspec its = {0};
    if (ms > 0) {
        its.it_value.tv_sec = ms / 1000;
        its.it_value.tv_nsec = (long)(ms % 1000) * 1000000L;
    }
    /* Setting it also clears an expiry nobody has read yet. */
    if (timerfd_settime(t->alarm, 0, &its, NULL) < 0)
        return core_fail(ADBC_EIO, "%s: cannot set a timer: %s", bt->desc, strerror(errno));
    t->alarm_armed = ms > 0;
    return 0;
}

int transport_can_try_write(const adbc_transport *t)
{
    return t && t->ops == &fd_ops;
}

static int fd_write(adbc_transport *bt, const void *buf, size_t len, int timeout_ms)
{
    struct iovec v = {.iov_base = (void *)buf, .iov_len = len};
    return fd_writev(bt, &v, 1, timeout_ms);
}

static void fd_shutdown(adbc_transport *bt)
{
    fd_transport *t = (fd_transport *)bt;
    if (atomic_exchange(&t->down, 1))
        return;
    ssize_t r = write(t->wake[1], "x", 1);
    (void)r;
    /* Releases a reader blocked in recv() (fd_read); the write side stays
     * open. */
    if (t->is_socket)
        shutdown(t->fd, SHUT_RD);
}

static void fd_destroy(adbc_transport *bt)
{
    fd_transport *t = (fd_transport *)bt;
    if (t->own && t->fd >= 0)
        close(t->fd);
    close(t->wake[0]);
    close(t->wake[1]);
    if (t->alarm >= 0)
        close(t->alarm);
    core_free(t);
}

/* A TCP socket whose peer address is a loopback one (127/8, ::1, or 127/8
 * mapped into IPv6) reaches a device on this machine (an emulator, adbd on
 * the phone itself under Termux). Other descriptors say nothing. */
static void fd_link(adbc_transport *bt, adbc_transport_link *out)
{
    fd_transport *t = (fd_transport *)bt;
    if (!t->is_socket)
        return;
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    if (getpeername(t->fd, (struct sockaddr *)&ss, &sl) != 0)
        return;
    if (ss.ss_family == AF_INET) {
        const struct sockaddr_in *a = (const struct sockaddr_in *)&ss;
        out->local = (ntohl(a->sin_addr.s_addr) >> 24) == 127;
    } else if (ss.ss_family == AF_INET6) {
        const struct in6_addr *a = &((const struct sockaddr_in6 *)&ss)->sin6_addr;
        out->local = IN6_IS_ADDR_LOOPBACK(a) || (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
    }
}

static const adbc_transport_ops fd_ops = {
    .size = sizeof(adbc_transport_ops),
    .name = "fd",
    .read = fd_read,
    .write = fd_write,
    .shutdown = fd_shutdown,
    .destroy = fd_destroy,
    .writev = fd_writev,
    .link = fd_link,
};

int transport_fd_named(adbc_transport **out, int fd, int own, const char *desc)
{
    *out = NULL;
    if (fd < 0)
        return core_fail(ADBC_EINVAL, "adbc_transport_fd: invalid descriptor %d", fd);
    fd_transport *t = core_calloc(1, sizeof *t);
    if (!t)
        return core_fail(ADBC_ENOMEM, "out of memory creating a transport");
    if (pipe2(t->wake, O_CLOEXEC | O_NONBLOCK) < 0) {
        int e = errno;
        core_free(t);
        return core_fail(ADBC_EIO, "cannot create a pipe: %s", strerror(e));
    }
    t->base.size = sizeof t->base;
    t->base.ops = &fd_ops;
    t->base.packet_mode = 0;
    snprintf(t->base.desc, sizeof t->base.desc, "%s", desc);
    t->fd = fd;
    t->own = own;
    t->alarm = -1;
    int type;
    socklen_t tl = sizeof type;
    t->is_socket = getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl) == 0;
    t->recv_first = t->is_socket;
    /* Non-blocking writes let a stalled peer show up as a timeout. */
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0 && !t->is_socket)
        fcntl(fd, F_SETFL, fl | O_NONBLOCK);
    *out = &t->base;
    return 0;
}

int adbc_transport_fd(adbc_transport **out, int fd, int own)
{
    if (!out)
        return core_null(__func__, "out");
    char desc[32];
    snprintf(desc, sizeof desc, "fd:%d", fd);
    return transport_fd_named(out, fd, own, desc);
}

void adbc_transport_free(adbc_transport *t)
{
    if (t)
        t->ops->destroy(t);
}

void adbc_transport_link_get(adbc_transport_link *out, adbc_transport *t)
{
    if (!out)
        return;
    memset(out, 0, sizeof *out);
    /* The op only where the caller's struct has it (the size rule). */
    if (t && t->ops && t->ops->size >= offsetof(adbc_transport_ops, link) + sizeof t->ops->link &&
        t->ops->link)
        t->ops->link(t, out);
}
