/* SPDX-License-Identifier: Apache-2.0 */
/* A tiny test harness: each tests/unit/test_*.c is one executable with
 * TEST(name) functions registered in main via RUN(name). A failed CHECK
 * prints the file, line and expression, marks the test failed and returns
 * from it; the exit status is nonzero when any test failed.
 *
 * T_RUN=name[,name...] in the environment runs only the named tests (the
 * names RUN prints), e.g. T_RUN=echo_legacy_flow_control build/test_conn;
 * a name that matches no test fails the run, so a typo is never a pass. */
#ifndef ADBC_TEST_T_H
#define ADBC_TEST_T_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int t_failed_total;
static int t_passed_total;
static int t_cur_failed;
static int t_selected_total;

/* Whether T_RUN (unset: every test) names this test. */
static inline int t_wanted(const char *name)
{
    const char *list = getenv("T_RUN");
    if (!list || !*list)
        return 1;
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == n && memcmp(p, name, n) == 0) {
            t_selected_total++;
            return 1;
        }
        if (!end)
            break;
        p = end + 1;
    }
    return 0;
}

#define TEST(name) static void name(void)

#define CHECK(expr)                                                            \
    do {                                                                       \
        if (!(expr)) {                                                         \
            fprintf(stderr, "  %s:%d: CHECK failed: %s\n", __FILE__, __LINE__, \
                    #expr);                                                    \
            t_cur_failed = 1;                                                  \
            return;                                                            \
        }                                                                      \
    } while (0)

#define CHECK_EQ_INT(a, b)                                                     \
    do {                                                                       \
        long long t_a = (long long)(a), t_b = (long long)(b);                  \
        if (t_a != t_b) {                                                      \
            fprintf(stderr, "  %s:%d: %s == %s failed: %lld != %lld\n",        \
                    __FILE__, __LINE__, #a, #b, t_a, t_b);                     \
            t_cur_failed = 1;                                                  \
            return;                                                            \
        }                                                                      \
    } while (0)

#define CHECK_STR(a, b)                                                        \
    do {                                                                       \
        const char *t_a = (a), *t_b = (b);                                     \
        if (!t_a || !t_b || strcmp(t_a, t_b) != 0) {                           \
            fprintf(stderr, "  %s:%d: %s == %s failed:\n    got  \"%s\"\n    want \"%s\"\n", \
                    __FILE__, __LINE__, #a, #b, t_a ? t_a : "(null)",          \
                    t_b ? t_b : "(null)");                                     \
            t_cur_failed = 1;                                                  \
            return;                                                            \
        }                                                                      \
    } while (0)

#define CHECK_MEM(a, b, n) CHECK(memcmp((a), (b), (n)) == 0)

#define RUN(name)                                                              \
    do {                                                                       \
        if (!t_wanted(#name))                                                  \
            break;                                                             \
        t_cur_failed = 0;                                                      \
        name();                                                                \
        if (t_cur_failed) {                                                    \
            t_failed_total++;                                                  \
            printf("FAIL %s\n", #name);                                        \
        } else {                                                               \
            t_passed_total++;                                                  \
            printf("ok   %s\n", #name);                                        \
        }                                                                      \
        fflush(stdout);                                                        \
    } while (0)

#define T_DONE()                                                               \
    (t_run_unmatched() ? 1 :                                                   \
     (printf("%d passed, %d failed\n", t_passed_total, t_failed_total),        \
      t_failed_total ? 1 : 0))

/* T_RUN named tests, and fewer of them ran than it names. */
static inline int t_run_unmatched(void)
{
    const char *list = getenv("T_RUN");
    if (!list || !*list)
        return 0;
    int names = 1;
    for (const char *p = list; *p; p++)
        names += *p == ',';
    if (t_selected_total >= names)
        return 0;
    fprintf(stderr, "T_RUN=%s: %d of its %d names match no test in this program "
            "(the names are those RUN prints)\n", list, names - t_selected_total, names);
    return 1;
}

#endif
