/* SPDX-License-Identifier: Apache-2.0 */
/* The device pool (ops_pool.h): connect, the timed lock, the emulator check
 * and reconnecting, once for every front end. */
#include "ops_pool.h"

#include "adbc/shell.h"
#include "ops_util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "adbc/act.h"
#include "adbc/devices.h"
#include "adbc/error.h"

#if defined(__SANITIZE_THREAD__)
#define OPS_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define OPS_TSAN 1
#endif
#endif

#define BACKOFF_MIN 100
#define BACKOFF_MAX 5000
#define TICK_MS 100

const char *ops_kind_name(ops_kind kind)
{
    return kind == OPS_KIND_EMULATOR ? "emulator" : kind == OPS_KIND_PHYSICAL ? "physical"
                                                                              : "not connected";
}

static void plog(const ops_pool *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void plog(const ops_pool *p, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s: %s\n", p->o.name ? p->o.name : "adbc", buf);
}

/* ms from now on clock, as the absolute time the timed waits take. */
static struct timespec time_after(clockid_t clock, int ms)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    ts.tv_sec += ms / 1000;
    ts.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    return ts;
}

int ops_lock_within(pthread_mutex_t *m, int ms)
{
    if (ms < 0)
        ms = 0;
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 30)) && \
    !defined(OPS_TSAN)
    struct timespec ts = time_after(CLOCK_MONOTONIC, ms);
    return pthread_mutex_clocklock(m, CLOCK_MONOTONIC, &ts);
#else
    /* No clocklock (or ThreadSanitizer, which does not see it and would
     * take the lock as never held): the wait is on CLOCK_REALTIME, which a
     * clock step may stretch or cut. */
    struct timespec ts = time_after(CLOCK_REALTIME, ms);
    return pthread_mutex_timedlock(m, &ts);
#endif
}

void ops_pool_opts_init(ops_pool_opts *o)
{
    memset(o, 0, sizeof *o);
    o->name = "adbc";
    o->connect_ms = 10000;
}

/* Close d's connection (its lock held): the recording stream it carries
 * first (its end hangs up screenrecord, which finishes its file on the
 * device), then telling the pool's owner. */
static void close_conn(ops_dev *d)
{
    if (d->rec)
        adbc_shell_close(d->rec);
    d->rec = NULL;
    if (!d->conn)
        return;
    if (d->pool && d->pool->o.on_conn_close)
        d->pool->o.on_conn_close(d->pool->o.user, d, d->conn);
    adbc_conn_close(d->conn);
    d->conn = NULL;
}

/* Background: the device went away; try again after the backoff. */
static void lost(ops_pool *p, ops_dev *d, const char *why)
{
    close_conn(d);
    d->kind = OPS_KIND_UNKNOWN;
    d->serialno[0] = 0;
    d->state = OPS_DEV_GONE;
    snprintf(d->error, sizeof d->error, "%s", why);
    plog(p, "lost %s (%s); %s", *d->serial ? d->serial : "the device", why,
         p->o.background ? "reconnecting in the background" : "reconnecting on the next call");
    if (p->o.background) {
        d->backoff_ms = BACKOFF_MIN;
        d->next_try = ops_now_ms() + BACKOFF_MIN;
        pthread_mutex_lock(&p->wake_lock);
        pthread_cond_signal(&p->wake);
        pthread_mutex_unlock(&p->wake_lock);
    }
}

void ops_dev_drop(ops_dev *d)
{
    close_conn(d);
    d->kind = OPS_KIND_UNKNOWN;
    d->serialno[0] = 0;
    d->state = OPS_DEV_CONNECTING;
}

