/* SPDX-License-Identifier: Apache-2.0 */
/* Shared bits of the fuzz harnesses. Each fuzz_<name>.c defines
 * LLVMFuzzerTestOneInput; it is linked either with libFuzzer (ADBC_FUZZ) or
 * with replay_main.c, which runs every file of its seed corpus so the same
 * inputs are checked by the ordinary test suite. */
#ifndef ADBC_FUZZ_H
#define ADBC_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A harness invariant that does not hold is a finding: abort so libFuzzer
 * keeps the input (and the replay fails). */
#define FUZZ_ASSERT(c)                                                                     \
    do {                                                                                   \
        if (!(c)) {                                                                        \
            fprintf(stderr, "%s:%d: fuzz invariant failed: %s\n", __FILE__, __LINE__, #c); \
            abort();                                                                       \
        }                                                                                  \
    } while (0)

/* Reads input bytes as a stream of small decisions; 0 once it runs out. */
typedef struct fuzz_in {
    const uint8_t *p;
    size_t len;
} fuzz_in;

static inline uint8_t fuzz_u8(fuzz_in *in)
{
    if (!in->len)
        return 0;
    in->len--;
    return *in->p++;
}

#endif
