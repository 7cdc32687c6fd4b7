/* SPDX-License-Identifier: Apache-2.0 */
/* ops_secret_equal, the compare of adbc-serve's bearer token.
 *
 * 1. Its results: equal, a difference at every position, other lengths,
 *    empty strings.
 * 2. That its work does not depend on the secret's bytes, so the position
 *    of the first wrong byte of a guess cannot be timed. Under Valgrind's
 *    memcheck (tests/sh/secret_ct.sh runs this program so) the secret is
 *    marked undefined: memcheck then counts every branch taken on it and
 *    every address computed from it, the two ways a compare's time comes to
 *    depend on its input. The compare must add no such error for any guess;
 *    a compare that stops at the first difference, run the same way, must
 *    add errors (else the check could not fail, and proves nothing). Without
 *    Valgrind only part 1 runs. */
#include <stdio.h>
#include <string.h>

#include "ops_core.h"

#if defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#define HAVE_MEMCHECK 1
#endif
#endif
#ifndef HAVE_MEMCHECK
#define RUNNING_ON_VALGRIND 0
#define VALGRIND_COUNT_ERRORS 0u
#define VALGRIND_MAKE_MEM_UNDEFINED(p, n) ((void)(p), (void)(n))
#define VALGRIND_MAKE_MEM_DEFINED(p, n) ((void)(p), (void)(n))
#endif

static int failures;

#define CHECK(cond, ...)                                                                      \
    do {                                                                                      \
        if (!(cond)) {                                                                        \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                              \
            fprintf(stderr, __VA_ARGS__);                                                     \
            fputc('\n', stderr);                                                              \
            failures++;                                                                       \
        }                                                                                     \
    } while (0)

/* What a naive compare does: stop at the first difference. */
static int __attribute__((noinline)) early_exit_equal(const char *secret, size_t n,
                                                      const char *given, size_t g)
{
    if (n != g)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (secret[i] != given[i])
            return 0;
    return 1;
}

static const char SECRET[] = "3f9a1c07d2e85b46a0c9e17f2b3d4c5e6f708192a3b4c5d6e7f8091a2b3c4d5e";

int main(void)
{
    size_t n = strlen(SECRET);
    char guess[sizeof SECRET];

    /* 1. Results. */
    CHECK(ops_secret_equal(SECRET, n, SECRET, n) == 1, "equal strings compare unequal");
    for (size_t i = 0; i < n; i++) {
        memcpy(guess, SECRET, sizeof SECRET);
        guess[i] ^= 0x01;
        CHECK(ops_secret_equal(SECRET, n, guess, n) == 0, "a difference at %zu not seen", i);
    }
    CHECK(ops_secret_equal(SECRET, n, SECRET, n - 1) == 0, "a prefix compares equal");
    CHECK(ops_secret_equal(SECRET, n, "", 0) == 0, "an empty guess compares equal");
    char twice[2 * sizeof SECRET];
    snprintf(twice, sizeof twice, "%s%s", SECRET, SECRET);
    CHECK(ops_secret_equal(SECRET, n, twice, 2 * n) == 0, "a longer guess compares equal");
    CHECK(ops_secret_equal(SECRET, n / 2, SECRET, n / 2) == 1, "equal halves compare unequal");
    CHECK(ops_secret_equal("", 0, "", 0) == 0, "an empty secret matches");

    if (!RUNNING_ON_VALGRIND) {
        printf("%s: not under valgrind: the data-independence check did not run "
               "(tests/sh/secret_ct.sh runs it)\n", failures ? "FAIL" : "ok");
        return failures ? 1 : 0;
    }

    /* 2. Under memcheck: the secret's bytes undefined. */
    static char secret[sizeof SECRET];
    memcpy(secret, SECRET, sizeof SECRET);
    VALGRIND_MAKE_MEM_UNDEFINED(secret, n);

    unsigned e0 = VALGRIND_COUNT_ERRORS;
    volatile int sink = 0;
    for (size_t i = 0; i < n; i += 7) {
        memcpy(guess, SECRET, sizeof SECRET);
        guess[i] ^= 0x01;
        int r = early_exit_equal(secret, n, guess, n);
        VALGRIND_MAKE_MEM_DEFINED(&r, sizeof r);
        sink += r;
    }
    unsigned naive = VALGRIND_COUNT_ERRORS - e0;
    CHECK(naive > 0, "memcheck saw no secret-dependent branch in an early-exit compare: "
                     "the check cannot tell");

    unsigned e1 = VALGRIND_COUNT_ERRORS;
    /* Guesses wrong at every position, right, shorter, longer, empty. */
    for (size_t i = 0; i <= n; i++) {
        memcpy(guess, SECRET, sizeof SECRET);
        if (i < n)
            guess[i] ^= 0x01;
        int r = ops_secret_equal(secret, n, guess, n);
        VALGRIND_MAKE_MEM_DEFINED(&r, sizeof r);
        CHECK(r == (i == n), "under memcheck: wrong result for a difference at %zu", i);
    }
    int r = ops_secret_equal(secret, n, SECRET, n - 1);
    r += ops_secret_equal(secret, n, twice, 2 * n);
    r += ops_secret_equal(secret, n, "", 0);
    VALGRIND_MAKE_MEM_DEFINED(&r, sizeof r);
    CHECK(r == 0, "under memcheck: another length compared equal");
    unsigned ours = VALGRIND_COUNT_ERRORS - e1;
    CHECK(ours == 0, "ops_secret_equal branched on or indexed by the secret (%u memcheck "
                     "errors)", ours);
    (void)sink;
    printf("%s: memcheck errors: early-exit compare %u, ops_secret_equal %u\n",
           failures ? "FAIL" : "ok", naive, ours);
    return failures ? 1 : 0;
}
