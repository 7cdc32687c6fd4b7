/* SPDX-License-Identifier: Apache-2.0 */
/* An in-test device for the sync client tests: a device-role session on a
 * socket pair, driven by its own thread, serving "sync:" from a small
 * in-memory file system, and "shell"/"exec:" requests by recording them.
 * Tests can replace the answer to any request with raw bytes (malformed
 * replies), hold OKAYs back (to prove requests are pipelined), end a session
 * after a FAIL as adbd does, and cut the whole connection after exactly N
 * bytes of sync replies.
 *
 * Everything the host sends on sync streams is recorded for byte-vector
 * checks. State shared with the test is behind d->mu. */
#ifndef ADBC_TEST_SYNC_DEV_H
#define ADBC_TEST_SYNC_DEV_H

#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "adbc/adbc.h"
#include "adbc/sync.h"
#include "sync/sync_proto.h"
#include "test_fs.h"

/* Host-side helpers the sync tests share (and test_fs.h). */

/* n bytes of a repeatable pseudo-random pattern (malloc'd). */
static inline uint8_t *pattern(size_t n, unsigned seed)
{
    uint8_t *b = malloc(n ? n : 1);
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        b[i] = (uint8_t)(seed >> 16);
    }
    return b;
}

#define FD_MAX_FILES 256

typedef struct mfile {
    char path[256];
    uint32_t mode;          /* S_IFREG/S_IFDIR/S_IFLNK | perms */
    int64_t mtime;
    uint64_t ino;
    uint8_t *data;
    size_t len;
    uint64_t stat_size;     /* nonzero: the size STAT reports (a file that
                               changes between its stat and its read) */
    char link[256];         /* S_IFLNK: absolute target */
} mfile;

typedef struct fdev fdev;

/* Return 1 when the request was answered here (bytes put with fd_out). */
typedef int (*fdev_hook)(fdev *d, const adbc_sync_event *req);

struct fdev {
    int fd;
    adbc_session *s;
    pthread_t th;
    _Atomic int stop;
    pthread_mutex_t mu;
    const char *banner;
    uint32_t sid;           /* the open sync stream, 0 if none */
    int end_after_out;      /* close the sync stream once out is sent */
    adbc_sync_qdec q;
    uint8_t *out;
    size_t olen, ooff, ocap;
    size_t reply_bytes;     /* sync reply bytes handed to the session so far */
    size_t wrte_max;        /* nonzero: sync replies go out in WRTEs of at most
                               this many bytes (headers split across packets) */
    int cut;                /* drop the connection after cut_at reply bytes */
    long cut_at;
    int cut_done;
    fdev_hook hook;
    void *hook_user;
    /* memfs */
    mfile f[FD_MAX_FILES];
    int nf;
    uint64_t next_ino;
    /* the SEND in progress */
    int sending, send_failed;
    mfile pend;
    /* OKAYs held back until this many SENDs completed */
    int hold_okays, held;
    /* recorded: bytes the host sent on sync streams, requests, services */
    uint8_t *rec;
    size_t rlen, rcap;
    int nreq;
    uint32_t req_id[512];
    char req_path[512][300];
    int sync_opens;
    char services[16][256];
    int nservices;
    uint32_t cmd_id[16];    /* shell/exec streams still to answer */
    int cmd_v2[16];
    int ncmd;
};

/* ---- memfs ---- */

static mfile *fd_find(fdev *d, const char *path)
{
    for (int i = 0; i < d->nf; i++)
        if (strcmp(d->f[i].path, path) == 0)
            return &d->f[i];
    return NULL;
}

static mfile *fd_add(fdev *d, const char *path, uint32_t mode, const void *data, size_t len,
                     int64_t mtime)
{
    mfile *m = fd_find(d, path);
    if (!m) {
        if (d->nf == FD_MAX_FILES)
            abort();
        m = &d->f[d->nf++];
        memset(m, 0, sizeof *m);
        snprintf(m->path, sizeof m->path, "%s", path);
        m->ino = ++d->next_ino;
    } else {
        free(m->data);
        m->data = NULL;
    }
    m->mode = mode;
    m->mtime = mtime;
    m->len = len;
    if (len) {
        m->data = malloc(len);
        memcpy(m->data, data, len);
    }
    return m;
}

