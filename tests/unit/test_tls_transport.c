/* SPDX-License-Identifier: Apache-2.0 */
/* The STLS upgrade and the "tls" transport, adbc against adbc over a
 * socketpair: key choice from the device's hints, the not-paired report on
 * the first read, data both ways from two threads at once, and the failure
 * modes (timeouts, a peer that hangs up or is not TLS, shutdown). The
 * certificate's fields are checked in test_tls_cert.c and against BoringSSL
 * in test_tls_ref_cert.c. */
#include "t.h"

#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/rand.h>

#include "adbc/error.h"
#include "adbc/tls.h"
#include "adbc/transport.h"
#include "core/internal.h"

static adbc_keyring *ring;          /* key_a then key_b, generated once (RSA-2048 is slow) */
static const adbc_key *key_a, *key_b;

typedef struct server_job {
    adbc_transport *t;
    adbc_tls_server_opts opts;
    const char *allow; /* the one fingerprint authorize() accepts; NULL: none */
    char seen[ADBC_TLS_FINGERPRINT_SIZE];
    int rc;
    int timeout_ms;
    const char *greeting; /* sent after a successful handshake */
    char msg[512];        /* the server thread's last error */
} server_job;

static int authorize(void *user, const char *fp)
{
    server_job *j = user;
    snprintf(j->seen, sizeof j->seen, "%s", fp);
    return j->allow && strcmp(fp, j->allow) == 0;
}

static void *server_main(void *arg)
{
    server_job *j = arg;
    int ms = j->timeout_ms ? j->timeout_ms : 10000;
    j->rc = adbc_tls_server_upgrade(&j->t, &j->opts, NULL, 0, ms);
    snprintf(j->msg, sizeof j->msg, "%s", adbc_last_error());
    if (j->rc == 0 && j->greeting)
        j->rc = j->t->ops->write(j->t, j->greeting, strlen(j->greeting), 5000);
    return NULL;
}

static int make_pair(adbc_transport **c, adbc_transport **s)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
        return -1;
    if (adbc_transport_fd(c, sv[0], 1) || adbc_transport_fd(s, sv[1], 1))
        return -1;
    return 0;
}

static void read_exact(adbc_transport *t, char *buf, size_t len, int *rc)
{
    size_t got = 0;
    while (got < len) {
        int n = t->ops->read(t, buf + got, len - got, 5000);
        if (n < 0) {
            *rc = n;
            return;
        }
        got += (size_t)n;
    }
    *rc = 0;
}

TEST(hinted_key_is_presented_and_data_flows)
{
    char fp_b[ADBC_TLS_FINGERPRINT_SIZE];
    CHECK_EQ_INT(adbc_tls_key_fingerprint(fp_b, key_b), 0);
    adbc_transport *c, *s;
    CHECK_EQ_INT(make_pair(&c, &s), 0);
    const char *hints[] = {"0000000000000000000000000000000000000000000000000000000000000000",
                           fp_b};
    server_job j = {.t = s, .opts = {.size = sizeof(adbc_tls_server_opts), .hints = hints, .nhints = 2, .authorize = authorize},
                    .allow = fp_b, .greeting = "CNXN-over-tls"};
    j.opts.user = &j;
    pthread_t th;
    pthread_create(&th, NULL, server_main, &j);
    int rc = adbc_tls_client_upgrade(&c, ring, 10000);
    pthread_join(th, NULL);
    CHECK_EQ_INT(rc, 0);
    CHECK_EQ_INT(j.rc, 0);
    CHECK_STR(j.seen, fp_b); /* key_b, not the ring's first key */
    CHECK_STR(c->ops->name, "tls");
    CHECK(strncmp(c->desc, "tls:fd:", 7) == 0);
    char buf[32] = {0};
    read_exact(c, buf, 13, &rc);
    CHECK_EQ_INT(rc, 0);
    CHECK_STR(buf, "CNXN-over-tls");
    CHECK_EQ_INT(c->ops->write(c, "ping", 4, 5000), 0);
    memset(buf, 0, sizeof buf);
    read_exact(j.t, buf, 4, &rc);
    CHECK_EQ_INT(rc, 0);
    CHECK_STR(buf, "ping");
    adbc_transport_free(c);
    adbc_transport_free(j.t);
}

