/* SPDX-License-Identifier: Apache-2.0 */
/* The local control socket: adbc-snap's way into a running session. It is
 * a unix socket (mode 0600, in a 0700 directory; the peer's uid, from
 * SO_PEERCRED, must be ours) on which adbc-serve is the device: lib/session's
 * device role (adbc/session.h, the engine the test device runs on) speaks
 * the ADB wire protocol with the client, answering its CNXN at once with the
 * device's own banner (no key, no TLS, no device round trip), and each
 * stream the client opens is opened on the connection the server already
 * holds and relayed both ways. adbc-snap runs its commands unchanged over
 * it, so their output and exit status are what they are without a session.
 *
 * Streams for adb's server services ("host:forward:...", list-forward,
 * killforward) are answered by the server itself (held.c): forwards made
 * through a session are held by it and outlive the command. So is
 * "host:adbc-ui-web:...", adbc-snap's `snapshot --web` (ui_web below): the
 * pages' DevTools sessions live on the server's connection.
 *
 * Streams are opened on the device's connection without its lock
 * (serve_adbsrv_conn_get, as the adb server's are), so two commands of a
 * session run side by side, as two adb commands do, and beside HTTP calls;
 * the lock is taken only to connect when a client arrives and for a
 * forward or reverse rule the server holds. Flow control is the
 * session's: one WRTE to the client at a time, the next after its OKAY;
 * delayed_ack is left out of the banner so the client never expects a
 * window. Threads: the client's own reads the socket and feeds the session
 * (opening and writing device streams from its callbacks); one per stream
 * reads the device and writes into the session. One lock per client guards
 * the session and the socket's sending side. */
#include "serve.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include "adbc/session.h"
#include "ops_hostproto.h"

typedef struct pclient pclient;

typedef struct pstream {
    uint32_t id;             /* the session's id of the stream */
    adbc_stream *ds;         /* the device's stream; NULL for a "host:" service, and
                                once the pump has closed it */
    int counted;             /* ds holds a serve_adbsrv_conn_get, put when it closes */
    char *reply;             /* a "host:" service's answer (held.c), sent then closed */
    size_t reply_len;
    pclient *c;
    pthread_t pump;
    int stop;                /* closed by the client, or being dropped (the lock held) */
    int finished;            /* the pump closed it and ended (the lock held) */
    struct pstream *next;
} pstream;

struct pclient {
    serve *srv;
    ops_dev *dev;
    int fd;
    adbc_session *s;
    pthread_mutex_t lock;    /* s, streams, sending on fd */
    pthread_cond_t cv;       /* a stream became writable or was stopped */
    int broken;              /* sending to the client failed (the lock held) */
    pstream *streams;
};

static int ctl_fd = -1;
static pthread_t ctl_thread;
static pthread_mutex_t clients_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t clients_cv = PTHREAD_COND_INITIALIZER;
static int nclients;

/* Send what the session has queued (the lock held). A client that takes
 * nothing for the call timeout is dropped. */
