/* SPDX-License-Identifier: Apache-2.0 */
/* Forwards a session holds, as adb's server holds them: they outlive the
 * adbc-snap command that made them and end when the session stops, when
 * they are removed, or when the device's connection is lost (as adb's end
 * with their transport).
 *
 * The requests are adb's server services, sent as a stream on the control
 * socket (control.c passes every "host:" service here instead of opening
 * it on the device) and answered as adb's server answers them
 * (packages/modules/adb adb.cpp, handle_forward_request; adb_listeners.cpp):
 *   host:forward:LOCAL;REMOTE           OKAY OKAY [%04x PORT: a new TCP listener]
 *   host:forward:norebind:LOCAL;REMOTE  the same, or FAIL "cannot rebind existing socket"
 *   host:killforward:LOCAL              OKAY OKAY, or FAIL "listener 'LOCAL' not found"
 *   host:killforward-all                OKAY OKAY
 *   host:list-forward                   OKAY %04x "SERIAL LOCAL REMOTE\n"...
 * A failure is FAIL %04x MESSAGE ("cannot bind listener: ..." as adb's).
 *
 * Reverse rules are held too: "reverse:forward:[norebind:]REMOTE;LOCAL" on
 * the control socket makes the rule on the device from the server's own
 * connection (adbc_reverse_add), whose adbc_reverse (set on the connection's
 * options when the pool connects: on_conn_opts) relays the device's
 * connections to LOCAL; answered as adbd answers (OKAY [%04x PORT], or FAIL
 * with the device's words). The other reverse: requests (--list, --remove)
 * go to the device as they are.
 *
 * One thread accepts on every held listener (adbc_forward_fd / dispatch);
 * each relayed connection has its library threads. The device's connection
 * is the session's own: the pool tells us before it closes one
 * (on_conn_close), and every forward on it is freed first. */
#include "serve.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "adbc/forward.h"

#define HELD_MAX 64

typedef struct held {
    adbc_forward *f;
    adbc_conn *conn;
    char serial[256];
    char local[320];  /* as adb names it: a chosen port resolved */
    char given[320];  /* as the request named it */
    char remote[320];
    struct held *next;
} held;

static pthread_mutex_t held_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t held_cv = PTHREAD_COND_INITIALIZER; /* a poll of the loop ended */
static unsigned long polls;  /* polls the loop ended (held_lock) */
static int loop_done;        /* the loop has returned (held_lock) */
static int wake_fd[2] = {-1, -1};
static held *helds;
static int nheld;
static pthread_t held_thread;
static int held_started;
static serve *held_srv;

static void held_free(held *h)
{
    adbc_forward_free(h->f);
    free(h);
}

/* After closing listeners (held_lock held, not in the loop): wait until the
 * loop's poll that may still hold them has returned. Linux keeps a socket a
 * poll() waits on open until the poll returns, so its port could not be
 * bound again before (a rebind, or a forward made again at once). */
static void quiesce(void)
{
    if (!held_started || pthread_equal(pthread_self(), held_thread))
        return;
    unsigned long g = polls;
    char b = 1;
    if (write(wake_fd[1], &b, 1) < 0) {
        /* full: the loop has a wake-up pending already */
    }
    while (polls == g && !loop_done)
        pthread_cond_wait(&held_cv, &held_lock);
}

/* Unlink *pp and free it, saying why (held_lock held). */
static void drop(held **pp, const char *why)
{
    held *h = *pp;
    fprintf(stderr, SERVE_NAME ": forward %s %s ended: %s\n", h->local, h->remote, why);
    *pp = h->next;
    nheld--;
    held_free(h);
}

