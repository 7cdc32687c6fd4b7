/* SPDX-License-Identifier: Apache-2.0 */
/* SPAKE2 over edwards25519, computing exactly what BoringSSL's spake25519
 * computes (which is what adbd's pairing runs), with libsodium's group
 * operations.
 *
 * The math, with B the base point, l its prime order, and the curve's full
 * group of order 8*l:
 *
 *  - private scalar: 64 random bytes reduced mod l give r; the reference then
 *    uses x = 8*r (a multiple of the cofactor) as the private key.
 *  - password scalar: s = SHA-512(password) mod l. The reference adds
 *    multiples of l until s is a multiple of 8 (call that s'), and masks with
 *    s' * M. M (and N) are not in the prime-order subgroup: M = Mp + T with Mp
 *    of order l and T of small order. Since s' = s mod l and s' = 0 mod 8,
 *    s' * M = s * Mp. libsodium refuses points outside the prime-order
 *    subgroup, so we compute Mp from 8*M, which is in it: with i8 = 1/8 mod l,
 *    s * Mp = (s * i8 mod l) * (8*M).
 *  - our message: X* = x*B + s*Mp (alice masks with M, bob with N).
 *  - shared point: K = x * (Y* - s*Np) for the peer's Y*. x = 8*r, so
 *    K = r * (8 * (Y* - s*Np)): the three doublings clear any small-order
 *    part a peer's point carries, as the reference's multiplication by 8*r
 *    does, and leave a point libsodium accepts.
 *  - key: SHA-512 over length-prefixed (8-byte little-endian length) alice's
 *    name, bob's name, alice's message, bob's message, K, then the full
 *    64-byte SHA-512 of the password.
 *
 * All points are in the canonical 32-byte encoding both libraries use. */
#include "tls/spake2.h"

#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include "core/internal.h"

#ifdef ADBC_HAVE_SODIUM
#include <sodium.h>
#endif

#ifdef ADBC_HAVE_SODIUM
/* The reference's M and N ("edwards25519 point generation seed (M)"/"(N)"). */
static const uint8_t kPointM[32] = {
    0x5a, 0xda, 0x7e, 0x4b, 0xf6, 0xdd, 0xd9, 0xad, 0xb6, 0x62, 0x6d, 0x32, 0x13, 0x1c, 0x6b, 0x5c,
    0x51, 0xa1, 0xe3, 0x47, 0xa3, 0x47, 0x8f, 0x53, 0xcf, 0xcf, 0x44, 0x1b, 0x88, 0xee, 0xd1, 0x2e,
};
static const uint8_t kPointN[32] = {
    0x10, 0xe3, 0xdf, 0x0a, 0xe3, 0x7d, 0x8e, 0x7a, 0x99, 0xb5, 0xfe, 0x74, 0xb4, 0x46, 0x72, 0x10,
    0x3d, 0xbd, 0xdc, 0xbd, 0x06, 0xaf, 0x68, 0x0d, 0x71, 0x32, 0x9a, 0x11, 0x69, 0x3b, 0xc7, 0x78,
};
#endif

enum spake2_state { ST_INIT, ST_MSG_SENT, ST_DONE };

struct adbc_spake2 {
    adbc_spake2_role role;
    enum spake2_state state;
    uint8_t my_name[ADBC_SPAKE2_MAX_NAME];
    size_t my_name_len;
    uint8_t their_name[ADBC_SPAKE2_MAX_NAME];
    size_t their_name_len;
    uint8_t r[32];              /* private scalar; the private key is 8*r */
    uint8_t password_scalar[32];/* s = SHA-512(password) mod l */
    uint8_t password_hash[64];  /* SHA-512(password), unreduced */
    uint8_t my_msg[ADBC_SPAKE2_MSG_SIZE];
};

#ifdef ADBC_HAVE_SODIUM

static int sodium_ready(void)
{
    /* sodium_init is idempotent and thread-safe; < 0 means unusable. */
    if (sodium_init() < 0)
        return core_fail(ADBC_EIO, "libsodium failed to initialise: pairing is unavailable");
    return 0;
}

/* 8 * P by three doublings; works for any point on the curve. */
static int times8(uint8_t out[32], const uint8_t p[32])
{
    uint8_t a[32], b[32];
    if (crypto_core_ed25519_add(a, p, p) != 0 || crypto_core_ed25519_add(b, a, a) != 0 ||
        crypto_core_ed25519_add(out, b, b) != 0)
        return -1;
    return 0;
}

