/* SPDX-License-Identifier: Apache-2.0 */
/* Reverse forwarding, the host side: reverse:* requests (adbd keeps the
 * rules and answers as adb.cpp handle_forward_request does), and the relay
 * of each stream the device opens for a rule to the host destination the
 * rule names. Only destinations added through this object are accepted;
 * any other stream the device opens is refused by the connection. */
#include "services/forward_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_RULES 64
#define REQ_TIMEOUT_MS 10000

struct adbc_reverse {
    pthread_mutex_t mu;
    adbc_conn *c;
    pthread_t th;
    int running;
    _Atomic int stop;
    struct {
        char remote[256]; /* the device's listen spec, as the device reports it */
        char local[256];  /* the host destination */
    } rules[MAX_RULES];
    size_t nrules;
    fwd_relays relays;
};

/* Read the status ("OKAY"/"FAIL" + hex4 message) and, after OKAY, the
 * optional hex4-length string that follows. */
static int read_hex4(adbc_stream *st, size_t *n)
{
    char h[5] = {0};
    int rc = adbc_stream_read_full(st, h, 4, REQ_TIMEOUT_MS);
    if (rc < 0)
        return rc;
    char *end;
    unsigned long v = strtoul(h, &end, 16);
    if (end != h + 4)
        return core_fail(ADBC_EPROTO, "the device sent \"%.4s\" where a hex length belongs", h);
    *n = v;
    return 0;
}

/* Whatever the stream has up to its end (at most cap - 1 bytes). */
static ssize_t read_rest(adbc_stream *st, char *buf, size_t cap)
{
    size_t got = 0;
    while (got + 1 < cap) {
        ssize_t n = adbc_stream_read(st, buf + got, cap - 1 - got, REQ_TIMEOUT_MS);
        if (n < 0)
            return n;
        if (n == 0)
            break;
        got += (size_t)n;
    }
    buf[got] = '\0';
    return (ssize_t)got;
}

int adbc_reverse_request(char *reply, size_t len, adbc_conn *c, const char *request)
{
    if (reply && len)
        reply[0] = '\0';
    char svc[600];
    if (snprintf(svc, sizeof svc, "reverse:%s", request) >= (int)sizeof svc)
        return core_fail(ADBC_EINVAL, "reverse request too long");
    adbc_stream *st;
    int rc = adbc_stream_open(&st, c, svc, REQ_TIMEOUT_MS);
    if (rc == ADBC_EREFUSED)
        return core_fail(rc, "the device refused \"%s\": it has no reverse forwarding", svc);
    if (rc < 0)
        return rc;
    char status[4];
    rc = adbc_stream_read_full(st, status, 4, REQ_TIMEOUT_MS);
    if (rc == 0 && memcmp(status, "FAIL", 4) == 0) {
        size_t n;
        char msg[512];
        rc = read_hex4(st, &n);
        if (rc == 0) {
            if (n >= sizeof msg)
                n = sizeof msg - 1;
            rc = adbc_stream_read_full(st, msg, n, REQ_TIMEOUT_MS);
            msg[rc == 0 ? n : 0] = '\0';
            rc = core_fail(ADBC_EREFUSED, "the device refused \"%s\": %s", svc, msg);
        }
    } else if (rc == 0 && memcmp(status, "OKAY", 4) == 0) {
        char rest[64];
        ssize_t n = read_rest(st, rest, sizeof rest);
        if (n < 0) {
            rc = (int)n;
        } else if (n >= 4 && reply && len) {
            /* hex4 + the resolved port */
            snprintf(reply, len, "%.*s", (int)(n - 4), rest + 4);
        }
    } else if (rc == 0) {
        rc = core_fail(ADBC_EPROTO, "the device answered \"%s\" with \"%.4s\", not OKAY or FAIL",
                       svc, status);
    }
    adbc_stream_close(st);
    return rc;
}