/* Add a file and every missing parent directory (mode 0755). */
static mfile *fd_put(fdev *d, const char *path, uint32_t mode, const void *data, size_t len,
                     int64_t mtime)
{
    char dir[256];
    snprintf(dir, sizeof dir, "%s", path);
    for (char *p = dir + 1; (p = strchr(p, '/')) != NULL; p++) {
        *p = '\0';
        if (!fd_find(d, dir))
            fd_add(d, dir, S_IFDIR | 0755, NULL, 0, 1000);
        *p = '/';
    }
    return fd_add(d, path, mode, data, len, mtime);
}

static void fd_link(fdev *d, const char *path, const char *target)
{
    mfile *m = fd_put(d, path, S_IFLNK | 0777, NULL, 0, 1000);
    snprintf(m->link, sizeof m->link, "%s", target);
}

static const mfile *fd_follow(fdev *d, const char *path)
{
    const mfile *m = fd_find(d, path);
    for (int hops = 0; m && S_ISLNK(m->mode) && hops < 8; hops++)
        m = fd_find(d, m->link);
    return m && !S_ISLNK(m->mode) ? m : NULL;
}

static adbc_sync_statbuf fd_st(const mfile *m)
{
    adbc_sync_statbuf st = {0};
    st.mode = m->mode;
    st.size = S_ISLNK(m->mode) ? strlen(m->link) : m->stat_size ? m->stat_size : m->len;
    st.mtime = m->mtime;
    st.atime = m->mtime;
    st.ctime = m->mtime;
    st.dev = 7;
    st.ino = m->ino;
    st.nlink = 1;
    st.uid = 2000;
    st.gid = 2000;
    st.v2 = 1;
    return st;
}

/* ---- output ---- */

static void fd_out(fdev *d, const void *p, size_t n)
{
    if (d->olen + n > d->ocap) {
        size_t nc = d->ocap ? d->ocap : 65536;
        while (nc < d->olen + n)
            nc *= 2;
        d->out = realloc(d->out, nc);
        d->ocap = nc;
    }
    memcpy(d->out + d->olen, p, n);
    d->olen += n;
}

static void fd_hdr(fdev *d, uint32_t id, uint32_t len)
{
    uint8_t h[8];
    sync_enc_hdr(h, id, len);
    fd_out(d, h, 8);
}

/* FAIL, then end the session as adbd does. */
static void fd_fail(fdev *d, const char *msg)
{
    fd_hdr(d, ADBC_SYNC_FAIL, (uint32_t)strlen(msg));
    fd_out(d, msg, strlen(msg));
    d->end_after_out = 1;
}

/* ---- the sync server ---- */

static int fd_parent_of(const char *path, const char *dir)
{
    size_t n = strlen(dir);
    if (strncmp(path, dir, n) != 0)
        return 0;
    const char *rest = path + n;
    if (n > 1) {
        if (*rest != '/')
            return 0;
        rest++;
    }
    return *rest && !strchr(rest, '/');
}

static void fd_list(fdev *d, const char *path, int v2)
{
    uint8_t b[80];
    const mfile *dir = fd_follow(d, path);
    if (dir && S_ISDIR(dir->mode)) {
        adbc_sync_statbuf st = fd_st(dir);
        static const char *const dots[] = {".", ".."};
        for (int i = 0; i < 2; i++) {
            fd_out(d, b, v2 ? sync_enc_dent_v2(b, 0, &st, (uint32_t)strlen(dots[i]))
                            : sync_enc_dent_v1(b, &st, (uint32_t)strlen(dots[i])));
            fd_out(d, dots[i], strlen(dots[i]));
        }
        for (int i = 0; i < d->nf; i++) {
            if (!fd_parent_of(d->f[i].path, dir->path))
                continue;
            const char *name = strrchr(d->f[i].path, '/') + 1;
            adbc_sync_statbuf fst = fd_st(&d->f[i]);
            fd_out(d, b, v2 ? sync_enc_dent_v2(b, 0, &fst, (uint32_t)strlen(name))
                            : sync_enc_dent_v1(b, &fst, (uint32_t)strlen(name)));
            fd_out(d, name, strlen(name));
        }
    }
    fd_out(d, b, sync_enc_list_end(b, v2));
}

