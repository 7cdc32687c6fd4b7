/* SPDX-License-Identifier: Apache-2.0 */
/* Connection-layer tests: a host adbc_conn over a socketpair, against a
 * device-role session driven by a thread in this test. The in-test device
 * serves "echo:" (sends back what it receives), "echo!:" (the same, and
 * closes after echoing a '!'), "source:N" (sends N bytes of a pattern, then
 * closes), "sink:" (reads and drops) and refuses the rest. */
#include "t.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "adbc/adbc.h"
#include "conn/conn_int.h"
#include "transport/fd_int.h"

#include <time.h>

typedef struct dev_stream {
    uint32_t id;
    int kind;        /* 1 echo, 2 source, 3 sink, 4 credit (the window the host gave),
                        5 hold (takes data, never consumes it) */
    size_t to_send;  /* source: bytes left */
    size_t sent;
    uint8_t *pending; /* echo: bytes waiting for window */
    size_t plen;
} dev_stream;

typedef struct dev {
    int fd;
    adbc_session *s;
    dev_stream st[256];
    int n;
    _Atomic int stop;
    int accept_key;
    int tcp;         /* 1: the host reaches it over TCP on 127.0.0.1 (a local link) */
    uint32_t window;
    uint32_t max_payload, version; /* 0: the engine's defaults */
    const char *features;
    const char *rev[4];    /* destinations the device opens once online */
    int nrev, rev_done;
    _Atomic int refused;   /* of those, how many the host refused */
    _Atomic int rev_ready; /* and accepted */
    _Atomic size_t held;   /* bytes "hold:" streams received */
    pthread_t th;
} dev;

static dev_stream *dfind(dev *d, uint32_t id)
{
    for (int i = 0; i < d->n; i++)
        if (d->st[i].id == id)
            return &d->st[i];
    return NULL;
}

static void dpump_stream(dev *d, dev_stream *ds)
{
    if (ds->kind == 2) {
        while (ds->to_send > 0) {
            size_t w = adbc_session_writable(d->s, ds->id);
            if (w == 0)
                return;
            uint8_t buf[65536];
            size_t n = ds->to_send < sizeof buf ? ds->to_send : sizeof buf;
            if (n > w)
                n = w;
            for (size_t i = 0; i < n; i++)
                buf[i] = (uint8_t)((ds->sent + i) * 7 + 3);
            ssize_t k = adbc_session_write(d->s, ds->id, buf, n);
            if (k <= 0)
                return;
            ds->sent += (size_t)k;
            ds->to_send -= (size_t)k;
        }
        adbc_session_close_stream(d->s, ds->id);
        ds->id = 0;
    } else if (ds->kind == 4) {
        /* Nothing sent yet: what may be sent is the host's whole window. */
        uint8_t w[4];
        core_wr32(w, (uint32_t)adbc_session_writable(d->s, ds->id));
        if (adbc_session_write(d->s, ds->id, w, 4) == 4) {
            adbc_session_close_stream(d->s, ds->id);
            ds->id = 0;
        }
    } else if ((ds->kind == 1 || ds->kind == 6) && ds->plen > 0) {
        ssize_t k = adbc_session_write(d->s, ds->id, ds->pending, ds->plen);
        if (k > 0) {
            int last = ds->pending[k - 1];
            memmove(ds->pending, ds->pending + k, ds->plen - (size_t)k);
            ds->plen -= (size_t)k;
            adbc_session_consume(d->s, ds->id, (size_t)k);
            if (ds->kind == 6 && ds->plen == 0 && last == '!') {
                adbc_session_close_stream(d->s, ds->id);
                ds->id = 0;
            }
        }
    }
}

static int d_open(void *u, uint32_t id, const char *svc)
{
    dev *d = u;
    if (d->n >= 256)
        return 1;
    dev_stream *ds = &d->st[d->n];
    memset(ds, 0, sizeof *ds);
    ds->id = id;
    if (strncmp(svc, "echo:", 5) == 0)
        ds->kind = 1;
    else if (strcmp(svc, "echo!:") == 0)
        ds->kind = 6;
    else if (strncmp(svc, "source:", 7) == 0) {
        ds->kind = 2;
        ds->to_send = strtoul(svc + 7, NULL, 10);
    } else if (strncmp(svc, "sink:", 5) == 0)
        ds->kind = 3;
    else if (strcmp(svc, "credit:") == 0)
        ds->kind = 4;
    else if (strcmp(svc, "hold:") == 0)
        ds->kind = 5;
    else
        return 1;
    d->n++;
    return 0;
}

static void d_data(void *u, uint32_t id, const uint8_t *data, size_t len)
{
    dev *d = u;
    dev_stream *ds = dfind(d, id);
    if (!ds)
        return;
    if (ds->kind == 1 || ds->kind == 6) {
        ds->pending = realloc(ds->pending, ds->plen + len);
        memcpy(ds->pending + ds->plen, data, len);
        ds->plen += len;
        /* consumed (acked) only once echoed: back-pressure end to end */
    } else if (ds->kind == 5) {
        d->held += len;
    } else {
        adbc_session_consume(d->s, id, len);
    }
}

static void d_ready(void *u, uint32_t id)
{
    (void)id;
    dev *d = u;
    d->rev_ready++;
}

static void d_closed(void *u, uint32_t id, int reason)
{
    dev *d = u;
    if (reason == ADBC_EREFUSED)
        d->refused++;
    dev_stream *ds = dfind(d, id);
    if (ds)
        ds->id = 0;
}

static int d_verify(void *u, const uint8_t *t, size_t tl, const uint8_t *sig, size_t sl)
{
    (void)u, (void)t, (void)tl, (void)sig, (void)sl;
    return 0; /* reject every signature: forces the public key path */
}

static int d_offer(void *u, const char *key)
{
    dev *d = u;
    return d->accept_key && strlen(key) > 100;
}

static void *dev_main(void *arg)
{
    dev *d = arg;
    uint8_t buf[65536];
    while (!d->stop) {
        if (!d->rev_done && adbc_session_state_get(d->s) == ADBC_SESSION_ONLINE) {
            d->rev_done = 1;
            for (int i = 0; i < d->nrev && d->n < 256; i++) {
                dev_stream *ds = &d->st[d->n];
                memset(ds, 0, sizeof *ds);
                ds->kind = 1; /* echo once the host accepts */
                if (adbc_session_open(&ds->id, d->s, d->rev[i]) == 0)
                    d->n++;
            }
        }
        const uint8_t *seg;
        size_t n;
        while ((n = adbc_session_next_send(&seg, d->s)) > 0) {
            ssize_t w = send(d->fd, seg, n, MSG_NOSIGNAL);
            if (w <= 0)
                goto out;
            adbc_session_sent(d->s, (size_t)w);
        }
        struct pollfd p = {.fd = d->fd, .events = POLLIN};
        if (poll(&p, 1, 20) <= 0)
            goto pump;
        ssize_t r = read(d->fd, buf, sizeof buf);
        if (r <= 0)
            break;
        if (adbc_session_recv(d->s, buf, (size_t)r) < 0)
            break;
    pump:
        for (int i = 0; i < d->n; i++)
            if (d->st[i].id)
                dpump_stream(d, &d->st[i]);
    }
out:
    return NULL;
}