/* Accept on every listener; drop those whose device connection ended. */
static void *accept_loop(void *arg)
{
    serve *s = arg;
    while (!s->stopping) {
        struct pollfd pf[HELD_MAX + 1];
        int n = 0;
        pthread_mutex_lock(&held_lock);
        pf[n++] = (struct pollfd){.fd = wake_fd[0], .events = POLLIN};
        for (held *h = helds; h && n < HELD_MAX + 1; h = h->next)
            pf[n++] = (struct pollfd){.fd = adbc_forward_fd(h->f), .events = POLLIN};
        pthread_mutex_unlock(&held_lock);
        poll(pf, (nfds_t)n, 200);
        char drain[64];
        while (read(wake_fd[0], drain, sizeof drain) > 0) {
        }
        pthread_mutex_lock(&held_lock);
        polls++;
        pthread_cond_broadcast(&held_cv);
        for (held **pp = &helds; *pp;) {
            if (adbc_forward_dispatch((*pp)->f) < 0)
                drop(pp, "the device connection ended");
            else
                pp = &(*pp)->next;
        }
        pthread_mutex_unlock(&held_lock);
    }
    pthread_mutex_lock(&held_lock);
    loop_done = 1;
    pthread_cond_broadcast(&held_cv);
    pthread_mutex_unlock(&held_lock);
    return NULL;
}

/* adb's protocol string: %04x then the bytes. */
static size_t put_str(char *out, size_t cap, const char *s)
{
    size_t n = strlen(s);
    if (n > 0xffff || n + 4 >= cap)
        n = 0;
    snprintf(out, cap, "%04zx%.*s", n, (int)n, s);
    return 4 + n;
}