int ops_device_kind(ops_kind *kind, char *serialno, size_t cap, adbc_conn *conn,
                    const char *serial, int64_t deadline, ops_err *e)
{
    if (!e)
        return -1;
    if (!kind || !serialno || !cap || !conn)
        return ops_fail(e, OPS_EARG, "ops_device_kind: NULL argument");
    serialno[0] = 0;
    if (!serial)
        serial = "";
    /* The device's own word only: a name says nothing (an adbd on
     * 127.0.0.1:5555..5585 is listed as "emulator-N" whatever it is, a phone
     * reached through a forwarded port or after `adb tcpip 5555` included;
     * an mDNS instance is whatever its announcer chose). The emulator sets
     * ro.kernel.qemu=1 (the kernel's qemu=1; older images) or ro.boot.qemu=1
     * (androidboot.qemu=1; newer ones). */
    *kind = OPS_KIND_PHYSICAL;
    static const char *const qemu[] = {"ro.kernel.qemu", "ro.boot.qemu"};
    for (int i = 0; i < 2 && *kind != OPS_KIND_EMULATOR; i++) {
        char *v = NULL;
        int64_t left = deadline - ops_now_ms();
        int rc = adbc_getprop(&v, conn, qemu[i], left < 1 ? 1 : left > 600000 ? 600000
                                                                             : (int)left);
        if (rc < 0) {
            char what[640];
            snprintf(what, sizeof what,
                     "reading %s from %s (needed to tell an emulator from a physical device; "
                     "the device is refused until it can be read)", qemu[i],
                     *serial ? serial : "the device");
            ops_fail_adbc(e, rc, what);
            *kind = OPS_KIND_UNKNOWN;
            return -1;
        }
        if (strcmp(v, "1") == 0)
            *kind = OPS_KIND_EMULATOR;
        adbc_free(v);
    }
    char *sn = NULL;
    int64_t left = deadline - ops_now_ms();
    if (adbc_getprop(&sn, conn, "ro.serialno", left < 1 ? 1 : left > 600000 ? 600000
                                                                           : (int)left) == 0) {
        snprintf(serialno, cap, "%s", sn);
        adbc_free(sn);
    }
    return 0;
}

int ops_mdns_instance(char *out, size_t len, const char *serial)
{
    const char *p = strstr(serial, "._adb-tls-connect._tcp");
    if (!p)
        p = strstr(serial, "._adb._tcp");
    if (!p || p == serial || (size_t)(p - serial) >= len)
        return 0;
    memcpy(out, serial, (size_t)(p - serial));
    out[p - serial] = 0;
    return 1;
}

int ops_listed(const char *serial, const char *const *list, size_t n)
{
    if (!serial || !*serial || !list)
        return 0;
    char inst[256];
    int has_inst = ops_mdns_instance(inst, sizeof inst, serial);
    for (size_t i = 0; i < n; i++)
        if (list[i] && (strcmp(list[i], serial) == 0 || (has_inst && strcmp(list[i], inst) == 0)))
            return 1;
    return 0;
}

int ops_allowed(ops_kind kind, const char *serial, const char *serialno,
                const char *const *list, size_t n)
{
    return kind == OPS_KIND_EMULATOR || ops_listed(serial, list, n) ||
           ops_listed(serialno, list, n);
}

/* Emulator or physical (ops_device_kind); the lock held and d connected.
 * -1 with e set (and the connection dropped) when the facts cannot be read. */
static int decide_kind(ops_pool *p, ops_dev *d, int64_t deadline, ops_err *e)
{
    (void)p;
    if (ops_device_kind(&d->kind, d->serialno, sizeof d->serialno, d->conn, d->serial, deadline,
                        e) != 0) {
        ops_dev_drop(d);
        return -1;
    }
    return 0;
}

/* The options of one connect of d (its lock held), within bound ms. */
static void connect_opts(ops_pool *p, ops_dev *d, int bound, adbc_conn_opts *o)
{
    adbc_conn_opts_init(o);
    o->connect_timeout_ms = bound;
    if (o->auth_timeout_ms > bound)
        o->auth_timeout_ms = bound;
    if (p->o.io_ms > 0)
        o->io_timeout_ms = p->o.io_ms;
    if (p->o.on_conn_opts)
        p->o.on_conn_opts(p->o.user, d, o);
}

/* Connect d's device with o; needs no lock (d->serial never changes). The
 * selection rule decides what the name is (devices.h): a TCP address, an
 * emulator, a USB serial or port, an mDNS instance. */
