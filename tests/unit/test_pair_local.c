/* SPDX-License-Identifier: Apache-2.0 */
/* Pairing with adbc on both sides (adbc_pair against adbc_pair_server, and
 * the transport-level calls over a socketpair), and every way it can fail:
 * wrong code, nothing listening, a silent or hostile peer, bad arguments,
 * failed allocations. Interoperability with BoringSSL is test_pair_ref.c. */
#include "t.h"

#include <pthread.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "adbc/error.h"
#include "adbc/pair.h"
#include "adbc/tls.h"
#include "core/internal.h"

void core_test_fail_alloc_at(long n);

static adbc_key *key;
static char *key_line;

typedef struct accept_job {
    adbc_pair_server *srv;
    adbc_transport *t; /* transport-level server when set */
    const char *code;
    char *line;
    int rc;
    int timeout_ms;
} accept_job;

static void *accept_main(void *arg)
{
    accept_job *j = arg;
    int ms = j->timeout_ms ? j->timeout_ms : 10000;
    if (j->t)
        j->rc = adbc_pair_server_transport(&j->line, j->t, j->code, "adb-LOCAL-1", ms);
    else
        j->rc = adbc_pair_server_accept(&j->line, j->srv, ms);
    return NULL;
}

TEST(pair_over_tcp)
{
    adbc_pair_server *srv;
    CHECK_EQ_INT(adbc_pair_server_new(&srv, "127.0.0.1:0", "555111", "adb-EMU5554-QwErTy"), 0);
    CHECK(adbc_pair_server_port(srv) > 0);
    char addr[64];
    snprintf(addr, sizeof addr, "127.0.0.1:%u", adbc_pair_server_port(srv));

    accept_job j = {.srv = srv};
    pthread_t th;
    pthread_create(&th, NULL, accept_main, &j);
    char *guid = NULL;
    int rc = adbc_pair(&guid, addr, "555111", key, 10000);
    pthread_join(th, NULL);
    CHECK_EQ_INT(rc, 0);
    CHECK_EQ_INT(j.rc, 0);
    CHECK_STR(guid, "adb-EMU5554-QwErTy");
    CHECK_STR(j.line, key_line);
    adbc_free(guid);
    adbc_free(j.line);

    /* Wrong code: both sides say so; the server accepts the next try. */
    j.line = NULL;
    pthread_create(&th, NULL, accept_main, &j);
    rc = adbc_pair(&guid, addr, "555112", key, 10000);
    pthread_join(th, NULL);
    CHECK_EQ_INT(rc, ADBC_EPAIRCODE);
    CHECK(strstr(adbc_last_error(), "wrong pairing code") != NULL);
    CHECK_EQ_INT(j.rc, ADBC_EPAIRCODE);
    CHECK(j.line == NULL);

    pthread_create(&th, NULL, accept_main, &j);
    rc = adbc_pair(NULL, addr, "555111", key, 10000); /* out_guid may be NULL */
    pthread_join(th, NULL);
    CHECK_EQ_INT(rc, 0);
    CHECK_EQ_INT(j.rc, 0);
    adbc_free(j.line);
    adbc_pair_server_free(srv);
}

/* With no key given, the user key is used (and created, as adb does). */
TEST(default_key_is_the_user_key)
{
    char dir[] = "/tmp/adbc-pair-home-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    setenv("ANDROID_USER_HOME", dir, 1);
    adbc_pair_server *srv;
    CHECK_EQ_INT(adbc_pair_server_new(&srv, "127.0.0.1", "000000", "adb-G"), 0);
    char addr[64];
    snprintf(addr, sizeof addr, "127.0.0.1:%u", adbc_pair_server_port(srv));
    accept_job j = {.srv = srv};
    pthread_t th;
    pthread_create(&th, NULL, accept_main, &j);
    int rc = adbc_pair(NULL, addr, "000000", NULL, 20000);
    pthread_join(th, NULL);
    adbc_pair_server_free(srv);
    CHECK_EQ_INT(rc, 0);
    CHECK_EQ_INT(j.rc, 0);
    /* What the device got is the new adbkey.pub's key. */
    char path[128], pub[2048] = {0};
    snprintf(path, sizeof path, "%s/adbkey.pub", dir);
    FILE *f = fopen(path, "r");
    CHECK(f != NULL);
    size_t n = fread(pub, 1, sizeof pub - 1, f);
    fclose(f);
    CHECK(n > 700);
    CHECK(strncmp(j.line, pub, 700) == 0);
    adbc_free(j.line);
    snprintf(path, sizeof path, "rm -rf '%s'", dir);
    CHECK(system(path) == 0);
    unsetenv("ANDROID_USER_HOME");
}

static int socket_pair(adbc_transport **a, adbc_transport **b)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) || adbc_transport_fd(a, sv[0], 1) ||
        adbc_transport_fd(b, sv[1], 1))
        return -1;
    return 0;
}

