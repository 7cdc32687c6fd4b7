/* SPDX-License-Identifier: Apache-2.0 */
/* The STLS upgrade and the "tls" transport, adbc against adbc over a
 * socketpair: key choice from the device's hints, the not-paired report on
 * the first read, data both ways from two threads at once, and the failure
 * modes (timeouts, a peer that hangs up or is not TLS, shutdown). The
 * certificate's fields are checked in test_tls_cert.c and against BoringSSL
 * in test_tls_ref_cert.c. */
#include "t.h"

#include <pthread.h>
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
    const size_t len = 3 * 1024 * 1024 + 17;
    bulk cw = {c, len, 1, 0}, sr = {j.t, len, 1, 0}, sw = {j.t, len, 2, 0}, cr = {c, len, 2, 0};
    pthread_t t1, t2, t3, t4;
    pthread_create(&t1, NULL, bulk_writer, &cw);
    pthread_create(&t2, NULL, bulk_reader, &sr);
    pthread_create(&t3, NULL, bulk_writer, &sw);
    pthread_create(&t4, NULL, bulk_reader, &cr);
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    pthread_join(t3, NULL);
    pthread_join(t4, NULL);
    CHECK_EQ_INT(cw.rc, 0);
    CHECK_EQ_INT(sw.rc, 0);
    CHECK_EQ_INT(sr.rc, 0);
    CHECK_EQ_INT(cr.rc, 0);
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
    CHECK(core_now_ms() - t0 < 3000);
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
static const adbc_transport_ops pkt_ops = {sizeof(adbc_transport_ops), "usb", pkt_read, pkt_write, pkt_nop, pkt_nop, NULL};

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
    RUN(shutdown_releases_a_blocked_read);
    RUN(handshake_timeout_close_and_garbage);
    RUN(packet_transports_are_refused);
    adbc_keyring_free(ring);
    return T_DONE();
}
