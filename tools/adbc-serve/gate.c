/* SPDX-License-Identifier: Apache-2.0 */
/* The gate: adbc-serve accepts its HTTP connections itself and looks at each
 * request head before libmicrohttpd parses it.
 *
 * Why: libmicrohttpd 0.9.75 (Debian 12) ends a header value at a NUL byte
 * and reports the shorter value, so "Authorization: Bearer TOKEN<NUL>junk"
 * would pass as the token. The gate reads the head with MSG_PEEK (nothing is
 * consumed, libmicrohttpd reads the same bytes after it) and answers 400 to
 * a head holding a NUL byte; every answer carries "Connection: close"
 * (http.c), so each connection brings exactly one request and every head
 * passes here.
 *
 * One thread polls the listening socket and every connection whose head is
 * not complete yet. A connection's SO_RCVLOWAT is raised past what it has
 * already sent, so poll wakes only when more arrives (no spinning on bytes
 * peeked before), and set back to 1 before libmicrohttpd gets it; a client
 * that closes its side before its head is whole is closed (the peek would
 * return its bytes, never the end, and poll would wake at once forever).
 * Bounds: a head must be complete within the request timeout of connecting
 * (--conn-timeout; the same clock goes on in http.c until the request is
 * whole) and within GATE_HEAD_MAX bytes (libmicrohttpd's own memory limit
 * answers a larger one), and at most GATE_MAX connections wait here: when
 * another comes, the oldest waiting is closed, unless its head came
 * meanwhile, so connections that send nothing only push each other out. */
#include "serve.h"

#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ops_core.h"

#define GATE_MAX 64
#define GATE_HEAD_MAX 65536
#define GATE_ROUND 16

typedef struct gate_conn {
    int fd;
    int64_t since;
    size_t seen; /* bytes peeked last time: wait for more than this */
    struct sockaddr_storage addr;
    socklen_t addrlen;
} gate_conn;

static struct {
    struct MHD_Daemon *daemon;
    int listen_fd;
    int wake[2];
    int64_t timeout_ms;
    pthread_t thread;
    int running;
    gate_conn conns[GATE_MAX];
    int n;
    char buf[GATE_HEAD_MAX];
} gate = {.listen_fd = -1, .wake = {-1, -1}};

static void lowat(int fd, int bytes)
{
    (void)setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &bytes, sizeof bytes);
}

/* The head ends at the first empty line (CRLF CRLF, or bare LF LF as
 * libmicrohttpd also takes) after the request line. Empty lines before the
 * request line are no end: libmicrohttpd skips them (RFC 9112 2.2), so the
 * head it parses starts after them. The length up to the end, or 0 when
 * not yet. */
static size_t head_end(const char *p, size_t n)
{
    size_t start = 0;
    while (start < n && (p[start] == '\r' || p[start] == '\n'))
        start++;
    for (size_t i = start; i + 1 < n; i++) {
        if (p[i] != '\n')
            continue;
        if (p[i + 1] == '\n')
            return i + 2;
        if (p[i + 1] == '\r' && i + 2 < n && p[i + 2] == '\n')
            return i + 3;
    }
    return 0;
}

/* Close with a FIN, not a reset: what the client sent is read and dropped
 * first (closing a socket with unread bytes resets it, and a reset can
 * destroy an answer before the client reads it). */
static void bye(int fd)
{
    shutdown(fd, SHUT_WR);
    for (int i = 0; i < 16 && recv(fd, gate.buf, sizeof gate.buf, MSG_DONTWAIT) > 0; i++)
        ;
    close(fd);
}

static void refuse(int fd)
{
    static const char body[] =
        "{\"ok\":false,\"error\":{\"code\":\"bad_request\",\"message\":\"the request head holds "
        "a NUL byte: header names and values are text\"}}";
    char msg[512];
    int n = snprintf(msg, sizeof msg,
                     "HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\n"
                     "Cache-Control: no-store\r\nConnection: close\r\nContent-Length: %zu\r\n"
                     "\r\n%s",
                     sizeof body - 1, body);
    /* Best effort within the socket's buffer: the connection is closed
     * either way. */
    (void)send(fd, msg, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT);
    bye(fd);
}

static void drop(int i)
{
    gate.conns[i] = gate.conns[--gate.n];
}

/* Peek at connection i: hand it over, refuse it, close it, or keep it.
 * hup: the client has closed its side (poll said so): a head not whole
 * now never will be, and the bytes peeked would wake poll at once forever. */