TEST(pair_over_transports)
{
    adbc_transport *c, *s;
    CHECK_EQ_INT(socket_pair(&c, &s), 0);
    accept_job j = {.t = s, .code = "987654"};
    pthread_t th;
    pthread_create(&th, NULL, accept_main, &j);
    char *guid = NULL;
    int rc = adbc_pair_transport(&guid, c, "987654", key_line, 10000);
    pthread_join(th, NULL);
    CHECK_EQ_INT(rc, 0);
    CHECK_EQ_INT(j.rc, 0);
    CHECK_STR(guid, "adb-LOCAL-1");
    CHECK_STR(j.line, key_line);
    adbc_free(guid);
    adbc_free(j.line);
    /* The caller's transports are not freed by pairing. */
    CHECK_STR(c->ops->name, "fd");
    adbc_transport_free(c);
    adbc_transport_free(s);

    /* A host that sends something that is not a key is refused. */
    CHECK_EQ_INT(socket_pair(&c, &s), 0);
    j = (accept_job){.t = s, .code = "987654"};
    pthread_create(&th, NULL, accept_main, &j);
    rc = adbc_pair_transport(NULL, c, "987654", "not-a-key user@host", 10000);
    pthread_join(th, NULL);
    CHECK_EQ_INT(rc, 0); /* the host's side completed */
    CHECK_EQ_INT(j.rc, ADBC_EPROTO);
    CHECK(j.line == NULL);
    adbc_transport_free(c);
    adbc_transport_free(s);
}

TEST(nothing_listening_or_silent_peer)
{
    /* A port nobody listens on. */
    adbc_pair_server *srv;
    CHECK_EQ_INT(adbc_pair_server_new(&srv, "127.0.0.1:0", "1", "g"), 0);
    char addr[64];
    snprintf(addr, sizeof addr, "127.0.0.1:%u", adbc_pair_server_port(srv));
    adbc_pair_server_free(srv);
    int rc = adbc_pair(NULL, addr, "123456", key, 3000);
    CHECK_EQ_INT(rc, ADBC_EREFUSED);
    CHECK(strstr(adbc_last_error(), "pairing port is open only while") != NULL);

    /* A listener that accepts and says nothing: the TLS handshake times out. */
    CHECK_EQ_INT(adbc_pair_server_new(&srv, "127.0.0.1:0", "1", "g"), 0);
    snprintf(addr, sizeof addr, "127.0.0.1:%u", adbc_pair_server_port(srv));
    int64_t t0 = core_now_ms();
    rc = adbc_pair(NULL, addr, "123456", key, 400);
    CHECK_EQ_INT(rc, ADBC_ETIMEDOUT);
    CHECK(core_now_ms() - t0 < 30000); /* bounded, however busy the machine */

    adbc_pair_server_free(srv);

    /* And a server nobody connects to. */
    CHECK_EQ_INT(adbc_pair_server_new(&srv, "127.0.0.1:0", "1", "g"), 0);
    char *line = NULL;
    t0 = core_now_ms();
    CHECK_EQ_INT(adbc_pair_server_accept(&line, srv, 300), ADBC_ETIMEDOUT);
    CHECK(core_now_ms() - t0 >= 250);
    adbc_pair_server_free(srv);
}

typedef struct tls_peer {
    adbc_transport *t;
    const uint8_t *send;
    size_t send_len;
    int rc;
} tls_peer;

static void *hostile_device(void *arg)
{
    tls_peer *p = arg;
    p->rc = adbc_tls_server_upgrade(&p->t, NULL, NULL, 0, 5000);
    if (p->rc == 0 && p->send_len)
        p->rc = p->t->ops->write(p->t, p->send, p->send_len, 5000);
    if (p->rc == 0) {
        /* Swallow what the host sends, then hang up. */
        char buf[256];
        p->t->ops->read(p->t, buf, sizeof buf, 300);
    }
    adbc_transport_free(p->t);
    p->t = NULL;
    return NULL;
}

static int against_hostile(const uint8_t *bytes, size_t len)
{
    adbc_transport *c, *s;
    if (socket_pair(&c, &s))
        return -100;
    tls_peer p = {s, bytes, len, 0};
    pthread_t th;
    pthread_create(&th, NULL, hostile_device, &p);
    int rc = adbc_pair_transport(NULL, c, "123456", key_line, 3000);
    pthread_join(th, NULL);
    adbc_transport_free(c);
    adbc_transport_free(p.t);
    return rc;
}

