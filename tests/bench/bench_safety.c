/* SPDX-License-Identifier: Apache-2.0 */
/* Benchmark (not a test): what the agent's safety check adds to a step, on
 * the host. For each recorded screen of fixtures/snapshot (real apps'
 * dumps), side by side in one run, medians of ROUNDS:
 *
 *   parse     adbc_ui_snap_parse of the dump (what every step pays for the
 *             dump it reads: the reference)
 *   text      ops_snapshot_text, the text the model is given
 *   check     agent_safety_check with the default list, on the parsed
 *             snapshot (the observation's check; an act's fresh dump pays
 *             the same once more)
 *
 * and check / parse. The check sends nothing to the device: its cost is
 * this CPU time only (scripts/bench-agent-loop counts device commands).
 *
 *   build/tests/bench_safety [ROUNDS]    (ADBC_SOURCE_DIR: the source tree) */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "adbc/ui.h"
#include "ops_agent_int.h"

#include "bench/bench_stats.h"

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    fclose(f);
    if (b)
        b[n] = 0;
    *len = b ? (size_t)n : 0;
    return b;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 50;
    if (rounds < 1)
        rounds = 1;
    const char *src = getenv("ADBC_SOURCE_DIR");
    char dirpath[4096];
    snprintf(dirpath, sizeof dirpath, "%s/fixtures/snapshot", src ? src : ".");
    DIR *d = opendir(dirpath);
    if (!d) {
        fprintf(stderr, "bench_safety: cannot open %s (set ADBC_SOURCE_DIR)\n", dirpath);
        return 1;
    }
    char *names[256];
    int nn = 0;
    struct dirent *e;
    while ((e = readdir(d)) && nn < 256) {
        size_t l = strlen(e->d_name);
        if (l > 4 && strcmp(e->d_name + l - 4, ".xml") == 0)
            names[nn++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, (size_t)nn, sizeof *names, by_name);
    agent_safety *s = NULL;
    ops_err err;
    if (agent_safety_init(&s, NULL, 0, &err) != 0) {
        fprintf(stderr, "bench_safety: %s\n", err.msg);
        return 1;
    }
    double *tp = calloc((size_t)rounds, sizeof *tp), *tt = calloc((size_t)rounds, sizeof *tt),
           *tc = calloc((size_t)rounds, sizeof *tc);
    double *all_c = calloc((size_t)nn, sizeof *all_c), *all_r = calloc((size_t)nn, sizeof *all_r);
    int used = 0, stops = 0;
    printf("%-44s %7s %6s %9s %9s %9s %7s %s\n", "screen", "bytes", "nodes", "parse us",
           "text us", "check us", "check/parse", "stop");
    for (int i = 0; i < nn; i++) {
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", dirpath, names[i]);
        size_t len;
        char *xml = slurp(path, &len);
        adbc_ui_snap *snap = NULL;
        if (!xml || adbc_ui_snap_parse(&snap, xml, len) != 0) {
            free(xml);
            continue;
        }
        char why[512];
        int hit = 0;
        for (int r = 0; r < rounds; r++) {
            adbc_ui_snap *p = NULL;
            int64_t t0 = now_ns();
            if (adbc_ui_snap_parse(&p, xml, len) == 0)
                adbc_ui_snap_free(p);
            int64_t t1 = now_ns();
            free(ops_snapshot_text(snap));
            int64_t t2 = now_ns();
            hit = agent_safety_check(s, snap, why, sizeof why);
            int64_t t3 = now_ns();
            tp[r] = (double)(t1 - t0) / 1e3;
            tt[r] = (double)(t2 - t1) / 1e3;
            tc[r] = (double)(t3 - t2) / 1e3;
        }
        double mp = median(tp, rounds), mt = median(tt, rounds), mc = median(tc, rounds);
        printf("%-44.44s %7zu %6zu %9.1f %9.1f %9.1f %7.2f     %s\n", names[i], len,
               adbc_ui_snap_nodes(snap), mp, mt, mc, mc / mp, hit ? "stop" : "-");
        all_c[used] = mc;
        all_r[used] = mc / mp;
        used++;
        stops += hit;
        adbc_ui_snap_free(snap);
        free(xml);
    }
    if (used) {
        double mc = median(all_c, used), mr = median(all_r, used);
        qsort(all_c, (size_t)used, sizeof *all_c, bench_cmp_double);
        printf("\n%d screens, %d rounds each: check median %.1f us (max %.1f us), %.2f x the "
               "dump's parse; %d of them stop\n",
               used, rounds, mc, all_c[used - 1], mr, stops);
    }
    agent_safety_free(s);
    for (int i = 0; i < nn; i++)
        free(names[i]);
    free(tp);
    free(tt);
    free(tc);
    free(all_c);
    free(all_r);
    return 0;
}