static void look(int i, int hup)
{
    gate_conn *c = &gate.conns[i];
    ssize_t r = recv(c->fd, gate.buf, sizeof gate.buf, MSG_PEEK | MSG_DONTWAIT);
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return;
    if (r <= 0) { /* closed before sending a request, or broken */
        close(c->fd);
        drop(i);
        return;
    }
    size_t n = (size_t)r, end = head_end(gate.buf, n);
    size_t scan = end ? end : n;
    if (memchr(gate.buf, '\0', scan)) {
        refuse(c->fd);
        drop(i);
        return;
    }
    if (!end && n < sizeof gate.buf && hup) {
        bye(c->fd);
        drop(i);
        return;
    }
    if (!end && n < sizeof gate.buf) {
        c->seen = n;
        lowat(c->fd, (int)n + 1);
        return;
    }
    /* A whole head without NUL, or one larger than libmicrohttpd takes
     * (it answers that itself). */
    lowat(c->fd, 1);
    int fd = c->fd;
    int64_t c_since = c->since;
    struct sockaddr_storage addr = c->addr;
    socklen_t alen = c->addrlen;
    drop(i);
    serve_http_handover(fd, c_since);
    /* Closes fd itself when it cannot take it. */
    if (MHD_add_connection(gate.daemon, fd, (const struct sockaddr *)&addr, alen) != MHD_YES)
        fprintf(stderr, SERVE_NAME ": http: cannot serve a connection: %s\n", strerror(errno));
}

/* New connections, at most GATE_ROUND per round: poll then reports the
 * heads that arrived meanwhile, and those are looked at before more are
 * accepted, so a flood of connects cannot push out a client whose request
 * is already here. */
static void take(void)
{
    for (int k = 0; k < GATE_ROUND; k++) {
        gate_conn c;
        memset(&c, 0, sizeof c);
        c.addrlen = sizeof c.addr;
        int fd = accept4(gate.listen_fd, (struct sockaddr *)&c.addr, &c.addrlen,
                         SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0)
            return; /* EAGAIN, or a client gone before accept: poll again */
        while (gate.n == GATE_MAX) {
            int oldest = 0;
            for (int i = 1; i < gate.n; i++)
                if (gate.conns[i].since < gate.conns[oldest].since)
                    oldest = i;
            /* Its head may have come since poll looked: then it is served
             * (or refused), not pushed out. look() drops it or leaves it
             * where it is. */
            look(oldest, 0);
            if (gate.n == GATE_MAX) {
                bye(gate.conns[oldest].fd);
                drop(oldest);
            }
        }
        c.fd = fd;
        c.since = ops_now_ms();
        gate.conns[gate.n++] = c;
        look(gate.n - 1, 0);
    }
}

static void *gate_main(void *arg)
{
    (void)arg;
    struct pollfd pf[GATE_MAX + 2];
    for (;;) {
        int64_t now = ops_now_ms(), next = -1;
        for (int i = 0; i < gate.n;) {
            int64_t due = gate.conns[i].since + gate.timeout_ms;
            if (due <= now) { /* no whole head in time: closed, as the watchdog does */
                bye(gate.conns[i].fd);
                drop(i);
                continue;
            }
            if (next < 0 || due < next)
                next = due;
            i++;
        }
        pf[0] = (struct pollfd){.fd = gate.wake[0], .events = POLLIN};
        pf[1] = (struct pollfd){.fd = gate.listen_fd, .events = POLLIN};
        int n = gate.n;
        for (int i = 0; i < n; i++)
            pf[2 + i] = (struct pollfd){.fd = gate.conns[i].fd, .events = POLLIN | POLLRDHUP};
        int wait = next < 0 ? -1 : (int)(next - now);
        int r = poll(pf, (nfds_t)(n + 2), wait);
        if (r < 0 && errno != EINTR)
            break;
        if (r <= 0)
            continue;
        if (pf[0].revents)
            break;
        /* Connections first, from the last (drop() moves the last into a
         * freed place, so walking down never skips one), then new ones. */
        for (int i = n - 1; i >= 0; i--)
            if (pf[2 + i].revents)
                look(i, (pf[2 + i].revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0);
        if (pf[1].revents)
            take();
    }
    return NULL;
}

int serve_gate_start(void *daemon, int listen_fd, int timeout_ms)
{
    gate.daemon = daemon;
    gate.listen_fd = listen_fd;
    gate.timeout_ms = timeout_ms;
    gate.n = 0;
    if (pipe2(gate.wake, O_CLOEXEC) != 0)
        return -1;
    if (pthread_create(&gate.thread, NULL, gate_main, NULL) != 0) {
        close(gate.wake[0]);
        close(gate.wake[1]);
        gate.wake[0] = gate.wake[1] = -1;
        return -1;
    }
    gate.running = 1;
    return 0;
}

void serve_gate_stop(void)
{
    if (!gate.running)
        return;
    (void)!write(gate.wake[1], "x", 1);
    pthread_join(gate.thread, NULL);
    gate.running = 0;
    for (int i = 0; i < gate.n; i++)
        close(gate.conns[i].fd);
    gate.n = 0;
    close(gate.wake[0]);
    close(gate.wake[1]);
    gate.wake[0] = gate.wake[1] = -1;
}
