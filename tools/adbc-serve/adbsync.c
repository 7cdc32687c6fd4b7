/* SPDX-License-Identifier: Apache-2.0 */
/* adbc-serve: a client's sync: session served with adbc's own sync engine
 * (--adb-server-sync engine; docs/adb-server.md, "Sync served by adbc's
 * engine") instead of relayed byte for byte to the device.
 *
 * The transfers go through lib/sync, which speaks to the device what is best
 * there (SND2/RCV2, compressed on a link slower than compressing:
 * ADBC_SYNC_COMPRESS_AUTO). The client sends them as v1 SEND and RECV: the
 * device's features are listed to it without sendrecv_v2* (adbsrv.c). They
 * are answered as adbd's v1 answers them (file_sync_service.cpp):
 *   SEND  "path,mode", DATA..., DONE mtime: OKAY, or FAIL with the device's
 *         message, after which the session ends, as adbd ends it
 *   RECV  DATA..., DONE; or FAIL, after which the session ends
 * The queries (STAT, STA2, LST2, LIST, LIS2) are the device's to answer:
 * each goes to it as it came, on a sync: stream of the session's own, and
 * its answer comes back unchanged, so a client sees every error and field
 * as the device gives them. QUIT ends the session; anything else is
 * answered FAIL and ends it, as adbd does. */
#include "serve.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "adbc/sync.h"
#include "ops_hostproto.h"

#define PATH_MAX_SYNC ADBC_SYNC_PATH_MAX
#define SYNC_IDLE_MS (30 * 60 * 1000) /* a session with no request for this long ends */

typedef struct sess {
    serve *s;
    int fd;
    int gone;          /* the client's side failed: nothing more to say to it */
    int failed;        /* a FAIL went to the client: the session ends */
    char bad[96];      /* the client broke the protocol: the FAIL to send it */
    uint32_t left;     /* SEND: bytes of the DATA chunk not yet read */
    adbc_stream *raw;  /* the queries' own sync: stream, opened at the first */
} sess;

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static int say(sess *x, const char id[4], uint32_t v, const void *p, size_t n)
{
    uint8_t h[8];
    memcpy(h, id, 4);
    put32(h + 4, v);
    struct iovec iov[2] = {{h, 8}, {(void *)p, n}};
    if (serve_adbsrv_sendv(x->fd, iov, 2) != 0) {
        x->gone = 1;
        return -1;
    }
    return 0;
}

static void fail(sess *x, const char *msg)
{
    if (say(x, "FAIL", (uint32_t)strlen(msg), msg, strlen(msg)) == 0)
        x->failed = 1;
}

/* The device's own words in a failure lib/sync reports, where it has them
 * (its FAIL text comes after "the device refused: "); else adbc's message. */
static const char *device_words(void)
{
    const char *m = adbc_last_error();
    const char *at = strstr(m, "the device refused: ");
    return at ? at + strlen("the device refused: ") : m;
}

/* The query in h and path to the device, on the session's raw stream, and
 * its answer back to the client as it came: 0, or -1 to end the session. */
static int query(sess *x, adbc_conn *c, const uint8_t h[8], const char *path, uint32_t len)
{
    int ms = x->s->call_ms;
    if (!x->raw && adbc_stream_open(&x->raw, c, "sync:", ms) != 0) {
        fail(x, adbc_last_error());
        return -1;
    }
    if (adbc_stream_write(x->raw, h, 8, ms) != 0 || adbc_stream_write(x->raw, path, len, ms) != 0)
        return -1;
    int list = memcmp(h, "LIST", 4) == 0 || memcmp(h, "LIS2", 4) == 0;
    /* STAT 16 bytes; STA2, LST2 72; a DENT 20 and a DNT2 76, each with its
     * name, until one with DONE (which has none) */
    size_t fixed = memcmp(h, "STAT", 4) == 0   ? 16
                   : memcmp(h, "LIST", 4) == 0 ? 20
                   : memcmp(h, "LIS2", 4) == 0 ? 76
                                               : 72;
    uint8_t r[76 + ADBC_SYNC_PATH_MAX];
    for (;;) {
        if (adbc_stream_read_full(x->raw, r, 8, ms) != 0)
            return -1;
        if (memcmp(r, "FAIL", 4) == 0) { /* the device refused: its words, then the end */
            uint32_t n = get32(r + 4);
            if (n > ADBC_SYNC_PATH_MAX || adbc_stream_read_full(x->raw, r + 8, n, ms) != 0)
                return -1;
            say(x, "FAIL", n, r + 8, n);
            return -1;
        }
        if (adbc_stream_read_full(x->raw, r + 8, fixed - 8, ms) != 0)
            return -1;
        size_t n = fixed;
        int done = !list || memcmp(r, "DONE", 4) == 0;
        if (list && !done) {
            uint32_t nl = get32(r + fixed - 4);
            if (nl > ADBC_SYNC_PATH_MAX || adbc_stream_read_full(x->raw, r + fixed, nl, ms) != 0)
                return -1;
            n += nl;
        }
        struct iovec v = {r, n};
        if (serve_adbsrv_sendv(x->fd, &v, 1) != 0) {
            x->gone = 1;
            return -1;
        }
        if (done)
            return 0;
    }
}