TEST(without_hints_the_first_key_is_presented)
{
    char fp_a[ADBC_TLS_FINGERPRINT_SIZE];
    CHECK_EQ_INT(adbc_tls_key_fingerprint(fp_a, key_a), 0);
    adbc_transport *c, *s;
    CHECK_EQ_INT(make_pair(&c, &s), 0);
    server_job j = {.t = s, .opts = {.size = sizeof(adbc_tls_server_opts), .authorize = authorize}, .allow = fp_a, .greeting = "hi"};
    j.opts.user = &j;
    pthread_t th;
    pthread_create(&th, NULL, server_main, &j);
    int rc = adbc_tls_client_upgrade(&c, ring, 10000);
    pthread_join(th, NULL);
    CHECK_EQ_INT(rc, 0);
    CHECK_EQ_INT(j.rc, 0);
    CHECK_STR(j.seen, fp_a);
    adbc_transport_free(c);
    adbc_transport_free(j.t);
}

/* TLS 1.3: the client's handshake succeeds, the refusal arrives with the
 * first read, and it must read as "not paired". */
TEST(refused_key_is_enotpaired_on_first_read)
{
    adbc_transport *c, *s;
    CHECK_EQ_INT(make_pair(&c, &s), 0);
    server_job j = {.t = s, .opts = {.size = sizeof(adbc_tls_server_opts), .authorize = authorize}, .allow = NULL};
    j.opts.user = &j;
    pthread_t th;
    pthread_create(&th, NULL, server_main, &j);
    int rc = adbc_tls_client_upgrade(&c, ring, 10000);
    pthread_join(th, NULL);
    CHECK_EQ_INT(j.rc, ADBC_EUNAUTHORIZED);
    CHECK(strstr(j.msg, "not authorized") != NULL);
    CHECK_EQ_INT(rc, 0);
    adbc_transport_free(j.t); /* the device hangs up after its alert */
    char buf[8];
    rc = c->ops->read(c, buf, sizeof buf, 5000);
    CHECK_EQ_INT(rc, ADBC_ENOTPAIRED);
    CHECK(strstr(adbc_last_error(), "not paired") != NULL);
    CHECK(strstr(adbc_last_error(), "Pair device with pairing code") != NULL);
    /* Sticky. */
    CHECK_EQ_INT(c->ops->read(c, buf, sizeof buf, 100), ADBC_ENOTPAIRED);
    CHECK_EQ_INT(c->ops->write(c, "x", 1, 100), ADBC_ENOTPAIRED);
    adbc_transport_free(c);
}

typedef struct bulk {
    adbc_transport *t;
    size_t len;
    uint32_t seed;
    int rc;
} bulk;

static uint8_t pattern(uint32_t seed, size_t i)
{
    return (uint8_t)((i * 2654435761u) >> 13 ^ seed);
}

static void *bulk_writer(void *arg)
{
    bulk *b = arg;
    uint8_t buf[7000];
    size_t off = 0;
    while (off < b->len && !b->rc) {
        size_t n = b->len - off < sizeof buf ? b->len - off : sizeof buf;
        n = 1 + (off % n); /* varying write sizes */
        for (size_t i = 0; i < n; i++)
            buf[i] = pattern(b->seed, off + i);
        b->rc = b->t->ops->write(b->t, buf, n, 10000);
        off += n;
    }
    return NULL;
}

