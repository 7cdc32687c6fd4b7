/* SPDX-License-Identifier: Apache-2.0 */
/* The devices adbc-serve holds: tools/ops' pool, reconnecting in the
 * background (a call on a device that is away fails at once saying when
 * the next try is; a device that comes back is in use again within a few
 * seconds). What is adbc-serve's own: devices are named when it starts, a
 * request names one with ?device=NAME, and --idle-exit. */
#include "serve.h"

#include <stdio.h>
#include <string.h>

/* What was built on a connection goes before it: the adb server's relays,
 * then the held forwards. */
static void conn_close(void *user, ops_dev *d, adbc_conn *c)
{
    serve_adbsrv_conn_close(user, d, c);
    serve_held_conn_close(user, d, c);
}

/* ADBC_HOST_FEATURES without delayed_ack, for serve.no_burst. */
static char no_burst_features[sizeof ADBC_HOST_FEATURES];
static int no_burst;
static uint32_t local_window, local_send_ahead;

static void conn_opts(void *user, ops_dev *d, adbc_conn_opts *o)
{
    serve_held_conn_opts(user, d, o);
    if (no_burst)
        o->features = no_burst_features;
    o->local_window = local_window;
    o->local_send_ahead = local_send_ahead;
}

/* The feature list less one name. */
static void features_without(char *out, size_t cap, const char *list, const char *name)
{
    size_t used = 0, nlen = strlen(name);
    out[0] = '\0';
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, ",");
        if (!(n == nlen && strncmp(p, name, n) == 0) && used + n + 2 <= cap)
            used += (size_t)snprintf(out + used, cap - used, "%s%.*s", used ? "," : "", (int)n, p);
        p += n + (p[n] == ',');
    }
}

int serve_devs_init(serve *s, const char *const *names, int n)
{
    ops_pool_opts o;
    ops_pool_opts_init(&o);
    o.name = SERVE_NAME;
    o.connect_ms = s->connect_ms;
    o.background = 1;
    o.busy_hint = " (?wait=MS, default the server's --busy-wait)";
    o.on_conn_close = conn_close;
    o.on_conn_ready = serve_adbsrv_conn_ready; /* the adb server opens streams on it */
    o.on_conn_opts = conn_opts; /* held reverse rules take the device's streams; burst mode */
    no_burst = s->no_burst;
    local_window = s->local_window;
    local_send_ahead = s->local_send_ahead;
    features_without(no_burst_features, sizeof no_burst_features, ADBC_HOST_FEATURES,
                     "delayed_ack");
    ops_err e;
    if (ops_pool_init(&s->pool, &o, &e) != 0) {
        fprintf(stderr, SERVE_NAME ": %s\n", e.msg);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        if (!(s->devs[i] = ops_pool_dev(&s->pool, names[i], &e))) {
            fprintf(stderr, SERVE_NAME ": %s\n", e.msg);
            return -1;
        }
    }
    s->ndevs = n;
    return 0;
}

void serve_devs_free(serve *s)
{
    ops_pool_free(&s->pool);
    s->ndevs = 0;
}

ops_dev *serve_dev_find(serve *s, const char *name, ops_err *e)
{
    if (name && *name) {
        for (int i = 0; i < s->ndevs; i++)
            if (strcmp(s->devs[i]->serial, name) == 0)
                return s->devs[i];
        ops_fail(e, OPS_ENOMATCH, "no device '%.200s' in this server (GET /v1/devices lists "
                 "them)", name);
        return NULL;
    }
    if (s->ndevs == 1)
        return s->devs[0];
    ops_fail(e, OPS_EARG, "this server holds %d devices: name one with ?device=NAME (GET "
             "/v1/devices lists them)", s->ndevs);
    return NULL;
}

int serve_idle_expired(serve *s)
{
    if (s->idle_exit_s <= 0 || serve_control_clients() > 0)
        return 0;
    int64_t now = ops_now_ms(), gone = ops_pool_gone_since(&s->pool);
    int64_t bound = (int64_t)s->idle_exit_s * 1000;
    return gone && now - gone >= bound && now - s->last_client_ms >= bound;
}
