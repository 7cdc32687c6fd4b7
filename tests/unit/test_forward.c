/* SPDX-License-Identifier: Apache-2.0 */
/* Reverse forwarding against a hostile device: an in-test device (a
 * device-role session on a socketpair) answers reverse:forward and then
 * opens streams, some for the destination the host configured, others for
 * destinations nobody configured. Only the configured one is relayed (to
 * an echo server on loopback here); the others are refused and nothing is
 * left behind. A connection without reverse refuses every device stream. */
#include "t.h"

#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include "adbc/adbc.h"
#include "conn/conn_int.h"

typedef struct hdev {
    int fd;
    adbc_session *s;
    const char *opens[8]; /* streams to open after the reverse:forward */
    int nopen;
    _Atomic int opened;
    int repeat;           /* open_now: open the list this many times once online */
    _Atomic int open_now;
    _Atomic uint32_t echo_id;     /* the accepted stream: send "ping", expect it back */
    char got[16];
    _Atomic size_t ngot;
    _Atomic int refused, ready, reverse_req, stop;
    pthread_t th;
} hdev;

static int h_open(void *u, uint32_t id, const char *svc)
{
    hdev *d = u;
    if (strncmp(svc, "reverse:forward:", 16) != 0)
        return 1;
    d->reverse_req = (int)id;
    return 0;
}

static void h_ready(void *u, uint32_t id)
{
    hdev *d = u;
    d->ready++;
    d->echo_id = id;
    adbc_session_write(d->s, id, (const uint8_t *)"ping", 4);
}

static void h_data(void *u, uint32_t id, const uint8_t *data, size_t len)
{
    hdev *d = u;
    if (id == d->echo_id && d->ngot + len <= sizeof d->got) {
        memcpy(d->got + d->ngot, data, len);
        d->ngot += len;
    }
    adbc_session_consume(d->s, id, len);
}

static void h_closed(void *u, uint32_t id, int reason)
{
    (void)id;
    hdev *d = u;
    if (reason == ADBC_EREFUSED)
        d->refused++;
}

static void *h_main(void *arg)
{
    hdev *d = arg;
    uint8_t buf[65536];
    while (!d->stop) {
        if (d->reverse_req > 0) {
            /* answer the request as adbd does, then open the streams */
            uint32_t id = (uint32_t)d->reverse_req;
            d->reverse_req = -1;
            adbc_session_write(d->s, id, (const uint8_t *)"OKAY", 4);
            adbc_session_close_stream(d->s, id);
            for (int i = 0; i < d->nopen; i++) {
                uint32_t sid;
                if (adbc_session_open(&sid, d->s, d->opens[i]) == 0)
                    d->opened++;
            }
        }
        if (d->open_now && adbc_session_state_get(d->s) == ADBC_SESSION_ONLINE) {
            d->open_now = 0;
            for (int k = 0; k < d->repeat; k++)
                for (int i = 0; i < d->nopen; i++) {
                    uint32_t sid;
                    if (adbc_session_open(&sid, d->s, d->opens[i]) == 0)
                        d->opened++;
                }
        }
        const uint8_t *seg;
        size_t n;
        while ((n = adbc_session_next_send(&seg, d->s)) > 0) {
            ssize_t w = send(d->fd, seg, n, MSG_NOSIGNAL);
            if (w <= 0)
                return NULL;
            adbc_session_sent(d->s, (size_t)w);
        }
        struct pollfd p = {.fd = d->fd, .events = POLLIN};
        if (poll(&p, 1, 20) <= 0)
            continue;
        ssize_t r = read(d->fd, buf, sizeof buf);
        if (r <= 0 || adbc_session_recv(d->s, buf, (size_t)r) < 0)
            break;
    }
    return NULL;
}

static adbc_keyring *keys(void)
{
    static adbc_keyring *ring;
    if (!ring) {
        adbc_key *k;
        if (adbc_keyring_new(&ring) < 0 || adbc_key_generate(&k, 2048) < 0)
            return NULL;
        adbc_keyring_add(ring, k);
    }
    return ring;
}

static int h_start(hdev *d, adbc_conn **c, adbc_reverse *r)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
        return -1;
    d->fd = sv[1];
    adbc_session_config cfg;
    adbc_session_config_init(&cfg, ADBC_ROLE_DEVICE);
    cfg.banner = "device::ro.product.model=Hostile;features=shell_v2,delayed_ack";
    cfg.auth_required = 0;
    static const adbc_session_callbacks cb = {
        .size = sizeof(adbc_session_callbacks),
        .on_open = h_open, .on_ready = h_ready, .on_data = h_data, .on_closed = h_closed};
    if (adbc_session_new(&d->s, &cfg, &cb, d) < 0)
        return -1;
    pthread_create(&d->th, NULL, h_main, d);
    adbc_transport *t;
    if (adbc_transport_fd(&t, sv[0], 1) < 0)
        return -1;
    adbc_conn_opts o;
    adbc_conn_opts_init(&o);
    o.keys = keys();
    if (r)
        adbc_reverse_conn_opts(&o, r);
    return adbc_conn_open(c, t, &o);
}

