/* SPDX-License-Identifier: Apache-2.0 */
/* bench_web: the web part of `snapshot --web` timed by itself, on one
 * connection whose pages' DevTools sessions stay warm between rounds (as
 * adbc-serve's held device and a session's server keep them). A snapshot
 * with the web part is the dump, then the web part (lib/ui/device.c,
 * with_web: ui_web_splice, the parse of the spliced dump, which makes its
 * text); the dump is taken once here, and each round times the web part
 * alone, then the JSON of the spliced snapshot (what adbc-serve sends)
 * beside the plain one's. So the figure is what
 * --web adds, without the difference of two dumps' times (on the phone
 * profile 1.5 s each, moving by tens of ms with the machine's load).
 *
 *   bench_web ADDR [ROUNDS] [BUDGET_MS] [MUST]
 *
 * MUST: a text the spliced snapshot must hold (the page was read), else
 * the program fails. Prints medians, the lowest and the highest round.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "adbc/adbc.h"
#include "bench_stats.h"
#include "ui/ui_internal.h"

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void row(const char *name, double *v, int n)
{
    double lo = v[0], hi = v[0];
    for (int i = 1; i < n; i++) {
        lo = v[i] < lo ? v[i] : lo;
        hi = v[i] > hi ? v[i] : hi;
    }
    printf("  %-44s median %7.2f ms   lowest %7.2f   highest %7.2f\n", name, median(v, n), lo, hi);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s ADDR [ROUNDS] [BUDGET_MS] [MUST]\n", argv[0]);
        return 2;
    }
    int rounds = argc > 2 ? atoi(argv[2]) : 21;
    int budget = argc > 3 ? atoi(argv[3]) : 3000;
    const char *must = argc > 4 ? argv[4] : NULL;
    if (rounds < 1 || rounds > 10000)
        rounds = 21;
    if (budget < 1 || budget > 60000)
        budget = 3000;
    adbc_keyring *keys;
    if (adbc_keyring_load_default(&keys, 1) < 0) {
        fprintf(stderr, "keys: %s\n", adbc_last_error());
        return 1;
    }
    adbc_conn_opts o;
    adbc_conn_opts_init(&o);
    o.keys = keys;
    adbc_conn *c;
    if (adbc_connect(&c, argv[1], &o) < 0) {
        fprintf(stderr, "connect to %s: %s\n", argv[1], adbc_last_error());
        return 1;
    }
    adbc_ui_opts uo;
    adbc_ui_opts_init(&uo);
    char *raw;
    size_t n;
    adbc_ui_snap *s = NULL;
    if (adbc_ui_dump(&raw, &n, c, &uo) < 0 || adbc_ui_snap_parse(&s, raw, n) < 0) {
        fprintf(stderr, "dump: %s\n", adbc_last_error());
        return 1;
    }
    double *web = calloc((size_t)rounds, sizeof *web), *tw = calloc((size_t)rounds, sizeof *tw),
           *tp = calloc((size_t)rounds, sizeof *tp);
    if (!web || !tw || !tp)
        return 1;
    size_t wlen = 0, plen = 0;
    /* Three reads to warm it: the first opens the session, the second
     * starts following the page's DOM (lib/ui/web.c). */
    for (int i = -3; i < rounds; i++) {
        double t0 = now_ms();
        char *x;
        size_t xl;
        adbc_ui_snap *w = NULL;
        int rc = ui_web_splice(&x, &xl, s, raw, n, c, budget);
        if (rc == 0 && x)
            rc = ui_snap_from(&w, x, x, xl);
        double t1 = now_ms();
        if (rc < 0 || !w) {
            fprintf(stderr, "web part: %s\n", rc < 0 ? adbc_last_error() : "the dump has no WebView");
            return 1;
        }
        const char *text = adbc_ui_snap_text(w, &wlen);
        char *j;
        size_t jl;
        double t2a = now_ms();
        if (adbc_ui_snap_json(&j, &jl, w) < 0) {
            fprintf(stderr, "json: %s\n", adbc_last_error());
            return 1;
        }
        adbc_free(j);
        double t2 = now_ms();
        adbc_ui_snap *p;
        if (adbc_ui_snap_parse(&p, raw, n) < 0) {
            fprintf(stderr, "parse: %s\n", adbc_last_error());
            return 1;
        }
        adbc_ui_snap_text(p, &plen);
        double t3 = now_ms();
        if (adbc_ui_snap_json(&j, &jl, p) < 0) {
            fprintf(stderr, "json: %s\n", adbc_last_error());
            return 1;
        }
        adbc_free(j);
        double t4 = now_ms();
        if (must && !strstr(text, must)) {
            fprintf(stderr, "the page was not read (no \"%s\" in the snapshot):\n%s\n", must, text);
            return 1;
        }
        adbc_ui_snap_free(p);
        adbc_ui_snap_free(w);
        if (i >= 0) {
            web[i] = t1 - t0;
            tw[i] = t2 - t2a;
            web[i] += t2a - t1; /* the text, if not made by the parse */
            tp[i] = t4 - t3;
        }
    }
    printf("web part of a snapshot on one warm connection: %d rounds, budget %d ms; text %zu bytes "
           "with it, %zu without\n", rounds, budget, wlen, plen);
    row("web part (pages read, spliced, parsed)", web, rounds);
    row("JSON of the snapshot with the web part", tw, rounds);
    row("JSON of the plain snapshot", tp, rounds);
    adbc_ui_snap_free(s);
    adbc_free(raw);
    free(web);
    free(tw);
    free(tp);
    adbc_conn_close(c);
    adbc_keyring_free(keys);
    return 0;
}
