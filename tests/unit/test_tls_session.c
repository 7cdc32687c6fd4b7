/* SPDX-License-Identifier: Apache-2.0 */
/* STLS end to end with the session engine in both roles, driven the way the
 * connection layer is meant to drive it: CNXN, the device answers STLS, the
 * host answers STLS, both upgrade their transport (the device with the
 * ClientHello bytes it read together with the host's STLS packet), both call
 * adbc_session_tls_done, and the device's CNXN arrives inside TLS. Also the
 * unpaired host: its first read after the upgrade is ADBC_ENOTPAIRED. */
#include "t.h"

#include <pthread.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>

#include "adbc/error.h"
#include "adbc/session.h"
#include "adbc/tls.h"
#include "adbc/transport.h"

static adbc_keyring *ring;
static char fp_key[ADBC_TLS_FINGERPRINT_SIZE];

static int send_all(adbc_session *s, adbc_transport *t)
{
    const uint8_t *d;
    size_t n;
    while ((n = adbc_session_next_send(&d, s)) > 0) {
        int rc = t->ops->write(t, d, n, 5000);
        if (rc)
            return rc;
        adbc_session_sent(s, n);
    }
    return 0;
}

/* Read and feed until the session reaches `want` (or fails). On reaching
 * ADBC_SESSION_TLS, the bytes of the last read past the STLS packet are
 * copied to rest. */
static int pump_until(adbc_session *s, adbc_transport *t, adbc_session_state want,
                      uint8_t *rest, size_t *rest_len)
{
    static _Thread_local uint8_t buf[65536];
    while (adbc_session_state_get(s) != want) {
        int rc = send_all(s, t);
        if (rc)
            return rc;
        int n = t->ops->read(t, buf, sizeof buf, 5000);
        if (n < 0)
            return n;
        rc = adbc_session_recv(s, buf, (size_t)n);
        if (rc < 0)
            return rc;
        if (adbc_session_state_get(s) == ADBC_SESSION_TLS && rest) {
            *rest_len = (size_t)(n - rc);
            memcpy(rest, buf + rc, *rest_len);
        }
    }
    return send_all(s, t);
}

typedef struct device {
    adbc_transport *t;
    int fd; /* the socket under t, to see what is waiting */
    const char *allow;
    size_t preread;
    int rc_tls, rc;
    char msg[512];
} device;

static int authorize(void *user, const char *fp)
{
    device *d = user;
    return d->allow && strcmp(d->allow, fp) == 0;
}