static void flush(pclient *c)
{
    int64_t last = ops_now_ms();
    while (!c->broken && adbc_session_send_queued(c->s) > 0) {
        struct iovec iov[16];
        int n = adbc_session_peek_send(c->s, iov, 16);
        struct msghdr m = {.msg_iov = iov, .msg_iovlen = (size_t)n};
        ssize_t k = sendmsg(c->fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (k > 0) {
            adbc_session_sent(c->s, (size_t)k);
            last = ops_now_ms();
            continue;
        }
        if (k < 0 && errno != EAGAIN && errno != EINTR) {
            c->broken = 1;
            break;
        }
        if (c->srv->stopping || ops_now_ms() - last > c->srv->call_ms) {
            c->broken = 1;
            break;
        }
        struct pollfd pf = {c->fd, POLLOUT, 0};
        poll(&pf, 1, 250);
    }
    if (c->broken)
        pthread_cond_broadcast(&c->cv);
}

static pstream *find(pclient *c, uint32_t id)
{
    for (pstream *st = c->streams; st; st = st->next)
        if (st->id == id)
            return st;
    return NULL;
}

/* Device to client. The next read from the device's stream is taken while
 * the client still holds our last WRTE, so the wait for its OKAY and the
 * read overlap: one packet in flight to the client, one ready behind it. */
static void *pump(void *arg)
{
    pstream *st = arg;
    pclient *c = st->c;
    pthread_mutex_lock(&c->lock);
    uint32_t maxp = adbc_session_max_payload(c->s);
    pthread_mutex_unlock(&c->lock);
    uint8_t *buf = st->reply ? NULL : malloc(maxp);
    int ended = 0; /* the device's stream ended: CLSE once the client is caught up */
    int stop = 0;
    for (size_t off = 0; st->reply && !stop && off < st->reply_len;) {
        size_t n = st->reply_len - off < maxp ? st->reply_len - off : maxp;
        pthread_mutex_lock(&c->lock);
        while (!st->stop && !c->broken && adbc_session_writable(c->s, st->id) == 0)
            pthread_cond_wait(&c->cv, &c->lock);
        stop = st->stop || c->broken ||
               adbc_session_write(c->s, st->id, (const uint8_t *)st->reply + off, n) != (long)n;
        flush(c);
        pthread_mutex_unlock(&c->lock);
        off += n;
        ended = 1;
    }
    while (buf && !stop) {
        ssize_t n = adbc_stream_read(st->ds, buf, maxp, 20); /* a drop waits this at most */
        pthread_mutex_lock(&c->lock);
        if (n == ADBC_ETIMEDOUT) {
            stop = st->stop || c->broken;
            pthread_mutex_unlock(&c->lock);
            continue;
        }
        if (n <= 0) {
            ended = 1;
            pthread_mutex_unlock(&c->lock);
            break;
        }
        while (!st->stop && !c->broken && adbc_session_writable(c->s, st->id) == 0)
            pthread_cond_wait(&c->cv, &c->lock);
        stop = st->stop || c->broken ||
               adbc_session_write(c->s, st->id, buf, (size_t)n) != (long)n;
        flush(c);
        pthread_mutex_unlock(&c->lock);
    }
    free(buf);
    pthread_mutex_lock(&c->lock);
    /* As adbd does: CLSE goes after the client's OKAY for the last WRTE. */
    while (ended && !st->stop && !c->broken && adbc_session_writable(c->s, st->id) == 0)
        pthread_cond_wait(&c->cv, &c->lock);
    if (!st->stop) {
        adbc_session_close_stream(c->s, st->id);
        flush(c);
    }
    /* The device's stream goes now, not when the client next sends
     * something: the pool may be waiting for it to close its connection. */
    if (st->ds)
        adbc_stream_close(st->ds);
    st->ds = NULL;
    if (st->counted)
        serve_adbsrv_conn_put(c->dev);
    st->counted = 0;
    st->finished = 1;
    pthread_mutex_unlock(&c->lock);
    return NULL;
}

/* Join and free the streams that ended (the lock not held). */
static void reap(pclient *c, int all)
{
    for (;;) {
        pthread_mutex_lock(&c->lock);
        pstream **pp = &c->streams;
        while (*pp && !(all || (*pp)->stop || (*pp)->finished))
            pp = &(*pp)->next;
        pstream *st = *pp;
        if (st) {
            *pp = st->next;
            st->stop = 1;
            pthread_cond_broadcast(&c->cv);
        }
        pthread_mutex_unlock(&c->lock);
        if (!st)
            return;
        pthread_join(st->pump, NULL);
        if (st->ds)
            adbc_stream_close(st->ds);
        if (st->counted)
            serve_adbsrv_conn_put(c->dev);
        free(st->reply);
        free(st);
    }
}

/* "host:adbc-ui-web:BUDGET:TIMEOUT": adbc-snap's `snapshot --web` through
 * a session. The dump with its WebViews' pages spliced in
 * (adbc_ui_dump_web), taken on the server's connection, which keeps the
 * pages' DevTools sessions from one command to the next; the client
 * parses it as its own. Answered "OKAY" and the XML's length in 8 hex
 * digits, then the XML; or FAIL as adb's server fails. The device's lock
 * is held. */
static char *ui_web(serve *srv, ops_dev *d, const char *args, size_t *len)
{
    char *end;
    long budget = strtol(args, &end, 10), timeout = 0;
    if (*end == ':')
        timeout = strtol(end + 1, &end, 10);
    const char *why = NULL;
    char *xml = NULL;
    size_t n = 0;
    if (*end || budget < 1 || budget > 60000 || timeout < 1 || timeout > 600000)
        why = "adbc-ui-web: want BUDGET:TIMEOUT in ms (1..60000, 1..600000)";
    if (!why) {
        adbc_ui_opts o;
        adbc_ui_opts_init(&o);
        o.web = 1;
        o.web_budget_ms = (int)budget;
        o.timeout_ms = timeout < srv->call_ms ? (int)timeout : srv->call_ms;
        if (adbc_ui_dump_web(&xml, &n, d->conn, &o) < 0)
            why = adbc_last_error();
    }
    if (why) {
        size_t cap = 16 + strlen(why);
        char *r = malloc(cap);
        *len = r ? ops_hp_fail(r, cap, why) : 0;
        return r;
    }
    char *r = malloc(n + 12);
    if (r) {
        snprintf(r, 13, "OKAY%08zx", n);
        memcpy(r + 12, xml, n);
        *len = n + 12;
    }
    adbc_free(xml);
    return r;
}

/* ---- the session's callbacks: run with the lock held ---- */

static int on_open(void *user, uint32_t id, const char *service)
{
    pclient *c = user;
    pstream *st = calloc(1, sizeof *st);
    if (!st)
        return -1;
    if (strncmp(service, "host:", 5) == 0 || strncmp(service, "reverse:forward:", 16) == 0) {
        /* adb's server services (held forwards), answered here, never sent
         * to the device (adbd has no "host:" service); and a reverse rule
         * held by the server: the device's connections for it come to the
         * server's connection and are relayed from here. Both read the
         * device's connection: its lock is held meanwhile. */
        ops_err e;
        if (ops_dev_take(&c->srv->pool, c->dev, c->srv->busy_ms,
                         ops_now_ms() + c->srv->connect_ms, &e) != 0) {
            size_t cap = 16 + strlen(e.msg);
            st->reply = malloc(cap);
            st->reply_len = st->reply ? ops_hp_fail(st->reply, cap, e.msg) : 0;
        } else {
            st->reply = strncmp(service, "host:adbc-ui-web:", 17) == 0
                            ? ui_web(c->srv, c->dev, service + 17, &st->reply_len)
                        : service[0] == 'h'
                            ? serve_held_request(c->srv, c->dev, service, &st->reply_len)
                            : serve_held_reverse(c->srv, c->dev, service, &st->reply_len);
            ops_dev_give(&c->srv->pool, c->dev, OPS_OK);
        }
        if (!st->reply) {
            free(st);
            return -1;
        }
    } else {
        adbc_conn *conn = serve_adbsrv_conn_get(c->dev);
        if (!conn) {
            free(st);
            return -1; /* the device is away: the client gets CLSE */
        }
        if (adbc_stream_open(&st->ds, conn, service, c->srv->call_ms) < 0) {
            serve_adbsrv_conn_put(c->dev);
            free(st);
            return -1; /* the client gets CLSE, as for a service the device refuses */
        }
        st->counted = 1;
    }
    st->id = id;
    st->c = c;
    if (pthread_create(&st->pump, NULL, pump, st) != 0) {
        if (st->ds)
            adbc_stream_close(st->ds);
        if (st->counted)
            serve_adbsrv_conn_put(c->dev);
        free(st->reply);
        free(st);
        return -1;
    }
    st->next = c->streams;
    c->streams = st;
    return 0;
}

static void on_data(void *user, uint32_t id, const uint8_t *data, size_t len)
{
    pclient *c = user;
    pstream *st = find(c, id);
    if (!st || st->stop)
        return;
    if (!st->ds) { /* a "host:" service reads nothing */
        adbc_session_consume(c->s, id, len);
        return;
    }
    int wr = adbc_stream_write(st->ds, data, len, c->srv->call_ms);
    if (wr == ADBC_ECLOSED) {
        /* The device closed the stream while this was on its way (a
         * shell's close-stdin racing the command's exit). What the device
         * sent before its CLSE (the exit status) is still to be relayed:
         * the pump does that, then closes. The data is dropped, as adbd
         * drops data for a stream it closed. */
        return;
    }
    if (wr < 0) {
        st->stop = 1;
        adbc_session_close_stream(c->s, id);
        pthread_cond_broadcast(&c->cv);
        return;
    }
    adbc_session_consume(c->s, id, len); /* the OKAY */
}

static void on_writable(void *user, uint32_t id)
{
    pclient *c = user;
    (void)id;
    pthread_cond_broadcast(&c->cv);
}

static void on_closed(void *user, uint32_t id, int reason)
{
    pclient *c = user;
    (void)reason;
    pstream *st = find(c, id);
    if (st)
        st->stop = 1;
    pthread_cond_broadcast(&c->cv);
}

/* The device's banner without delayed_ack, with its API level when known
 * (sdk > 0): the acts of a command run through the session need it (`cmd
 * input` from API 31 on) and would each ask the device for it, a round trip
 * more per command; lib/act takes it from the banner instead. */
static char *banner(adbc_conn *conn, int sdk)
{
    const adbc_banner *b = adbc_conn_banner(conn);
    size_t cap = 96 + strlen(b->raw);
    char *out = malloc(cap);
    if (!out)
        return NULL;
    int k = snprintf(out, cap, "%s::", b->type && *b->type ? b->type : "device");
    for (size_t i = 0; i < b->nprops; i++)
        if (strcmp(b->props[i].key, "ro.build.version.sdk") != 0)
            k += snprintf(out + k, cap - (size_t)k, "%s=%s;", b->props[i].key, b->props[i].value);
    if (sdk > 0)
        k += snprintf(out + k, cap - (size_t)k, "ro.build.version.sdk=%d;", sdk);
    k += snprintf(out + k, cap - (size_t)k, "features=");
    int first = 1;
    for (size_t i = 0; i < b->nfeatures; i++) {
        if (strcmp(b->features[i], "delayed_ack") == 0)
            continue;
        k += snprintf(out + k, cap - (size_t)k, "%s%s", first ? "" : ",", b->features[i]);
        first = 0;
    }
    return out;
}

/* b: the banner (taken), maxp: the device connection's max payload. */
static void serve_client(pclient *c, char *b, uint32_t maxp)
{
    adbc_session_config cfg;
    adbc_session_config_init(&cfg, ADBC_ROLE_DEVICE);
    cfg.banner = b;
    cfg.max_payload = maxp;
    cfg.auth_required = 0; /* the socket's owner is checked instead (SO_PEERCRED) */
    adbc_session_callbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.size = sizeof cb;
    cb.on_open = on_open;
    cb.on_data = on_data;
    cb.on_writable = on_writable;
    cb.on_closed = on_closed;
    size_t cap = 64 * 1024;
    uint8_t *buf = malloc(cap);
    if (!b || !buf || adbc_session_new(&c->s, &cfg, &cb, c) != 0) {
        fprintf(stderr, SERVE_NAME ": control client: %s\n",
                !b || !buf ? "out of memory" : adbc_last_error());
        free(b);
        free(buf);
        return;
    }
    free(b);
    for (;;) {
        struct pollfd pf = {c->fd, POLLIN, 0};
        int r = poll(&pf, 1, 250);
        if (c->srv->stopping || (r < 0 && errno != EINTR))
            break;
        if (r <= 0)
            continue;
        ssize_t n = recv(c->fd, buf, cap, 0);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n <= 0)
            break;
        pthread_mutex_lock(&c->lock);
        int rc = adbc_session_recv(c->s, buf, (size_t)n);
        if (rc >= 0 && adbc_session_state_get(c->s) != ADBC_SESSION_ONLINE &&
            adbc_session_state_get(c->s) != ADBC_SESSION_HANDSHAKE)
            rc = -1; /* AUTH or STLS: not for us */
        flush(c);
        int broken = c->broken;
        pthread_mutex_unlock(&c->lock);
        if (rc < 0 || broken)
            break;
        reap(c, 0);
    }
    pthread_mutex_lock(&c->lock);
    c->broken = 1; /* nothing more goes to the client */
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->lock);
    reap(c, 1);
    adbc_session_free(c->s);
    free(buf);
}