TEST(hostile_devices)
{
    const uint8_t v2[] = {2, 0, 0, 0, 0, 32};
    CHECK_EQ_INT(against_hostile(v2, sizeof v2), ADBC_EPROTO);
    CHECK(strstr(adbc_last_error(), "version 2") != NULL);
    const uint8_t big[] = {1, 0, 0x10, 0, 0, 0};
    CHECK_EQ_INT(against_hostile(big, sizeof big), ADBC_EPROTO);
    const uint8_t info_first[] = {1, 1, 0, 0, 0x20, 0x10};
    CHECK_EQ_INT(against_hostile(info_first, sizeof info_first), ADBC_EPROTO);
    /* Hangs up before its SPAKE2 message: closed, not a wrong code. */
    CHECK_EQ_INT(against_hostile(NULL, 0), ADBC_ECLOSED);
    /* A SPAKE2 message that is not a point, then silence. */
    uint8_t bad_point[38] = {1, 0, 0, 0, 0, 32};
    memset(bad_point + 6, 0xff, 32);
    int rc = against_hostile(bad_point, sizeof bad_point);
    CHECK(rc == ADBC_EPROTO || rc == ADBC_EPAIRCODE || rc == ADBC_ECLOSED);
}

TEST(bad_arguments)
{
    CHECK_EQ_INT(adbc_pair(NULL, "127.0.0.1:1", "", key, 100), ADBC_EINVAL);
    CHECK_EQ_INT(adbc_pair(NULL, "127.0.0.1:1", NULL, key, 100), ADBC_EINVAL);
    CHECK_EQ_INT(adbc_pair(NULL, "127.0.0.1:1", "12\n456", key, 100), ADBC_EINVAL);
    CHECK_EQ_INT(adbc_pair(NULL, NULL, "123456", key, 100), ADBC_EINVAL);
    adbc_pair_server *srv = (adbc_pair_server *)1;
    CHECK_EQ_INT(adbc_pair_server_new(&srv, "127.0.0.1:0", "", "g"), ADBC_EINVAL);
    CHECK_EQ_INT(adbc_pair_server_new(&srv, "127.0.0.1:0", "1", ""), ADBC_EINVAL);
    CHECK(srv == NULL);
    CHECK_EQ_INT(adbc_pair_transport(NULL, NULL, "1", "k", 100), ADBC_EINVAL);
    adbc_pair_server_free(NULL);
}

/* Fail each allocation in turn during a pairing over a socketpair: every run
 * ends cleanly on both sides (an error or success), nothing leaks. */
TEST(allocation_failures)
{
    int ok_runs = 0, failed_runs = 0;
    for (long n = 1; n <= 60 && ok_runs < 2; n++) {
        adbc_transport *c, *s;
        CHECK_EQ_INT(socket_pair(&c, &s), 0);
        accept_job j = {.t = s, .code = "424242", .timeout_ms = 1500};
        pthread_t th;
        core_test_fail_alloc_at(n);
        pthread_create(&th, NULL, accept_main, &j);
        char *guid = NULL;
        int rc = adbc_pair_transport(&guid, c, "424242", key_line, 1500);
        pthread_join(th, NULL);
        core_test_fail_alloc_at(0);
        if (rc == 0 && j.rc == 0) {
            CHECK_STR(guid, "adb-LOCAL-1");
            CHECK_STR(j.line, key_line);
            ok_runs++;
        } else {
            failed_runs++;
            CHECK(rc != 0 || j.rc != 0);
        }
        adbc_free(guid);
        adbc_free(j.line);
        adbc_transport_free(c);
        adbc_transport_free(s);
    }
    CHECK(failed_runs > 0);
    CHECK(ok_runs > 0);
}

TEST(without_libsodium_every_call_says_so)
{
    CHECK_EQ_INT(adbc_pair(NULL, "127.0.0.1:1", "123456", key, 100), ADBC_EUNSUPPORTED);
    CHECK(strstr(adbc_last_error(), "built without libsodium") != NULL);
    adbc_transport *c, *s;
    CHECK_EQ_INT(socket_pair(&c, &s), 0);
    CHECK_EQ_INT(adbc_pair_transport(NULL, c, "1", key_line, 100), ADBC_EUNSUPPORTED);
    char *line = NULL;
    CHECK_EQ_INT(adbc_pair_server_transport(&line, s, "1", "g", 100), ADBC_EUNSUPPORTED);
    adbc_transport_free(c);
    adbc_transport_free(s);
    adbc_pair_server *srv = NULL;
    CHECK_EQ_INT(adbc_pair_server_new(&srv, "127.0.0.1:0", "1", "g"), ADBC_EUNSUPPORTED);
}

int main(void)
{
    if (adbc_key_generate(&key, 2048) || adbc_key_public_line(&key_line, key, NULL)) {
        printf("cannot set up a key: %s\n", adbc_last_error());
        return 1;
    }
    int have = adbc_pair(NULL, "127.0.0.1:1", "1", key, 1000) != ADBC_EUNSUPPORTED;
    if (!have) {
        printf("built without libsodium: only the refusal is tested\n");
        RUN(without_libsodium_every_call_says_so);
    } else {
        RUN(pair_over_tcp);
        RUN(default_key_is_the_user_key);
        RUN(pair_over_transports);
        RUN(nothing_listening_or_silent_peer);
        RUN(hostile_devices);
        RUN(bad_arguments);
        RUN(allocation_failures);
    }
    adbc_key_free(key);
    adbc_free(key_line);
    return T_DONE();
}
