/* SPDX-License-Identifier: Apache-2.0 */
/* adbc's STLS client against a BoringSSL TLS 1.3 server set up as adbd's
 * (tests/ref, mode tls-server): the server checks every field of adbc's
 * client certificate, the CA hints pick the right key, a refused key reads
 * as ADBC_ENOTPAIRED, and data flows once accepted. Fails if the reference
 * program is not built. */
#include "t.h"
#include "test_tls_util.h"

#include "adbc/error.h"
#include "adbc/tls.h"
#include "adbc/transport.h"

static adbc_keyring *ring; /* key A, key B */
static char fp_a[ADBC_TLS_FINGERPRINT_SIZE], fp_b[ADBC_TLS_FINGERPRINT_SIZE];

/* Start the reference server with args; connect a TCP transport to it. */
static int start(refproc *rp, const char *const *args, adbc_transport **t)
{
    char line[256];
    unsigned port = 0;
    if (refproc_start(rp, args) != 0 || refproc_line(rp, line, sizeof line, 10000) != 0 ||
        sscanf(line, "port %u", &port) != 1) {
        fprintf(stderr, "  reference server did not start: %s\n", line);
        return -1;
    }
    char addr[64];
    snprintf(addr, sizeof addr, "127.0.0.1:%u", port);
    if (adbc_transport_tcp(t, addr, 5000) != 0) {
        fprintf(stderr, "  connect: %s\n", adbc_last_error());
        return -1;
    }
    return 0;
}

static int read_line(adbc_transport *t, char *buf, size_t size)
{
    size_t have = 0;
    while (have < size - 1) {
        int n = t->ops->read(t, buf + have, 1, 5000);
        if (n < 0)
            return n;
        if (buf[have++] == '\n')
            break;
    }
    buf[have] = '\0';
    return 0;
}

TEST(boringssl_server_accepts_the_hinted_key)
{
    CHECK(ref_available());
    const char *args[] = {"tls-server", "--hint", fp_b, "--hint",
                          "1111111111111111111111111111111111111111111111111111111111111111",
                          "--accept", fp_b, NULL};
    refproc rp;
    adbc_transport *t = NULL;
    CHECK_EQ_INT(start(&rp, args, &t), 0);
    int rc = adbc_tls_client_upgrade(&t, ring, 10000);
    char line[256], want[128];
    CHECK_EQ_INT(rc, 0);
    CHECK_EQ_INT(refproc_line(&rp, line, sizeof line, 10000), 0);
    snprintf(want, sizeof want, "cert ok fp=%s", fp_b); /* every field checked there */
    CHECK_STR(line, want);
    CHECK_EQ_INT(refproc_line(&rp, line, sizeof line, 10000), 0);
    CHECK_STR(line, "handshake ok");
    CHECK_EQ_INT(read_line(t, line, sizeof line), 0);
    CHECK_STR(line, "hello\n");
    CHECK_EQ_INT(t->ops->write(t, "ping\n", 5, 5000), 0);
    CHECK_EQ_INT(read_line(t, line, sizeof line), 0);
    CHECK_STR(line, "echo:ping\n");
    CHECK_EQ_INT(refproc_line(&rp, line, sizeof line, 10000), 0);
    CHECK_STR(line, "got ping");
    adbc_transport_free(t);
    CHECK_EQ_INT(refproc_finish(&rp, 10000), 0);
}

TEST(boringssl_server_without_hints_gets_the_first_key)
{
    CHECK(ref_available());
    const char *args[] = {"tls-server", "--accept-any", NULL};
    refproc rp;
    adbc_transport *t = NULL;
    CHECK_EQ_INT(start(&rp, args, &t), 0);
    CHECK_EQ_INT(adbc_tls_client_upgrade(&t, ring, 10000), 0);
    char line[256], want[128];
    CHECK_EQ_INT(refproc_line(&rp, line, sizeof line, 10000), 0);
    snprintf(want, sizeof want, "cert ok fp=%s", fp_a);
    CHECK_STR(line, want);
    CHECK_EQ_INT(read_line(t, line, sizeof line), 0);
    CHECK_STR(line, "hello\n");
    CHECK_EQ_INT(t->ops->write(t, "x\n", 2, 5000), 0);
    CHECK_EQ_INT(read_line(t, line, sizeof line), 0);
    CHECK_STR(line, "echo:x\n");
    adbc_transport_free(t);
    CHECK_EQ_INT(refproc_finish(&rp, 10000), 0);
}

/* The device knows key A but not as paired... it refuses: the handshake
 * completes on our side (TLS 1.3) and the first read must say "not paired". */
TEST(boringssl_refusal_reads_as_not_paired)
{
    CHECK(ref_available());
    const char *args[] = {"tls-server", "--hint", fp_a, NULL};
    refproc rp;
    adbc_transport *t = NULL;
    CHECK_EQ_INT(start(&rp, args, &t), 0);
    CHECK_EQ_INT(adbc_tls_client_upgrade(&t, ring, 10000), 0);
    char line[256], buf[16], want[128];
    CHECK_EQ_INT(refproc_line(&rp, line, sizeof line, 10000), 0);
    snprintf(want, sizeof want, "cert ok fp=%s", fp_a);
    CHECK_STR(line, want);
    CHECK_EQ_INT(refproc_line(&rp, line, sizeof line, 10000), 0);
    CHECK(strncmp(line, "handshake failed", 16) == 0);
    int rc = t->ops->read(t, buf, sizeof buf, 5000);
    CHECK_EQ_INT(rc, ADBC_ENOTPAIRED);
    CHECK(strstr(adbc_last_error(), "not paired") != NULL);
    printf("  (reported: %s)\n", adbc_last_error());
    adbc_transport_free(t);
    CHECK_EQ_INT(refproc_finish(&rp, 10000), 0);
}

int main(void)
{
    adbc_key *a, *b;
    if (adbc_key_generate(&a, 2048) || adbc_key_generate(&b, 2048) || adbc_keyring_new(&ring) ||
        adbc_keyring_add(ring, a) || adbc_keyring_add(ring, b) ||
        adbc_tls_key_fingerprint(fp_a, adbc_keyring_get(ring, 0)) ||
        adbc_tls_key_fingerprint(fp_b, adbc_keyring_get(ring, 1))) {
        printf("cannot set up keys: %s\n", adbc_last_error());
        return 1;
    }
    RUN(boringssl_server_accepts_the_hinted_key);
    RUN(boringssl_server_without_hints_gets_the_first_key);
    RUN(boringssl_refusal_reads_as_not_paired);
    adbc_keyring_free(ring);
    return T_DONE();
}
