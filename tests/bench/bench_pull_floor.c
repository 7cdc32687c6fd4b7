/* SPDX-License-Identifier: Apache-2.0 */
/* The device's ceiling for a pull: the least work any host can do to pull a
 * file over ADB on TCP. One thread drives the session engine over a blocking
 * socket, reads 1 MiB at a time, follows the sync reply only far enough to
 * find DONE, and drops the file's bytes: no copies in user space, no file
 * written, no second thread. What this reaches against a device is the most
 * any host implementation (adb, adbc or another) can pull from it on the
 * same machine; scripts/bench-sync runs it beside adb and adbc.
 *
 *   bench_pull_floor HOST:PORT REMOTE_PATH [LOCAL_FILE]
 *
 * With LOCAL_FILE the file's bytes are written to it straight out of the
 * read buffer, one writev per read (still no copy in user space): the least
 * work of a host that keeps what it pulls.
 *
 * Keys come from the usual place ($ANDROID_USER_HOME or $HOME/.android).
 * Prints "floor: BYTES bytes in SECONDSs, CPU USER+SYS s", timed from the
 * RECV request to DONE. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "adbc/adbc.h"

#define READ_SIZE (1024 * 1024)

typedef struct floor_state {
    adbc_keyring *keys;
    char *pubkey;
    uint32_t id;
    int ready, closed, done, failed;
    /* sync reply: an 8-byte header, then (DATA) that many bytes to skip */
    uint8_t hdr[8];
    size_t hdr_len;
    uint64_t skip;
    uint64_t bytes;  /* file bytes seen */
    int out;         /* LOCAL_FILE, or -1 */
    int write_failed;
    /* file bytes of the current read, written in one writev after it */
    struct iovec iov[64];
    int niov;
    size_t consumed; /* stream bytes to hand back as credit */
} floor_state;

static int cb_sign(void *user, unsigned index, const uint8_t *token, size_t token_len,
                   uint8_t *sig, size_t *sig_len)
{
    floor_state *f = user;
    if (index >= adbc_keyring_count(f->keys))
        return ADBC_ENOTFOUND;
    return adbc_key_sign_token(sig, sig_len, adbc_keyring_get(f->keys, index), token, token_len);
}

static const char *cb_pubkey(void *user)
{
    floor_state *f = user;
    if (!f->pubkey && adbc_keyring_count(f->keys) > 0)
        adbc_key_public_line(&f->pubkey, adbc_keyring_get(f->keys, 0), NULL);
    return f->pubkey;
}

static void cb_ready(void *user, uint32_t id)
{
    floor_state *f = user;
    if (id == f->id)
        f->ready = 1;
}

static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Write the gathered pieces (they point into the read buffer). */
static void flush_file(floor_state *f)
{
    struct iovec *v = f->iov;
    int n = f->niov;
    f->niov = 0;
    while (n > 0) {
        ssize_t w = writev(f->out, v, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            f->write_failed = 1;
            return;
        }
        while (n > 0 && (size_t)w >= v->iov_len) {
            w -= (ssize_t)v->iov_len;
            v++;
            n--;
        }
        if (n > 0) {
            v->iov_base = (uint8_t *)v->iov_base + w;
            v->iov_len -= (size_t)w;
        }
    }
}

static void cb_data(void *user, uint32_t id, const uint8_t *data, size_t len)
{
    floor_state *f = user;
    if (id != f->id)
        return;
    f->consumed += len;
    while (len > 0 && !f->done && !f->failed) {
        if (f->skip > 0) {
            size_t k = f->skip < len ? (size_t)f->skip : len;
            if (f->out >= 0) {
                if (f->niov == (int)(sizeof f->iov / sizeof f->iov[0]))
                    flush_file(f);
                f->iov[f->niov++] = (struct iovec){(void *)data, k};
            }
            f->skip -= k;
            f->bytes += k;
            data += k;
            len -= k;
            continue;
        }
        size_t k = sizeof f->hdr - f->hdr_len;
        if (k > len)
            k = len;
        memcpy(f->hdr + f->hdr_len, data, k);
        f->hdr_len += k;
        data += k;
        len -= k;
        if (f->hdr_len < sizeof f->hdr)
            break;
        f->hdr_len = 0;
        if (memcmp(f->hdr, "DATA", 4) == 0)
            f->skip = rd32(f->hdr + 4);
        else if (memcmp(f->hdr, "DONE", 4) == 0)
            f->done = 1;
        else
            f->failed = 1; /* FAIL or anything unexpected */
    }
}

static void cb_closed(void *user, uint32_t id, int reason)
{
    (void)reason;
    floor_state *f = user;
    if (id == f->id)
        f->closed = 1;
}

static int flush_out(adbc_session *s, int fd)
{
    const uint8_t *p;
    size_t n;
    while ((n = adbc_session_next_send(&p, s)) > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        adbc_session_sent(s, (size_t)w);
    }
    return 0;
}