static void fd_request(fdev *d, const adbc_sync_event *ev)
{
    pthread_mutex_lock(&d->mu);
    if (d->nreq < 512) {
        d->req_id[d->nreq] = ev->id;
        snprintf(d->req_path[d->nreq], sizeof d->req_path[0], "%s", ev->text);
        d->nreq++;
    }
    pthread_mutex_unlock(&d->mu);
    if (d->hook && d->hook(d, ev))
        return;
    uint8_t b[80];
    const char *path = ev->text;
    switch (ev->id) {
    case ADBC_SYNC_STAT: {
        const mfile *m = fd_find(d, path);
        adbc_sync_statbuf st = m ? fd_st(m) : (adbc_sync_statbuf){0};
        /* lstat("link/") resolves the link, as the kernel does */
        size_t n = strlen(path);
        if (!m && n > 1 && path[n - 1] == '/') {
            char p[300];
            snprintf(p, sizeof p, "%.*s", (int)n - 1, path);
            const mfile *t = fd_follow(d, p);
            if (t && S_ISDIR(t->mode))
                st = fd_st(t);
        }
        fd_out(d, b, sync_enc_stat_v1(b, &st));
        break;
    }
    case ADBC_SYNC_STA2:
    case ADBC_SYNC_LST2: {
        const mfile *m = ev->id == ADBC_SYNC_STA2 ? fd_follow(d, path) : fd_find(d, path);
        adbc_sync_statbuf st = m ? fd_st(m) : (adbc_sync_statbuf){0};
        fd_out(d, b, sync_enc_stat_v2(b, ev->id, m ? 0 : 2, &st));
        break;
    }
    case ADBC_SYNC_LIST:
    case ADBC_SYNC_LIS2:
        fd_list(d, path, ev->id == ADBC_SYNC_LIS2);
        break;
    case ADBC_SYNC_RECV: {
        const mfile *m = fd_follow(d, path);
        if (!m || !S_ISREG(m->mode)) {
            fd_fail(d, m ? "read failed: Is a directory" : "open failed: No such file or directory");
            break;
        }
        for (size_t off = 0; off < m->len; off += ADBC_SYNC_DATA_MAX) {
            size_t n = m->len - off < ADBC_SYNC_DATA_MAX ? m->len - off : ADBC_SYNC_DATA_MAX;
            fd_hdr(d, ADBC_SYNC_DATA, (uint32_t)n);
            fd_out(d, m->data + off, n);
        }
        fd_hdr(d, ADBC_SYNC_DONE, 0);
        break;
    }
    case ADBC_SYNC_SEND: {
        size_t plen;
        uint32_t mode;
        d->sending = 1;
        d->send_failed = 0;
        memset(&d->pend, 0, sizeof d->pend);
        if (sync_parse_send_spec(path, ev->text_len, &plen, &mode) != 0) {
            fd_fail(d, "bad mode");
            d->send_failed = 1;
            break;
        }
        snprintf(d->pend.path, sizeof d->pend.path, "%.*s", (int)plen, path);
        d->pend.mode = mode;
        if (strncmp(d->pend.path, "/ro/", 4) == 0) {
            fd_fail(d, "couldn't create file: Read-only file system");
            d->send_failed = 1;
        }
        break;
    }
    case ADBC_SYNC_QUIT:
        d->end_after_out = 1;
        break;
    default:
        fd_fail(d, "unknown command");
        break;
    }
}

