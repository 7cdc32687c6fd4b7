/* SPDX-License-Identifier: Apache-2.0 */
/* The pairing protocol without I/O (lib/tls/pair_*.c): packet headers, the
 * AES-GCM cipher and its per-direction counters, PeerInfo records, and the
 * state machine in both roles, including hostile input and failed
 * allocations. */
#include "t.h"

#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/rand.h>

#include "adbc/error.h"
#include "tls/pair_proto.h"

void core_test_fail_alloc_at(long n);

TEST(header_roundtrip_and_limits)
{
    uint8_t h[6], type;
    uint32_t len;
    pair_header_encode(h, ADBC_PAIR_TYPE_PEER_INFO, 8208);
    const uint8_t want[6] = {1, 1, 0, 0, 0x20, 0x10};
    CHECK_MEM(h, want, 6);
    CHECK_EQ_INT(pair_header_decode(h, &type, &len), 0);
    CHECK_EQ_INT(type, 1);
    CHECK_EQ_INT(len, 8208);

    pair_header_encode(h, ADBC_PAIR_TYPE_SPAKE2_MSG, 16384);
    CHECK_EQ_INT(pair_header_decode(h, &type, &len), 0);
    CHECK_EQ_INT(len, 16384);

    pair_header_encode(h, ADBC_PAIR_TYPE_SPAKE2_MSG, 16385);
    CHECK_EQ_INT(pair_header_decode(h, &type, &len), ADBC_EPROTO);
    pair_header_encode(h, ADBC_PAIR_TYPE_SPAKE2_MSG, 0);
    CHECK_EQ_INT(pair_header_decode(h, &type, &len), ADBC_EPROTO);
    pair_header_encode(h, ADBC_PAIR_TYPE_SPAKE2_MSG, 0xffffffffu);
    CHECK_EQ_INT(pair_header_decode(h, &type, &len), ADBC_EPROTO);
    pair_header_encode(h, 2, 32);
    CHECK_EQ_INT(pair_header_decode(h, &type, &len), ADBC_EPROTO);
    CHECK(strstr(adbc_last_error(), "type 2") != NULL);
    pair_header_encode(h, 0, 32);
    h[0] = 2;
    CHECK_EQ_INT(pair_header_decode(h, &type, &len), ADBC_EPROTO);
    CHECK(strstr(adbc_last_error(), "version 2") != NULL);
}

/* The cipher against an independent computation of the same construction:
 * HKDF through the EVP_KDF interface, AES-GCM with an explicit nonce. */
TEST(cipher_matches_construction)
{
    uint8_t km[64], key[16], plain[100], sealed[116], expect[116];
    RAND_bytes(km, sizeof km);
    RAND_bytes(plain, sizeof plain);
    adbc_pair_cipher c;
    CHECK_EQ_INT(pair_cipher_init(&c, km, sizeof km), 0);

    EVP_KDF *kdf = EVP_KDF_fetch(NULL, "HKDF", NULL);
    EVP_KDF_CTX *kctx = EVP_KDF_CTX_new(kdf);
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_utf8_string("digest", "SHA256", 0),
        OSSL_PARAM_construct_octet_string("key", km, sizeof km),
        OSSL_PARAM_construct_octet_string("info", "adb pairing_auth aes-128-gcm key", 32),
        OSSL_PARAM_construct_end(),
    };
    CHECK(EVP_KDF_derive(kctx, key, sizeof key, params) == 1);
    EVP_KDF_CTX_free(kctx);
    EVP_KDF_free(kdf);

    for (uint64_t seq = 0; seq < 3; seq++) {
        uint8_t nonce[12] = {0};
        nonce[0] = (uint8_t)seq; /* little-endian counter, then four zero bytes */
        EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
        int outl = 0, fin = 0;
        CHECK(EVP_EncryptInit_ex(ctx, EVP_aes_128_gcm(), NULL, key, nonce) == 1);
        CHECK(EVP_EncryptUpdate(ctx, expect, &outl, plain, sizeof plain) == 1);
        CHECK(EVP_EncryptFinal_ex(ctx, expect + outl, &fin) == 1);
        CHECK(EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, 16, expect + 100) == 1);
        EVP_CIPHER_CTX_free(ctx);
        CHECK_EQ_INT(pair_cipher_encrypt(&c, plain, sizeof plain, sealed), 0);
        CHECK_MEM(sealed, expect, sizeof expect);
    }
}

