/* SPDX-License-Identifier: Apache-2.0 */
/* Comparing a secret (adbc-serve's bearer token) with what a client sent,
 * in a time that does not depend on the secret's bytes: no branch and no
 * memory address depends on them, so how many leading bytes a guess gets
 * right cannot be measured. tests/unit/test_ops_secret.c checks this under
 * Valgrind's memcheck with the secret marked undefined. */
#include "ops_core.h"

int ops_secret_equal(const char *secret, size_t secret_len, const char *given,
                     size_t given_len)
{
    /* Always secret_len rounds; the given string is read cyclically, so its
     * length (which the client knows anyway) changes only the result. */
    volatile unsigned char d = (unsigned char)(given_len != secret_len || !secret_len);
    for (size_t i = 0; i < secret_len; i++)
        d |= (unsigned char)((unsigned char)secret[i] ^
                             (given_len ? (unsigned char)given[i % given_len] : 0xffu));
    return d == 0;
}