static void fd_send_event(fdev *d, const adbc_sync_event *ev)
{
    if (ev->type == ADBC_SYNC_EV_DATA) {
        if (d->send_failed)
            return;
        d->pend.data = realloc(d->pend.data, d->pend.len + ev->len + 1);
        memcpy(d->pend.data + d->pend.len, ev->data, ev->len);
        d->pend.len += ev->len;
        return;
    }
    /* DONE */
    d->sending = 0;
    if (d->send_failed) {
        free(d->pend.data);
        return;
    }
    pthread_mutex_lock(&d->mu);
    mfile *m;
    if (S_ISLNK(d->pend.mode)) {
        m = fd_put(d, d->pend.path, S_IFLNK | 0777, NULL, 0, ev->arg);
        snprintf(m->link, sizeof m->link, "%.*s", (int)d->pend.len, (char *)d->pend.data);
    } else {
        m = fd_put(d, d->pend.path, d->pend.mode, d->pend.data, d->pend.len, ev->arg);
    }
    pthread_mutex_unlock(&d->mu);
    free(d->pend.data);
    d->pend.data = NULL;
    if (d->hold_okays > 0) {
        if (++d->held < d->hold_okays)
            return;
        for (int i = 0; i < d->held; i++)
            fd_hdr(d, ADBC_SYNC_OKAY, 0);
        d->held = 0;
        d->hold_okays = 0;
        return;
    }
    fd_hdr(d, ADBC_SYNC_OKAY, 0);
}

/* ---- session plumbing ---- */

static int fd_on_open(void *u, uint32_t id, const char *svc)
{
    fdev *d = u;
    if (strcmp(svc, "sync:") == 0) {
        if (d->sid)
            return 1; /* one session at a time is all these tests need */
        d->sid = id;
        d->olen = d->ooff = 0;
        d->end_after_out = 0;
        d->sending = 0;
        sync_qdec_init(&d->q);
        pthread_mutex_lock(&d->mu);
        d->sync_opens++;
        pthread_mutex_unlock(&d->mu);
        return 0;
    }
    if (strncmp(svc, "shell", 5) == 0 || strncmp(svc, "exec:", 5) == 0) {
        pthread_mutex_lock(&d->mu);
        if (d->nservices < 16)
            snprintf(d->services[d->nservices++], 256, "%s", svc);
        pthread_mutex_unlock(&d->mu);
        /* a command with no output that succeeds: answered by fd_pump */
        if (d->ncmd == 16)
            return 1;
        d->cmd_id[d->ncmd] = id;
        d->cmd_v2[d->ncmd++] = strncmp(svc, "shell,v2", 8) == 0;
        return 0;
    }
    return 1;
}

static void fd_on_data(void *u, uint32_t id, const uint8_t *data, size_t len)
{
    fdev *d = u;
    adbc_session_consume(d->s, id, len);
    if (id != d->sid)
        return;
    pthread_mutex_lock(&d->mu);
    if (d->rlen + len > d->rcap) {
        size_t nc = d->rcap ? d->rcap : 65536;
        while (nc < d->rlen + len)
            nc *= 2;
        d->rec = realloc(d->rec, nc);
        d->rcap = nc;
    }
    memcpy(d->rec + d->rlen, data, len);
    d->rlen += len;
    pthread_mutex_unlock(&d->mu);
    size_t off = 0;
    while (off < len && !d->end_after_out) {
        adbc_sync_event ev;
        size_t used = 0;
        int rc = sync_qdec_next(&d->q, data + off, len - off, &used, &ev);
        off += used;
        if (rc < 0) {
            fd_fail(d, adbc_last_error());
            break;
        }
        if (rc == 0)
            continue;
        if (ev.type == ADBC_SYNC_EV_REQUEST)
            fd_request(d, &ev);
        else if (d->sending)
            fd_send_event(d, &ev);
    }
}

static void fd_on_closed(void *u, uint32_t id, int reason)
{
    (void)reason;
    fdev *d = u;
    if (id == d->sid)
        d->sid = 0;
}