int adbc_reverse_list(char **out, adbc_conn *c)
{
    if (!out)
        return core_null(__func__, "out");
    *out = NULL;
    adbc_stream *st;
    int rc = adbc_stream_open(&st, c, "reverse:list-forward", REQ_TIMEOUT_MS);
    if (rc == ADBC_EREFUSED)
        return core_fail(rc, "the device refused reverse:list-forward: it has no reverse "
                             "forwarding");
    if (rc < 0)
        return rc;
    size_t n;
    rc = read_hex4(st, &n);
    if (rc == 0) {
        char *buf = core_malloc(n + 1);
        if (!buf)
            rc = core_fail(ADBC_ENOMEM, "out of memory");
        else if ((rc = adbc_stream_read_full(st, buf, n, REQ_TIMEOUT_MS)) == 0) {
            buf[n] = '\0';
            *out = buf;
        } else {
            core_free(buf);
        }
    }
    adbc_stream_close(st);
    return rc;
}

/* ---- the relay side ---- */

/* on_device_open: reader thread, connection lock held; only looks. */
static int allow(void *user, const char *dest)
{
    adbc_reverse *r = user;
    int ok = 0;
    pthread_mutex_lock(&r->mu);
    for (size_t i = 0; i < r->nrules && !ok; i++)
        ok = strcmp(r->rules[i].local, dest) == 0;
    pthread_mutex_unlock(&r->mu);
    return ok;
}

int adbc_reverse_new(adbc_reverse **out, const adbc_forward_opts *opts)
{
    if (!out)
        return core_null(__func__, "out");
    *out = NULL;
    adbc_forward_opts own;
    adbc_forward_opts_init(&own);
    if (core_abi_take(&own, sizeof own, opts, "adbc_forward_opts") < 0)
        return ADBC_EINVAL;
    opts = &own;
    adbc_reverse *r = core_calloc(1, sizeof *r);
    if (!r)
        return core_fail(ADBC_ENOMEM, "out of memory");
    pthread_mutex_init(&r->mu, NULL);
    relays_init(&r->relays, opts);
    *out = r;
    return 0;
}

void adbc_reverse_conn_opts(adbc_conn_opts *o, adbc_reverse *r)
{
    if (!o || !r)
        return;
    o->on_device_open = allow;
    o->device_open_user = r;
}

/* Take each accepted stream, connect to its host destination, relay. */
static void *accept_main(void *arg)
{
    adbc_reverse *r = arg;
    while (!r->stop) {
        relays_reap(&r->relays);
        adbc_stream *st;
        int rc = adbc_conn_accept(&st, r->c, 200);
        if (rc == ADBC_ETIMEDOUT)
            continue;
        if (rc < 0)
            break; /* the connection ended */
        const char *dest = adbc_stream_destination(st);
        int fd = forward_host_connect(dest, r->relays.opts.open_timeout_ms);
        char *d = core_strdup(dest);
        if (fd < 0 || !d) {
            if (r->relays.opts.on_event) {
                adbc_forward_event ev = {.kind = ADBC_FWD_REFUSED,
                                         .peer = "device",
                                         .destination = dest,
                                         .error = fd < 0 ? fd : ADBC_ENOMEM,
                                         .message = adbc_last_error()};
                r->relays.opts.on_event(r->relays.opts.user, &ev);
            }
            if (fd >= 0)
                close(fd);
            core_free(d);
            adbc_stream_close(st); /* the device's connection closes */
            continue;
        }
        relay_start(&r->relays, r->c, fd, st, d, "device");
    }
    return NULL;
}

int adbc_reverse_start(adbc_reverse *r, adbc_conn *c)
{
    if (!r || !c)
        return core_null(__func__, !r ? "the reverse handle" : "the connection");
    if (r->running)
        return core_fail(ADBC_EINVAL, "adbc_reverse_start: already started");
    r->c = c;
    if (pthread_create(&r->th, NULL, accept_main, r) != 0)
        return core_fail(ADBC_ENOMEM, "cannot start the reverse forwarding thread");
    r->running = 1;
    return 0;
}

