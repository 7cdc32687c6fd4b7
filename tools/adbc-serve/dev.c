/* SPDX-License-Identifier: Apache-2.0 */
/* The devices adbc-serve holds. Each has a lock held for the whole of a
 * call (taken within --busy-wait, else the call is answered "busy"), its
 * connection and its latest snapshot. A call that loses the device drops
 * the connection; the reconnector thread then tries again with a backoff
 * that doubles from 100 ms to 5 s, so a device that comes back is in use
 * again within a few seconds and a device that stays away costs little. */
#include "serve.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "adbc/devices.h"

#define BACKOFF_MIN 100
#define BACKOFF_MAX 5000

void serve_devs_init(serve *s)
{
    for (int i = 0; i < s->ndevs; i++)
        pthread_mutex_init(&s->devs[i].lock, NULL);
    pthread_mutex_init(&s->wake_lock, NULL);
    pthread_cond_init(&s->wake, NULL);
}

void serve_devs_free(serve *s)
{
    for (int i = 0; i < s->ndevs; i++) {
        serve_dev *d = &s->devs[i];
        adbc_conn_close(d->conn);
        d->conn = NULL;
        adbc_ui_snap_free(d->last);
        d->last = NULL;
        pthread_mutex_destroy(&d->lock);
    }
}

serve_dev *serve_dev_find(serve *s, const char *name, ops_err *e)
{
    if (name && *name) {
        for (int i = 0; i < s->ndevs; i++)
            if (strcmp(s->devs[i].name, name) == 0)
                return &s->devs[i];
        ops_fail(e, OPS_ENOMATCH, "no device '%.200s' in this server (GET /v1/devices lists "
                 "them)", name);
        return NULL;
    }
    if (s->ndevs == 1)
        return &s->devs[0];
    ops_fail(e, OPS_EARG, "this server holds %d devices: name one with ?device=NAME (GET "
             "/v1/devices lists them)", s->ndevs);
    return NULL;
}

/* Connect d (its lock held). */
static int connect_dev(serve *s, serve_dev *d)
{
    adbc_conn_opts o;
    adbc_conn_opts_init(&o);
    o.connect_timeout_ms = s->connect_ms;
    if (o.auth_timeout_ms > s->connect_ms)
        o.auth_timeout_ms = s->connect_ms;
    const char *n = d->name;
    int tcp = strncmp(n, "usb:", 4) != 0 && strncmp(n, "fd:", 3) != 0 && strchr(n, ':');
    adbc_conn *c = NULL;
    int rc = tcp ? adbc_connect(&c, n, &o) : adbc_device_connect(&c, *n ? n : NULL, &o);
    int64_t now = ops_now_ms();
    if (rc < 0) {
        snprintf(d->error, sizeof d->error, "%s", adbc_last_error());
        d->backoff_ms = d->backoff_ms ? d->backoff_ms * 2 : BACKOFF_MIN;
        if (d->backoff_ms > BACKOFF_MAX)
            d->backoff_ms = BACKOFF_MAX;
        d->next_try = now + d->backoff_ms;
        d->state = DEV_GONE;
        return rc;
    }
    if (d->backoff_ms)
        fprintf(stderr, SERVE_NAME ": %s is back\n", d->name);
    d->conn = c;
    d->state = DEV_CONNECTED;
    d->backoff_ms = 0;
    d->error[0] = '\0';
    return 0;
}

static int lock_within(pthread_mutex_t *m, int ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += ms / 1000;
    ts.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    return pthread_mutex_timedlock(m, &ts);
}