static void h_stop(hdev *d)
{
    d->stop = 1;
    pthread_join(d->th, NULL);
    close(d->fd);
    adbc_session_free(d->s);
}

/* A loopback echo server for one connection. */
typedef struct echo {
    int lfd, port;
    pthread_t th;
} echo;

static void *echo_main(void *arg)
{
    echo *e = arg;
    int fd = accept(e->lfd, NULL, NULL);
    if (fd < 0)
        return NULL;
    char b[256];
    ssize_t n;
    while ((n = read(fd, b, sizeof b)) > 0)
        if (write(fd, b, (size_t)n) != n)
            break;
    close(fd);
    return NULL;
}

static int echo_start(echo *e)
{
    e->lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t sl = sizeof sin;
    if (bind(e->lfd, (struct sockaddr *)&sin, sizeof sin) || listen(e->lfd, 4) ||
        getsockname(e->lfd, (struct sockaddr *)&sin, &sl))
        return -1;
    e->port = ntohs(sin.sin_port);
    return pthread_create(&e->th, NULL, echo_main, e);
}

TEST(reverse_relays_only_configured_destinations)
{
    echo e;
    CHECK_EQ_INT(echo_start(&e), 0);
    char dest[32], other[32];
    snprintf(dest, sizeof dest, "tcp:%d", e.port);
    snprintf(other, sizeof other, "tcp:%d", e.port + 1 == 65536 ? 1 : e.port + 1);
    hdev d;
    memset(&d, 0, sizeof d);
    d.opens[0] = "tcp:22";            /* nobody configured it */
    d.opens[1] = "localabstract:evil"; /* nor this */
    d.opens[2] = other;
    d.opens[3] = dest;                /* the configured destination */
    d.nopen = 4;
    adbc_reverse *r;
    CHECK_EQ_INT(adbc_reverse_new(&r, NULL), 0);
    adbc_conn *c = NULL;
    CHECK_EQ_INT(h_start(&d, &c, r), 0);
    CHECK_EQ_INT(adbc_reverse_start(r, c), 0);
    char resolved[64];
    CHECK_EQ_INT(adbc_reverse_add(resolved, sizeof resolved, r, "tcp:7000", dest, 0), 0);
    CHECK_STR(resolved, "tcp:7000");
    for (int i = 0; i < 300 && (d.refused < 3 || d.ngot < 4); i++)
        usleep(10000);
    CHECK_EQ_INT(d.opened, 4);
    CHECK_EQ_INT(d.refused, 3);
    CHECK_EQ_INT(d.ready, 1);
    CHECK_EQ_INT(d.ngot, 4);
    CHECK_MEM(d.got, "ping", 4); /* relayed to the echo server and back */
    adbc_reverse_free(r);
    adbc_conn_close(c);
    h_stop(&d);
    close(e.lfd);
    pthread_join(e.th, NULL);
}

TEST(unasked_device_streams_are_refused_without_leak)
{
    hdev d;
    memset(&d, 0, sizeof d);
    static const char *const many[] = {"tcp:1", "tcp:80", "localabstract:x", "jdwp:1",
                                       "tcp:2", "tcp:3",  "localfilesystem:/x", "tcp:5"};
    for (int i = 0; i < 8; i++)
        d.opens[i] = many[i];
    d.nopen = 8;
    d.repeat = 50;
    d.open_now = 1;
    adbc_conn *c = NULL;
    CHECK_EQ_INT(h_start(&d, &c, NULL), 0);
    for (int i = 0; i < 500 && d.refused < 400; i++)
        usleep(10000);
    CHECK_EQ_INT(d.opened, 400);
    CHECK_EQ_INT(d.refused, 400);
    CHECK_EQ_INT(d.ready, 0);
    pthread_mutex_lock(&c->mu);
    CHECK_EQ_INT(c->nstreams, 0);
    CHECK_EQ_INT(c->npending, 0);
    CHECK_EQ_INT(adbc_session_stream_count(c->s), 0);
    pthread_mutex_unlock(&c->mu);
    CHECK_EQ_INT(adbc_conn_status(c), 0); /* refused, not a reason to drop the device */
    adbc_conn_close(c);
    h_stop(&d);
}

int main(void)
{
    RUN(reverse_relays_only_configured_destinations);
    RUN(unasked_device_streams_are_refused_without_leak);
    return T_DONE();
}
