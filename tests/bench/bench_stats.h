/* SPDX-License-Identifier: Apache-2.0 */
/* Shared by the benchmarks: the median of n figures (sorts v). */
#ifndef ADBC_BENCH_STATS_H
#define ADBC_BENCH_STATS_H

#include <stdlib.h>

static int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static inline double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#endif