static int connect_raw(ops_dev *d, adbc_conn **c, const adbc_conn_opts *o)
{
    *c = NULL;
    int rc = adbc_device_connect(c, *d->serial ? d->serial : NULL, o);
    if (rc < 0)
        *c = NULL;
    return rc;
}

/* What a connect came to, recorded in d (its lock held again, on the thread
 * that connected: adbc's last error is that thread's): c installed, or the
 * failure of rc with the next try after the backoff. back: d was connected
 * before. */
static int connect_end(ops_pool *p, ops_dev *d, adbc_conn *c, int rc, int back,
                       int64_t deadline, ops_err *e)
{
    if (rc < 0) {
        char what[320];
        snprintf(what, sizeof what, "connecting to %s", *d->serial ? d->serial : "the device");
        ops_fail_adbc(e, rc, what);
        e->code = OPS_EDEVICE; /* whatever the cause, the device cannot be used now */
        snprintf(d->error, sizeof d->error, "%s", adbc_last_error());
        d->state = OPS_DEV_GONE;
        if (p->o.background) {
            d->backoff_ms = d->backoff_ms ? d->backoff_ms * 2 : BACKOFF_MIN;
            if (d->backoff_ms > BACKOFF_MAX)
                d->backoff_ms = BACKOFF_MAX;
            d->next_try = ops_now_ms() + d->backoff_ms;
        }
        return -1;
    }
    d->conn = c;
    if (p->o.check_kind && decide_kind(p, d, deadline, e) != 0) {
        d->state = OPS_DEV_GONE;
        snprintf(d->error, sizeof d->error, "%.500s", e->msg);
        return -1;
    }
    d->state = OPS_DEV_CONNECTED;
    d->backoff_ms = 0;
    d->error[0] = 0;
    if (p->o.on_conn_ready)
        p->o.on_conn_ready(p->o.user, d, d->conn);
    if (p->o.check_kind)
        plog(p, "connected to %s: %s%s%s", d->serial, ops_kind_name(d->kind),
             d->serialno[0] ? ", ro.serialno " : "", d->serialno);
    else
        plog(p, "connected to %s%s", *d->serial ? d->serial : "the device",
             back ? " again" : "");
    return 0;
}

/* Connect d (its lock held) within the pool's bound and deadline. */
static int connect_dev(ops_pool *p, ops_dev *d, int64_t deadline, ops_err *e)
{
    int64_t left = deadline - ops_now_ms();
    int bound = p->o.connect_ms;
    if (left < bound)
        bound = left < 1 ? 1 : (int)left;
    adbc_conn_opts o;
    connect_opts(p, d, bound, &o);
    int back = d->backoff_ms != 0;
    adbc_conn *c;
    int rc = connect_raw(d, &c, &o);
    return connect_end(p, d, c, rc, back, deadline, e);
}

/* Background: connect d with its lock released meanwhile (its lock held
 * on entry and on return), so calls on a gone device fail at once instead
 * of waiting for the lock, and the device does not look busy. */
static void connect_unlocked(ops_pool *p, ops_dev *d)
{
    adbc_conn_opts o;
    connect_opts(p, d, p->o.connect_ms, &o);
    int back = d->backoff_ms != 0;
    d->connecting = 1;
    pthread_mutex_unlock(&d->lock);
    adbc_conn *c;
    int rc = connect_raw(d, &c, &o);
    /* A call holds the lock only briefly while d->connecting is set (it
     * fails, or waits on d->ready with the lock released). */
    pthread_mutex_lock(&d->lock);
    ops_err e;
    connect_end(p, d, c, rc, back, ops_now_ms() + p->o.connect_ms, &e);
    d->connecting = 0;
    pthread_cond_broadcast(&d->ready);
}

#define TAKE_SLICE_MS 100

static int stopping(ops_pool *p, ops_err *e, const char *name)
{
    return ops_fail(e, OPS_ESTOPPING, "%s is stopping: the call on %s was not started and "
                    "nothing was sent", p->o.name ? p->o.name : "adbc", name);
}