/* lib/sync's source of a SEND: the client's DATA chunks, up to its DONE. */
static ssize_t send_read(void *user, void *buf, size_t cap, uint32_t *mtime)
{
    sess *x = user;
    while (x->left == 0) {
        uint8_t h[8];
        if (serve_adbsrv_recv(x->fd, h, 8, x->s->call_ms) != 0) {
            x->gone = 1;
            return ADBC_EIO;
        }
        uint32_t len = get32(h + 4);
        if (memcmp(h, "DONE", 4) == 0) {
            *mtime = len;
            return 0;
        }
        if (memcmp(h, "DATA", 4) != 0) {
            snprintf(x->bad, sizeof x->bad, "invalid data message");
            return ADBC_EPROTO;
        }
        if (len > ADBC_SYNC_DATA_MAX) {
            snprintf(x->bad, sizeof x->bad, "oversize data message");
            return ADBC_EPROTO;
        }
        x->left = len;
    }
    size_t k = x->left < cap ? x->left : cap;
    if (serve_adbsrv_recv(x->fd, buf, k, x->s->call_ms) != 0) {
        x->gone = 1;
        return ADBC_EIO;
    }
    x->left -= (uint32_t)k;
    return (ssize_t)k;
}

/* 0 to go on with the session; -1 to end it. */
static int do_send(sess *x, adbc_sync *sy, char *spec)
{
    char *comma = strrchr(spec, ',');
    if (!comma) {
        fail(x, "missing , in ID_SEND");
        return -1;
    }
    *comma = '\0';
    char *end;
    errno = 0;
    unsigned long mode = strtoul(comma + 1, &end, 10);
    if (errno || *end || end == comma + 1 || mode > UINT32_MAX) {
        fail(x, "bad mode in ID_SEND");
        return -1;
    }
    x->left = 0;
    adbc_sync_opts o;
    adbc_sync_opts_init(&o);
    /* adb's client gives the whole st_mode: a link's target is its data */
    int rc = adbc_sync_push_stream(NULL, sy, send_read, x, spec, (uint32_t)mode,
                                   (uint32_t)time(NULL), &o, x->s->call_ms);
    if (rc == 0)
        return say(x, "OKAY", 0, NULL, 0);
    if (!x->gone)
        fail(x, x->bad[0] ? x->bad : device_words());
    return -1;
}

typedef struct recv_sink {
    sess *x;
    int sent; /* any DATA went out */
} recv_sink;

/* lib/sync's sink of a RECV: DATA chunks to the client. */
static int recv_write(void *user, const void *buf, size_t n)
{
    recv_sink *r = user;
    const uint8_t *p = buf;
    while (n > 0) {
        size_t k = n < ADBC_SYNC_DATA_MAX ? n : ADBC_SYNC_DATA_MAX;
        if (say(r->x, "DATA", (uint32_t)k, p, k) != 0)
            return ADBC_EIO;
        r->sent = 1;
        p += k;
        n -= k;
    }
    return 0;
}

static int do_recv(sess *x, adbc_sync *sy, const char *path)
{
    recv_sink r = {x, 0};
    adbc_sync_opts o;
    adbc_sync_opts_init(&o);
    adbc_sync_statbuf st;
    int rc = adbc_sync_pull_stream(NULL, &st, sy, path, recv_write, &r, &o, x->s->call_ms);
    if (rc == 0)
        return say(x, "DONE", 0, NULL, 0);
    if (x->gone)
        return -1;
    /* adbd's words for what its v1 RECV meets before the first byte */
    if (!r.sent && rc == ADBC_ENOTFOUND)
        fail(x, "open failed: No such file or directory");
    else if (!r.sent && rc == ADBC_EPERM)
        fail(x, "open failed: Permission denied");
    else if (!r.sent && rc == ADBC_EINVAL && S_ISDIR(st.mode))
        fail(x, "read failed: Is a directory");
    else
        fail(x, device_words());
    return -1;
}