TEST(cipher_counters_and_tampering)
{
    uint8_t km[64], p[40], s1[56], s2[56], out[40];
    RAND_bytes(km, sizeof km);
    RAND_bytes(p, sizeof p);
    adbc_pair_cipher tx, rx;
    CHECK_EQ_INT(pair_cipher_init(&tx, km, sizeof km), 0);
    CHECK_EQ_INT(pair_cipher_init(&rx, km, sizeof km), 0);
    CHECK_EQ_INT(pair_cipher_encrypt(&tx, p, sizeof p, s1), 0);
    CHECK_EQ_INT(pair_cipher_encrypt(&tx, p, sizeof p, s2), 0);
    CHECK(memcmp(s1, s2, sizeof s1) != 0); /* different nonces */
    /* Out of order: the second message does not open with counter 0... */
    CHECK_EQ_INT(pair_cipher_decrypt(&rx, s2, sizeof s2, out), ADBC_EPAIRCODE);
    /* ...and the failure did not advance the counter. */
    CHECK_EQ_INT(pair_cipher_decrypt(&rx, s1, sizeof s1, out), 0);
    CHECK_MEM(out, p, sizeof p);
    CHECK_EQ_INT(pair_cipher_decrypt(&rx, s2, sizeof s2, out), 0);
    CHECK_MEM(out, p, sizeof p);

    adbc_pair_cipher rx2;
    CHECK_EQ_INT(pair_cipher_init(&rx2, km, sizeof km), 0);
    s1[3] ^= 0x40;
    CHECK_EQ_INT(pair_cipher_decrypt(&rx2, s1, sizeof s1, out), ADBC_EPAIRCODE);
    CHECK(strstr(adbc_last_error(), "wrong pairing code") != NULL);
    CHECK_EQ_INT(pair_cipher_decrypt(&rx2, s1, 15, out), ADBC_EPROTO);
    /* A different key (another code) never opens it. */
    km[0] ^= 1;
    adbc_pair_cipher other;
    CHECK_EQ_INT(pair_cipher_init(&other, km, sizeof km), 0);
    s1[3] ^= 0x40;
    CHECK_EQ_INT(pair_cipher_decrypt(&other, s1, sizeof s1, out), ADBC_EPAIRCODE);
    pair_cipher_wipe(&other);
}

TEST(peer_info_records)
{
    uint8_t rec[ADBC_PEER_INFO_SIZE], type = 9;
    char *s = NULL;
    CHECK_EQ_INT(peer_info_encode(rec, ADBC_PEER_DEVICE_GUID, "adb-ABC123-xYz"), 0);
    CHECK_EQ_INT(rec[0], 1);
    CHECK_EQ_INT(rec[15], 0);
    CHECK_EQ_INT(peer_info_decode(rec, &type, &s), 0);
    CHECK_EQ_INT(type, ADBC_PEER_DEVICE_GUID);
    CHECK_STR(s, "adb-ABC123-xYz");
    free(s);

    /* A key line with its newline: the newline is dropped. */
    CHECK_EQ_INT(peer_info_encode(rec, ADBC_PEER_RSA_PUB_KEY, "QUFB user@host\n"), 0);
    CHECK_EQ_INT(peer_info_decode(rec, &type, &s), 0);
    CHECK_STR(s, "QUFB user@host");
    free(s);

    static char big[ADBC_PEER_INFO_SIZE];
    memset(big, 'a', sizeof big - 1);
    big[ADBC_PEER_INFO_MAX_STRING] = '\0';
    CHECK_EQ_INT(peer_info_encode(rec, 0, big), 0);
    big[ADBC_PEER_INFO_MAX_STRING] = 'a';
    CHECK_EQ_INT(peer_info_encode(rec, 0, big), ADBC_EINVAL);

    /* No NUL at all: all 8191 bytes, never a read past the record. */
    memset(rec, 'g', sizeof rec);
    rec[0] = 1;
    CHECK_EQ_INT(peer_info_decode(rec, &type, &s), 0);
    CHECK_EQ_INT(strlen(s), ADBC_PEER_INFO_SIZE - 1);
    free(s);

    memset(rec, 0, sizeof rec);
    CHECK_EQ_INT(peer_info_decode(rec, &type, &s), ADBC_EPROTO);
    memcpy(rec + 1, "ab\x01" "cd", 5);
    CHECK_EQ_INT(peer_info_decode(rec, &type, &s), ADBC_EPROTO);
    CHECK(strstr(adbc_last_error(), "control character") != NULL);
}

/* Move bytes between the two machines in chunks of the given size. */
static int pump(adbc_pair_machine *a, adbc_pair_machine *b, size_t chunk, int *ra, int *rb)
{
    int moved = 1, rounds = 0;
    *ra = *rb = 0;
    while (moved && rounds++ < 100000) {
        moved = 0;
        const uint8_t *d;
        size_t n = pair_machine_next_send(a, &d);
        if (n && !*rb) {
            if (n > chunk)
                n = chunk;
            *rb = pair_machine_recv(b, d, n);
            pair_machine_sent(a, n);
            moved = 1;
        }
        n = pair_machine_next_send(b, &d);
        if (n && !*ra) {
            if (n > chunk)
                n = chunk;
            *ra = pair_machine_recv(a, d, n);
            pair_machine_sent(b, n);
            moved = 1;
        }
    }
    return 0;
}