static void *device_main(void *arg)
{
    device *d = arg;
    adbc_session_config cfg;
    adbc_session_config_init(&cfg, ADBC_ROLE_DEVICE);
    cfg.offer_tls = 1;
    cfg.banner = "device::ro.product.name=tlsdev;ro.product.model=T;ro.product.device=t;"
                 "features=shell_v2";
    adbc_session_callbacks cb = {.size = sizeof(adbc_session_callbacks)};
    adbc_session *s;
    d->rc = adbc_session_new(&s, &cfg, &cb, d);
    if (d->rc)
        return NULL;
    /* Read the host's CNXN (it may come in pieces), answer STLS. */
    uint8_t buf[65536];
    while (adbc_session_send_queued(s) == 0) {
        int n = d->t->ops->read(d->t, buf, sizeof buf, 5000);
        if (n < 0 || adbc_session_recv(s, buf, (size_t)n) < 0) {
            d->rc = -100;
            goto out;
        }
    }
    if (send_all(s, d->t)) {
        d->rc = -100;
        goto out;
    }
    /* Let the host's STLS and its ClientHello pile up, so one read gets both:
     * wait (120 s at most: TLS set-up is slow under valgrind) until more than the 24-byte
     * STLS packet is waiting on the socket. */
    for (int i = 0; i < 12000; i++) {
        int avail = 0;
        if (ioctl(d->fd, FIONREAD, &avail) == 0 && avail > 24)
            break;
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    static uint8_t rest[65536];
    size_t rest_len = 0;
    d->rc = pump_until(s, d->t, ADBC_SESSION_TLS, rest, &rest_len);
    if (d->rc)
        goto out;
    d->preread = rest_len;
    adbc_tls_server_opts opts = {.size = sizeof(adbc_tls_server_opts), .hints = (const char *const[]){fp_key}, .nhints = 1,
                                 .authorize = authorize, .user = d};
    d->rc_tls = adbc_tls_server_upgrade(&d->t, &opts, rest, rest_len, 5000);
    snprintf(d->msg, sizeof d->msg, "%s", adbc_last_error());
    if (d->rc_tls)
        goto out;
    d->rc = adbc_session_tls_done(s); /* queues the device's CNXN */
    if (!d->rc)
        d->rc = send_all(s, d->t);
out:
    adbc_session_free(s);
    return NULL;
}

static int host_connect(adbc_transport *t, adbc_session **out)
{
    adbc_session_config cfg;
    adbc_session_config_init(&cfg, ADBC_ROLE_HOST);
    adbc_session_callbacks cb = {.size = sizeof(adbc_session_callbacks)};
    int rc = adbc_session_new(out, &cfg, &cb, NULL);
    if (!rc)
        rc = adbc_session_start(*out);
    if (!rc)
        rc = pump_until(*out, t, ADBC_SESSION_TLS, NULL, NULL); /* also sends our STLS */
    return rc;
}

TEST(stls_upgrade_end_to_end)
{
    int sv[2];
    adbc_transport *ht, *dt;
    CHECK_EQ_INT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    CHECK_EQ_INT(adbc_transport_fd(&ht, sv[0], 1), 0);
    CHECK_EQ_INT(adbc_transport_fd(&dt, sv[1], 1), 0);
    device d = {.t = dt, .fd = sv[1], .allow = fp_key};
    pthread_t th;
    pthread_create(&th, NULL, device_main, &d);

    adbc_session *hs = NULL;
    int rc = host_connect(ht, &hs);
    CHECK_EQ_INT(rc, 0);
    CHECK_EQ_INT(adbc_session_state_get(hs), ADBC_SESSION_TLS);
    rc = adbc_tls_client_upgrade(&ht, ring, 5000);
    CHECK_EQ_INT(rc, 0);
    CHECK_EQ_INT(adbc_session_tls_done(hs), 0);
    rc = pump_until(hs, ht, ADBC_SESSION_ONLINE, NULL, NULL);
    pthread_join(th, NULL);
    CHECK_EQ_INT(d.rc_tls, 0);
    CHECK_EQ_INT(d.rc, 0);
    CHECK_EQ_INT(rc, 0);
    CHECK(d.preread > 0); /* the ClientHello came with the STLS packet */
    CHECK_STR(adbc_banner_prop(adbc_session_peer(hs), "ro.product.name"), "tlsdev");
    adbc_session_free(hs);
    adbc_transport_free(ht);
    adbc_transport_free(d.t);
}

TEST(unpaired_host_reads_enotpaired)
{
    int sv[2];
    adbc_transport *ht, *dt;
    CHECK_EQ_INT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    CHECK_EQ_INT(adbc_transport_fd(&ht, sv[0], 1), 0);
    CHECK_EQ_INT(adbc_transport_fd(&dt, sv[1], 1), 0);
    device d = {.t = dt, .fd = sv[1], .allow = NULL};
    pthread_t th;
    pthread_create(&th, NULL, device_main, &d);
    adbc_session *hs = NULL;
    CHECK_EQ_INT(host_connect(ht, &hs), 0);
    CHECK_EQ_INT(adbc_tls_client_upgrade(&ht, ring, 5000), 0);
    CHECK_EQ_INT(adbc_session_tls_done(hs), 0);
    pthread_join(th, NULL);
    CHECK_EQ_INT(d.rc_tls, ADBC_EUNAUTHORIZED);
    adbc_transport_free(d.t); /* the device hangs up */
    int rc = pump_until(hs, ht, ADBC_SESSION_ONLINE, NULL, NULL);
    CHECK_EQ_INT(rc, ADBC_ENOTPAIRED);
    CHECK(strstr(adbc_last_error(), "not paired") != NULL);
    adbc_session_free(hs);
    adbc_transport_free(ht);
}

int main(void)
{
    adbc_key *k;
    if (adbc_key_generate(&k, 2048) || adbc_keyring_new(&ring) || adbc_keyring_add(ring, k) ||
        adbc_tls_key_fingerprint(fp_key, adbc_keyring_get(ring, 0))) {
        printf("cannot set up a key: %s\n", adbc_last_error());
        return 1;
    }
    RUN(stls_upgrade_end_to_end);
    RUN(unpaired_host_reads_enotpaired);
    adbc_keyring_free(ring);
    return T_DONE();
}