/* s * Pp, where Pp is the prime-order part of the fixed point P (M or N). */
static int mask_point(uint8_t out[32], const uint8_t s[32], const uint8_t point[32])
{
    static const uint8_t eight[32] = {8};
    uint8_t p8[32], inv8[32], k[32];
    if (times8(p8, point) != 0 || crypto_core_ed25519_scalar_invert(inv8, eight) != 0)
        return -1;
    crypto_core_ed25519_scalar_mul(k, s, inv8);
    int rc = crypto_scalarmult_ed25519_noclamp(out, k, p8);
    sodium_memzero(k, sizeof k);
    return rc;
}

#endif

int spake2_new(adbc_spake2 **out, adbc_spake2_role role, const uint8_t *my_name,
                    size_t my_name_len, const uint8_t *their_name, size_t their_name_len)
{
    *out = NULL;
#ifndef ADBC_HAVE_SODIUM
    (void)role, (void)my_name, (void)my_name_len, (void)their_name, (void)their_name_len;
    return core_fail(ADBC_EUNSUPPORTED,
                     "pairing is not available: adbc was built without libsodium "
                     "(install libsodium-dev and rebuild)");
#else
    if ((role != ADBC_SPAKE2_ALICE && role != ADBC_SPAKE2_BOB) ||
        my_name_len > ADBC_SPAKE2_MAX_NAME || their_name_len > ADBC_SPAKE2_MAX_NAME ||
        (my_name_len && !my_name) || (their_name_len && !their_name))
        return core_fail(ADBC_EINVAL, "SPAKE2: invalid role or name (names are at most %d bytes)",
                         ADBC_SPAKE2_MAX_NAME);
    int rc = sodium_ready();
    if (rc)
        return rc;
    adbc_spake2 *s = core_calloc(1, sizeof *s);
    if (!s)
        return core_fail(ADBC_ENOMEM, "out of memory creating a SPAKE2 context");
    s->role = role;
    if (my_name_len)
        memcpy(s->my_name, my_name, my_name_len);
    if (their_name_len)
        memcpy(s->their_name, their_name, their_name_len);
    s->my_name_len = my_name_len;
    s->their_name_len = their_name_len;
    *out = s;
    return 0;
#endif
}

int spake2_generate_msg(adbc_spake2 *s, uint8_t out[ADBC_SPAKE2_MSG_SIZE],
                             const uint8_t *password, size_t password_len)
{
    uint8_t seed[64];
    if (RAND_bytes(seed, sizeof seed) != 1)
        return core_fail(ADBC_EIO, "SPAKE2: the system random generator failed");
    int rc = spake2_generate_msg_seeded(s, out, password, password_len, seed);
    OPENSSL_cleanse(seed, sizeof seed);
    return rc;
}

int spake2_generate_msg_seeded(adbc_spake2 *s, uint8_t out[ADBC_SPAKE2_MSG_SIZE],
                                    const uint8_t *password, size_t password_len,
                                    const uint8_t seed[64])
{
#ifndef ADBC_HAVE_SODIUM
    (void)s, (void)out, (void)password, (void)password_len, (void)seed;
    return core_fail(ADBC_EUNSUPPORTED, "pairing is not available: adbc was built without libsodium");
#else
    if (!s || s->state != ST_INIT || (password_len && !password))
        return core_fail(ADBC_EINVAL, "SPAKE2: message already generated or no password");
    static const uint8_t eight[32] = {8};
    uint8_t x[32], pub[32], mask[32];
    unsigned int hlen = 0;
    int rc = 0;

    crypto_core_ed25519_scalar_reduce(s->r, seed);
    crypto_core_ed25519_scalar_mul(x, s->r, eight); /* 8*r mod l: same point as 8*r */
    if (EVP_Digest(password, password_len, s->password_hash, &hlen, EVP_sha512(), NULL) != 1) {
        rc = core_fail(ADBC_EIO, "SPAKE2: SHA-512 failed");
        goto out;
    }
    crypto_core_ed25519_scalar_reduce(s->password_scalar, s->password_hash);

    /* A zero scalar (probability 2^-252) would make libsodium refuse; the
     * caller just sees a failed attempt. */
    if (crypto_scalarmult_ed25519_base_noclamp(pub, x) != 0 ||
        mask_point(mask, s->password_scalar, s->role == ADBC_SPAKE2_ALICE ? kPointM : kPointN) != 0 ||
        crypto_core_ed25519_add(s->my_msg, pub, mask) != 0) {
        rc = core_fail(ADBC_EIO, "SPAKE2: could not compute our message (degenerate scalar); try again");
        goto out;
    }
    memcpy(out, s->my_msg, sizeof s->my_msg);
    s->state = ST_MSG_SENT;
out:
    sodium_memzero(x, sizeof x);
    return rc;
#endif
}

