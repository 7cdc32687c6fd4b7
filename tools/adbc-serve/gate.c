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
 * answers a larger one).
 *
 * A whole head goes to libmicrohttpd as soon as the HTTP side has a place
 * for it (serve_http_take: at most 64 connections are served at once);
 * until then it waits here, and one that has no place by its deadline is
 * answered 503 server_busy. At most GATE_IDLE connections without a whole
 * head wait here, and GATE_MAX in all. When another comes and GATE_IDLE
 * have not sent a whole head, the oldest of them is closed to make room
 * (unless its head came meanwhile); when GATE_MAX wait, most with whole
 * heads, no more are accepted until some have gone on, and new connections
 * wait in the listen backlog. So connects that send nothing, or a byte a
 * second, push only each other out; a client that sends its request at once
 * is answered however many connect beside it (even one whose request the
 * kernel delays, a flood having filled the listen backlog, unless GATE_IDLE
 * idle connections come with it); and libmicrohttpd never reaches its own
 * connection limit (0.9.75's listening thread locks itself up there). */
#include "serve.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ops_core.h"

#define GATE_IDLE 64
#define GATE_MAX (2 * GATE_IDLE)
#define GATE_HEAD_MAX 65536
#define GATE_ROUND 16
/* After accept failed for want of descriptors or memory. */
#define GATE_ACCEPT_PAUSE_MS 100

typedef struct gate_conn {
    int fd;
    int whole; /* its head is whole: waiting for a place on the HTTP side */
    int64_t since;
    struct sockaddr_storage addr;
    socklen_t addrlen;
} gate_conn;

static struct {
    int listen_fd;
    int wake[2]; /* a byte: stop, or a place may have come free */
    pthread_mutex_t wake_mu; /* wake[1] against its close */
    atomic_int stop;
    int64_t timeout_ms;
    pthread_t thread;
    int running;
    gate_conn conns[GATE_MAX];
    int n;
    int64_t accept_after; /* accept failed for want of resources: not before this */
    char buf[GATE_HEAD_MAX];
} gate = {.listen_fd = -1, .wake = {-1, -1}, .wake_mu = PTHREAD_MUTEX_INITIALIZER};

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

/* An error answer (the envelope), then bye. */
static void answer(int fd, const char *status, const char *code, const char *message)
{
    size_t len = 0;
    char *body = serve_error_json(code, message, &len), msg[1024];
    int n = body ? snprintf(msg, sizeof msg,
                            "HTTP/1.1 %s\r\nContent-Type: application/json\r\n"
                            "Cache-Control: no-store\r\nConnection: close\r\n"
                            "Content-Length: %zu\r\n\r\n",
                            status, len)
                 : -1;
    /* Best effort within the socket's buffer: the connection is closed
     * either way. */
    if (n > 0 && (size_t)n + len <= sizeof msg) {
        memcpy(msg + n, body, len);
        (void)send(fd, msg, (size_t)n + len, MSG_NOSIGNAL | MSG_DONTWAIT);
    }
    free(body);
    bye(fd);
}

static void drop(int i)
{
    gate.conns[i] = gate.conns[--gate.n];
}

/* Connection i's head is whole: to libmicrohttpd when the HTTP side has a
 * place. 1 when it went (i is dropped), 0 when it waits. */
static int pass(int i)
{
    gate_conn *c = &gate.conns[i];
    int r = serve_http_take(c->fd, (const struct sockaddr *)&c->addr, c->addrlen, c->since);
    if (r == 0)
        return 0;
    drop(i); /* taken, or closed by libmicrohttpd */
    return 1;
}

enum { GONE, WAITING, WHOLE };

/* Peek at connection i: hand it over (or keep it until there is a place),
 * refuse it, close it, or keep it waiting for more. hup: the client has
 * closed its side (poll said so): a head not whole now never will be, and
 * the bytes peeked would wake poll at once forever. GONE when i was
 * dropped, else what i is now. */
static int look(int i, int hup)
{
    gate_conn *c = &gate.conns[i];
    ssize_t r = recv(c->fd, gate.buf, sizeof gate.buf, MSG_PEEK | MSG_DONTWAIT);
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return WAITING;
    if (r <= 0) { /* closed before sending a request, or broken */
        close(c->fd);
        drop(i);
        return GONE;
    }
    size_t n = (size_t)r, end = head_end(gate.buf, n);
    size_t scan = end ? end : n;
    if (memchr(gate.buf, '\0', scan)) {
        answer(c->fd, "400 Bad Request", "bad_request",
               "the request head holds a NUL byte: header names and values are text");
        drop(i);
        return GONE;
    }
    if (!end && n < sizeof gate.buf && hup) {
        bye(c->fd);
        drop(i);
        return GONE;
    }
    if (!end && n < sizeof gate.buf) {
        lowat(c->fd, (int)n + 1);
        return WAITING;
    }
    /* A whole head without NUL, or one larger than libmicrohttpd takes
     * (it answers that itself). */
    lowat(c->fd, 1);
    c->whole = 1;
    return pass(i) ? GONE : WHOLE;
}

/* Whole heads to libmicrohttpd, oldest first, while it has places. */
static void pass_whole(void)
{
    for (;;) {
        int oldest = -1;
        for (int i = 0; i < gate.n; i++)
            if (gate.conns[i].whole &&
                (oldest < 0 || gate.conns[i].since < gate.conns[oldest].since))
                oldest = i;
        if (oldest < 0 || !pass(oldest))
            return;
    }
}

/* Connections here without a whole head. */
static int idle(void)
{
    int k = 0;
    for (int i = 0; i < gate.n; i++)
        k += !gate.conns[i].whole;
    return k;
}

/* A place for one more connection: 1 when there is one, closing the oldest
 * without a whole head if GATE_IDLE have none; 0 when GATE_MAX wait here,
 * fewer than GATE_IDLE of them without one. */
static int make_room(void)
{
    for (;;) {
        int k = idle();
        if (k < GATE_IDLE)
            return gate.n < GATE_MAX;
        int oldest = -1;
        for (int i = 0; i < gate.n; i++)
            if (!gate.conns[i].whole &&
                (oldest < 0 || gate.conns[i].since < gate.conns[oldest].since))
                oldest = i;
        /* Its head may have come since poll looked: then it stays (or goes
         * on, or is refused) and the next oldest is looked at. */
        if (look(oldest, 0) == WAITING) {
            bye(gate.conns[oldest].fd);
            drop(oldest);
        }
    }
}

/* New connections, at most GATE_ROUND per round: poll then reports the
 * heads that arrived meanwhile, and those are looked at before more are
 * accepted. */
static void take(void)
{
    for (int k = 0; k < GATE_ROUND && make_room(); k++) {
        gate_conn c;
        memset(&c, 0, sizeof c);
        c.addrlen = sizeof c.addr;
        int fd = accept4(gate.listen_fd, (struct sockaddr *)&c.addr, &c.addrlen,
                         SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0) {
            /* Out of descriptors or memory: the connection stays in the
             * listen queue and poll would report it again at once, so
             * the gate would spin. Accept again after a pause (a closing
             * connection frees one meanwhile). EAGAIN, or a client gone
             * before accept: poll again. */
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
                if (!gate.accept_after)
                    fprintf(stderr,
                            SERVE_NAME ": cannot accept a connection: %s; new connections "
                                       "wait until one closes (raise `ulimit -n`)\n",
                            strerror(errno));
                gate.accept_after = ops_now_ms() + GATE_ACCEPT_PAUSE_MS;
            } else {
                gate.accept_after = 0;
            }
            return;
        }
        gate.accept_after = 0;
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
    int at[GATE_MAX]; /* pf[2 + k] is gate.conns[at[k]] */
    while (!atomic_load(&gate.stop)) {
        pass_whole();
        int64_t now = ops_now_ms(), next = -1;
        for (int i = 0; i < gate.n;) {
            int64_t due = gate.conns[i].since + gate.timeout_ms;
            if (due <= now) { /* no whole head in time, or no place: closed */
                if (gate.conns[i].whole)
                    answer(gate.conns[i].fd, "503 Service Unavailable", "server_busy",
                           "every connection the server serves at once is taken (64): "
                           "try again when one has ended");
                else
                    bye(gate.conns[i].fd);
                drop(i);
                continue;
            }
            if (next < 0 || due < next)
                next = due;
            i++;
        }
        pf[0] = (struct pollfd){.fd = gate.wake[0], .events = POLLIN};
        /* No place and none to push out: new connections wait in the
         * listen backlog until a whole head has gone on. */
        int room = gate.n < GATE_MAX || idle() >= GATE_IDLE;
        if (room && gate.accept_after > now) {
            room = 0;
            if (next < 0 || gate.accept_after < next)
                next = gate.accept_after;
        }
        pf[1] = (struct pollfd){.fd = room ? gate.listen_fd : -1, .events = POLLIN};
        int n = 0;
        for (int i = 0; i < gate.n; i++)
            if (!gate.conns[i].whole) {
                at[n] = i;
                pf[2 + n++] =
                    (struct pollfd){.fd = gate.conns[i].fd, .events = POLLIN | POLLRDHUP};
            }
        int wait = next < 0 ? -1 : (int)(next - now);
        int r = poll(pf, (nfds_t)(n + 2), wait);
        if (r < 0 && errno != EINTR)
            break;
        if (r <= 0)
            continue;
        if (pf[0].revents) {
            /* Emptied, and on to the other events: connections closing
             * as fast as they come must not keep the gate from them. */
            char b[64];
            while (read(gate.wake[0], b, sizeof b) > 0)
                ;
            if (atomic_load(&gate.stop))
                break;
        }
        /* Connections first, from the last (drop() moves the last into a
         * freed place, and at[] rises, so walking down never skips one),
         * then new ones. */
        for (int k = n - 1; k >= 0; k--)
            if (pf[2 + k].revents)
                look(at[k], (pf[2 + k].revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0);
        if (pf[1].revents)
            take();
    }
    return NULL;
}

/* A place on the HTTP side may have come free (http.c, as a connection
 * closes): the gate looks again at the heads waiting for one. */
void serve_gate_wake(void)
{
    pthread_mutex_lock(&gate.wake_mu);
    if (gate.wake[1] >= 0)
        (void)!write(gate.wake[1], "r", 1); /* a full pipe wakes the gate already */
    pthread_mutex_unlock(&gate.wake_mu);
}

/* The HTTP side's threads may still wake the gate: not into a closed pipe
 * (or a file that took its number). */
static void close_wake(void)
{
    pthread_mutex_lock(&gate.wake_mu);
    close(gate.wake[0]);
    close(gate.wake[1]);
    gate.wake[0] = gate.wake[1] = -1;
    pthread_mutex_unlock(&gate.wake_mu);
}

int serve_gate_start(int listen_fd, int timeout_ms)
{
    gate.listen_fd = listen_fd;
    gate.timeout_ms = timeout_ms;
    gate.n = 0;
    atomic_store(&gate.stop, 0);
    int w[2];
    if (pipe2(w, O_CLOEXEC | O_NONBLOCK) != 0)
        return -1;
    pthread_mutex_lock(&gate.wake_mu);
    gate.wake[0] = w[0];
    gate.wake[1] = w[1];
    pthread_mutex_unlock(&gate.wake_mu);
    if (pthread_create(&gate.thread, NULL, gate_main, NULL) != 0) {
        close_wake();
        return -1;
    }
    gate.running = 1;
    return 0;
}

void serve_gate_stop(void)
{
    if (!gate.running)
        return;
    atomic_store(&gate.stop, 1);
    (void)!write(gate.wake[1], "x", 1);
    pthread_join(gate.thread, NULL);
    gate.running = 0;
    /* A whole head waiting for a place is a call not started. */
    for (int i = 0; i < gate.n; i++)
        if (gate.conns[i].whole)
            answer(gate.conns[i].fd, "503 Service Unavailable", "stopping",
                   SERVE_NAME " is stopping: the request was not started and nothing was done");
        else
            close(gate.conns[i].fd);
    gate.n = 0;
    close_wake();
}