static void strip(char *out, size_t cap, const char *features)
{
    size_t used = 0;
    out[0] = '\0';
    const char *p = features;
    while (*p) {
        size_t n = strcspn(p, ",");
        int drop = n >= 11 && strncmp(p, "sendrecv_v2", 11) == 0;
        if (!drop && n > 0 && used + n + 2 <= cap) {
            if (used)
                out[used++] = ',';
            memcpy(out + used, p, n);
            used += n;
            out[used] = '\0';
        }
        p += n;
        if (*p == ',')
            p++;
    }
}

void serve_adbsync_features(const serve *s, char *out, size_t cap, const char *features)
{
    if (cap == 0)
        return;
    if (s->sync_engine)
        strip(out, cap, features ? features : "");
    else
        snprintf(out, cap, "%s", features ? features : "");
}

void serve_adbsync(serve *s, int fd, adbc_conn *c)
{
    adbc_sync *sy = NULL;
    if (adbc_sync_open(&sy, c, s->call_ms) != 0) {
        char out[1100];
        struct iovec v = {out, ops_hp_fail(out, sizeof out, adbc_last_error())};
        serve_adbsrv_sendv(fd, &v, 1);
        return;
    }
    struct iovec ok = {"OKAY", 4};
    sess x = {.s = s, .fd = fd};
    if (serve_adbsrv_sendv(fd, &ok, 1) != 0)
        x.gone = 1;
    char path[PATH_MAX_SYNC + 1];
    while (!x.gone && !s->stopping) {
        uint8_t h[8];
        /* a client may walk its own tree, or wait for its user, between
         * requests; adb's server sets no bound, this one a long one */
        if (serve_adbsrv_recv(fd, h, 8, SYNC_IDLE_MS) != 0)
            break;
        uint32_t len = get32(h + 4);
        if (memcmp(h, "QUIT", 4) == 0)
            break;
        int transfer = memcmp(h, "SEND", 4) == 0 || memcmp(h, "RECV", 4) == 0;
        int known = transfer || memcmp(h, "STAT", 4) == 0 || memcmp(h, "STA2", 4) == 0 ||
                    memcmp(h, "LST2", 4) == 0 || memcmp(h, "LIST", 4) == 0 ||
                    memcmp(h, "LIS2", 4) == 0;
        if (!known) {
            char m[64];
            snprintf(m, sizeof m, "unknown command %08x", (unsigned)get32(h));
            fail(&x, m);
            break;
        }
        if (len > PATH_MAX_SYNC) {
            fail(&x, "path too long");
            break;
        }
        if (serve_adbsrv_recv(fd, path, len, s->call_ms) != 0)
            break;
        path[len] = '\0';
        if (strlen(path) != len) {
            fail(&x, "path has a NUL byte");
            break;
        }
        if (serve_adbsrv_tracing())
            fprintf(stderr, SERVE_NAME ": adb server: sync engine: %.4s %s\n", (const char *)h,
                    path);
        int rc;
        if (!transfer)
            rc = query(&x, c, h, path, len);
        else if (memcmp(h, "SEND", 4) == 0)
            rc = do_send(&x, sy, path);
        else
            rc = do_recv(&x, sy, path);
        if (rc < 0)
            break;
    }
    if (x.raw)
        adbc_stream_close(x.raw);
    adbc_sync_close(sy);
    if (x.failed) {
        /* The client may still be sending (the rest of a file): closing with
         * its bytes unread would reset the connection under the FAIL before
         * it reads it. Its bytes are read and dropped until it closes, for
         * 2 s at most. */
        shutdown(fd, SHUT_WR);
        char sink[16384];
        int64_t end = ops_now_ms() + 2000;
        while (!s->stopping && ops_now_ms() < end &&
               serve_adbsrv_recv(fd, sink, 1, (int)(end - ops_now_ms())) == 0)
            if (recv(fd, sink, sizeof sink, MSG_DONTWAIT) == 0)
                break;
    }
}
