/* SPDX-License-Identifier: Apache-2.0 */
/* Sync v2's decompressors on whatever a device sends: the first byte picks
 * brotli, lz4 or zstd and the piece size, the rest is the compressed
 * stream, fed through a small output buffer as a pull does. Nothing may
 * crash, the decoder must move forward, and it must stop at the bomb limit.
 * Decoding stops after 4 MiB of output, to keep each input fast. */
#include <string.h>

#include "fuzz.h"
#include "sync/sync_comp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_in in = {data, size};
    uint8_t sel = fuzz_u8(&in);
    static const uint32_t algs[] = {ADBC_SYNC_FLAG_BROTLI, ADBC_SYNC_FLAG_LZ4, ADBC_SYNC_FLAG_ZSTD};
    uint32_t alg = algs[sel % 3];
    size_t chunk = (size_t)(sel / 3) + 1;
    adbc_sync_zdec *d;
    if (sync_zdec_new(&d, alg, 0) != 0)
        return 0; /* a build without this library */
    static uint8_t out[4096];
    int rc = 0;
    while (rc == 0) {
        size_t n = in.len < chunk ? in.len : chunk;
        const uint8_t *p = in.p;
        size_t left = n, room;
        do {
            uint8_t *o = out;
            room = sizeof out;
            rc = sync_zdec_run(d, &p, &left, &o, &room);
            FUZZ_ASSERT(room <= sizeof out);
        } while (rc == 0 && (left > 0 || room == 0) && sync_zdec_out(d) < (4u << 20));
        FUZZ_ASSERT(sync_zdec_out(d) <=
                    ADBC_SYNC_BOMB_BASE + ADBC_SYNC_BOMB_RATIO * sync_zdec_in(d) + sizeof out);
        if (rc != 0 || sync_zdec_out(d) >= (4u << 20) || n == 0)
            break;
        in.p += n;
        in.len -= n;
    }
    if (rc == 1)
        FUZZ_ASSERT(sync_zdec_finish(d) == 0);
    sync_zdec_free(d);
    return 0;
}
