/* SPDX-License-Identifier: Apache-2.0 */
/* adbc's SPAKE2 against BoringSSL's (the implementation adbd pairs with),
 * through the reference program in tests/ref: for many runs and both role
 * assignments, the same password gives both sides the same 64-byte key and a
 * different password gives different keys. Fails if the reference program is
 * not built. */
#include "t.h"
#include "test_tls_util.h"

#include <openssl/rand.h>

#include "adbc/error.h"
#include "tls/spake2.h"

static const uint8_t kClient[] = "adb pair client";
static const uint8_t kServer[] = "adb pair server";

#define RUNS 200

/* One exchange: adbc plays `ours`, the reference the other role. Returns 0 and
 * fills both keys, or -1 (with a message on stderr). */
static int exchange(refproc *rp, adbc_spake2_role ours, const uint8_t *pw_ours, size_t lo,
                    const uint8_t *pw_ref, size_t lr, uint8_t k_ours[64], uint8_t k_ref[64])
{
    char line[2200], hex[2048];
    adbc_spake2 *s = NULL;
    uint8_t msg[32], their[32];
    int ok = -1;

    hexify(hex, pw_ref, lr);
    snprintf(line, sizeof line, "new %s %s", ours == ADBC_SPAKE2_ALICE ? "bob" : "alice", hex);
    if (refproc_send(rp, line) || refproc_line(rp, line, sizeof line, 10000) ||
        strncmp(line, "msg ", 4) != 0 || unhexify(their, sizeof their, line + 4) != 32) {
        fprintf(stderr, "  reference did not produce a message: %s\n", line);
        return -1;
    }
    if (ours == ADBC_SPAKE2_ALICE)
        ok = spake2_new(&s, ours, kClient, sizeof kClient, kServer, sizeof kServer);
    else
        ok = spake2_new(&s, ours, kServer, sizeof kServer, kClient, sizeof kClient);
    if (!ok)
        ok = spake2_generate_msg(s, msg, pw_ours, lo);
    if (!ok)
        ok = spake2_process_msg(s, k_ours, their, sizeof their);
    spake2_free(s);
    if (ok) {
        fprintf(stderr, "  adbc SPAKE2 failed: %s\n", adbc_last_error());
        return -1;
    }
    hexify(hex, msg, sizeof msg);
    snprintf(line, sizeof line, "peer %s", hex);
    if (refproc_send(rp, line) || refproc_line(rp, line, sizeof line, 10000) ||
        strncmp(line, "key ", 4) != 0 || unhexify(k_ref, 64, line + 4) != 64) {
        fprintf(stderr, "  reference refused our message: %s\n", line);
        return -1;
    }
    return 0;
}

static void random_password(uint8_t pw[70])
{
    /* What pairing hashes: the six-digit code, then 64 bytes exported from TLS. */
    for (int i = 0; i < 6; i++)
        pw[i] = (uint8_t)('0' + (rand() % 10));
    RAND_bytes(pw + 6, 64);
}

static void run_many(adbc_spake2_role ours, int wrong)
{
    refproc rp;
    const char *args[] = {"spake2", NULL};
    CHECK(ref_available());
    CHECK_EQ_INT(refproc_start(&rp, args), 0);
    int agreed = 0;
    for (int i = 0; i < RUNS; i++) {
        uint8_t pw[70], pw_ref[70], k1[64], k2[64];
        random_password(pw);
        memcpy(pw_ref, pw, sizeof pw);
        if (wrong)
            pw_ref[i % 6] = (uint8_t)('0' + ((pw_ref[i % 6] - '0' + 1) % 10));
        if (exchange(&rp, ours, pw, sizeof pw, pw_ref, sizeof pw_ref, k1, k2) != 0)
            break;
        agreed += memcmp(k1, k2, 64) == 0;
    }
    refproc_send(&rp, "quit");
    int status = refproc_finish(&rp, 5000);
    CHECK_EQ_INT(status, 0);
    CHECK_EQ_INT(agreed, wrong ? 0 : RUNS);
}

TEST(adbc_alice_ref_bob_same_code) { run_many(ADBC_SPAKE2_ALICE, 0); }
TEST(adbc_bob_ref_alice_same_code) { run_many(ADBC_SPAKE2_BOB, 0); }
TEST(adbc_alice_ref_bob_wrong_code) { run_many(ADBC_SPAKE2_ALICE, 1); }
TEST(adbc_bob_ref_alice_wrong_code) { run_many(ADBC_SPAKE2_BOB, 1); }

/* The empty password and a long one take the same path in both. */
TEST(edge_passwords)
{
    refproc rp;
    const char *args[] = {"spake2", NULL};
    CHECK(ref_available());
    CHECK_EQ_INT(refproc_start(&rp, args), 0);
    uint8_t big[1000], k1[64], k2[64];
    RAND_bytes(big, sizeof big);
    CHECK_EQ_INT(exchange(&rp, ADBC_SPAKE2_ALICE, big, 0, big, 0, k1, k2), 0);
    CHECK_MEM(k1, k2, 64);
    CHECK_EQ_INT(exchange(&rp, ADBC_SPAKE2_BOB, big, sizeof big, big, sizeof big, k1, k2), 0);
    CHECK_MEM(k1, k2, 64);
    refproc_send(&rp, "quit");
    CHECK_EQ_INT(refproc_finish(&rp, 5000), 0);
}

TEST(without_libsodium_spake2_says_so)
{
    CHECK(ref_available());
    adbc_spake2 *s = NULL;
    CHECK_EQ_INT(spake2_new(&s, ADBC_SPAKE2_BOB, kServer, sizeof kServer, kClient,
                                 sizeof kClient), ADBC_EUNSUPPORTED);
    CHECK(strstr(adbc_last_error(), "built without libsodium") != NULL);
}

int main(void)
{
    srand((unsigned)time(NULL));
    adbc_spake2 *probe = NULL;
    if (spake2_new(&probe, ADBC_SPAKE2_ALICE, kClient, sizeof kClient, kServer,
                        sizeof kServer) == ADBC_EUNSUPPORTED) {
        printf("built without libsodium: SPAKE2 interoperability NOT tested\n");
        RUN(without_libsodium_spake2_says_so);
        return T_DONE();
    }
    spake2_free(probe);
    RUN(adbc_alice_ref_bob_same_code);
    RUN(adbc_bob_ref_alice_same_code);
    RUN(adbc_alice_ref_bob_wrong_code);
    RUN(adbc_bob_ref_alice_wrong_code);
    RUN(edge_passwords);
    return T_DONE();
}