static char *fail(size_t *len, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static char *fail(size_t *len, const char *fmt, ...)
{
    char msg[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    char *out = malloc(4 + 4 + sizeof msg);
    if (!out)
        return NULL;
    memcpy(out, "FAIL", 4);
    *len = 4 + put_str(out + 4, 4 + sizeof msg, msg);
    return out;
}

static char *okay(size_t *len, const char *str, int twice)
{
    size_t cap = 16 + (str ? strlen(str) : 0);
    char *out = malloc(cap);
    if (!out)
        return NULL;
    memcpy(out, twice ? "OKAYOKAY" : "OKAY", twice ? 8 : 4);
    *len = twice ? 8 : 4;
    if (str)
        *len += put_str(out + *len, cap - *len, str);
    return out;
}

/* ---- reverse rules held: one adbc_reverse per device connection ---- */

typedef struct rev_slot {
    ops_dev *d;
    adbc_reverse *r;
    int started;
} rev_slot;
static rev_slot revs[SERVE_MAX_DEVICES];

static rev_slot *rev_of(ops_dev *d)
{
    for (int i = 0; i < SERVE_MAX_DEVICES; i++)
        if (revs[i].d == d)
            return &revs[i];
    for (int i = 0; i < SERVE_MAX_DEVICES; i++)
        if (!revs[i].d) {
            revs[i].d = d;
            return &revs[i];
        }
    return NULL;
}

void serve_held_conn_opts(void *user, ops_dev *d, adbc_conn_opts *o)
{
    (void)user;
    pthread_mutex_lock(&held_lock);
    rev_slot *rs = rev_of(d);
    if (rs && !rs->r && adbc_reverse_new(&rs->r, NULL) < 0)
        rs->r = NULL;
    if (rs && rs->r) {
        adbc_reverse_conn_opts(o, rs->r);
        rs->started = 0;
    }
    pthread_mutex_unlock(&held_lock);
}

char *serve_held_reverse(serve *s, ops_dev *d, const char *service, size_t *len)
{
    (void)s;
    const char *spec = service + strlen("reverse:forward:");
    int norebind = strncmp(spec, "norebind:", 9) == 0;
    if (norebind)
        spec += 9;
    const char *semi = strchr(spec, ';');
    char remote[320];
    if (!semi || semi == spec || !semi[1] || semi - spec >= (long)sizeof remote)
        return fail(len, "bad forward: %s", spec);
    memcpy(remote, spec, (size_t)(semi - spec));
    remote[semi - spec] = '\0';
    const char *local = semi + 1;
    pthread_mutex_lock(&held_lock);
    rev_slot *rs = rev_of(d);
    char *out;
    char resolved[320];
    if (!rs || !rs->r || !d->conn) {
        out = fail(len, "this session cannot relay reverse connections (restart it)");
    } else if (!rs->started && adbc_reverse_start(rs->r, d->conn) < 0) {
        out = fail(len, "%s", adbc_last_error());
    } else if ((rs->started = 1,
                adbc_reverse_add(resolved, sizeof resolved, rs->r, remote, local, norebind)) <
               0) {
        /* The device's own words, after what adbc says around them. */
        const char *m = adbc_last_error(), *c = strstr(m, "\": ");
        out = fail(len, "%s", c ? c + 3 : m);
    } else {
        fprintf(stderr, SERVE_NAME ": reverse %s %s held\n", resolved, local);
        /* As adbd: one OKAY, then a chosen TCP port. */
        out = okay(len, strncmp(resolved, "tcp:", 4) == 0 && strcmp(remote, resolved) != 0
                            ? resolved + 4 : NULL, 0);
    }
    pthread_mutex_unlock(&held_lock);
    return out;
}

static held *find(const char *local)
{
    for (held *h = helds; h; h = h->next)
        if (strcmp(h->local, local) == 0 || strcmp(h->given, local) == 0)
            return h;
    return NULL;
}

static void unlink_held(held *h)
{
    for (held **pp = &helds; *pp; pp = &(*pp)->next)
        if (*pp == h) {
            *pp = h->next;
            nheld--;
            return;
        }
}

static char *forward(serve *s, ops_dev *d, const char *spec, size_t *len)
{
    int norebind = strncmp(spec, "norebind:", 9) == 0;
    if (norebind)
        spec += 9;
    const char *semi = strchr(spec, ';');
    if (!semi || semi == spec || !semi[1] || semi - spec >= 320 || strlen(semi + 1) >= 320)
        return fail(len, "bad forward: %s", spec);
    char local[320];
    memcpy(local, spec, (size_t)(semi - spec));
    local[semi - spec] = '\0';
    const char *remote = semi + 1;
    held *old = strcmp(local, "tcp:0") ? find(local) : NULL;
    if (old && norebind)
        return fail(len, "cannot rebind existing socket");
    if (!old && nheld >= HELD_MAX)
        return fail(len, "cannot bind listener: this session holds %d forwards already",
                    HELD_MAX);
    if (!d->conn)
        return fail(len, "device '%s' not found", d->serial);
    if (!held_started) {
        if (wake_fd[0] < 0 && pipe2(wake_fd, O_CLOEXEC | O_NONBLOCK) != 0)
            return fail(len, "cannot bind listener: %s", strerror(errno));
        if (pthread_create(&held_thread, NULL, accept_loop, s) != 0)
            return fail(len, "cannot bind listener: %s", "no thread for the listeners");
        held_started = 1;
        held_srv = s;
    }
    /* adb points an existing listener elsewhere; here the listener is made
     * again for the new destination (its open connections end). */
    if (old) {
        unlink_held(old);
        held_free(old);
        quiesce();
    }
    held *h = calloc(1, sizeof *h);
    if (!h)
        return fail(len, "cannot bind listener: %s", "out of memory");
    if (adbc_forward_new(&h->f, d->conn, local, remote, NULL) < 0) {
        free(h);
        return fail(len, "cannot bind listener: %s", adbc_last_error());
    }
    h->conn = d->conn;
    snprintf(h->serial, sizeof h->serial, "%s", d->serial);
    snprintf(h->local, sizeof h->local, "%s", adbc_forward_local(h->f));
    snprintf(h->given, sizeof h->given, "%s", local);
    snprintf(h->remote, sizeof h->remote, "%s", remote);
    h->next = helds;
    helds = h;
    nheld++;
    fprintf(stderr, SERVE_NAME ": forward %s %s held\n", h->local, h->remote);
    /* adb (10 and later) answers a newly bound TCP listener with its port. */
    char port[16];
    if (!old && adbc_forward_port(h->f) > 0) {
        snprintf(port, sizeof port, "%d", adbc_forward_port(h->f));
        return okay(len, port, 1);
    }
    return okay(len, NULL, 1);
}

char *serve_held_request(serve *s, ops_dev *d, const char *service, size_t *len)
{
    if (!s || !d || !service || !len || strncmp(service, "host:", 5) != 0)
        return NULL;
    const char *req = service + 5;
    char *out;
    pthread_mutex_lock(&held_lock);
    if (strncmp(req, "forward:", 8) == 0) {
        out = forward(s, d, req + 8, len);
    } else if (strncmp(req, "killforward:", 12) == 0) {
        held *h = find(req + 12);
        if (h) {
            unlink_held(h);
            held_free(h);
            quiesce();
            out = okay(len, NULL, 1);
        } else {
            out = fail(len, "listener '%s' not found", req + 12);
        }
    } else if (strcmp(req, "killforward-all") == 0) {
        while (helds) {
            held *h = helds;
            helds = h->next;
            held_free(h);
        }
        nheld = 0;
        quiesce();
        out = okay(len, NULL, 1);
    } else if (strcmp(req, "list-forward") == 0) {
        /* Oldest first, as adb lists its listeners. */
        size_t cap = 1, used = 0;
        for (held *h = helds; h; h = h->next)
            cap += strlen(h->serial) + strlen(h->local) + strlen(h->remote) + 3;
        char *list = malloc(cap);
        held *rev[HELD_MAX];
        int n = 0;
        for (held *h = helds; h && n < HELD_MAX; h = h->next)
            rev[n++] = h;
        if (list) {
            list[0] = '\0';
            while (n-- > 0) {
                held *h = rev[n];
                used += (size_t)snprintf(list + used, cap - used, "%s %s %s\n", h->serial,
                                         h->local, h->remote);
            }
            out = okay(len, list, 0);
            free(list);
        } else {
            out = NULL;
        }
    } else {
        out = fail(len, "unknown host service '%s' (this session answers forward, "
                        "killforward, killforward-all and list-forward)", req);
    }
    pthread_mutex_unlock(&held_lock);
    return out;
}

void serve_held_conn_close(void *user, ops_dev *d, adbc_conn *c)
{
    (void)user;
    pthread_mutex_lock(&held_lock);
    rev_slot *rs = rev_of(d);
    if (rs && rs->r) { /* its relays end before the connection, as adbc_reverse_free asks */
        adbc_reverse_free(rs->r);
        rs->r = NULL;
        rs->started = 0;
    }
    for (held **pp = &helds; *pp;) {
        if ((*pp)->conn == c)
            drop(pp, "the device connection closed");
        else
            pp = &(*pp)->next;
    }
    quiesce();
    pthread_mutex_unlock(&held_lock);
}

void serve_held_stop(void)
{
    if (held_started) {
        pthread_join(held_thread, NULL); /* held_srv->stopping is set: within 200 ms */
        held_started = 0;
    }
    pthread_mutex_lock(&held_lock);
    while (helds) {
        held *h = helds;
        helds = h->next;
        held_free(h);
    }
    nheld = 0;
    for (int i = 0; i < SERVE_MAX_DEVICES; i++) {
        if (revs[i].r)
            adbc_reverse_free(revs[i].r);
        revs[i] = (rev_slot){0};
    }
    pthread_mutex_unlock(&held_lock);
    held_srv = NULL;
    for (int i = 0; i < 2; i++) {
        if (wake_fd[i] >= 0)
            close(wake_fd[i]);
        wake_fd[i] = -1;
    }
}