static const char kKeyLine[] = "QAAAAAAAAAAAAAAAAAA= alice@laptop";
static const char kGuid[] = "adb-R58M12345-AbCdEf";

static int make_pair(adbc_pair_machine **c, adbc_pair_machine **s, const char *code_c,
                     const char *code_s, const uint8_t ekm[64])
{
    uint8_t pc[80], ps[80];
    size_t lc = strlen(code_c), ls = strlen(code_s);
    memcpy(pc, code_c, lc), memcpy(pc + lc, ekm, 64);
    memcpy(ps, code_s, ls), memcpy(ps + ls, ekm, 64);
    int rc = pair_machine_new(c, ADBC_PAIR_CLIENT, pc, lc + 64, ADBC_PEER_RSA_PUB_KEY, kKeyLine);
    if (rc)
        return rc;
    rc = pair_machine_new(s, ADBC_PAIR_SERVER, ps, ls + 64, ADBC_PEER_DEVICE_GUID, kGuid);
    if (rc)
        pair_machine_free(*c);
    return rc;
}

TEST(machines_pair_in_any_split)
{
    const size_t chunks[] = {1, 5, 6, 7, 38, 1000, 100000};
    for (size_t i = 0; i < sizeof chunks / sizeof chunks[0]; i++) {
        uint8_t ekm[64];
        RAND_bytes(ekm, sizeof ekm);
        adbc_pair_machine *c, *s;
        int rc, rs;
        CHECK_EQ_INT(make_pair(&c, &s, "482913", "482913", ekm), 0);
        CHECK_EQ_INT(pair_machine_state(c), ADBC_PAIR_EXCHANGING_MSGS);
        pump(c, s, chunks[i], &rc, &rs);
        CHECK_EQ_INT(rc, 0);
        CHECK_EQ_INT(rs, 0);
        CHECK_EQ_INT(pair_machine_state(c), ADBC_PAIR_DONE);
        CHECK_EQ_INT(pair_machine_state(s), ADBC_PAIR_DONE);
        CHECK_EQ_INT(pair_machine_peer_type(c), ADBC_PEER_DEVICE_GUID);
        CHECK_STR(pair_machine_peer_string(c), kGuid);
        CHECK_EQ_INT(pair_machine_peer_type(s), ADBC_PEER_RSA_PUB_KEY);
        CHECK_STR(pair_machine_peer_string(s), kKeyLine);
        /* Bytes after the exchange are ignored. */
        CHECK_EQ_INT(pair_machine_recv(c, (const uint8_t *)"junk", 4), 0);
        pair_machine_free(c);
        pair_machine_free(s);
    }
}

TEST(wrong_code_is_epaircode_on_both_sides)
{
    uint8_t ekm[64];
    RAND_bytes(ekm, sizeof ekm);
    adbc_pair_machine *c, *s;
    int rc, rs;
    CHECK_EQ_INT(make_pair(&c, &s, "482913", "482914", ekm), 0);
    pump(c, s, 4096, &rc, &rs);
    CHECK_EQ_INT(rc, ADBC_EPAIRCODE);
    CHECK_EQ_INT(rs, ADBC_EPAIRCODE);
    CHECK_EQ_INT(pair_machine_state(c), ADBC_PAIR_FAILED);
    CHECK(pair_machine_peer_string(c) == NULL);
    /* Sticky, with the same message. */
    adbc_clear_error();
    CHECK_EQ_INT(pair_machine_recv(c, (const uint8_t *)"x", 1), ADBC_EPAIRCODE);
    CHECK(strstr(adbc_last_error(), "wrong pairing code") != NULL);
    pair_machine_free(c);
    pair_machine_free(s);

    /* Same code, different TLS keying material (a stolen connection): same result. */
    uint8_t ekm2[64];
    memcpy(ekm2, ekm, 64);
    ekm2[63] ^= 1;
    uint8_t pc[70], ps[70];
    memcpy(pc, "111111", 6), memcpy(pc + 6, ekm, 64);
    memcpy(ps, "111111", 6), memcpy(ps + 6, ekm2, 64);
    CHECK_EQ_INT(pair_machine_new(&c, ADBC_PAIR_CLIENT, pc, 70, 0, kKeyLine), 0);
    CHECK_EQ_INT(pair_machine_new(&s, ADBC_PAIR_SERVER, ps, 70, 1, kGuid), 0);
    pump(c, s, 4096, &rc, &rs);
    CHECK_EQ_INT(rc, ADBC_EPAIRCODE);
    pair_machine_free(c);
    pair_machine_free(s);
}