#ifdef ADBC_HAVE_SODIUM
static int hash_item(EVP_MD_CTX *md, const uint8_t *data, size_t len)
{
    uint8_t prefix[8];
    core_wr64(prefix, (uint64_t)len);
    return EVP_DigestUpdate(md, prefix, sizeof prefix) == 1 &&
           (len == 0 || EVP_DigestUpdate(md, data, len) == 1);
}
#endif

int spake2_process_msg(adbc_spake2 *s, uint8_t key[ADBC_SPAKE2_KEY_SIZE],
                            const uint8_t *their_msg, size_t their_msg_len)
{
#ifndef ADBC_HAVE_SODIUM
    (void)s, (void)key, (void)their_msg, (void)their_msg_len;
    return core_fail(ADBC_EUNSUPPORTED, "pairing is not available: adbc was built without libsodium");
#else
    if (!s || s->state != ST_MSG_SENT)
        return core_fail(ADBC_EINVAL, "SPAKE2: generate our message before processing the peer's");
    if (!their_msg || their_msg_len != ADBC_SPAKE2_MSG_SIZE)
        return core_fail(ADBC_EPROTO, "SPAKE2: the peer's message is %zu bytes, expected %d",
                         their_msg_len, ADBC_SPAKE2_MSG_SIZE);
    uint8_t peer_mask[32], q[32], q8[32], k[32];
    int rc = 0;
    /* Unmask with the point the peer used: bob's N when we are alice. */
    if (mask_point(peer_mask, s->password_scalar, s->role == ADBC_SPAKE2_ALICE ? kPointN : kPointM) != 0) {
        rc = core_fail(ADBC_EIO, "SPAKE2: could not compute the peer's mask");
        goto out;
    }
    if (crypto_core_ed25519_sub(q, their_msg, peer_mask) != 0 || times8(q8, q) != 0 ||
        crypto_scalarmult_ed25519_noclamp(k, s->r, q8) != 0) {
        rc = core_fail(ADBC_EPROTO,
                       "SPAKE2: the peer's message is not a usable curve point: the peer is "
                       "broken or the connection was tampered with");
        goto out;
    }

    const uint8_t *alice_name = s->role == ADBC_SPAKE2_ALICE ? s->my_name : s->their_name;
    size_t alice_len = s->role == ADBC_SPAKE2_ALICE ? s->my_name_len : s->their_name_len;
    const uint8_t *bob_name = s->role == ADBC_SPAKE2_ALICE ? s->their_name : s->my_name;
    size_t bob_len = s->role == ADBC_SPAKE2_ALICE ? s->their_name_len : s->my_name_len;
    const uint8_t *alice_msg = s->role == ADBC_SPAKE2_ALICE ? s->my_msg : their_msg;
    const uint8_t *bob_msg = s->role == ADBC_SPAKE2_ALICE ? their_msg : s->my_msg;

    EVP_MD_CTX *md = EVP_MD_CTX_new();
    unsigned int outlen = 0;
    int ok = md && EVP_DigestInit_ex(md, EVP_sha512(), NULL) == 1 &&
             hash_item(md, alice_name, alice_len) && hash_item(md, bob_name, bob_len) &&
             hash_item(md, alice_msg, 32) && hash_item(md, bob_msg, 32) && hash_item(md, k, 32) &&
             hash_item(md, s->password_hash, sizeof s->password_hash) &&
             EVP_DigestFinal_ex(md, key, &outlen) == 1 && outlen == ADBC_SPAKE2_KEY_SIZE;
    EVP_MD_CTX_free(md);
    if (!ok) {
        rc = core_fail(ADBC_ENOMEM, "SPAKE2: hashing the transcript failed (out of memory?)");
        goto out;
    }
    s->state = ST_DONE;
out:
    sodium_memzero(k, sizeof k);
    sodium_memzero(q, sizeof q);
    sodium_memzero(q8, sizeof q8);
    return rc;
#endif
}

void spake2_free(adbc_spake2 *s)
{
    if (!s)
        return;
    OPENSSL_cleanse(s, sizeof *s);
    core_free(s);
}
