/* SPDX-License-Identifier: Apache-2.0 */
/* Transport failure at every byte: a wrapping transport passes the first N
 * bytes (both directions counted together) and then either fails every call
 * with ADBC_EIO ("fail") or acts as if the device hung up ("cut"), for every
 * N (every 13th by default, FAULT_STEP=1 for all) across the workload of fault_scenario.h (handshake, shell run, push,
 * pull). Each run must end in an error with a message, within the timeouts,
 * and a failed pull must leave no file. */
#include <pthread.h>
#include <stdlib.h>

#include "core/internal.h"
#include "fault_scenario.h"
#include "t.h"

typedef struct wrap {
    adbc_transport base;
    adbc_transport *inner;
    long budget;   /* bytes still allowed; < 0 unlimited */
    long moved;    /* bytes passed through */
    int cut;       /* 1: hang up; 0: I/O error */
    pthread_mutex_t mu;
} wrap;

static long g_moved; /* bytes moved by the current wrapper */

static long take(wrap *w, size_t want)
{
    pthread_mutex_lock(&w->mu);
    long n = (long)want;
    if (w->budget >= 0 && n > w->budget)
        n = w->budget;
    if (w->budget >= 0)
        w->budget -= n;
    w->moved += n;
    g_moved += n;
    pthread_mutex_unlock(&w->mu);
    return n;
}

static int injected(wrap *w)
{
    if (w->cut) {
        w->inner->ops->shutdown(w->inner);
        return core_fail(ADBC_ECLOSED, "injected: the device hung up");
    }
    return core_fail(ADBC_EIO, "injected I/O error on %s", w->inner->desc);
}

static int w_read(adbc_transport *t, void *buf, size_t len, int timeout_ms)
{
    wrap *w = (wrap *)t;
    /* Reads do not reserve budget (the reader waits in read() while the
     * writer must still be able to spend it); they pay for what arrived. */
    pthread_mutex_lock(&w->mu);
    long allowed = w->budget < 0 || (long)len < w->budget ? (long)len : w->budget;
    pthread_mutex_unlock(&w->mu);
    if (allowed <= 0)
        return injected(w);
    int r = w->inner->ops->read(w->inner, buf, (size_t)allowed, timeout_ms);
    if (r > 0) {
        pthread_mutex_lock(&w->mu);
        if (w->budget >= 0)
            w->budget = w->budget > r ? w->budget - r : 0;
        w->moved += r;
        g_moved += r;
        pthread_mutex_unlock(&w->mu);
    }
    return r;
}

static int w_write(adbc_transport *t, const void *buf, size_t len, int timeout_ms)
{
    wrap *w = (wrap *)t;
    long allowed = take(w, len);
    if (allowed > 0) {
        int r = w->inner->ops->write(w->inner, buf, (size_t)allowed, timeout_ms);
        if (r < 0)
            return r;
    }
    if ((size_t)allowed < len)
        return injected(w); /* cut in the middle of the write */
    return 0;
}

static void w_shutdown(adbc_transport *t)
{
    wrap *w = (wrap *)t;
    w->inner->ops->shutdown(w->inner);
}

static void w_destroy(adbc_transport *t)
{
    wrap *w = (wrap *)t;
    adbc_transport_free(w->inner);
    pthread_mutex_destroy(&w->mu);
    free(w);
}

static const adbc_transport_ops wrap_ops = {
    .size = sizeof(adbc_transport_ops),
    .name = "fault",
    .read = w_read,
    .write = w_write,
    .shutdown = w_shutdown,
    .destroy = w_destroy,
};

static fault_env env;

static adbc_transport *wrapped(long budget, int cut)
{
    adbc_transport *inner;
    if (adbc_transport_tcp(&inner, env.dev.addr, 5000) != 0)
        return NULL;
    wrap *w = calloc(1, sizeof *w);
    w->base.size = sizeof w->base;
    w->base.ops = &wrap_ops;
    snprintf(w->base.desc, sizeof w->base.desc, "fault:%.100s", inner->desc);
    w->inner = inner;
    w->budget = budget;
    w->cut = cut;
    pthread_mutex_init(&w->mu, NULL);
    return &w->base;
}

static void run_with(long budget, int cut, fault_result *r)
{
    adbc_transport *t = wrapped(budget, cut);
    if (!t) {
        memset(r, 0, sizeof *r);
        r->rc = -997;
        r->stage = "tcp connect";
        return;
    }
    fault_run(&env, t, r); /* frees t with the connection */
}

/* Bytes the whole workload moves, counted through a wrapper without a limit. */
static long total_bytes(void)
{
    adbc_transport *t = wrapped(-1, 0);
    if (!t)
        return -1;
    g_moved = 0;
    fault_result r;
    fault_run(&env, t, &r); /* frees t with the connection */
    return r.rc == 0 ? g_moved : -1;
}

static void every_byte(int cut)
{
    long total = total_bytes();
    CHECK(total > 100);
    int errors = 0, ok = 0;
    int64_t worst = 0;
    /* Every 13th offset by default, to keep the suite to a minute or so;
     * FAULT_STEP=1 sweeps every byte (about 15 minutes). */
    long step = getenv("FAULT_STEP") ? atol(getenv("FAULT_STEP")) : 13;
    if (step < 1)
        step = 1;
    for (long n = 0; n <= total; n += step) {
        fault_result r;
        int64_t t0 = core_now_ms();
        run_with(n, cut, &r);
        int64_t took = core_now_ms() - t0;
        if (took > worst)
            worst = took;
        if (getenv("FAULT_VERBOSE"))
            fprintf(stderr, "  byte %ld: %lld ms rc %d %s\n", n, (long long)took, r.rc, r.msg);
        if (r.rc == 0) {
            ok++;
            continue;
        }
        errors++;
        if (getenv("FAULT_VERBOSE") || r.rc <= -997 || r.msg[0] == 0 || r.partial)
            fprintf(stderr, "  byte %ld: %s: %d \"%s\"%s\n", n, r.stage, r.rc, r.msg,
                    r.partial ? " (partial file left)" : "");
        CHECK(r.rc > -997);
        CHECK(r.msg[0] != '\0');
        CHECK(!r.partial);
    }
    printf("  %s after each of %ld bytes: %d errors, %d runs completed, slowest %lld ms\n",
           cut ? "hang-up" : "I/O error", total, errors, ok, (long long)worst);
    CHECK(ok <= 1 + total / 50); /* only cuts at the very end may go unnoticed */
    CHECK(worst < 10000);
}

TEST(io_error_at_every_byte) { every_byte(0); }
TEST(hangup_at_every_byte) { every_byte(1); }

int main(void)
{
    if (fault_env_init(&env) != 0) {
        fprintf(stderr, "cannot start the test device\n");
        return 1;
    }
    RUN(io_error_at_every_byte);
    RUN(hangup_at_every_byte);
    fault_env_free(&env);
    return T_DONE();
}