static void *bulk_reader(void *arg)
{
    bulk *b = arg;
    uint8_t buf[5000];
    size_t off = 0;
    while (off < b->len && !b->rc) {
        int n = b->t->ops->read(b->t, buf, sizeof buf, 10000);
        if (n < 0) {
            b->rc = n;
            break;
        }
        for (int i = 0; i < n; i++)
            if (buf[i] != pattern(b->seed, off + (size_t)i))
                b->rc = -1000;
        off += (size_t)n;
    }
    return NULL;
}

/* len bytes each way between c and s, each side reading on one thread
 * while it writes on another: 0, or the first thread's error. */
static int duplex(adbc_transport *c, adbc_transport *s, size_t len, uint32_t seed)
{
    bulk b[4] = {{c, len, seed, 0}, {s, len, seed, 0}, {s, len, seed + 100, 0},
                 {c, len, seed + 100, 0}};
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, i % 2 ? bulk_reader : bulk_writer, &b[i]);
    int rc = 0;
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        if (b[i].rc && !rc)
            rc = b[i].rc;
    }
    return rc;
}

/* Each side reads on one thread while it writes on another: the transport's
 * locking must keep both streams intact. */
TEST(full_duplex_from_four_threads)
{
    adbc_transport *c, *s;
    CHECK_EQ_INT(make_pair(&c, &s), 0);
    server_job j = {.t = s, .opts = {.size = sizeof(adbc_tls_server_opts)}};
    pthread_t th;
    pthread_create(&th, NULL, server_main, &j);
    int rc = adbc_tls_client_upgrade(&c, ring, 10000);
    pthread_join(th, NULL);
    CHECK_EQ_INT(rc, 0);
    CHECK_EQ_INT(j.rc, 0);
    CHECK_EQ_INT(duplex(c, j.t, 3 * 1024 * 1024 + 17, 1), 0);
    /* writev keeps order across segments. */
    struct iovec v[3] = {{"ab", 2}, {"", 0}, {"cde", 3}};
    CHECK_EQ_INT(c->ops->writev(c, v, 3, 5000), 0);
    char buf[8] = {0};
    read_exact(j.t, buf, 5, &rc);
    CHECK_EQ_INT(rc, 0);
    CHECK_STR(buf, "abcde");
    /* A read with nothing to read times out and leaves the stream usable. */
    int64_t t0 = core_now_ms();
    CHECK_EQ_INT(c->ops->read(c, buf, sizeof buf, 200), ADBC_ETIMEDOUT);
    CHECK(core_now_ms() - t0 >= 150);
    CHECK_EQ_INT(j.t->ops->write(j.t, "z", 1, 1000), 0);
    CHECK_EQ_INT(c->ops->read(c, buf, sizeof buf, 5000), 1);
    CHECK_EQ_INT(buf[0], 'z');
    adbc_transport_free(c);
    adbc_transport_free(j.t);
}

/* The whole of b->len in one write call: the transport flushes every
 * 64 KiB, so records wait in its output buffer while it sends. */
static void *one_big_write(void *arg)
{
    bulk *b = arg;
    uint8_t *buf = malloc(b->len);
    for (size_t i = 0; i < b->len; i++)
        buf[i] = pattern(b->seed, i);
    b->rc = b->t->ops->write(b->t, buf, b->len, 30000);
    free(buf);
    return NULL;
}

/* A transport whose writes wait at a gate: a socket whose peer stopped
 * reading, under the test's control. Reads pass through. */
typedef struct gate {
    adbc_transport base;
    adbc_transport *inner;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int closed;  /* writes wait while set */
    int waiting; /* writers waiting at the gate */
} gate;

static int gate_read(adbc_transport *t, void *buf, size_t len, int timeout_ms)
{
    gate *g = (gate *)t;
    return g->inner->ops->read(g->inner, buf, len, timeout_ms);
}

