/* SPDX-License-Identifier: Apache-2.0 */
/* The local control socket: adbc-snap's way into a running session. It is
 * a unix socket (mode 0600, in a 0700 directory; the peer's uid, from
 * SO_PEERCRED, must be ours) speaking the ADB wire protocol in the device
 * role: the client's CNXN is answered at once with the device's own banner
 * (no key, no TLS, no device round trip), and each stream the client opens
 * is opened on the connection the server already holds and relayed both
 * ways. adbc-snap runs its commands unchanged over it, so their output and
 * exit status are what they are without a session.
 *
 * A client holds its device's lock while connected (its commands do not
 * interleave with HTTP calls on the same device). Streams follow ADB's
 * flow control: one WRTE to the client at a time, the next after its
 * OKAY. delayed_ack is left out of the banner so the client never expects
 * a window. */
#include "serve.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "adbc/session.h"

typedef struct pstream {
    uint32_t id, peer;
    adbc_stream *ds;
    pthread_t pump;
    pthread_mutex_t m;
    pthread_cond_t cv;
    int credit;              /* the client acknowledged our last WRTE */
    _Atomic int stop;
    struct pstream *next;
} pstream;

typedef struct pclient {
    serve *srv;
    ops_dev *dev;
    int fd;
    pthread_mutex_t wlock;
    uint32_t maxp;
    _Atomic int broken;      /* writing to the client failed */
    pstream *streams;
    uint32_t next_id;
} pclient;

static int ctl_fd = -1;
static pthread_t ctl_thread;
static pthread_mutex_t clients_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t clients_cv = PTHREAD_COND_INITIALIZER;
static int nclients;

