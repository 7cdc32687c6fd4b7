/* SPDX-License-Identifier: Apache-2.0 */
/* Benchmark (not a test): how fast each sync v2 compressor runs on this
 * machine, one CPU, for random and log-like data, through the same
 * streaming calls push and pull use (64 KiB DATA chunks out, 256 KiB reads
 * in). The figures decide adbc's default (docs/sync.md, "Compression"): a
 * link slower than the compressor gains from it, a faster one loses.
 *
 *   bench_comp FILE...        (e.g. random and gen_logtext.py output) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sync/sync_comp.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint8_t *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc((size_t)n + 1);
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    fclose(f);
    *len = (size_t)n;
    return b;
}

int main(int argc, char **argv)
{
    static const uint32_t algs[] = {ADBC_SYNC_FLAG_LZ4, ADBC_SYNC_FLAG_ZSTD, ADBC_SYNC_FLAG_BROTLI};
    printf("%-24s %-7s %10s %12s %12s\n", "file", "alg", "ratio", "comp MiB/s", "decomp MiB/s");
    for (int i = 1; i < argc; i++) {
        size_t len;
        uint8_t *in = slurp(argv[i], &len);
        if (!in) {
            perror(argv[i]);
            return 1;
        }
        uint8_t *z = malloc(len + len / 8 + (1 << 20)), *back = malloc(len + 1);
        for (size_t a = 0; a < 3; a++) {
            if (!(sync_comp_built() & algs[a]))
                continue;
            adbc_sync_zenc *e;
            sync_zenc_new(&e, algs[a]);
            double t0 = now();
            size_t off = 0, zl = 0;
            int rc = 0;
            while (rc == 0) {
                const uint8_t *p = in + off;
                size_t l = len - off < 262144 ? len - off : 262144, l0 = l;
                uint8_t *o = z + zl;
                size_t room = 65536;
                rc = sync_zenc_run(e, &p, &l, &o, &room, off + l0 == len);
                off += l0 - l;
                zl += 65536 - room;
            }
            double tc = now() - t0;
            sync_zenc_free(e);
            adbc_sync_zdec *d;
            sync_zdec_new(&d, algs[a], len);
            t0 = now();
            size_t zo = 0, n = 0;
            rc = 0;
            while (rc == 0) {
                const uint8_t *p = z + zo;
                size_t l = zl - zo < 65536 ? zl - zo : 65536, l0 = l;
                uint8_t *o = back + n;
                size_t room = len + 1 - n < 262144 ? len + 1 - n : 262144, r0 = room;
                rc = sync_zdec_run(d, &p, &l, &o, &room);
                zo += l0 - l;
                n += r0 - room;
            }
            double td = now() - t0;
            sync_zdec_free(d);
            if (rc != 1 || n != len || memcmp(in, back, len) != 0) {
                fprintf(stderr, "%s: %s round trip failed\n", argv[i],
                        sync_comp_flag_name(algs[a]));
                return 1;
            }
            printf("%-24s %-7s %9.1f%% %12.0f %12.0f\n", argv[i], sync_comp_flag_name(algs[a]),
                   100.0 * (double)zl / (double)len, (double)len / tc / 1048576,
                   (double)len / td / 1048576);
        }
        free(in);
        free(z);
        free(back);
    }
    return 0;
}