static void *client_thread(void *arg)
{
    pclient *c = arg;
    ops_err e;
    /* The lock only to connect (when the device is not) and read what the
     * client's CNXN answer needs; the streams go without it. */
    int64_t deadline = ops_now_ms() + c->srv->connect_ms;
    if (ops_dev_take(&c->srv->pool, c->dev, c->srv->busy_ms, deadline, &e) == 0) {
        /* Asked once per device connection (kept with it), within what is
         * left of the connect bound; a device that does not say it is left
         * to the client's acts to ask, as without a session. */
        int64_t left = deadline - ops_now_ms();
        int sdk = adbc_device_sdk(c->dev->conn, left < 1 ? 1 : left > 5000 ? 5000 : (int)left);
        char *b = banner(c->dev->conn, sdk);
        uint32_t maxp = adbc_conn_max_payload(c->dev->conn);
        ops_dev_give(&c->srv->pool, c->dev, OPS_OK);
        serve_client(c, b, maxp);
    } else {
        fprintf(stderr, SERVE_NAME ": control client refused: %s\n", e.msg);
    }
    close(c->fd);
    pthread_mutex_destroy(&c->lock);
    pthread_cond_destroy(&c->cv);
    c->srv->last_client_ms = ops_now_ms();
    free(c);
    pthread_mutex_lock(&clients_lock);
    nclients--;
    pthread_cond_broadcast(&clients_cv);
    pthread_mutex_unlock(&clients_lock);
    return NULL;
}