int ops_dev_take(ops_pool *p, ops_dev *d, int wait_ms, int64_t deadline, ops_err *e)
{
    if (!p || !d || !e)
        return e ? ops_fail(e, OPS_EARG, "no device given") : -1;
    const char *name = *d->serial ? d->serial : "the device";
    /* The lock within wait_ms, in slices: a stop ends the wait. */
    int64_t until = ops_now_ms() + (wait_ms > 0 ? wait_ms : 0);
    int rc;
    for (;;) {
        if (p->stopping)
            return stopping(p, e, name);
        int64_t left = until - ops_now_ms();
        rc = ops_lock_within(&d->lock, left > TAKE_SLICE_MS ? TAKE_SLICE_MS : (int)left);
        if (rc != ETIMEDOUT || left <= TAKE_SLICE_MS)
            break;
    }
    if (rc == ETIMEDOUT)
        return ops_fail(e, OPS_EBUSY, "%s stayed busy with another call for %d ms%s: retry "
                        "when that call has finished", name, wait_ms,
                        p->o.busy_hint ? p->o.busy_hint : "");
    if (rc != 0)
        return ops_fail(e, OPS_EFAIL, "locking %s: %s", name, strerror(rc));
    if (p->stopping) {
        pthread_mutex_unlock(&d->lock);
        return stopping(p, e, name);
    }
    if (d->conn && adbc_conn_status(d->conn) != 0)
        lost(p, d, adbc_strerror(adbc_conn_status(d->conn)));
    /* Background, never connected yet: the thread's first connect is
     * waited for (within the call's deadline), not failed. */
    while (!d->conn && d->connecting && d->state != OPS_DEV_GONE && !p->stopping &&
           ops_now_ms() < deadline) {
        int64_t slice = ops_now_ms() + TAKE_SLICE_MS;
        ops_cond_wait_until(&d->ready, &d->lock, slice < deadline ? slice : deadline);
    }
    if (p->stopping) {
        pthread_mutex_unlock(&d->lock);
        return stopping(p, e, name);
    }
    if (!d->conn) {
        int64_t now = ops_now_ms();
        if (p->o.background && (d->connecting || d->state == OPS_DEV_GONE ||
                                now < d->next_try)) {
            char when[64];
            if (d->connecting)
                snprintf(when, sizeof when, "connecting now");
            else
                snprintf(when, sizeof when, "next try in %lld ms",
                         (long long)(d->next_try > now ? d->next_try - now : 0));
            ops_fail(e, OPS_EDEVICE, "%s is not connected (%s); reconnecting on its own "
                     "(%s)", name, d->error[0] ? d->error : "not yet tried", when);
            pthread_mutex_unlock(&d->lock);
            return -1;
        }
        if (connect_dev(p, d, deadline, e) != 0) {
            pthread_mutex_unlock(&d->lock);
            return -1;
        }
    }
    d->calls++;
    return 0;
}

void ops_dev_give(ops_pool *p, ops_dev *d, ops_code code)
{
    if (!p || !d)
        return;
    if (d->conn && adbc_conn_status(d->conn) != 0)
        lost(p, d, adbc_strerror(adbc_conn_status(d->conn)));
    else if (d->conn && code == OPS_EDEVICE)
        lost(p, d, "the connection was lost");
    pthread_mutex_unlock(&d->lock);
}

ops_dev *ops_pool_find(ops_pool *p, const char *serial)
{
    pthread_mutex_lock(&p->lock);
    ops_dev *d = p->devs;
    while (d && strcmp(d->serial, serial) != 0)
        d = d->next;
    pthread_mutex_unlock(&p->lock);
    return d;
}