static int gate_write(adbc_transport *t, const void *buf, size_t len, int timeout_ms)
{
    gate *g = (gate *)t;
    pthread_mutex_lock(&g->mu);
    g->waiting++;
    pthread_cond_broadcast(&g->cv);
    while (g->closed)
        pthread_cond_wait(&g->cv, &g->mu);
    g->waiting--;
    pthread_mutex_unlock(&g->mu);
    return g->inner->ops->write(g->inner, buf, len, timeout_ms);
}

static void gate_shutdown(adbc_transport *t)
{
    gate *g = (gate *)t;
    g->inner->ops->shutdown(g->inner);
}

static void gate_destroy(adbc_transport *t)
{
    gate *g = (gate *)t;
    adbc_transport_free(g->inner);
    pthread_mutex_destroy(&g->mu);
    pthread_cond_destroy(&g->cv);
    free(g);
}

static const adbc_transport_ops gate_ops = {
    .size = sizeof(adbc_transport_ops),
    .name = "gate",
    .read = gate_read,
    .write = gate_write,
    .shutdown = gate_shutdown,
    .destroy = gate_destroy,
};

static void gate_set(gate *g, int closed)
{
    pthread_mutex_lock(&g->mu);
    g->closed = closed;
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->mu);
}

typedef struct opener {
    gate *g;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int done;   /* the test finished its read */
    int forced; /* the gate had to be opened to let the read finish */
} opener;

/* Opens the gate if the test's read has not finished after 20 s, so a
 * broken transport fails the test instead of hanging it. */
static void *open_if_stuck(void *arg)
{
    opener *o = arg;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += 20;
    pthread_mutex_lock(&o->mu);
    while (!o->done)
        if (pthread_cond_timedwait(&o->cv, &o->mu, &ts) != 0)
            break;
    if (!o->done) {
        o->forced = 1;
        gate_set(o->g, 0);
    }
    pthread_mutex_unlock(&o->mu);
    return NULL;
}

/* The stall behind "a write timed out after 10 s" in the four-thread test
 * on a busy machine: a writer blocked on a full socket held the send lock,
 * the reader on the same side found the writer's records in the output
 * buffer and waited for that lock (or, when it won it, sent them into the
 * same full socket) instead of reading. With both ends in that state no
 * byte moved. Here one side's writer is stopped at the gate with records
 * still queued: its reader must go on reading what the peer sends. */
TEST(reader_goes_on_while_the_writer_is_blocked)
{
    adbc_transport *c, *s;
    CHECK_EQ_INT(make_pair(&c, &s), 0);
    gate *g = calloc(1, sizeof *g);
    g->base.size = sizeof g->base;
    g->base.ops = &gate_ops;
    snprintf(g->base.desc, sizeof g->base.desc, "gate");
    g->inner = c;
    pthread_mutex_init(&g->mu, NULL);
    pthread_cond_init(&g->cv, NULL);
    c = &g->base;
    server_job j = {.t = s, .opts = {.size = sizeof(adbc_tls_server_opts)}};
    pthread_t th;
    pthread_create(&th, NULL, server_main, &j);
    int rc = adbc_tls_client_upgrade(&c, ring, 10000);
    pthread_join(th, NULL);
    CHECK_EQ_INT(rc, 0);
    CHECK_EQ_INT(j.rc, 0);

    gate_set(g, 1);
    const size_t len = 256 * 1024; /* several 64 KiB flushes: records stay queued */
    bulk cw = {c, len, 3, 0}, sr = {j.t, len, 3, 0};
    pthread_t tw, tr;
    pthread_create(&tw, NULL, one_big_write, &cw);
    pthread_mutex_lock(&g->mu);
    while (!g->waiting)
        pthread_cond_wait(&g->cv, &g->mu);
    pthread_mutex_unlock(&g->mu);

    opener o = {.g = g};
    pthread_mutex_init(&o.mu, NULL);
    pthread_cond_init(&o.cv, NULL);
    pthread_t to;
    pthread_create(&to, NULL, open_if_stuck, &o);
    /* The peer sends in several writes, so the reader runs SSL_read often. */
    for (int i = 0; i < 64; i++)
        CHECK_EQ_INT(j.t->ops->write(j.t, "0123456789abcdef", 16, 5000), 0);
    char buf[16 * 64];
    read_exact(c, buf, sizeof buf, &rc);
    pthread_mutex_lock(&o.mu);
    o.done = 1;
    pthread_cond_signal(&o.cv);
    int forced = o.forced;
    pthread_mutex_unlock(&o.mu);
    pthread_join(to, NULL);
    CHECK_EQ_INT(rc, 0);
    CHECK_EQ_INT(forced, 0); /* the read finished with the writer still stopped */
    CHECK(memcmp(buf + 16 * 63, "0123456789abcdef", 16) == 0);

    gate_set(g, 0);
    pthread_create(&tr, NULL, bulk_reader, &sr);
    pthread_join(tw, NULL);
    pthread_join(tr, NULL);
    CHECK_EQ_INT(cw.rc, 0);
    CHECK_EQ_INT(sr.rc, 0);
    pthread_mutex_destroy(&o.mu);
    pthread_cond_destroy(&o.cv);
    adbc_transport_free(c);
    adbc_transport_free(j.t);
}

