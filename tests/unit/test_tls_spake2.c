/* SPDX-License-Identifier: Apache-2.0 */
/* SPAKE2 (lib/tls/spake2.c) on its own: both roles agree on a key for the
 * same password and disagree for different ones, misuse and hostile messages
 * give clean errors. Interoperability with BoringSSL is in
 * test_tls_ref_spake2.c. */
#include "t.h"

#include <openssl/rand.h>

#include "adbc/error.h"
#include "tls/spake2.h"

static const uint8_t kClient[] = "adb pair client";
static const uint8_t kServer[] = "adb pair server";

static int have_sodium;

static int run_pair(const uint8_t *pw_a, size_t la, const uint8_t *pw_b, size_t lb,
                    uint8_t ka[64], uint8_t kb[64])
{
    adbc_spake2 *a = NULL, *b = NULL;
    uint8_t ma[32], mb[32];
    int rc = spake2_new(&a, ADBC_SPAKE2_ALICE, kClient, sizeof kClient, kServer, sizeof kServer);
    if (!rc)
        rc = spake2_new(&b, ADBC_SPAKE2_BOB, kServer, sizeof kServer, kClient, sizeof kClient);
    if (!rc)
        rc = spake2_generate_msg(a, ma, pw_a, la);
    if (!rc)
        rc = spake2_generate_msg(b, mb, pw_b, lb);
    if (!rc)
        rc = spake2_process_msg(a, ka, mb, sizeof mb);
    if (!rc)
        rc = spake2_process_msg(b, kb, ma, sizeof ma);
    spake2_free(a);
    spake2_free(b);
    return rc;
}

TEST(same_password_same_key)
{
    for (int i = 0; i < 50; i++) {
        uint8_t pw[70], ka[64], kb[64];
        memcpy(pw, "123456", 6);
        CHECK(RAND_bytes(pw + 6, 64) == 1);
        CHECK_EQ_INT(run_pair(pw, sizeof pw, pw, sizeof pw, ka, kb), 0);
        CHECK_MEM(ka, kb, 64);
    }
}

TEST(wrong_password_different_key)
{
    for (int i = 0; i < 50; i++) {
        uint8_t pa[70], pb[70], ka[64], kb[64];
        CHECK(RAND_bytes(pa, sizeof pa) == 1);
        memcpy(pb, pa, sizeof pb);
        pb[i % 6] ^= 1; /* one digit of the code differs */
        CHECK_EQ_INT(run_pair(pa, sizeof pa, pb, sizeof pb, ka, kb), 0);
        CHECK(memcmp(ka, kb, 64) != 0);
    }
}

TEST(messages_are_random_and_seeded_ones_repeat)
{
    adbc_spake2 *a = NULL, *b = NULL;
    uint8_t m1[32], m2[32], seed[64] = {1, 2, 3};
    CHECK_EQ_INT(spake2_new(&a, ADBC_SPAKE2_ALICE, kClient, sizeof kClient, kServer, sizeof kServer), 0);
    CHECK_EQ_INT(spake2_new(&b, ADBC_SPAKE2_ALICE, kClient, sizeof kClient, kServer, sizeof kServer), 0);
    CHECK_EQ_INT(spake2_generate_msg_seeded(a, m1, (const uint8_t *)"pw", 2, seed), 0);
    CHECK_EQ_INT(spake2_generate_msg_seeded(b, m2, (const uint8_t *)"pw", 2, seed), 0);
    CHECK_MEM(m1, m2, 32);
    spake2_free(a);
    spake2_free(b);

    CHECK_EQ_INT(spake2_new(&a, ADBC_SPAKE2_ALICE, kClient, sizeof kClient, kServer, sizeof kServer), 0);
    CHECK_EQ_INT(spake2_new(&b, ADBC_SPAKE2_ALICE, kClient, sizeof kClient, kServer, sizeof kServer), 0);
    CHECK_EQ_INT(spake2_generate_msg(a, m1, (const uint8_t *)"pw", 2), 0);
    CHECK_EQ_INT(spake2_generate_msg(b, m2, (const uint8_t *)"pw", 2), 0);
    CHECK(memcmp(m1, m2, 32) != 0);
    spake2_free(a);
    spake2_free(b);
}

TEST(misuse_is_refused)
{
    adbc_spake2 *a = NULL;
    uint8_t m[32], k[64];
    CHECK_EQ_INT(spake2_new(&a, ADBC_SPAKE2_ALICE, kClient, 200, kServer, sizeof kServer), ADBC_EINVAL);
    CHECK(a == NULL);
    CHECK_EQ_INT(spake2_new(&a, ADBC_SPAKE2_ALICE, kClient, sizeof kClient, kServer, sizeof kServer), 0);
    CHECK_EQ_INT(spake2_process_msg(a, k, m, sizeof m), ADBC_EINVAL); /* no message yet */
    CHECK_EQ_INT(spake2_generate_msg(a, m, (const uint8_t *)"1", 1), 0);
    CHECK_EQ_INT(spake2_generate_msg(a, m, (const uint8_t *)"1", 1), ADBC_EINVAL); /* twice */
    CHECK_EQ_INT(spake2_process_msg(a, k, m, 31), ADBC_EPROTO);
    CHECK_EQ_INT(spake2_process_msg(a, k, m, 33), ADBC_EPROTO);
    CHECK(strstr(adbc_last_error(), "32") != NULL);
    spake2_free(a);
    spake2_free(NULL);
}

/* Encodings whose y has no x on the curve must be refused, never crash. */
TEST(points_off_the_curve_are_refused)
{
    int refused = 0, accepted = 0;
    for (int y = 0; y < 64; y++) {
        adbc_spake2 *a = NULL;
        uint8_t m[32], k[64], bad[32] = {0};
        bad[0] = (uint8_t)y;
        CHECK_EQ_INT(spake2_new(&a, ADBC_SPAKE2_BOB, kServer, sizeof kServer, kClient, sizeof kClient), 0);
        CHECK_EQ_INT(spake2_generate_msg(a, m, (const uint8_t *)"9", 1), 0);
        int rc = spake2_process_msg(a, k, bad, sizeof bad);
        CHECK(rc == 0 || rc == ADBC_EPROTO);
        if (rc)
            refused++;
        else
            accepted++;
        spake2_free(a);
    }
    CHECK(refused > 0);
    CHECK(accepted > 0);
}

TEST(without_sodium_it_says_so)
{
    adbc_spake2 *a = NULL;
    int rc = spake2_new(&a, ADBC_SPAKE2_ALICE, kClient, sizeof kClient, kServer, sizeof kServer);
    CHECK_EQ_INT(rc, ADBC_EUNSUPPORTED);
    CHECK(strstr(adbc_last_error(), "libsodium") != NULL);
}

int main(void)
{
    adbc_spake2 *probe = NULL;
    int rc = spake2_new(&probe, ADBC_SPAKE2_ALICE, kClient, sizeof kClient, kServer, sizeof kServer);
    spake2_free(probe);
    have_sodium = rc == 0;
    if (have_sodium) {
        RUN(same_password_same_key);
        RUN(wrong_password_different_key);
        RUN(messages_are_random_and_seeded_ones_repeat);
        RUN(misuse_is_refused);
        RUN(points_off_the_curve_are_refused);
    } else {
        RUN(without_sodium_it_says_so);
    }
    return T_DONE();
}