static int feed(const uint8_t *bytes, size_t n, adbc_pair_state *st)
{
    adbc_pair_machine *c;
    uint8_t pw[7] = "1234567";
    if (pair_machine_new(&c, ADBC_PAIR_CLIENT, pw, sizeof pw, 0, kKeyLine))
        return 1;
    int rc = pair_machine_recv(c, bytes, n);
    *st = pair_machine_state(c);
    pair_machine_free(c);
    return rc;
}

TEST(hostile_input_is_refused_cleanly)
{
    adbc_pair_state st;
    /* PeerInfo before the SPAKE2 message. */
    uint8_t b[64] = {1, 1, 0, 0, 0x20, 0x10};
    CHECK_EQ_INT(feed(b, 6, &st), ADBC_EPROTO);
    CHECK_EQ_INT(st, ADBC_PAIR_FAILED);
    CHECK(strstr(adbc_last_error(), "expected a SPAKE2 packet") != NULL);
    /* A SPAKE2 message of the wrong size. */
    uint8_t c[] = {1, 0, 0, 0, 0, 31};
    CHECK_EQ_INT(feed(c, sizeof c, &st), ADBC_EPROTO);
    /* A huge announced length is refused before any allocation. */
    uint8_t d[] = {1, 0, 0x7f, 0xff, 0xff, 0xff};
    CHECK_EQ_INT(feed(d, sizeof d, &st), ADBC_EPROTO);
    /* A truncated header or payload just waits for more. */
    uint8_t e[] = {1, 0, 0, 0, 0, 32, 9, 9, 9};
    CHECK_EQ_INT(feed(e, 3, &st), 0);
    CHECK_EQ_INT(st, ADBC_PAIR_EXCHANGING_MSGS);
    CHECK_EQ_INT(feed(e, sizeof e, &st), 0);
    CHECK_EQ_INT(st, ADBC_PAIR_EXCHANGING_MSGS);
    /* Random garbage never crashes and never completes. */
    for (int i = 0; i < 2000; i++) {
        uint8_t g[200];
        RAND_bytes(g, sizeof g);
        if (i % 2)
            g[0] = 1, g[1] = 0, g[2] = g[3] = g[4] = 0, g[5] = 32;
        int rc = feed(g, 1 + (size_t)(i % (int)sizeof g), &st);
        CHECK(rc == 0 || rc == ADBC_EPROTO);
        CHECK(st != ADBC_PAIR_DONE);
    }
}

/* Fail each library allocation in turn: every run ends in a clean error or a
 * completed pairing, with nothing leaked (the ASan build checks that). */
TEST(allocation_failures)
{
    int failures = 0, successes = 0;
    for (long n = 1; n < 40; n++) {
        uint8_t ekm[64];
        RAND_bytes(ekm, sizeof ekm);
        adbc_pair_machine *c = NULL, *s = NULL;
        core_test_fail_alloc_at(n);
        int rc = make_pair(&c, &s, "000000", "000000", ekm);
        int r1 = 0, r2 = 0;
        if (!rc)
            pump(c, s, 64, &r1, &r2);
        core_test_fail_alloc_at(0);
        if (rc) {
            CHECK_EQ_INT(rc, ADBC_ENOMEM);
            failures++;
            continue;
        }
        CHECK(r1 == 0 || r1 == ADBC_ENOMEM);
        CHECK(r2 == 0 || r2 == ADBC_ENOMEM);
        if (!r1 && !r2) {
            CHECK_EQ_INT(pair_machine_state(c), ADBC_PAIR_DONE);
            successes++;
        } else {
            failures++;
        }
        pair_machine_free(c);
        pair_machine_free(s);
    }
    CHECK(failures > 0);
    CHECK(successes > 0);
}

int main(void)
{
    RUN(header_roundtrip_and_limits);
    RUN(cipher_matches_construction);
    RUN(cipher_counters_and_tampering);
    RUN(peer_info_records);
    adbc_spake2 *probe = NULL;
    static const uint8_t n[] = "x";
    int have_sodium = spake2_new(&probe, ADBC_SPAKE2_ALICE, n, 1, n, 1) == 0;
    spake2_free(probe);
    if (have_sodium) {
        RUN(machines_pair_in_any_split);
        RUN(wrong_code_is_epaircode_on_both_sides);
        RUN(hostile_input_is_refused_cleanly);
        RUN(allocation_failures);
    }
    return T_DONE();
}