int serve_dev_acquire(serve *s, serve_dev *d, int wait_ms, ops_err *e)
{
    int rc = lock_within(&d->lock, wait_ms);
    if (rc == ETIMEDOUT)
        return ops_fail(e, OPS_EBUSY, "%s stayed busy with another call for %d ms (?wait=MS, "
                        "default the server's --busy-wait): retry later", d->name, wait_ms);
    if (rc != 0)
        return ops_fail(e, OPS_EFAIL, "locking %s: %s", d->name, strerror(rc));
    if (!d->conn && ops_now_ms() >= d->next_try)
        connect_dev(s, d);
    if (!d->conn) {
        int64_t wait = d->next_try - ops_now_ms();
        ops_fail(e, OPS_EDEVICE, "%s is not connected (%s); the server reconnects on its own "
                 "(next try in %lld ms)", d->name, d->error[0] ? d->error : "not yet tried",
                 (long long)(wait > 0 ? wait : 0));
        pthread_mutex_unlock(&d->lock);
        return -1;
    }
    d->calls++;
    return 0;
}

void serve_dev_release(serve *s, serve_dev *d, ops_code code)
{
    if (code == OPS_EDEVICE && d->conn) {
        fprintf(stderr, SERVE_NAME ": lost %s; reconnecting in the background\n", d->name);
        adbc_conn_close(d->conn);
        d->conn = NULL;
        d->state = DEV_GONE;
        snprintf(d->error, sizeof d->error, "the connection was lost");
        d->backoff_ms = BACKOFF_MIN;
        d->next_try = ops_now_ms() + BACKOFF_MIN;
        pthread_mutex_lock(&s->wake_lock);
        pthread_cond_signal(&s->wake);
        pthread_mutex_unlock(&s->wake_lock);
    }
    pthread_mutex_unlock(&d->lock);
}

/* Drop d's connection once it has failed (its lock held): a device that
 * went away between calls is noticed without waiting for a call. */
static void drop_dead(serve_dev *d)
{
    if (!d->conn || adbc_conn_status(d->conn) == 0)
        return;
    fprintf(stderr, SERVE_NAME ": lost %s; reconnecting in the background\n", d->name);
    adbc_conn_close(d->conn);
    d->conn = NULL;
    d->state = DEV_GONE;
    snprintf(d->error, sizeof d->error, "the connection was lost");
    d->backoff_ms = BACKOFF_MIN;
    d->next_try = ops_now_ms() + BACKOFF_MIN;
}

static void *reconnector(void *arg)
{
    serve *s = arg;
    while (!s->stopping) {
        int held = 0;
        for (int i = 0; i < s->ndevs && !s->stopping; i++) {
            serve_dev *d = &s->devs[i];
            if (pthread_mutex_trylock(&d->lock) != 0) {
                held = 1; /* in use: it is connected, or the call will connect */
                continue;
            }
            drop_dead(d);
            if (!d->conn && ops_now_ms() >= d->next_try)
                connect_dev(s, d);
            held |= d->conn != NULL;
            pthread_mutex_unlock(&d->lock);
        }
        if (held)
            s->gone_since = 0;
        else if (!s->gone_since)
            s->gone_since = ops_now_ms();
        pthread_mutex_lock(&s->wake_lock);
        if (!s->stopping) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_nsec += 100 * 1000000L;
            if (ts.tv_nsec >= 1000000000L) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000L;
            }
            pthread_cond_timedwait(&s->wake, &s->wake_lock, &ts);
        }
        pthread_mutex_unlock(&s->wake_lock);
    }
    return NULL;
}

int serve_idle_expired(serve *s)
{
    if (s->idle_exit_s <= 0 || serve_control_clients() > 0)
        return 0;
    int64_t now = ops_now_ms(), gone = s->gone_since, bound = (int64_t)s->idle_exit_s * 1000;
    return gone && now - gone >= bound && now - s->last_client_ms >= bound;
}

int serve_reconnector_start(serve *s)
{
    return pthread_create(&s->reconnector, NULL, reconnector, s) == 0 ? 0 : -1;
}

void serve_reconnector_stop(serve *s)
{
    pthread_mutex_lock(&s->wake_lock);
    s->stopping = 1;
    pthread_cond_broadcast(&s->wake);
    pthread_mutex_unlock(&s->wake_lock);
    pthread_join(s->reconnector, NULL);
}