/* A connected TCP pair on 127.0.0.1: sv[0] the host's end. */
static int tcp_pair(int sv[2])
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof a;
    int l = socket(AF_INET, SOCK_STREAM, 0);
    if (l < 0)
        return -1;
    int rc = -1;
    if (bind(l, (struct sockaddr *)&a, sizeof a) == 0 && listen(l, 1) == 0 &&
        getsockname(l, (struct sockaddr *)&a, &al) == 0) {
        sv[0] = socket(AF_INET, SOCK_STREAM, 0);
        if (sv[0] >= 0 && connect(sv[0], (struct sockaddr *)&a, sizeof a) == 0 &&
            (sv[1] = accept(l, NULL, NULL)) >= 0)
            rc = 0;
        else if (sv[0] >= 0)
            close(sv[0]);
    }
    close(l);
    return rc;
}

static int start_dev(dev *d, int *hostfd)
{
    int sv[2];
    if (d->tcp ? tcp_pair(sv) < 0 : socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
        return -1;
    d->fd = sv[1];
    adbc_session_config cfg;
    adbc_session_config_init(&cfg, ADBC_ROLE_DEVICE);
    cfg.banner = d->features ? d->features
                             : "device::ro.product.name=tp;ro.product.model=Test;ro.product.device=td;"
                               "features=shell_v2,delayed_ack";
    if (d->window)
        cfg.window = d->window;
    cfg.max_payload = d->max_payload;
    if (d->version)
        cfg.version = d->version;
    static const adbc_session_callbacks cb = {.size = sizeof(adbc_session_callbacks), .on_open = d_open, .on_data = d_data,
                                              .on_ready = d_ready, .on_closed = d_closed, .auth_verify = d_verify,
                                              .auth_offer = d_offer};
    if (adbc_session_new(&d->s, &cfg, &cb, d) < 0)
        return -1;
    pthread_create(&d->th, NULL, dev_main, d);
    *hostfd = sv[0];
    return 0;
}

static void stop_dev(dev *d)
{
    d->stop = 1;
    pthread_join(d->th, NULL);
    close(d->fd);
    for (int i = 0; i < d->n; i++)
        free(d->st[i].pending);
    adbc_session_free(d->s);
}

static adbc_keyring *test_keys(void)
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

static int accept_only_9090(void *user, const char *dest)
{
    (void)user;
    return strcmp(dest, "tcp:9090") == 0;
}

static int connect_opts(dev *d, adbc_conn **c, uint32_t host_window,
                        int (*on_device_open)(void *, const char *));

static int connect_to(dev *d, adbc_conn **c, uint32_t host_window)
{
    return connect_opts(d, c, host_window, NULL);
}

static int connect_opts(dev *d, adbc_conn **c, uint32_t host_window,
                        int (*on_device_open)(void *, const char *))
{
    int hfd;
    if (start_dev(d, &hfd) < 0)
        return -1;
    adbc_transport *t;
    if (adbc_transport_fd(&t, hfd, 1) < 0)
        return -1;
    adbc_conn_opts o;
    adbc_conn_opts_init(&o);
    o.keys = test_keys();
    o.auth_timeout_ms = 2000;
    o.window = host_window;
    o.on_device_open = on_device_open;
    return adbc_conn_open(c, t, &o);
}

TEST(handshake_with_key_offer)
{
    dev d = {.accept_key = 1};
    adbc_conn *c = NULL;
    CHECK_EQ_INT(connect_to(&d, &c, 0), 0);
    const adbc_banner *b = adbc_conn_banner(c);
    CHECK(b != NULL);
    CHECK_STR(b->model, "Test");
    CHECK_EQ_INT(b->state, ADBC_DEV_DEVICE);
    CHECK(adbc_conn_has_feature(c, "shell_v2"));
    CHECK_EQ_INT(adbc_conn_delayed_ack(c), 1);
    CHECK_EQ_INT(adbc_conn_version(c), ADBC_VERSION_SKIP_CHECKSUM);
    adbc_conn_close(c);
    stop_dev(&d);
}

TEST(unauthorized_times_out_with_message)
{
    dev d = {.accept_key = 0};
    adbc_conn *c = NULL;
    int rc = connect_to(&d, &c, 0);
    CHECK_EQ_INT(rc, ADBC_EUNAUTHORIZED);
    /* One wording for USB and TCP, and the wait it gave the user. */
    CHECK(strstr(adbc_last_error(), "accepted the prompt on the device") != NULL);
    CHECK(strstr(adbc_last_error(), "USB") == NULL);
    CHECK(strstr(adbc_last_error(), " ms waited") != NULL);
    stop_dev(&d);
}

/* A temporary ANDROID_USER_HOME holding an adbkey: the test key saved
 * (good) or a PEM block whose contents are garbage. */
static int key_home(char *dir, size_t dlen, int good)
{
    snprintf(dir, dlen, "/tmp/adbc-test-conn-XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    char path[300];
    snprintf(path, sizeof path, "%s/adbkey", dir);
    if (good)
        return adbc_key_save(adbc_keyring_get(test_keys(), 0), path) < 0 ? -1 : 0;
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fputs("-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5IGF0IGFsbA==\n-----END PRIVATE KEY-----\n", f);
    fclose(f);
    return chmod(path, 0600);
}

static void key_home_remove(const char *dir)
{
    char path[300];
    snprintf(path, sizeof path, "%s/adbkey", dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/adbkey.pub", dir);
    unlink(path);
    rmdir(dir);
}

/* The default key is loaded while the device answers CNXN: with a good one
 * the handshake completes as before. */
TEST(default_key_loaded_after_cnxn)
{
    char dir[64];
    CHECK_EQ_INT(key_home(dir, sizeof dir, 1), 0);
    setenv("ANDROID_USER_HOME", dir, 1);
    dev d = {.accept_key = 1};
    int hfd;
    CHECK_EQ_INT(start_dev(&d, &hfd), 0);
    adbc_transport *t;
    CHECK_EQ_INT(adbc_transport_fd(&t, hfd, 1), 0);
    adbc_conn_opts o;
    adbc_conn_opts_init(&o);
    o.auth_timeout_ms = 2000;
    adbc_conn *c = NULL;
    int rc = adbc_conn_open(&c, t, &o);
    unsetenv("ANDROID_USER_HOME");
    key_home_remove(dir);
    CHECK_EQ_INT(rc, 0);
    CHECK_EQ_INT(adbc_conn_banner(c)->state, ADBC_DEV_DEVICE);
    adbc_conn_close(c);
    stop_dev(&d);
}

static void *read_first_packet(void *arg)
{
    int *fd = arg;
    char hdr[24];
    size_t got = 0;
    struct pollfd p = {.fd = fd[0], .events = POLLIN};
    while (got < sizeof hdr && poll(&p, 1, 5000) == 1) {
        ssize_t n = read(fd[0], hdr + got, sizeof hdr - got);
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    fd[1] = got == sizeof hdr && memcmp(hdr, "CNXN", 4) == 0;
    return NULL;
}

/* A damaged default key fails the open with the key's own error, after
 * CNXN went out, and without waiting for the device. */
TEST(bad_default_key_fails_after_cnxn)
{
    char dir[64];
    CHECK_EQ_INT(key_home(dir, sizeof dir, 0), 0);
    setenv("ANDROID_USER_HOME", dir, 1);
    int sv[2];
    CHECK_EQ_INT(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    int peer[2] = {sv[1], 0};
    pthread_t th;
    pthread_create(&th, NULL, read_first_packet, peer);
    adbc_transport *t;
    CHECK_EQ_INT(adbc_transport_fd(&t, sv[0], 1), 0);
    adbc_conn_opts o;
    adbc_conn_opts_init(&o);
    adbc_conn *c = NULL;
    int64_t t0 = core_now_ms();
    int rc = adbc_conn_open(&c, t, &o);
    int64_t took = core_now_ms() - t0;
    char msg[512];
    snprintf(msg, sizeof msg, "%s", adbc_last_error());
    pthread_join(th, NULL);
    close(sv[1]);
    unsetenv("ANDROID_USER_HOME");
    key_home_remove(dir);
    CHECK_EQ_INT(rc, ADBC_EKEY);
    CHECK(c == NULL);
    CHECK(strstr(msg, "adbkey") != NULL);
    CHECK(took < 30000); /* the device's wait is 60 s: this did not wait */
    CHECK_EQ_INT(peer[1], 1);
}

/* Read s to its end; the bytes read, or -1 on an error or a timeout. */
static long read_to_end(adbc_stream *s, int timeout_ms)
{
    uint8_t buf[4096];
    long got = 0;
    for (;;) {
        ssize_t r = adbc_stream_read(s, buf, sizeof buf, timeout_ms);
        if (r < 0)
            return -1;
        if (r == 0)
            return got;
        got += (long)r;
    }
}

static int echo_roundtrip(adbc_conn *c, size_t total)
{
    adbc_stream *s;
    if (adbc_stream_open(&s, c, "echo:", 2000) < 0)
        return -1;
    uint8_t *out = malloc(total), *in = malloc(total);
    for (size_t i = 0; i < total; i++)
        out[i] = (uint8_t)(i * 31 + 1);
    size_t wrote = 0, got = 0;
    int ok = 0;
    /* Interleave writes and reads so the echo's back-pressure cannot deadlock. */
    while (got < total) {
        if (wrote < total) {
            size_t n = total - wrote < 100000 ? total - wrote : 100000;
            if (adbc_stream_write(s, out + wrote, n, 5000) < 0)
                goto done;
            wrote += n;
        }
        while (got < wrote) {
            ssize_t r = adbc_stream_read(s, in + got, total - got, 5000);
            if (r <= 0)
                goto done;
            got += (size_t)r;
        }
    }
    ok = memcmp(in, out, total) == 0;
done:
    adbc_stream_close(s);
    free(out);
    free(in);
    return ok ? 0 : -1;
}

TEST(echo_delayed_ack)
{
    dev d = {.accept_key = 1};
    adbc_conn *c = NULL;
    CHECK_EQ_INT(connect_to(&d, &c, 0), 0);
    CHECK_EQ_INT(echo_roundtrip(c, 3 * 1024 * 1024 + 17), 0);
    adbc_conn_close(c);
    stop_dev(&d);
}

TEST(echo_legacy_flow_control)
{
    dev d = {.accept_key = 1,
             .features = "device::ro.product.model=Old;features=shell_v2"};
    adbc_conn *c = NULL;
    CHECK_EQ_INT(connect_to(&d, &c, 0), 0);
    CHECK_EQ_INT(adbc_conn_delayed_ack(c), 0);
    CHECK_EQ_INT(echo_roundtrip(c, 1024 * 1024 + 5), 0);
    adbc_conn_close(c);
    stop_dev(&d);
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Without delayed_ack the reader thread does not wake a stream's reader for
 * each full-size packet (another one usually follows a round trip later);
 * when none follows, the transport's read alarm must still deliver the
 * data within ADBC_CONN_WAKE_MS, not at the read's timeout. The echo
 * device answers with full-size packets and then waits for more. */
TEST(legacy_full_packets_then_silence_arrive_at_once)
{
    dev d = {.accept_key = 1, .max_payload = 4096, .version = 0x01000000,
             .features = "device::ro.product.model=Old;features="};
    adbc_conn *c = NULL;
    CHECK_EQ_INT(connect_to(&d, &c, 0), 0);
    size_t mp = adbc_session_max_payload(c->s);
    CHECK_EQ_INT(mp, 4096);
    adbc_stream *s;
    CHECK_EQ_INT(adbc_stream_open(&s, c, "echo:", 2000), 0);
    uint8_t *out = malloc(3 * mp), *in = malloc(3 * mp);
    for (size_t i = 0; i < 3 * mp; i++)
        out[i] = (uint8_t)(i * 13 + 1);
    for (size_t k = 1; k <= 3; k += 2) { /* one full packet, then three */
        CHECK_EQ_INT(adbc_stream_write(s, out, k * mp, 2000), 0);
        size_t got = 0;
        int64_t t0 = now_ms(), slowest = 0;
        while (got < k * mp) {
            /* a read timeout no load reaches before the alarm would: 120 s */
            ssize_t r = adbc_stream_read(s, in + got, k * mp - got, 120000);
            CHECK(r > 0);
            if (r <= 0)
                break;
            got += (size_t)r;
            if (now_ms() - t0 > slowest)
                slowest = now_ms() - t0;
        }
        printf("  %zu full packet(s) of %zu bytes echoed, read in %lld ms\n", k, mp,
               (long long)slowest);
        CHECK_EQ_INT(got, k * mp);
        CHECK(memcmp(in, out, k * mp) == 0);
        CHECK(slowest < 60000); /* without the alarm: the 120 s read timeout */
    }
    adbc_stream_close(s);
    free(out);
    free(in);
    adbc_conn_close(c);
    stop_dev(&d);
}

/* The descriptor transport's read alarm: a waiting read returns
 * ADBC_ETIMEDOUT once when it goes off, data already there comes first,
 * and a disarmed alarm never fires. */
TEST(fd_read_alarm)
{
    int sv[2];
    CHECK_EQ_INT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    adbc_transport *t;
    CHECK_EQ_INT(adbc_transport_fd(&t, sv[0], 1), 0);
    uint8_t b[16];
    /* goes off while the read waits */
    CHECK_EQ_INT(transport_fd_alarm(t, 20), 0);
    int64_t t0 = now_ms();
    CHECK_EQ_INT(t->ops->read(t, b, sizeof b, 60000), ADBC_ETIMEDOUT);
    int64_t took = now_ms() - t0;
    CHECK(took >= 15 && took < 30000); /* the alarm, not the read's 60 s */
    CHECK(strstr(adbc_last_error(), "alarm") != NULL);
    /* once: the next read waits for data (or its own timeout) */
    CHECK_EQ_INT(t->ops->read(t, b, sizeof b, 50), ADBC_ETIMEDOUT);
    CHECK(strstr(adbc_last_error(), "nothing received") != NULL);
    /* data that is there comes before an alarm that went off */
    CHECK_EQ_INT(transport_fd_alarm(t, 1), 0);
    usleep(20000);
    CHECK_EQ_INT(write(sv[1], "hello", 5), 5);
    CHECK_EQ_INT(t->ops->read(t, b, sizeof b, 5000), 5);
    CHECK_EQ_INT(t->ops->read(t, b, sizeof b, 5000), ADBC_ETIMEDOUT);
    /* disarmed (also after going off unread): nothing fires */
    CHECK_EQ_INT(transport_fd_alarm(t, 1), 0);
    usleep(20000);
    CHECK_EQ_INT(transport_fd_alarm(t, 0), 0);
    CHECK_EQ_INT(write(sv[1], "x", 1), 1);
    CHECK_EQ_INT(t->ops->read(t, b, sizeof b, 5000), 1);
    CHECK_EQ_INT(t->ops->read(t, b, sizeof b, 50), ADBC_ETIMEDOUT);
    CHECK(strstr(adbc_last_error(), "nothing received") != NULL);
    adbc_transport_free(t);
    close(sv[1]);
}

TEST(refused_service)
{
    dev d = {.accept_key = 1};
    adbc_conn *c = NULL;
    CHECK_EQ_INT(connect_to(&d, &c, 0), 0);
    adbc_stream *s = NULL;
    CHECK_EQ_INT(adbc_stream_open(&s, c, "nosuch:", 2000), ADBC_EREFUSED);
    CHECK(strstr(adbc_last_error(), "nosuch") != NULL);
    /* the connection still works */
    CHECK_EQ_INT(echo_roundtrip(c, 1000), 0);
    adbc_conn_close(c);
    stop_dev(&d);
}

TEST(source_reads_to_eof)
{
    dev d = {.accept_key = 1};
    adbc_conn *c = NULL;
    CHECK_EQ_INT(connect_to(&d, &c, 0), 0);
    adbc_stream *s;
    CHECK_EQ_INT(adbc_stream_open(&s, c, "source:5000000", 2000), 0);
    size_t got = 0;
    uint8_t buf[70000];
    int bad = 0;
    for (;;) {
        ssize_t r = adbc_stream_read(s, buf, sizeof buf, 5000);
        CHECK(r >= 0);
        if (r == 0)
            break;
        for (ssize_t i = 0; i < r; i++)
            if (buf[i] != (uint8_t)((got + (size_t)i) * 7 + 3))
                bad = 1;
        got += (size_t)r;
    }
    CHECK_EQ_INT(got, 5000000);
    CHECK_EQ_INT(bad, 0);
    adbc_stream_close(s);
    adbc_conn_close(c);
    stop_dev(&d);
}

/* conn_stream_read_swap (what a pull reads with): every byte arrives once
 * and in order whether the buffers are traded or copied, the buffer that
 * comes back is the caller's to free, and the credit of what was taken is
 * returned (with a 64 KiB window the transfer would stall otherwise). */
static void swap_reads(uint32_t window, size_t first_cap, int *traded, int *copied)
{
    dev d = {.accept_key = 1};
    adbc_conn *c = NULL;
    CHECK_EQ_INT(connect_to(&d, &c, window), 0);
    adbc_stream *s;
    CHECK_EQ_INT(adbc_stream_open(&s, c, "source:3000000", 2000), 0);
    size_t cap = first_cap, got = 0;
    uint8_t *buf = core_malloc(cap);
    CHECK(buf != NULL);
    int bad = 0;
    *traded = *copied = 0;
    for (;;) {
        uint8_t *before = buf;
        size_t off = 12345;
        ssize_t r = conn_stream_read_swap(s, &buf, &cap, &off, 5000);
        CHECK(r >= 0);
        if (r == 0)
            break;
        CHECK(off + (size_t)r <= cap);
        if (buf == before) {
            (*copied)++;
            CHECK_EQ_INT(off, 0);
        } else {
            (*traded)++;
        }
        for (ssize_t i = 0; i < r; i++)
            if (buf[off + (size_t)i] != (uint8_t)((got + (size_t)i) * 7 + 3))
                bad = 1;
        got += (size_t)r;
    }
    CHECK_EQ_INT(got, 3000000);
    CHECK_EQ_INT(bad, 0);
    core_free(buf);
    adbc_stream_close(s);
    adbc_conn_close(c);
    stop_dev(&d);
}

TEST(swap_read_trades_buffers)
{
    int traded, copied;
    swap_reads(0, 4096, &traded, &copied);
    CHECK(traded > 0);
}

TEST(swap_read_small_window_copies_and_returns_credit)
{
    /* with a 16 KiB window no more than 16 KiB + one packet is ever
     * buffered: under the trade threshold, so it is copied */
    int traded, copied;
    swap_reads(16384, 1 << 20, &traded, &copied);
    CHECK(copied > 0);
    CHECK_EQ_INT(traded, 0);
}

TEST(swap_read_reports_end_and_errors)
{
    dev d = {.accept_key = 1};
    adbc_conn *c = NULL;
    CHECK_EQ_INT(connect_to(&d, &c, 0), 0);
    adbc_stream *s;
    CHECK_EQ_INT(adbc_stream_open(&s, c, "sink:", 2000), 0);
    size_t cap = 4096, off = 7;
    uint8_t *buf = core_malloc(cap);
    CHECK(buf != NULL);
    /* nothing comes on a sink: the deadline passes with a message */
    CHECK_EQ_INT(conn_stream_read_swap(s, &buf, &cap, &off, 50), ADBC_ETIMEDOUT);
    CHECK(strstr(adbc_last_error(), "no data from the device") != NULL);
    CHECK_EQ_INT(cap, 4096);
    core_free(buf);
    adbc_stream_close(s);
    adbc_conn_close(c);
    stop_dev(&d);
}

/* conn_stream_read_to (what a forward sends with): the sink sees the
 * stream's own buffer while data keeps arriving behind it, takes part of
 * it at a time, sometimes nothing, and slowly, so the buffer must grow
 * while lent (copied, the lent one kept until it comes back); every byte
 * arrives once and in order, and a sink's error comes back as is. */
typedef struct lent_state {
    size_t got;
    int bad, calls, zero;
} lent_state;

static long lent_sink(void *user, const uint8_t *p, size_t n)
{
    lent_state *ls = user;
    ls->calls++;
    if (ls->calls % 7 == 0) {
        ls->zero++;
        return 0; /* "the socket is full": nothing taken */
    }
    if (ls->calls % 5 == 0)
        usleep(2000); /* slow: the reader thread appends meanwhile */
    size_t k = n < 10000 ? n : 10000;
    for (size_t i = 0; i < k; i++)
        if (p[i] != (uint8_t)((ls->got + i) * 7 + 3))
            ls->bad = 1;
    ls->got += k;
    return (long)k;
}

static long failing_sink(void *user, const uint8_t *p, size_t n)
{
    (void)user;
    (void)p;
    (void)n;
    return ADBC_ECLOSED;
}

TEST(lent_reads_deliver_every_byte)
{
    dev d = {.accept_key = 1};
    adbc_conn *c = NULL;
    CHECK_EQ_INT(connect_to(&d, &c, 0), 0);
    adbc_stream *s;
    CHECK_EQ_INT(adbc_stream_open(&s, c, "source:3000000", 2000), 0);
    lent_state ls = {0};
    int ended = 0;
    for (;;) {
        ssize_t r = conn_stream_read_to(s, lent_sink, &ls, &ended, 5000);
        CHECK(r >= 0);
        if (r < 0 || ended)
            break;
    }
    CHECK_EQ_INT(ls.got, 3000000);
    CHECK_EQ_INT(ls.bad, 0);
    CHECK(ls.zero > 0);
    adbc_stream_close(s);
    /* a sink's error is the call's result; the stream stays usable */
    CHECK_EQ_INT(adbc_stream_open(&s, c, "source:100000", 2000), 0);
    CHECK_EQ_INT(conn_stream_read_to(s, failing_sink, NULL, &ended, 5000), ADBC_ECLOSED);
    CHECK_EQ_INT(ended, 0);
    uint8_t buf[4096];
    CHECK(adbc_stream_read(s, buf, sizeof buf, 5000) > 0);
    adbc_stream_close(s);
    adbc_conn_close(c);
    stop_dev(&d);
}

/* conn_stream_set_sink: the reader thread hands arriving data to the sink
 * while nothing is buffered; what the sink leaves (part, or all when it
 * says "full") is buffered and read with conn_stream_read_to through the
 * same sink, every byte once and in order, and the window keeps moving
 * (3 MB through a 64 KiB window). After set_sink(NULL) it is not called. */
TEST(sink_takes_arriving_data)
{
    dev d = {.accept_key = 1};
    adbc_conn *c = NULL;
    CHECK_EQ_INT(connect_to(&d, &c, 65536), 0);
    adbc_stream *s;
    CHECK_EQ_INT(adbc_stream_open(&s, c, "source:3000000", 2000), 0);
    lent_state ls = {0};
    conn_stream_set_sink(s, lent_sink, &ls);
    int ended = 0;
    for (;;) {
        ssize_t r = conn_stream_read_to(s, lent_sink, &ls, &ended, 5000);
        CHECK(r >= 0);
        if (r < 0 || ended)
            break;
    }
    CHECK_EQ_INT(ls.got, 3000000);
    CHECK_EQ_INT(ls.bad, 0);
    CHECK(ls.zero > 0);
    conn_stream_set_sink(s, NULL, NULL);
    adbc_stream_close(s);
    CHECK_EQ_INT(adbc_stream_open(&s, c, "source:100000", 2000), 0);
    int calls = ls.calls;
    CHECK_EQ_INT(read_to_end(s, 5000), 100000);
    CHECK_EQ_INT(ls.calls, calls);
    adbc_stream_close(s);
    adbc_conn_close(c);
    stop_dev(&d);
}

/* conn_stream_set_wake: the stream's reader is only called for when the
 * sink leaves it something. A sink that takes all it is given, and the
 * clean end it is told of, call for nobody; data it leaves, an interrupt, a
 * stream that ended before the wake was set and the connection's failure
 * each do; after set_wake(NULL) nothing does. */
typedef struct wake_state {
    _Atomic int wakes, full, ended;
    _Atomic size_t got;
} wake_state;

static long wake_sink(void *user, const uint8_t *p, size_t n)
{
    wake_state *w = user;
    (void)p;
    if (!p && n == 0) {
        w->ended = 1;
        return 0;
    }
    if (w->full)
        return 0;
    w->got += n;
    return (long)n;
}

static void count_wake(void *user)
{
    wake_state *w = user;
    w->wakes++;
}

static int wait_for_atomic(_Atomic int *v, int want)
{
    for (int i = 0; i < 500 && *v < want; i++)
        usleep(2000);
    return *v >= want;
}

TEST(wake_only_when_the_sink_leaves_something)
{
    dev d = {.accept_key = 1};
    adbc_conn *c = NULL;
    CHECK_EQ_INT(connect_to(&d, &c, 0), 0);
    adbc_stream *s;
    CHECK_EQ_INT(adbc_stream_open(&s, c, "echo:", 2000), 0);
    wake_state w = {0};
    conn_stream_set_sink(s, wake_sink, &w);
    conn_stream_set_wake(s, count_wake, &w);
    CHECK_EQ_INT(w.wakes, 0); /* nothing waits yet */
    CHECK_EQ_INT(adbc_stream_write(s, "hello", 5, 2000), 0);
    for (int i = 0; i < 500 && w.got < 5; i++)
        usleep(2000);
    CHECK_EQ_INT(w.got, 5);
    CHECK_EQ_INT(w.wakes, 0); /* the sink took it all */
    w.full = 1;
    CHECK_EQ_INT(adbc_stream_write(s, "world", 5, 2000), 0);
    CHECK(wait_for_atomic(&w.wakes, 1));
    char b[5];
    CHECK_EQ_INT(adbc_stream_read_full(s, b, 5, 2000), 0); /* left to the reader */
    CHECK_MEM(b, "world", 5);
    int before = w.wakes;
    adbc_conn_interrupt(c);
    CHECK_EQ_INT(w.wakes, before + 1);
    adbc_conn_clear_interrupt(c);
    conn_stream_set_wake(s, NULL, NULL);
    adbc_conn_interrupt(c);
    CHECK_EQ_INT(w.wakes, before + 1); /* never after set_wake(NULL) */
    adbc_conn_clear_interrupt(c);
    conn_stream_set_sink(s, NULL, NULL);
    adbc_stream_close(s);

    /* the clean end with nothing left: told to the sink, no wake */
    wake_state e = {0};
    CHECK_EQ_INT(adbc_stream_open(&s, c, "echo!:", 2000), 0);
    conn_stream_set_sink(s, wake_sink, &e);
    conn_stream_set_wake(s, count_wake, &e);
    CHECK_EQ_INT(adbc_stream_write(s, "bye!", 4, 2000), 0);
    CHECK(wait_for_atomic(&e.ended, 1));
    CHECK_EQ_INT(e.got, 4);
    CHECK_EQ_INT(e.wakes, 0);
    conn_stream_set_wake(s, NULL, NULL);
    conn_stream_set_sink(s, NULL, NULL);
    adbc_stream_close(s);

    /* a stream that ended before its wake was set: woken at once */
    wake_state f = {0};
    CHECK_EQ_INT(adbc_stream_open(&s, c, "source:10", 2000), 0);
    CHECK_EQ_INT(read_to_end(s, 2000), 10);
    conn_stream_set_sink(s, wake_sink, &f);
    conn_stream_set_wake(s, count_wake, &f);
    CHECK_EQ_INT(f.wakes, 1);
    CHECK_EQ_INT(f.ended, 0); /* the end came before the sink: not told to it */
    conn_stream_set_wake(s, NULL, NULL);
    conn_stream_set_sink(s, NULL, NULL);
    adbc_stream_close(s);

    /* the connection fails: woken */
    wake_state g = {0};
    CHECK_EQ_INT(adbc_stream_open(&s, c, "echo:", 2000), 0);
    conn_stream_set_sink(s, wake_sink, &g);
    conn_stream_set_wake(s, count_wake, &g);
    CHECK_EQ_INT(g.wakes, 0);
    shutdown(d.fd, SHUT_RDWR);
    CHECK(wait_for_atomic(&g.wakes, 1));
    CHECK_EQ_INT(g.ended, 0); /* a failure is no clean end */
    conn_stream_set_wake(s, NULL, NULL);
    conn_stream_set_sink(s, NULL, NULL);
    adbc_stream_close(s);
    adbc_conn_close(c);
    stop_dev(&d);
}

/* The window the device is given for a stream it opens (OPEN's arg1).
 * local_window replaces window on a local link (TCP over loopback) only. */
static uint32_t credit_of(dev *d, uint32_t window, uint32_t local_window)
{
    int hfd;
    adbc_transport *t;
    adbc_conn *c = NULL;
    adbc_stream *s = NULL;
    uint8_t w[4] = {0};
    uint32_t got = 0;
    if (start_dev(d, &hfd) < 0 || adbc_transport_fd(&t, hfd, 1) < 0)
        return 0;
    adbc_conn_opts o;
    adbc_conn_opts_init(&o);
    o.keys = test_keys();
    o.auth_timeout_ms = 2000;
    o.window = window;
    o.local_window = local_window;
    if (adbc_conn_open(&c, t, &o) == 0 && adbc_stream_open(&s, c, "credit:", 2000) == 0 &&
        adbc_stream_read_full(s, w, 4, 5000) == 0)
        got = core_rd32(w);
    if (s)
        adbc_stream_close(s);
    adbc_conn_close(c);
    stop_dev(d);
    return got;
}

TEST(local_window_applies_to_loopback_links_only)
{
    dev unix_dev = {.accept_key = 1}, tcp_dev = {.accept_key = 1, .tcp = 1},
        tcp_plain = {.accept_key = 1, .tcp = 1};
    CHECK_EQ_INT(credit_of(&unix_dev, 128 * 1024, 64 * 1024), 128 * 1024);
    CHECK_EQ_INT(credit_of(&tcp_dev, 128 * 1024, 64 * 1024), 64 * 1024);
    CHECK_EQ_INT(credit_of(&tcp_plain, 128 * 1024, 0), 128 * 1024);
}

/* What a host sends a stream the device never acknowledges: what it keeps
 * in flight at most. local_send_ahead replaces send_ahead (here 0: the
 * device's 512 KiB window) on a local link (TCP over loopback) only. */
static size_t held_by(dev *d, uint32_t local_send_ahead)
{
    int hfd;
    adbc_transport *t;
    adbc_conn *c = NULL;
    adbc_stream *s = NULL;
    size_t got = 0;
    d->window = 512 * 1024;
    if (start_dev(d, &hfd) < 0 || adbc_transport_fd(&t, hfd, 1) < 0)
        return 0;
    adbc_conn_opts o;
    adbc_conn_opts_init(&o);
    o.keys = test_keys();
    o.auth_timeout_ms = 2000;
    o.local_send_ahead = local_send_ahead;
    static uint8_t buf[4 * 1024 * 1024]; /* more than the queue takes: the write waits */
    if (adbc_conn_open(&c, t, &o) == 0 && adbc_stream_open(&s, c, "hold:", 2000) == 0 &&
        adbc_stream_write(s, buf, sizeof buf, 300) == ADBC_ETIMEDOUT) {
        /* What was sent arrives (bounded); then nothing more may. */
        for (int i = 0; i < 1000 && d->held < (local_send_ahead ? local_send_ahead : d->window);
             i++)
            usleep(10000);
        usleep(100000);
        got = d->held;
    }
    adbc_conn_close(c); /* first: the stream's close would wait for the window */
    adbc_stream_close(s);
    stop_dev(d);
    return got;
}

TEST(local_send_ahead_applies_to_loopback_links_only)
{
    dev unix_dev = {.accept_key = 1}, tcp_dev = {.accept_key = 1, .tcp = 1},
        tcp_plain = {.accept_key = 1, .tcp = 1};
    CHECK_EQ_INT(held_by(&unix_dev, 128 * 1024), 512 * 1024);
    CHECK_EQ_INT(held_by(&tcp_dev, 128 * 1024), 128 * 1024);
    CHECK_EQ_INT(held_by(&tcp_plain, 0), 512 * 1024);
}

/* conn_stream_write_from: bytes read from a socket straight into packets
 * arrive every one, in order, through a window that closes every 64 KiB
 * (delayed_ack) or after every packet (legacy), with the reader thread
 * filling packets from the source as the window opens; the fill's own
 * result (end of file) comes back as it is. */
typedef struct fill_state {
    int fd;
    pthread_t writer;     /* the thread that calls conn_stream_write_from */
    _Atomic int others;   /* calls from another thread (the reader's) */
    _Atomic int eof;
    size_t total;
} fill_state;

static long sock_fill(void *user, uint8_t *p, size_t cap)
{
    fill_state *f = user;
    if (!pthread_equal(pthread_self(), f->writer))
        f->others++;
    ssize_t n = recv(f->fd, p, cap, MSG_DONTWAIT);
    if (n == 0)
        f->eof = 1;
    return n > 0 ? (long)n : n == 0 ? 0 : (errno == EAGAIN ? 0 : -1);
}

typedef struct pattern_io {
    int fd;
    adbc_stream *s;
    size_t total, got;
    int bad;
} pattern_io;

static void *pattern_send(void *arg)
{
    pattern_io *w = arg;
    uint8_t buf[65544];
    size_t off = 0;
    while (off < w->total) {
        /* an 8-byte header, then 64 KiB, as adb's client writes a push */
        size_t n = (off / 7) % 2 ? 8 : sizeof buf - 8;
        if (n > w->total - off)
            n = w->total - off;
        for (size_t i = 0; i < n; i++)
            buf[i] = (uint8_t)((off + i) * 13 + 5);
        ssize_t k = send(w->fd, buf, n, MSG_NOSIGNAL);
        if (k <= 0)
            break;
        off += (size_t)k;
    }
    shutdown(w->fd, SHUT_WR);
    return NULL;
}

static void *pattern_recv(void *arg)
{
    pattern_io *r = arg;
    uint8_t buf[65536];
    while (r->got < r->total) {
        ssize_t n = adbc_stream_read(r->s, buf, sizeof buf, 10000);
        if (n <= 0)
            break;
        for (ssize_t i = 0; i < n; i++)
            if (buf[i] != (uint8_t)((r->got + (size_t)i) * 13 + 5))
                r->bad++;
        r->got += (size_t)n;
    }
    return NULL;
}

static void write_from_round(const char *features, uint32_t window)
{
    dev d = {.accept_key = 1, .features = features, .window = window};
    adbc_conn *c = NULL;
    CHECK_EQ_INT(connect_to(&d, &c, 0), 0);
    adbc_stream *s;
    CHECK_EQ_INT(adbc_stream_open(&s, c, "echo:", 2000), 0);
    int sv[2];
    CHECK_EQ_INT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    const size_t total = 3 * 1024 * 1024 + 11;
    fill_state f = {.fd = sv[1], .writer = pthread_self(), .total = total};
    pattern_io w = {.fd = sv[0], .total = total}, r = {.s = s, .total = total};
    pthread_t wt, rt;
    pthread_create(&wt, NULL, pattern_send, &w);
    pthread_create(&rt, NULL, pattern_recv, &r);
    conn_stream_set_source(s, 256 * 1024, sock_fill, &f);
    int errors = 0;
    for (int i = 0; i < 100000 && !f.eof; i++) { /* bounded: each call waits at most 5 s */
        long k = conn_stream_write_from(s, 256 * 1024, sock_fill, &f, 5000);
        if (k < 0) {
            errors++;
            break;
        } else if (k == 0 && !f.eof) {
            struct pollfd p = {.fd = sv[1], .events = POLLIN};
            poll(&p, 1, 1000);
        }
    }
    conn_stream_set_source(s, 0, NULL, NULL);
    pthread_join(wt, NULL);
    pthread_join(rt, NULL);
    CHECK_EQ_INT(errors, 0);
    CHECK_EQ_INT(f.eof, 1);
    CHECK_EQ_INT(r.got, total);
    CHECK_EQ_INT(r.bad, 0);
    CHECK(f.others > 0); /* the reader thread filled packets too */
    adbc_stream_close(s);
    adbc_conn_close(c);
    stop_dev(&d);
    close(sv[0]);
    close(sv[1]);
}

TEST(write_from_fills_packets_in_place)
{
    write_from_round(NULL, 64 * 1024);
    write_from_round("device::ro.product.model=Old;features=shell_v2", 0);
}

/* A stream nobody reads must not stall another stream on the same
 * connection: its data waits in its own buffer, bounded by the window. */
TEST(unread_stream_does_not_stall_others)
{
    dev d = {.accept_key = 1};
    adbc_conn *c = NULL;
    CHECK_EQ_INT(connect_to(&d, &c, 256 * 1024), 0);
    adbc_stream *idle;
    CHECK_EQ_INT(adbc_stream_open(&idle, c, "source:100000000", 2000), 0);
    adbc_stream *busy;
    CHECK_EQ_INT(adbc_stream_open(&busy, c, "source:3000000", 2000), 0);
    size_t got = 0;
    uint8_t buf[65536];
    for (;;) {
        ssize_t r = adbc_stream_read(busy, buf, sizeof buf, 5000);
        CHECK(r >= 0);
        if (r == 0)
            break;
        got += (size_t)r;
    }
    CHECK_EQ_INT(got, 3000000);
    adbc_stream_close(busy);
    adbc_stream_close(idle);
    adbc_conn_close(c);
    stop_dev(&d);
}

struct par {
    adbc_conn *c;
    int rc;
};

static void *par_echo(void *arg)
{
    struct par *p = arg;
    p->rc = echo_roundtrip(p->c, 300000);
    return NULL;
}

TEST(streams_from_many_threads)
{
    dev d = {.accept_key = 1};
    adbc_conn *c = NULL;
    CHECK_EQ_INT(connect_to(&d, &c, 0), 0);
    pthread_t th[16];
    struct par p[16];
    for (int i = 0; i < 16; i++) {
        p[i].c = c;
        pthread_create(&th[i], NULL, par_echo, &p[i]);
    }
    int fails = 0;
    for (int i = 0; i < 16; i++) {
        pthread_join(th[i], NULL);
        fails += p[i].rc != 0;
    }
    CHECK_EQ_INT(fails, 0);
    adbc_conn_close(c);
    stop_dev(&d);
}

TEST(read_timeout_keeps_stream_usable)
{
    dev d = {.accept_key = 1};
    adbc_conn *c = NULL;
    CHECK_EQ_INT(connect_to(&d, &c, 0), 0);
    adbc_stream *s;
    CHECK_EQ_INT(adbc_stream_open(&s, c, "echo:", 2000), 0);
    uint8_t b[4];
    CHECK_EQ_INT(adbc_stream_read(s, b, 4, 50), ADBC_ETIMEDOUT);
    CHECK_EQ_INT(adbc_stream_write(s, "ping", 4, 1000), 0);
    CHECK_EQ_INT(adbc_stream_read_full(s, b, 4, 2000), 0);
    CHECK_MEM(b, "ping", 4);
    adbc_stream_close(s);
    adbc_conn_close(c);
    stop_dev(&d);
}

TEST(peer_disconnect_fails_calls)
{
    dev d = {.accept_key = 1};
    adbc_conn *c = NULL;
    CHECK_EQ_INT(connect_to(&d, &c, 0), 0);
    adbc_stream *s;
    CHECK_EQ_INT(adbc_stream_open(&s, c, "echo:", 2000), 0);
    shutdown(d.fd, SHUT_RDWR);
    uint8_t b[4];
    ssize_t r = adbc_stream_read(s, b, 4, 2000);
    CHECK_EQ_INT(r, ADBC_ECLOSED);
    CHECK(strstr(adbc_last_error(), "closed") != NULL);
    adbc_stream_close(s);
    adbc_conn_close(c);
    stop_dev(&d);
}

/* Reverse forwarding at the connection level: the device opens streams;
 * the one the caller accepts comes out of adbc_conn_accept with its
 * destination and carries data both ways, the other is refused. */
TEST(device_opened_streams_accept_and_refuse)
{
    dev d = {.accept_key = 1, .rev = {"tcp:9090", "tcp:22"}, .nrev = 2};
    adbc_conn *c = NULL;
    CHECK_EQ_INT(connect_opts(&d, &c, 0, accept_only_9090), 0);
    adbc_stream *s = NULL;
    CHECK_EQ_INT(adbc_conn_accept(&s, c, 5000), 0);
    CHECK(s != NULL);
    CHECK_STR(adbc_stream_destination(s), "tcp:9090");
    CHECK_EQ_INT(adbc_stream_write(s, "ping", 4, 2000), 0);
    char b[4];
    CHECK_EQ_INT(adbc_stream_read_full(s, b, 4, 2000), 0);
    CHECK_MEM(b, "ping", 4);
    for (int i = 0; i < 200 && d.refused < 1; i++)
        usleep(10000);
    CHECK_EQ_INT(d.refused, 1);
    CHECK_EQ_INT(d.rev_ready, 1);
    /* nothing else waits */
    adbc_stream *none = NULL;
    CHECK_EQ_INT(adbc_conn_accept(&none, c, 50), ADBC_ETIMEDOUT);
    CHECK(none == NULL);
    adbc_stream_close(s);
    adbc_conn_close(c);
    stop_dev(&d);

    /* Without on_device_open every device OPEN is refused. */
    dev d2 = {.accept_key = 1, .rev = {"tcp:9090"}, .nrev = 1};
    CHECK_EQ_INT(connect_to(&d2, &c, 0), 0);
    for (int i = 0; i < 200 && d2.refused < 1; i++)
        usleep(10000);
    CHECK_EQ_INT(d2.refused, 1);
    CHECK_EQ_INT(adbc_conn_accept(&none, c, 10), ADBC_EINVAL);
    adbc_conn_close(c);
    stop_dev(&d2);

    /* Accepted but never taken: freed with the connection (ASan checks). */
    dev d3 = {.accept_key = 1, .rev = {"tcp:9090", "tcp:9090"}, .nrev = 2};
    CHECK_EQ_INT(connect_opts(&d3, &c, 0, accept_only_9090), 0);
    for (int i = 0; i < 200 && d3.rev_ready < 2; i++)
        usleep(10000);
    CHECK_EQ_INT(d3.rev_ready, 2);
    adbc_conn_close(c);
    stop_dev(&d3);
}

/* What a new user passes by mistake: NULLs and structs never initialised
 * get ADBC_EINVAL with the fix named, never a crash, a 0 ms timeout or a
 * success. */
TEST(null_arguments_and_uninitialised_structs)
{
    adbc_conn *c = (adbc_conn *)1;
    CHECK_EQ_INT(adbc_connect(NULL, "127.0.0.1:1", NULL), ADBC_EINVAL);
    CHECK(strstr(adbc_last_error(), "out is NULL") != NULL);
    CHECK_EQ_INT(adbc_connect(&c, NULL, NULL), ADBC_EINVAL);
    CHECK(c == NULL);
    CHECK_EQ_INT(adbc_conn_open(NULL, NULL, NULL), ADBC_EINVAL);
    CHECK_EQ_INT(adbc_conn_open(&c, NULL, NULL), ADBC_EINVAL);
    adbc_conn_opts zero;
    memset(&zero, 0, sizeof zero);
    CHECK_EQ_INT(adbc_connect(&c, "127.0.0.1:1", &zero), ADBC_EINVAL);
    CHECK(strstr(adbc_last_error(), "not initialised") != NULL);
    CHECK(strstr(adbc_last_error(), "call adbc_conn_opts_init()") != NULL);

    adbc_run_result r;
    CHECK_EQ_INT(adbc_run(&r, NULL, ADBC_SHELL_V2, "true", NULL, 0, 0, 1000), ADBC_EINVAL);
    dev d = {.accept_key = 1};
    c = NULL;
    CHECK_EQ_INT(connect_to(&d, &c, 0), 0);
    CHECK_EQ_INT(adbc_run(NULL, c, ADBC_SHELL_V2, "true", NULL, 0, 0, 1000), ADBC_EINVAL);
    CHECK(strstr(adbc_last_error(), "result") != NULL);
    CHECK_EQ_INT(adbc_run(&r, c, ADBC_SHELL_V2, NULL, NULL, 0, 0, 1000), ADBC_EINVAL);
    CHECK(strstr(adbc_last_error(), "command is NULL") != NULL);
    adbc_run_result_clear(&r);
    adbc_conn_close(c);
    stop_dev(&d);
}

int main(void)
{
    RUN(handshake_with_key_offer);
    RUN(unauthorized_times_out_with_message);
    RUN(default_key_loaded_after_cnxn);
    RUN(bad_default_key_fails_after_cnxn);
    RUN(echo_delayed_ack);
    RUN(echo_legacy_flow_control);
    RUN(legacy_full_packets_then_silence_arrive_at_once);
    RUN(fd_read_alarm);
    RUN(refused_service);
    RUN(source_reads_to_eof);
    RUN(swap_read_trades_buffers);
    RUN(swap_read_small_window_copies_and_returns_credit);
    RUN(swap_read_reports_end_and_errors);
    RUN(lent_reads_deliver_every_byte);
    RUN(sink_takes_arriving_data);
    RUN(wake_only_when_the_sink_leaves_something);
    RUN(local_window_applies_to_loopback_links_only);
    RUN(local_send_ahead_applies_to_loopback_links_only);
    RUN(write_from_fills_packets_in_place);
    RUN(unread_stream_does_not_stall_others);
    RUN(streams_from_many_threads);
    RUN(read_timeout_keeps_stream_usable);
    RUN(peer_disconnect_fails_calls);
    RUN(device_opened_streams_accept_and_refuse);
    RUN(null_arguments_and_uninitialised_structs);
    return T_DONE();
}
