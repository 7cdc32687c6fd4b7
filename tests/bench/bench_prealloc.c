/* SPDX-License-Identifier: Apache-2.0 */
/* What reserving a file's blocks before writing it saves, as a pull does
 * (lib/sync/sync_pull.c): writes SIZE MiB in 512 KiB writes to PATH,
 * alternating plain and fallocate(FALLOC_FL_KEEP_SIZE) first, each after a
 * sync, and prints the median system CPU time of each.
 *
 *   bench_prealloc PATH [SIZE_MB (256)] [ROUNDS (6)]
 *
 * PATH is created and removed; put it on the file system to measure. */
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "bench/bench_stats.h"

#define CHUNK (512 * 1024)

static double sys_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

/* System seconds to write the file, or a negative value on error. */
static double one(const char *path, size_t total, int reserve, const char *buf)
{
    unlink(path);
    sync();
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return -1;
    double s0 = sys_s();
    if (reserve && fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, (off_t)total) != 0)
        fprintf(stderr, "bench_prealloc: fallocate: %s (measuring without it)\n", strerror(errno));
    for (size_t off = 0; off < total; off += CHUNK)
        if (write(fd, buf, CHUNK) != CHUNK) {
            close(fd);
            return -1;
        }
    double s = sys_s() - s0;
    close(fd);
    unlink(path);
    return s;
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 4) {
        fprintf(stderr, "usage: bench_prealloc PATH [SIZE_MB] [ROUNDS]\n");
        return 2;
    }
    long mb = argc > 2 ? atol(argv[2]) : 256;
    int rounds = argc > 3 ? atoi(argv[3]) : 6;
    if (mb < 1 || mb > 65536 || rounds < 1 || rounds > 100) {
        fprintf(stderr, "bench_prealloc: SIZE_MB 1..65536, ROUNDS 1..100\n");
        return 2;
    }
    size_t total = (size_t)mb * 1024 * 1024;
    char *buf = malloc(CHUNK);
    if (!buf)
        return 1;
    memset(buf, 0x5a, CHUNK);
    double plain[100], reserved[100];
    for (int r = 0; r < rounds; r++) {
        plain[r] = one(argv[1], total, 0, buf);
        reserved[r] = one(argv[1], total, 1, buf);
        if (plain[r] < 0 || reserved[r] < 0) {
            fprintf(stderr, "bench_prealloc: writing %s failed: %s\n", argv[1], strerror(errno));
            return 1;
        }
    }
    double p = median(plain, rounds), q = median(reserved, rounds);
    printf("%ld MiB in 512 KiB writes, median of %d: system CPU plain %.3f s, "
           "reserved first %.3f s (ratio %.2f)\n",
           mb, rounds, p, q, q > 0 ? p / q : 0);
    free(buf);
    return 0;
}
