/* SPDX-License-Identifier: Apache-2.0 */
/* A keyring: the private keys a host offers, in the order it tries them.
 * Each public key appears once, however many files hold it. */
#include "auth/auth_internal.h"

#include <string.h>

struct adbc_keyring {
    adbc_key **keys;
    size_t count;
    size_t cap;
};

int adbc_keyring_new(adbc_keyring **out)
{
    if (!out)
        return core_fail(ADBC_EINVAL, "adbc_keyring_new: out is NULL");
    *out = core_calloc(1, sizeof **out);
    if (!*out)
        return core_fail(ADBC_ENOMEM, "out of memory creating a keyring");
    return 0;
}

static int reserve(adbc_keyring *ring, size_t extra)
{
    if (ring->count + extra <= ring->cap)
        return 0;
    size_t cap = ring->cap ? ring->cap : 4;
    while (cap < ring->count + extra)
        cap *= 2;
    adbc_key **keys = core_realloc(ring->keys, cap * sizeof *keys);
    if (!keys)
        return core_fail(ADBC_ENOMEM, "out of memory growing a keyring");
    ring->keys = keys;
    ring->cap = cap;
    return 0;
}

static int contains(const adbc_keyring *ring, const adbc_key *key)
{
    for (size_t i = 0; i < ring->count; i++)
        if (key_same_public(ring->keys[i]->pkey, key->pkey))
            return 1;
    return 0;
}

int adbc_keyring_add(adbc_keyring *ring, adbc_key *key)
{
    if (!ring || !key || !key->pkey) {
        adbc_key_free(key);
        return core_fail(ADBC_EINVAL, "adbc_keyring_add: ring and key are required");
    }
    if (contains(ring, key)) {
        adbc_key_free(key);
        return 0;
    }
    int rc = reserve(ring, 1);
    if (rc) {
        adbc_key_free(key);
        return rc;
    }
    ring->keys[ring->count++] = key;
    return 0;
}

/* Move every key of src to the end of dst (dropping duplicates); cannot fail
 * once reserve() has succeeded, so dst never ends up half-merged. */
int keyring_merge(adbc_keyring *dst, adbc_keyring *src)
{
    int rc = reserve(dst, src->count);
    if (rc)
        return rc;
    for (size_t i = 0; i < src->count; i++) {
        if (contains(dst, src->keys[i]))
            adbc_key_free(src->keys[i]);
        else
            dst->keys[dst->count++] = src->keys[i];
    }
    src->count = 0;
    return 0;
}

size_t adbc_keyring_count(const adbc_keyring *ring)
{
    return ring ? ring->count : 0;
}

const adbc_key *adbc_keyring_get(const adbc_keyring *ring, size_t index)
{
    if (!ring || index >= ring->count)
        return NULL;
    return ring->keys[index];
}

void adbc_keyring_free(adbc_keyring *ring)
{
    if (!ring)
        return;
    for (size_t i = 0; i < ring->count; i++)
        adbc_key_free(ring->keys[i]);
    core_free(ring->keys);
    core_free(ring);
}