static int io_all(int fd, void *buf, size_t len, int writing, serve *s)
{
    uint8_t *p = buf;
    while (len) {
        struct pollfd pf = {fd, (short)(writing ? POLLOUT : POLLIN), 0};
        int r = poll(&pf, 1, 250);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        if (r == 0) {
            if (s->stopping)
                return -1;
            continue;
        }
        ssize_t k = writing ? send(fd, p, len, MSG_NOSIGNAL) : recv(fd, p, len, 0);
        if (k < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (k <= 0)
            return -1;
        p += k;
        len -= (size_t)k;
    }
    return 0;
}

static int send_pkt(pclient *c, uint32_t cmd, uint32_t a0, uint32_t a1, const void *data,
                    size_t len)
{
    uint8_t h[ADBC_HEADER_SIZE];
    adbc_header_encode(h, cmd, a0, a1, (uint32_t)len, 0);
    pthread_mutex_lock(&c->wlock);
    int rc = c->broken ? -1 : io_all(c->fd, h, sizeof h, 1, c->srv);
    if (rc == 0 && len)
        rc = io_all(c->fd, (void *)data, len, 1, c->srv);
    if (rc)
        c->broken = 1;
    pthread_mutex_unlock(&c->wlock);
    return rc;
}

/* Wait until the client acknowledged our last WRTE; 0 once it has, -1 when
 * the stream is being dropped. */
static int wait_credit(pstream *st)
{
    pthread_mutex_lock(&st->m);
    while (!st->credit && !st->stop)
        pthread_cond_wait(&st->cv, &st->m);
    int ok = !st->stop;
    if (ok)
        st->credit = 0;
    pthread_mutex_unlock(&st->m);
    return ok ? 0 : -1;
}

/* Device to client. The next read from the device's stream is taken while
 * the client still holds our last WRTE, so the wait for its OKAY and the
 * read overlap: one packet in flight to the client, one ready behind it. */
static void *pump(void *arg)
{
    pstream *st = ((void **)arg)[0];
    pclient *c = ((void **)arg)[1];
    free(arg);
    uint8_t *buf = malloc(c->maxp);
    int ended = 0; /* the device's stream ended: CLSE once the client is caught up */
    while (buf && !st->stop && !c->broken) {
        ssize_t n = adbc_stream_read(st->ds, buf, c->maxp, 20); /* drop() waits this at most */
        if (n == ADBC_ETIMEDOUT)
            continue;
        if (n <= 0) {
            ended = 1;
            break;
        }
        if (wait_credit(st) != 0 ||
            send_pkt(c, ADBC_A_WRTE, st->id, st->peer, buf, (size_t)n) != 0)
            break;
    }
    free(buf);
    /* As before: CLSE goes after the client's OKAY for the last WRTE. */
    if (ended && !st->stop && wait_credit(st) == 0)
        send_pkt(c, ADBC_A_CLSE, st->id, st->peer, NULL, 0);
    else if (!ended && !st->stop)
        send_pkt(c, ADBC_A_CLSE, st->id, st->peer, NULL, 0);
    return NULL;
}

static pstream *find(pclient *c, uint32_t id)
{
    for (pstream *s = c->streams; s; s = s->next)
        if (s->id == id)
            return s;
    return NULL;
}

static void drop(pclient *c, pstream *st)
{
    pthread_mutex_lock(&st->m);
    st->stop = 1;
    pthread_cond_broadcast(&st->cv);
    pthread_mutex_unlock(&st->m);
    pthread_join(st->pump, NULL);
    adbc_stream_close(st->ds);
    for (pstream **pp = &c->streams; *pp; pp = &(*pp)->next)
        if (*pp == st) {
            *pp = st->next;
            break;
        }
    pthread_mutex_destroy(&st->m);
    pthread_cond_destroy(&st->cv);
    free(st);
}

/* The device's banner without delayed_ack. */
static char *banner(adbc_conn *conn)
{
    const adbc_banner *b = adbc_conn_banner(conn);
    size_t cap = 64 + strlen(b->raw);
    char *out = malloc(cap);
    if (!out)
        return NULL;
    int k = snprintf(out, cap, "%s::", b->type && *b->type ? b->type : "device");
    for (size_t i = 0; i < b->nprops; i++)
        k += snprintf(out + k, cap - (size_t)k, "%s=%s;", b->props[i].key, b->props[i].value);
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

static void serve_client(pclient *c)
{
    adbc_conn *conn = c->dev->conn;
    uint32_t dev_max = adbc_conn_max_payload(conn);
    uint8_t *data = malloc(ADBC_MAX_PAYLOAD);
    int online = 0;
    while (data && !c->broken) {
        uint8_t hb[ADBC_HEADER_SIZE];
        adbc_header h;
        if (io_all(c->fd, hb, sizeof hb, 0, c->srv) != 0 ||
            adbc_header_decode(&h, hb, ADBC_MAX_PAYLOAD) != 0 ||
            (h.data_length && io_all(c->fd, data, h.data_length, 0, c->srv) != 0))
            break;
        if (h.command == ADBC_A_CNXN) {
            c->maxp = h.arg1 < dev_max ? h.arg1 : dev_max;
            if (c->maxp < ADBC_MAX_PAYLOAD_V1)
                c->maxp = ADBC_MAX_PAYLOAD_V1;
            char *b = banner(conn);
            int rc = b ? send_pkt(c, ADBC_A_CNXN, ADBC_VERSION_SKIP_CHECKSUM, c->maxp, b,
                                  strlen(b)) : -1;
            free(b);
            if (rc)
                break;
            online = 1;
            continue;
        }
        if (!online)
            break; /* AUTH, STLS or anything before CNXN: not for us */
        pstream *st = find(c, h.arg1);
        switch (h.command) {
        case ADBC_A_OPEN: {
            char svc[4097];
            size_t n = h.data_length < sizeof svc - 1 ? h.data_length : sizeof svc - 1;
            memcpy(svc, data, n);
            svc[n] = '\0';
            adbc_stream *ds = NULL;
            pstream *ns = calloc(1, sizeof *ns);
            void **arg = malloc(2 * sizeof *arg);
            if (!ns || !arg || adbc_stream_open(&ds, conn, svc, c->srv->call_ms) < 0) {
                free(ns);
                free(arg);
                send_pkt(c, ADBC_A_CLSE, 0, h.arg0, NULL, 0);
                break;
            }
            ns->id = ++c->next_id;
            ns->peer = h.arg0;
            ns->ds = ds;
            ns->credit = 1;
            pthread_mutex_init(&ns->m, NULL);
            pthread_cond_init(&ns->cv, NULL);
            arg[0] = ns;
            arg[1] = c;
            send_pkt(c, ADBC_A_OKAY, ns->id, ns->peer, NULL, 0);
            if (pthread_create(&ns->pump, NULL, pump, arg) != 0) {
                free(arg);
                adbc_stream_close(ds);
                send_pkt(c, ADBC_A_CLSE, ns->id, ns->peer, NULL, 0);
                free(ns);
                break;
            }
            ns->next = c->streams;
            c->streams = ns;
            break;
        }
        case ADBC_A_WRTE:
            if (!st)
                break;
            int wr = adbc_stream_write(st->ds, data, h.data_length, c->srv->call_ms);
            if (wr == ADBC_ECLOSED) {
                /* The device closed the stream while this was on its way
                 * (a shell's close-stdin racing the command's exit). What
                 * the device sent before its CLSE (the exit status) is
                 * still to be relayed: the pump does that, then sends the
                 * CLSE. The data is dropped, as adbd drops data for a
                 * stream it closed. */
                break;
            }
            if (wr < 0) {
                drop(c, st);
                send_pkt(c, ADBC_A_CLSE, h.arg1, h.arg0, NULL, 0);
                break;
            }
            send_pkt(c, ADBC_A_OKAY, st->id, st->peer, NULL, 0);
            break;
        case ADBC_A_OKAY:
            if (st) {
                pthread_mutex_lock(&st->m);
                st->credit = 1;
                pthread_cond_signal(&st->cv);
                pthread_mutex_unlock(&st->m);
            }
            break;
        case ADBC_A_CLSE:
            if (st)
                drop(c, st);
            break;
        default: break;
        }
    }
    while (c->streams)
        drop(c, c->streams);
    free(data);
}

static void *client_thread(void *arg)
{
    pclient *c = arg;
    ops_err e;
    if (ops_dev_take(&c->srv->pool, c->dev, c->srv->busy_ms,
                     ops_now_ms() + c->srv->connect_ms, &e) == 0) {
        serve_client(c);
        ops_dev_give(&c->srv->pool, c->dev,
                     adbc_conn_status(c->dev->conn) < 0 ? OPS_EDEVICE : OPS_OK);
    } else {
        fprintf(stderr, SERVE_NAME ": control client refused: %s\n", e.msg);
    }
    close(c->fd);
    pthread_mutex_destroy(&c->wlock);
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
        c->maxp = ADBC_MAX_PAYLOAD_V1;
        pthread_mutex_init(&c->wlock, NULL);
        pthread_attr_t at;
        pthread_attr_init(&at);
        pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
        pthread_t t;
        pthread_mutex_lock(&clients_lock);
        nclients++;
        pthread_mutex_unlock(&clients_lock);
        if (pthread_create(&t, &at, client_thread, c) != 0) {
            close(fd);
            pthread_mutex_destroy(&c->wlock);
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
    (void)s;
}