/* Move queued replies into the session as flow control allows. */
static void fd_pump(fdev *d)
{
    /* shell/exec: exit status 0 (shell v2), then the end of the stream */
    for (int i = 0; i < d->ncmd; i++) {
        static const uint8_t exit0[6] = {3, 1, 0, 0, 0, 0};
        if (d->cmd_v2[i])
            adbc_session_write(d->s, d->cmd_id[i], exit0, sizeof exit0);
        adbc_session_close_stream(d->s, d->cmd_id[i]);
    }
    d->ncmd = 0;
    if (!d->sid)
        return;
    while (d->ooff < d->olen) {
        size_t n = d->olen - d->ooff;
        if (d->cut && d->reply_bytes + n > (size_t)d->cut_at)
            n = (size_t)d->cut_at - d->reply_bytes;
        if (n == 0)
            break;
        if (d->wrte_max && n > d->wrte_max)
            n = d->wrte_max;
        ssize_t k = adbc_session_write(d->s, d->sid, d->out + d->ooff, n);
        if (k <= 0)
            return;
        d->ooff += (size_t)k;
        d->reply_bytes += (size_t)k;
    }
    if (d->cut && d->reply_bytes == (size_t)d->cut_at) {
        d->cut_done = 1;
        return;
    }
    if (d->ooff == d->olen) {
        d->ooff = d->olen = 0;
        if (d->end_after_out) {
            adbc_session_close_stream(d->s, d->sid);
            d->sid = 0;
            d->end_after_out = 0;
        }
    }
}

static void *fd_main(void *arg)
{
    fdev *d = arg;
    static uint8_t buf[262144];
    while (!d->stop) {
        const uint8_t *seg;
        size_t n;
        fd_pump(d);
        while ((n = adbc_session_next_send(&seg, d->s)) > 0) {
            ssize_t w = send(d->fd, seg, n, MSG_NOSIGNAL);
            if (w <= 0)
                goto out;
            adbc_session_sent(d->s, (size_t)w);
        }
        if (d->cut_done) {
            shutdown(d->fd, SHUT_RDWR); /* the device is gone */
            break;
        }
        struct pollfd p = {.fd = d->fd, .events = POLLIN};
        if (poll(&p, 1, 5) <= 0)
            continue;
        ssize_t r = read(d->fd, buf, sizeof buf);
        if (r <= 0)
            break;
        if (adbc_session_recv(d->s, buf, (size_t)r) < 0)
            break;
    }
out:
    return NULL;
}

/* Start the device and connect a host to it. banner: NULL for a device with
 * stat_v2, ls_v2, fixed_push_mkdir and delayed_ack. */
static int fd_start(fdev *d, const char *banner, adbc_conn **c)
{
    static const adbc_session_callbacks cb = {
        .size = sizeof(adbc_session_callbacks), .on_open = fd_on_open, .on_data = fd_on_data, .on_closed = fd_on_closed};
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
        return -1;
    pthread_mutex_init(&d->mu, NULL);
    d->fd = sv[1];
    adbc_session_config cfg;
    adbc_session_config_init(&cfg, ADBC_ROLE_DEVICE);
    cfg.banner = banner ? banner
                        : "device::ro.product.model=SyncTest;features=shell_v2,stat_v2,ls_v2,"
                          "fixed_push_mkdir,delayed_ack";
    cfg.auth_required = 0;
    if (adbc_session_new(&d->s, &cfg, &cb, d) < 0)
        return -1;
    fd_put(d, "/data/local/tmp/.keep", S_IFREG | 0644, "", 0, 1000);
    fd_put(d, "/sdcard/.keep", S_IFREG | 0644, "", 0, 1000);
    pthread_create(&d->th, NULL, fd_main, d);
    adbc_transport *t;
    if (adbc_transport_fd(&t, sv[0], 1) < 0)
        return -1;
    adbc_conn_opts o;
    adbc_conn_opts_init(&o);
    static adbc_keyring *ring;
    if (!ring && adbc_keyring_new(&ring) < 0)
        return -1;
    o.keys = ring; /* no keys needed: the device does not ask */
    o.connect_timeout_ms = 5000;
    return adbc_conn_open(c, t, &o);
}

static void fd_stop(fdev *d, adbc_conn *c)
{
    adbc_conn_close(c);
    d->stop = 1;
    pthread_join(d->th, NULL);
    close(d->fd);
    adbc_session_free(d->s);
    for (int i = 0; i < d->nf; i++)
        free(d->f[i].data);
    free(d->pend.data);
    free(d->out);
    free(d->rec);
    pthread_mutex_destroy(&d->mu);
}

#endif