/* Full duplex through socket buffers of a few KiB, so both ends' writers
 * block on full sockets thousands of times while their readers run. */
TEST(full_duplex_through_small_socket_buffers)
{
    int sv[2];
    CHECK_EQ_INT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    int small = 4096;
    for (int i = 0; i < 2; i++) {
        setsockopt(sv[i], SOL_SOCKET, SO_SNDBUF, &small, sizeof small);
        setsockopt(sv[i], SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    }
    adbc_transport *c, *s;
    CHECK_EQ_INT(adbc_transport_fd(&c, sv[0], 1), 0);
    CHECK_EQ_INT(adbc_transport_fd(&s, sv[1], 1), 0);
    server_job j = {.t = s, .opts = {.size = sizeof(adbc_tls_server_opts)}};
    pthread_t th;
    pthread_create(&th, NULL, server_main, &j);
    int rc = adbc_tls_client_upgrade(&c, ring, 10000);
    pthread_join(th, NULL);
    CHECK_EQ_INT(rc, 0);
    CHECK_EQ_INT(j.rc, 0);
    for (int round = 0; round < 4; round++)
        CHECK_EQ_INT(duplex(c, j.t, 2 * 1024 * 1024 + 5, (uint32_t)(4 + round)), 0);
    adbc_transport_free(c);
    adbc_transport_free(j.t);
}

static void *shutdown_later(void *arg)
{
    struct timespec ts = {0, 200 * 1000 * 1000};
    nanosleep(&ts, NULL);
    adbc_transport *t = arg;
    t->ops->shutdown(t);
    return NULL;
}

TEST(shutdown_releases_a_blocked_read)
{
    adbc_transport *c, *s;
    CHECK_EQ_INT(make_pair(&c, &s), 0);
    server_job j = {.t = s, .opts = {.size = sizeof(adbc_tls_server_opts)}};
    pthread_t th;
    pthread_create(&th, NULL, server_main, &j);
    CHECK_EQ_INT(adbc_tls_client_upgrade(&c, ring, 10000), 0);
    pthread_join(th, NULL);
    CHECK_EQ_INT(j.rc, 0);
    pthread_create(&th, NULL, shutdown_later, c);
    char buf[4];
    CHECK_EQ_INT(c->ops->read(c, buf, sizeof buf, -1), ADBC_ECLOSED);
    pthread_join(th, NULL);
    adbc_transport_free(c);
    adbc_transport_free(j.t);
}

TEST(handshake_timeout_close_and_garbage)
{
    adbc_transport *c, *s;

    /* Nobody answers. */
    CHECK_EQ_INT(make_pair(&c, &s), 0);
    int64_t t0 = core_now_ms();
    CHECK_EQ_INT(adbc_tls_client_upgrade(&c, ring, 300), ADBC_ETIMEDOUT);
    CHECK(core_now_ms() - t0 < 30000); /* bounded, however busy the machine */
    CHECK(strstr(adbc_last_error(), "handshake") != NULL);
    CHECK_STR(c->ops->name, "fd"); /* unchanged on failure */
    adbc_transport_free(c);
    adbc_transport_free(s);

    /* The peer hangs up. */
    CHECK_EQ_INT(make_pair(&c, &s), 0);
    adbc_transport_free(s);
    CHECK_EQ_INT(adbc_tls_client_upgrade(&c, ring, 2000), ADBC_ECLOSED);
    adbc_transport_free(c);

    /* The peer is not speaking TLS (an old adbd answering with a packet). */
    CHECK_EQ_INT(make_pair(&c, &s), 0);
    CHECK_EQ_INT(s->ops->write(s, "CNXN\0\0\0\1\0\0\0\0\0\0\0\0\0\0\0\0\xbc\xb1\xa7\xb1", 24, 1000), 0);
    CHECK_EQ_INT(adbc_tls_client_upgrade(&c, ring, 2000), ADBC_EPROTO);
    CHECK(strstr(adbc_last_error(), "TLS handshake failed") != NULL);
    adbc_transport_free(c);
    adbc_transport_free(s);

    /* Device side: the host never starts. */
    CHECK_EQ_INT(make_pair(&c, &s), 0);
    CHECK_EQ_INT(adbc_tls_server_upgrade(&s, NULL, NULL, 0, 200), ADBC_ETIMEDOUT);
    adbc_transport_free(c);
    adbc_transport_free(s);
}

static int pkt_read(adbc_transport *t, void *b, size_t l, int ms) { (void)t, (void)b, (void)l, (void)ms; return ADBC_EIO; }
static int pkt_write(adbc_transport *t, const void *b, size_t l, int ms) { (void)t, (void)b, (void)l, (void)ms; return ADBC_EIO; }
static void pkt_nop(adbc_transport *t) { (void)t; }
static const adbc_transport_ops pkt_ops = {sizeof(adbc_transport_ops), "usb", pkt_read, pkt_write, pkt_nop, pkt_nop, NULL, NULL};

TEST(packet_transports_are_refused)
{
    adbc_transport usb = {.size = sizeof(adbc_transport), .ops = &pkt_ops, .packet_mode = 1, .desc = "usb:1-1"};
    adbc_transport *t = &usb;
    CHECK_EQ_INT(adbc_tls_client_upgrade(&t, ring, 100), ADBC_EUNSUPPORTED);
    CHECK(t == &usb);
    CHECK_EQ_INT(adbc_tls_client_upgrade(NULL, ring, 100), ADBC_EINVAL);
}

int main(void)
{
    adbc_key *a, *b;
    if (adbc_key_generate(&a, 2048) || adbc_key_generate(&b, 2048) || adbc_keyring_new(&ring) ||
        adbc_keyring_add(ring, a) || adbc_keyring_add(ring, b)) {
        printf("cannot set up keys: %s\n", adbc_last_error());
        return 1;
    }
    key_a = adbc_keyring_get(ring, 0);
    key_b = adbc_keyring_get(ring, 1);
    RUN(hinted_key_is_presented_and_data_flows);
    RUN(without_hints_the_first_key_is_presented);
    RUN(refused_key_is_enotpaired_on_first_read);
    RUN(full_duplex_from_four_threads);
    RUN(reader_goes_on_while_the_writer_is_blocked);
    RUN(full_duplex_through_small_socket_buffers);
    RUN(shutdown_releases_a_blocked_read);
    RUN(handshake_timeout_close_and_garbage);
    RUN(packet_transports_are_refused);
    adbc_keyring_free(ring);
    return T_DONE();
}
