/* SPDX-License-Identifier: Apache-2.0 */
/* adbc's pairing against adb's protocol written on BoringSSL (tests/ref,
 * modes pair-server and pair-client): adbc as the host pairs with the
 * reference device and the other way round, with the right code (each side
 * gets the other's GUID / public key line) and a wrong one (ADBC_EPAIRCODE,
 * and the reference fails to decrypt too). This covers the TLS exporter
 * label, SPAKE2, HKDF, the AES-GCM nonces and the packet framing together.
 * Fails if the reference program is not built. */
#include "t.h"
#include "test_tls_util.h"

#include <pthread.h>

#include "adbc/error.h"
#include "adbc/pair.h"

static adbc_key *key;
static char *key_line;

static int start_server(refproc *rp, const char *code, const char *guid, char addr[64])
{
    const char *args[] = {"pair-server", code, guid, NULL};
    char line[256];
    unsigned port;
    if (refproc_start(rp, args) || refproc_line(rp, line, sizeof line, 10000) ||
        sscanf(line, "port %u", &port) != 1)
        return -1;
    snprintf(addr, 64, "127.0.0.1:%u", port);
    return 0;
}

TEST(adbc_host_pairs_with_reference_device)
{
    CHECK(ref_available());
    for (int run = 0; run < 5; run++) {
        refproc rp;
        char addr[64], line[8300], want[8300];
        CHECK_EQ_INT(start_server(&rp, "394821", "adb-R5CT1234567-aBcDeF", addr), 0);
        char *guid = NULL;
        int rc = adbc_pair(&guid, addr, "394821", key, 10000);
        if (rc)
            fprintf(stderr, "  adbc_pair: %s\n", adbc_last_error());
        CHECK_EQ_INT(rc, 0);
        CHECK_STR(guid, "adb-R5CT1234567-aBcDeF");
        adbc_free(guid);
        CHECK_EQ_INT(refproc_line(&rp, line, sizeof line, 10000), 0);
        snprintf(want, sizeof want, "pubkey %s", key_line);
        CHECK_STR(line, want);
        CHECK_EQ_INT(refproc_finish(&rp, 10000), 0);
    }
}

TEST(adbc_host_wrong_code)
{
    CHECK(ref_available());
    refproc rp;
    char addr[64], line[256];
    CHECK_EQ_INT(start_server(&rp, "394821", "adb-X", addr), 0);
    char *guid = (char *)"untouched";
    CHECK_EQ_INT(adbc_pair(&guid, addr, "394812", key, 10000), ADBC_EPAIRCODE);
    CHECK(guid == NULL);
    CHECK(strstr(adbc_last_error(), "wrong pairing code") != NULL);
    CHECK_EQ_INT(refproc_line(&rp, line, sizeof line, 10000), 0);
    CHECK(strncmp(line, "error: wrong code", 17) == 0);
    CHECK_EQ_INT(refproc_finish(&rp, 10000), 3);
}

typedef struct accept_job {
    adbc_pair_server *srv;
    char *line;
    int rc;
} accept_job;

static void *accept_main(void *arg)
{
    accept_job *j = arg;
    j->rc = adbc_pair_server_accept(&j->line, j->srv, 10000);
    return NULL;
}

TEST(reference_host_pairs_with_adbc_device)
{
    CHECK(ref_available());
    adbc_pair_server *srv;
    CHECK_EQ_INT(adbc_pair_server_new(&srv, "127.0.0.1:0", "120934", "adb-TESTDEVICE-xyz"), 0);
    char port[16];
    snprintf(port, sizeof port, "%u", adbc_pair_server_port(srv));

    /* Wrong code first: both sides fail, the server stays usable. */
    accept_job j = {srv, NULL, 0};
    pthread_t th;
    pthread_create(&th, NULL, accept_main, &j);
    refproc rp;
    const char *bad[] = {"pair-client", port, "120935", key_line, NULL};
    CHECK_EQ_INT(refproc_start(&rp, bad), 0);
    char line[256];
    CHECK_EQ_INT(refproc_line(&rp, line, sizeof line, 10000), 0);
    CHECK(strncmp(line, "error: wrong code", 17) == 0);
    CHECK_EQ_INT(refproc_finish(&rp, 10000), 3);
    pthread_join(th, NULL);
    CHECK_EQ_INT(j.rc, ADBC_EPAIRCODE);
    CHECK(j.line == NULL);

    const char *good[] = {"pair-client", port, "120934", key_line, NULL};
    j.rc = -1;
    pthread_create(&th, NULL, accept_main, &j);
    CHECK_EQ_INT(refproc_start(&rp, good), 0);
    CHECK_EQ_INT(refproc_line(&rp, line, sizeof line, 10000), 0);
    CHECK_STR(line, "guid adb-TESTDEVICE-xyz");
    CHECK_EQ_INT(refproc_finish(&rp, 10000), 0);
    pthread_join(th, NULL);
    CHECK_EQ_INT(j.rc, 0);
    CHECK_STR(j.line, key_line);
    adbc_free(j.line);
    adbc_pair_server_free(srv);
}

TEST(without_libsodium_pairing_says_so)
{
    CHECK(ref_available());
    CHECK_EQ_INT(adbc_pair(NULL, "127.0.0.1:1", "123456", key, 1000), ADBC_EUNSUPPORTED);
    CHECK(strstr(adbc_last_error(), "built without libsodium") != NULL);
    adbc_pair_server *srv = NULL;
    CHECK_EQ_INT(adbc_pair_server_new(&srv, "127.0.0.1:0", "1", "g"), ADBC_EUNSUPPORTED);
    CHECK(srv == NULL);
}

int main(void)
{
    if (adbc_key_generate(&key, 2048) || adbc_key_public_line(&key_line, key, "tester@adbc")) {
        printf("cannot set up a key: %s\n", adbc_last_error());
        return 1;
    }
    /* The key line the host sends is the default user@host one. */
    adbc_free(key_line);
    if (adbc_key_public_line(&key_line, key, NULL))
        return 1;
    char *guid = NULL;
    if (adbc_pair(&guid, "127.0.0.1:1", "1", key, 1000) == ADBC_EUNSUPPORTED) {
        /* A build without libsodium has no pairing to compare: check that it
         * says so, and say that nothing was compared. */
        printf("built without libsodium: pairing interoperability NOT tested\n");
        RUN(without_libsodium_pairing_says_so);
    } else {
        RUN(adbc_host_pairs_with_reference_device);
        RUN(adbc_host_wrong_code);
        RUN(reference_host_pairs_with_adbc_device);
    }
    adbc_key_free(key);
    adbc_free(key_line);
    return T_DONE();
}