static void *accept_loop(void *arg)
{
    serve *s = arg;
    while (!s->stopping) {
        struct pollfd pf = {ctl_fd, POLLIN, 0};
        if (poll(&pf, 1, 200) <= 0)
            continue;
        int fd = accept4(ctl_fd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0)
            continue;
        struct ucred cr;
        socklen_t cl = sizeof cr;
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &cl) != 0 || cr.uid != getuid()) {
            fprintf(stderr, SERVE_NAME ": control socket: refused a client of uid %d\n",
                    cl == sizeof cr ? (int)cr.uid : -1);
            close(fd);
            continue;
        }
        s->last_client_ms = ops_now_ms();
        pclient *c = calloc(1, sizeof *c);
        if (!c) {
            close(fd);
            continue;
        }
        c->srv = s;
        c->dev = s->devs[0];
        c->fd = fd;
        pthread_mutex_init(&c->lock, NULL);
        pthread_cond_init(&c->cv, NULL);
        pthread_attr_t at;
        pthread_attr_init(&at);
        pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
        pthread_t t;
        pthread_mutex_lock(&clients_lock);
        nclients++;
        pthread_mutex_unlock(&clients_lock);
        if (pthread_create(&t, &at, client_thread, c) != 0) {
            close(fd);
            pthread_mutex_destroy(&c->lock);
            pthread_cond_destroy(&c->cv);
            free(c);
            pthread_mutex_lock(&clients_lock);
            nclients--;
            pthread_mutex_unlock(&clients_lock);
        }
        pthread_attr_destroy(&at);
    }
    return NULL;
}