int adbc_reverse_add(char *resolved, size_t len, adbc_reverse *r, const char *remote,
                     const char *local, int norebind)
{
    if (!r)
        return core_null(__func__, "the reverse handle");
    if (!r->c)
        return core_fail(ADBC_EINVAL, "adbc_reverse_add: call adbc_reverse_start first");
    struct addrinfo *ai;
    struct sockaddr_un un;
    socklen_t unlen;
    int rc = forward_host_spec(local, 0, &ai, &un, &unlen);
    if (rc < 0)
        return rc;
    if (ai)
        freeaddrinfo(ai);
    if (strlen(remote) >= sizeof r->rules[0].remote || strlen(local) >= sizeof r->rules[0].local)
        return core_fail(ADBC_EINVAL, "socket spec too long");
    pthread_mutex_lock(&r->mu);
    size_t i;
    for (i = 0; i < r->nrules; i++)
        if (strcmp(r->rules[i].remote, remote) == 0)
            break;
    if (i == MAX_RULES) {
        pthread_mutex_unlock(&r->mu);
        return core_fail(ADBC_EINVAL, "at most %d reverse rules", MAX_RULES);
    }
    /* Allowed before the device may use it: a connection can arrive as
     * soon as the device listens. */
    int added = i == r->nrules;
    if (added) {
        snprintf(r->rules[i].remote, sizeof r->rules[i].remote, "%s", remote);
        r->nrules++;
    }
    char old_local[256];
    snprintf(old_local, sizeof old_local, "%s", r->rules[i].local);
    snprintf(r->rules[i].local, sizeof r->rules[i].local, "%s", local);
    pthread_mutex_unlock(&r->mu);

    char req[600], port[32];
    snprintf(req, sizeof req, "forward:%s%s;%s", norebind ? "norebind:" : "", remote, local);
    rc = adbc_reverse_request(port, sizeof port, r->c, req);
    pthread_mutex_lock(&r->mu);
    for (i = 0; i < r->nrules; i++)
        if (strcmp(r->rules[i].remote, remote) == 0)
            break;
    if (i < r->nrules) {
        if (rc < 0 && added)
            r->rules[i] = r->rules[--r->nrules];
        else if (rc < 0)
            snprintf(r->rules[i].local, sizeof r->rules[i].local, "%s", old_local);
        else if (port[0] && strcmp(remote, "tcp:0") == 0)
            snprintf(r->rules[i].remote, sizeof r->rules[i].remote, "tcp:%s", port);
    }
    pthread_mutex_unlock(&r->mu);
    if (rc == 0 && resolved && len) {
        if (port[0] && strcmp(remote, "tcp:0") == 0)
            snprintf(resolved, len, "tcp:%s", port);
        else
            snprintf(resolved, len, "%s", remote);
    }
    return rc;
}

int adbc_reverse_remove(adbc_reverse *r, const char *remote)
{
    if (!r || !remote)
        return core_null(__func__, !r ? "the reverse handle" : "remote");
    if (!r->c)
        return core_fail(ADBC_EINVAL, "adbc_reverse_remove: call adbc_reverse_start first");
    char req[300];
    snprintf(req, sizeof req, "killforward:%s", remote);
    int rc = adbc_reverse_request(NULL, 0, r->c, req);
    pthread_mutex_lock(&r->mu);
    for (size_t i = 0; i < r->nrules; i++)
        if (strcmp(r->rules[i].remote, remote) == 0) {
            r->rules[i] = r->rules[--r->nrules];
            break;
        }
    pthread_mutex_unlock(&r->mu);
    return rc;
}

int adbc_reverse_remove_all(adbc_reverse *r)
{
    if (!r)
        return core_null(__func__, "the reverse handle");
    if (!r->c)
        return core_fail(ADBC_EINVAL, "adbc_reverse_remove_all: call adbc_reverse_start first");
    int rc = adbc_reverse_request(NULL, 0, r->c, "killforward-all");
    pthread_mutex_lock(&r->mu);
    r->nrules = 0;
    pthread_mutex_unlock(&r->mu);
    return rc;
}

size_t adbc_reverse_active(adbc_reverse *r)
{
    if (!r)
        return 0;
    relays_reap(&r->relays);
    return relays_active(&r->relays);
}

void adbc_reverse_free(adbc_reverse *r)
{
    if (!r)
        return;
    r->stop = 1;
    if (r->running)
        pthread_join(r->th, NULL);
    relays_stop_all(&r->relays);
    pthread_mutex_destroy(&r->mu);
    core_free(r);
}