ops_dev *ops_pool_dev(ops_pool *p, const char *serial, ops_err *e)
{
    if (!serial)
        serial = "";
    if (strlen(serial) >= sizeof ((ops_dev *)0)->serial) {
        ops_fail(e, OPS_EARG, "device name too long (at most %zu bytes)",
                 sizeof ((ops_dev *)0)->serial - 1);
        return NULL;
    }
    pthread_mutex_lock(&p->lock);
    ops_dev *d = p->devs;
    while (d && strcmp(d->serial, serial) != 0)
        d = d->next;
    if (!d && (d = calloc(1, sizeof *d))) {
        strcpy(d->serial, serial);
        d->pool = p;
        pthread_mutex_init(&d->lock, NULL);
        ops_cond_init(&d->ready);
        *p->tail = d;
        p->tail = &d->next;
        p->ndevs++;
    }
    pthread_mutex_unlock(&p->lock);
    if (!d)
        ops_fail(e, OPS_EFAIL, "out of memory");
    return d;
}

int ops_pool_list(ops_pool *p, ops_dev **out, int max)
{
    int n = 0;
    pthread_mutex_lock(&p->lock);
    for (ops_dev *d = p->devs; d && n < max; d = d->next)
        out[n++] = d;
    pthread_mutex_unlock(&p->lock);
    return n;
}

int64_t ops_pool_gone_since(const ops_pool *p)
{
    return p->gone_since;
}

static void *reconnector(void *arg)
{
    ops_pool *p = arg;
    while (!p->stopping) {
        int held = 0;
        pthread_mutex_lock(&p->lock);
        ops_dev *d = p->devs;
        pthread_mutex_unlock(&p->lock);
        /* Devices are appended, never removed while the thread runs. */
        for (; d && !p->stopping; ) {
            if (pthread_mutex_trylock(&d->lock) != 0) {
                held = 1; /* in use: it is connected, or the call will connect */
            } else {
                if (d->conn && adbc_conn_status(d->conn) != 0)
                    lost(p, d, adbc_strerror(adbc_conn_status(d->conn)));
                if (!d->conn && !d->connecting && ops_now_ms() >= d->next_try)
                    connect_unlocked(p, d);
                held |= d->conn != NULL;
                pthread_mutex_unlock(&d->lock);
            }
            pthread_mutex_lock(&p->lock);
            d = d->next;
            pthread_mutex_unlock(&p->lock);
        }
        if (held)
            p->gone_since = 0;
        else if (!p->gone_since)
            p->gone_since = ops_now_ms();
        pthread_mutex_lock(&p->wake_lock);
        if (!p->stopping)
            ops_cond_wait_until(&p->wake, &p->wake_lock, ops_now_ms() + TICK_MS);
        pthread_mutex_unlock(&p->wake_lock);
    }
    return NULL;
}

int ops_pool_init(ops_pool *p, const ops_pool_opts *o, ops_err *e)
{
    memset(p, 0, sizeof *p);
    ops_pool_opts_init(&p->o);
    if (o)
        p->o = *o;
    if (p->o.connect_ms <= 0)
        p->o.connect_ms = 10000;
    p->tail = &p->devs;
    pthread_mutex_init(&p->lock, NULL);
    pthread_mutex_init(&p->wake_lock, NULL);
    ops_cond_init(&p->wake);
    if (p->o.background) {
        if (pthread_create(&p->reconnector, NULL, reconnector, p) != 0) {
            ops_fail(e, OPS_EFAIL, "cannot start the reconnecting thread: %s", strerror(errno));
            return -1;
        }
        p->thread_started = 1;
    }
    return 0;
}

void ops_pool_stop(ops_pool *p)
{
    pthread_mutex_lock(&p->wake_lock);
    p->stopping = 1;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->wake_lock);
    if (p->thread_started) {
        pthread_join(p->reconnector, NULL);
        p->thread_started = 0;
    }
}

void ops_pool_free(ops_pool *p)
{
    ops_pool_stop(p);
    ops_dev *d = p->devs;
    while (d) {
        ops_dev *next = d->next;
        close_conn(d);
        adbc_ui_snap_free(d->last);
        pthread_mutex_destroy(&d->lock);
        pthread_cond_destroy(&d->ready);
        free(d);
        d = next;
    }
    p->devs = NULL;
    p->tail = &p->devs;
    p->ndevs = 0;
    pthread_mutex_destroy(&p->lock);
    pthread_mutex_destroy(&p->wake_lock);
    pthread_cond_destroy(&p->wake);
}