int serve_control_start(serve *s, const char *path)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof sa.sun_path) {
        fprintf(stderr, SERVE_NAME ": control socket path too long: %s\n", path);
        return -1;
    }
    strcpy(sa.sun_path, path);
    ctl_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (ctl_fd < 0)
        return -1;
    /* A socket left by a server that died is replaced; a live one is not. */
    if (connect(ctl_fd, (struct sockaddr *)&sa, sizeof sa) == 0) {
        fprintf(stderr, SERVE_NAME ": a server already answers on %s\n", path);
        close(ctl_fd);
        ctl_fd = -1;
        return -1;
    }
    close(ctl_fd);
    ctl_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    unlink(path);
    mode_t old = umask(0177);
    int rc = bind(ctl_fd, (struct sockaddr *)&sa, sizeof sa);
    umask(old);
    if (rc != 0 || chmod(path, 0600) != 0 || listen(ctl_fd, 16) != 0) {
        fprintf(stderr, SERVE_NAME ": control socket %s: %s\n", path, strerror(errno));
        close(ctl_fd);
        ctl_fd = -1;
        return -1;
    }
    if (pthread_create(&ctl_thread, NULL, accept_loop, s) != 0) {
        close(ctl_fd);
        ctl_fd = -1;
        return -1;
    }
    fprintf(stderr, SERVE_NAME ": control socket %s\n", path);
    return 0;
}

int serve_control_clients(void)
{
    pthread_mutex_lock(&clients_lock);
    int n = nclients;
    pthread_mutex_unlock(&clients_lock);
    return n;
}

void serve_control_stop(serve *s, const char *path)
{
    if (ctl_fd < 0)
        return;
    pthread_join(ctl_thread, NULL); /* s->stopping is set: it ends within 200 ms */
    close(ctl_fd);
    ctl_fd = -1;
    unlink(path);
    pthread_mutex_lock(&clients_lock);
    while (nclients > 0)
        pthread_cond_wait(&clients_cv, &clients_lock);
    pthread_mutex_unlock(&clients_lock);
    serve_held_stop(); /* before the pool closes the device's connection */
    (void)s;
}
