/* SPDX-License-Identifier: Apache-2.0 */
/* Allocation failure at every point: the workload of fault_scenario.h
 * (handshake, shell run, push, pull) is run once to count the library's
 * allocations, then again failing the Nth one and every later one, for
 * every N. Each run must end in an error with a message (or succeed when the
 * failure hit only cleanup-tolerant paths), never crash or hang, and a
 * failed pull must leave no file. Leaks show up under the ASan build. */
#include <limits.h>

#include "core/testhooks.h"
#include "fault_scenario.h"
#include "t.h"

static fault_env env;
static int ready;

TEST(baseline_succeeds)
{
    fault_result r;
    fault_run(&env, NULL, &r);
    if (r.rc)
        fprintf(stderr, "  %s: %d %s\n", r.stage, r.rc, r.msg);
    CHECK_EQ_INT(r.rc, 0);
}

TEST(every_allocation_fails_in_turn)
{
    fault_result r;
    core_test_fail_alloc_at(LONG_MAX);
    fault_run(&env, NULL, &r);
    long total = core_test_alloc_count();
    core_test_fail_alloc_at(0);
    CHECK_EQ_INT(r.rc, 0);
    CHECK(total > 10);
    int nomem = 0, other = 0, ok = 0;
    for (long n = 1; n <= total + 1; n++) {
        core_test_fail_alloc_at(n);
        fault_run(&env, NULL, &r);
        core_test_fail_alloc_at(0);
        if (r.rc == 0) {
            ok++;
            continue;
        }
        if (r.rc == ADBC_ENOMEM)
            nomem++;
        else
            other++;
        if (getenv("FAULT_VERBOSE") || r.rc == -999 || r.rc == -998 || r.msg[0] == 0 || r.partial)
            fprintf(stderr, "  alloc %ld: %s: %d \"%s\"%s\n", n, r.stage, r.rc, r.msg,
                    r.partial ? " (partial file left)" : "");
        CHECK(r.rc != -999 && r.rc != -998); /* never a wrong result passed off as right */
        CHECK(r.msg[0] != '\0');
        CHECK(!r.partial);
    }
    printf("  %ld allocations; failing each: %d ENOMEM, %d other errors, %d still succeeded\n",
           total, nomem, other, ok);
}

int main(void)
{
    if (fault_env_init(&env) != 0) {
        fprintf(stderr, "cannot start the test device\n");
        return 1;
    }
    ready = 1;
    RUN(baseline_succeeds);
    RUN(every_allocation_fails_in_turn);
    fault_env_free(&env);
    return T_DONE();
}