static int dial(const char *addr)
{
    char host[256];
    const char *colon = strrchr(addr, ':');
    if (!colon || (size_t)(colon - addr) >= sizeof host)
        return -1;
    memcpy(host, addr, (size_t)(colon - addr));
    host[colon - addr] = 0;
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *ai;
    if (getaddrinfo(host, colon + 1, &hints, &ai) != 0)
        return -1;
    int fd = socket(ai->ai_family, SOCK_STREAM, 0);
    if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
        close(fd);
        fd = -1;
    }
    freeaddrinfo(ai);
    if (fd >= 0) {
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        /* a blocking read must not hang the benchmark on a dead device */
        struct timeval tv = {.tv_sec = 30};
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    }
    return fd;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static int die(const char *what)
{
    fprintf(stderr, "bench_pull_floor: %s: %s\n", what, adbc_last_error());
    return 1;
}

int main(int argc, char **argv)
{
    if (argc != 3 && argc != 4) {
        fprintf(stderr, "usage: bench_pull_floor HOST:PORT REMOTE_PATH [LOCAL_FILE]\n");
        return 2;
    }
    const char *remote = argv[2];
    size_t plen = strlen(remote);
    if (plen == 0 || plen > 1024) {
        fprintf(stderr, "bench_pull_floor: the remote path must be 1 to 1024 bytes\n");
        return 2;
    }
    floor_state f = {.out = -1};
    if (argc == 4 && (f.out = open(argv[3], O_WRONLY | O_CREAT | O_TRUNC, 0644)) < 0) {
        fprintf(stderr, "bench_pull_floor: cannot create %s: %s\n", argv[3], strerror(errno));
        return 1;
    }
    if (adbc_keyring_load_default(&f.keys, 1) < 0)
        return die("loading keys");
    int fd = dial(argv[1]);
    if (fd < 0) {
        fprintf(stderr, "bench_pull_floor: cannot connect to %s\n", argv[1]);
        return 1;
    }
    adbc_session_config cfg;
    adbc_session_config_init(&cfg, ADBC_ROLE_HOST);
    static const adbc_session_callbacks cbs = {
        .size = sizeof(adbc_session_callbacks), .auth_sign = cb_sign,
        .auth_public_key = cb_pubkey,
        .on_ready = cb_ready,
        .on_data = cb_data,
        .on_closed = cb_closed,
    };
    adbc_session *s;
    if (adbc_session_new(&s, &cfg, &cbs, &f) < 0 || adbc_session_start(s) < 0)
        return die("session");
    uint8_t *buf = malloc(READ_SIZE);
    if (!buf)
        return 1;
    int opened = 0, requested = 0;
    double t0 = 0, c0 = 0;
    while (!f.done) {
        if (adbc_session_state_get(s) == ADBC_SESSION_ONLINE && !opened) {
            if (adbc_session_open(&f.id, s, "sync:") < 0)
                return die("open sync:");
            opened = 1;
        }
        if (f.ready && !requested) {
            uint8_t req[8 + 1024];
            memcpy(req, "RECV", 4);
            req[4] = (uint8_t)plen;
            req[5] = (uint8_t)(plen >> 8);
            req[6] = req[7] = 0;
            memcpy(req + 8, remote, plen);
            if (adbc_session_write(s, f.id, req, 8 + plen) != (long)(8 + plen))
                return die("RECV request");
            requested = 1;
            t0 = now_s();
            c0 = cpu_s();
        }
        if (f.consumed > 0) {
            if (adbc_session_consume(s, f.id, f.consumed) < 0)
                return die("consume");
            f.consumed = 0;
        }
        if (flush_out(s, fd) < 0) {
            fprintf(stderr, "bench_pull_floor: write: %s\n", strerror(errno));
            return 1;
        }
        if (f.write_failed) {
            fprintf(stderr, "bench_pull_floor: writing %s failed\n", argv[3]);
            return 1;
        }
        if (f.failed || f.closed) {
            fprintf(stderr, "bench_pull_floor: the pull of %s failed\n", remote);
            return 1;
        }
        ssize_t n = read(fd, buf, READ_SIZE);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            fprintf(stderr, "bench_pull_floor: read: %s\n", n ? strerror(errno) : "end of stream");
            return 1;
        }
        if (adbc_session_recv(s, buf, (size_t)n) < 0)
            return die("session");
        if (f.niov > 0)
            flush_file(&f);
    }
    if (f.out >= 0 && close(f.out) != 0) {
        fprintf(stderr, "bench_pull_floor: writing %s failed\n", argv[3]);
        return 1;
    }
    double secs = now_s() - t0, cpu = cpu_s() - c0;
    printf("floor: %llu bytes in %.3fs, CPU %.3f s\n", (unsigned long long)f.bytes, secs, cpu);
    adbc_session_free(s);
    close(fd);
    free(buf);
    adbc_free(f.pubkey);
    adbc_keyring_free(f.keys);
    return 0;
}
