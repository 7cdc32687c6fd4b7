/* SPDX-License-Identifier: Apache-2.0 */
/* The floor for a push: the least work any host can do to push a file over
 * ADB on TCP, the twin of bench_pull_floor. It maps the local file (no
 * read, no copy: on tmpfs the pages are the file's own) and does the
 * handshake through the session engine. Then, by what the device offers:
 *
 * Without delayed_ack (a legacy device: one packet in flight), one thread
 * drives the engine over a blocking socket: the sync stream (SEND / DATA /
 * DONE) framed in memory first (so no file I/O is timed), handed to the
 * engine as the device allows, what the engine queued written with one
 * writev per batch, the device's packets read with large reads. What this
 * reaches is the device's round trip plus the least host turnaround.
 *
 * With delayed_ack the stream is spoken here, as adbd's own sockets keep
 * their burst accounting (sockets.cpp): the OPEN grants our window in
 * arg1, the device's first OKAY grants its own (a 4-byte payload, 32 MiB on
 * adbd), every later OKAY adds the bytes it just flushed (a delta), and a
 * packet goes while the credit is above zero, the last one allowed to
 * overdraw it. Each packet is a full max-payload WRTE: its header's iovec,
 * then iovecs over the sync headers and the mapped file (no copy at all),
 * written by one thread on a non-blocking socket that reads the OKAYs as
 * they come (poll), so the device never waits for an acknowledgement the
 * host has not read. That is the most a host can give the device: its
 * ceiling.
 *
 * scripts/bench-sync runs it beside adb and adbc.
 *
 *   bench_push_floor HOST:PORT LOCAL_FILE REMOTE_PATH
 *
 * Keys come from the usual place ($ANDROID_USER_HOME or $HOME/.android).
 * Prints "floor: BYTES bytes in SECONDSs, CPU USER+SYS s, PACKETS packets",
 * timed from the SEND request to the device's OKAY for DONE. */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "adbc/adbc.h"

#define READ_SIZE (256 * 1024)
#define CHUNK (64 * 1024) /* sync DATA chunk, as adb sends */

typedef struct floor_state {
    adbc_keyring *keys;
    char *pubkey;
    uint32_t id;
    int ready, closed, replied, failed;
    uint8_t reply[8];
    size_t reply_len;
    size_t consumed;
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

static void cb_data(void *user, uint32_t id, const uint8_t *data, size_t len)
{
    floor_state *f = user;
    if (id != f->id)
        return;
    f->consumed += len;
    while (len > 0 && f->reply_len < sizeof f->reply) {
        f->reply[f->reply_len++] = *data++;
        len--;
    }
    if (f->reply_len == sizeof f->reply) {
        f->replied = 1;
        f->failed = memcmp(f->reply, "OKAY", 4) != 0;
    }
}

static void cb_closed(void *user, uint32_t id, int reason)
{
    (void)reason;
    floor_state *f = user;
    if (id == f->id)
        f->closed = 1;
}

/* Everything the engine queued, one writev per batch of segments. */
static int flush_out(adbc_session *s, int fd, unsigned long *writes)
{
    struct iovec iov[64];
    int n;
    while ((n = adbc_session_peek_send(s, iov, 64)) > 0) {
        ssize_t w = writev(fd, iov, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        (*writes)++;
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
        /* blocking calls must not hang the benchmark on a dead device */
        struct timeval tv = {.tv_sec = 30};
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
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
    fprintf(stderr, "bench_push_floor: %s: %s\n", what, adbc_last_error());
    return 1;
}

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

/* The whole sync byte stream of the push: SEND, DATA chunks, DONE. */
static uint8_t *frame(const char *remote, const uint8_t *data, size_t size, size_t *len)
{
    char spec[1100];
    int sl = snprintf(spec, sizeof spec, "%s,33188", remote);
    size_t chunks = (size + CHUNK - 1) / CHUNK;
    size_t total = 8 + (size_t)sl + chunks * 8 + size + 8;
    uint8_t *out = malloc(total), *p = out;
    if (!out)
        return NULL;
    memcpy(p, "SEND", 4);
    put32(p + 4, (uint32_t)sl);
    memcpy(p + 8, spec, (size_t)sl);
    p += 8 + sl;
    for (size_t off = 0; off < size; off += CHUNK) {
        size_t k = size - off < CHUNK ? size - off : CHUNK;
        memcpy(p, "DATA", 4);
        put32(p + 4, (uint32_t)k);
        memcpy(p + 8, data + off, k);
        p += 8 + k;
    }
    memcpy(p, "DONE", 4);
    put32(p + 4, (uint32_t)time(NULL));
    *len = total;
    return out;
}

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void header(uint8_t *h, uint32_t cmd, uint32_t a0, uint32_t a1, uint32_t len)
{
    put32(h, cmd);
    put32(h + 4, a0);
    put32(h + 8, a1);
    put32(h + 12, len);
    put32(h + 16, 0); /* no checksum: delayed_ack devices skip it */
    put32(h + 20, cmd ^ 0xffffffffu);
}

/* The stream over delayed_ack, without the engine (see the top). The sync
 * stream (SEND, DATA headers, DONE) is laid out as iovecs over the mapped
 * file, cut into max-payload WRTEs: each packet is its header's iovec and
 * the pieces of the stream it carries. Returns 0 and the figures, or 1
 * with a message. */
static int push_direct(int fd, uint32_t max_payload, const char *remote, const uint8_t *data,
                       size_t size, double *secs, double *cpu, unsigned long *npackets,
                       unsigned long *writes, unsigned long *reads)
{
    const uint32_t local = 1, window = 32u << 20;
    char spec[1100];
    int sl = snprintf(spec, sizeof spec, "%s,33188", remote);
    size_t chunks = (size + CHUNK - 1) / CHUNK;
    size_t nseg = 2 + 2 * chunks + 1;
    struct iovec *seg = malloc(nseg * sizeof *seg);
    uint8_t *sh = malloc(8 + (size_t)sl + chunks * 8 + 8);
    if (!seg || !sh)
        return 1;
    size_t stream_len = 0, ns = 0;
    memcpy(sh, "SEND", 4);
    put32(sh + 4, (uint32_t)sl);
    memcpy(sh + 8, spec, (size_t)sl);
    seg[ns++] = (struct iovec){sh, 8 + (size_t)sl};
    uint8_t *dh = sh + 8 + sl;
    for (size_t i = 0; i < chunks; i++) {
        size_t k = size - i * CHUNK < CHUNK ? size - i * CHUNK : CHUNK;
        memcpy(dh, "DATA", 4);
        put32(dh + 4, (uint32_t)k);
        seg[ns++] = (struct iovec){dh, 8};
        seg[ns++] = (struct iovec){(void *)(data + i * CHUNK), k};
        dh += 8;
    }
    memcpy(dh, "DONE", 4);
    put32(dh + 4, (uint32_t)time(NULL));
    seg[ns++] = (struct iovec){dh, 8};
    for (size_t i = 0; i < ns; i++)
        stream_len += seg[i].iov_len;
    /* The packets: a header iovec, then the stream's pieces. */
    size_t npk = (stream_len + max_payload - 1) / max_payload;
    uint8_t *hdrs = malloc(npk * 24);
    size_t *pkstart = malloc((npk + 1) * sizeof *pkstart);
    /* a header each, the pieces, and one more piece per packet boundary */
    struct iovec *iov = malloc((2 * npk + ns) * sizeof *iov);
    uint8_t *buf = malloc(READ_SIZE + 24);
    if (!hdrs || !pkstart || !iov || !buf) {
        fprintf(stderr, "bench_push_floor: out of memory\n");
        return 1;
    }
    size_t ni = 0, si = 0, so = 0;
    for (size_t q = 0; q < npk; q++) {
        size_t k = stream_len - q * max_payload < max_payload ? stream_len - q * max_payload
                                                              : max_payload;
        pkstart[q] = ni;
        iov[ni++] = (struct iovec){hdrs + q * 24, 24};
        for (size_t left = k; left > 0;) {
            size_t n = seg[si].iov_len - so < left ? seg[si].iov_len - so : left;
            iov[ni++] = (struct iovec){(uint8_t *)seg[si].iov_base + so, n};
            left -= n;
            so += n;
            if (so == seg[si].iov_len) {
                si++;
                so = 0;
            }
        }
    }
    pkstart[npk] = ni;

    uint8_t open[24 + 6];
    header(open, ADBC_A_OPEN, local, window, 6);
    memcpy(open + 24, "sync:", 6);
    if (write(fd, open, sizeof open) != (ssize_t)sizeof open) {
        fprintf(stderr, "bench_push_floor: write: %s\n", strerror(errno));
        return 1;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
        return 1;
    uint32_t rid = 0;
    int64_t credit = 0;
    size_t have = 0;        /* bytes of buf not yet parsed */
    size_t cur = 0;         /* packets given credit (their headers filled in) */
    size_t at_iov = 0;      /* the next iovec to write, and how much of it went */
    size_t at_off = 0;
    uint8_t reply[8];
    size_t reply_len = 0;
    double t0 = 0, c0 = 0;
    while (reply_len < sizeof reply) {
        /* Take credit for whole packets, as adbd does: while it is above
         * zero, the next packet goes (the last may overdraw it). */
        while (rid && cur < npk && credit > 0) {
            uint32_t k = (uint32_t)(stream_len - cur * max_payload < max_payload
                                        ? stream_len - cur * max_payload : max_payload);
            header(hdrs + cur * 24, ADBC_A_WRTE, local, rid, k);
            credit -= k;
            cur++;
        }
        size_t end = pkstart[cur];
        struct pollfd p = {.fd = fd, .events = POLLIN | (at_iov < end ? POLLOUT : 0)};
        int n = poll(&p, 1, 30000);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            fprintf(stderr, "bench_push_floor: %s\n", n ? strerror(errno) : "no progress in 30 s");
            return 1;
        }
        if ((p.revents & POLLOUT) && at_iov < end) {
            struct iovec first = iov[at_iov];
            iov[at_iov].iov_base = (uint8_t *)iov[at_iov].iov_base + at_off;
            iov[at_iov].iov_len -= at_off;
            size_t cnt = end - at_iov < 1024 ? end - at_iov : 1024;
            ssize_t w = writev(fd, iov + at_iov, (int)cnt);
            iov[at_iov] = first;
            if (w < 0 && errno != EAGAIN && errno != EINTR) {
                fprintf(stderr, "bench_push_floor: write: %s\n", strerror(errno));
                return 1;
            }
            if (w > 0) {
                (*writes)++;
                size_t left = (size_t)w;
                while (left > 0) {
                    size_t rest = iov[at_iov].iov_len - at_off;
                    if (left >= rest) {
                        left -= rest;
                        at_iov++;
                        at_off = 0;
                    } else {
                        at_off += left;
                        left = 0;
                    }
                }
            }
        }
        if (p.revents & (POLLIN | POLLHUP | POLLERR)) {
            ssize_t r = read(fd, buf + have, READ_SIZE + 24 - have);
            if (r < 0 && (errno == EAGAIN || errno == EINTR))
                continue;
            if (r <= 0) {
                fprintf(stderr, "bench_push_floor: read: %s\n", r ? strerror(errno) : "end of stream");
                return 1;
            }
            (*reads)++;
            have += (size_t)r;
            size_t at = 0;
            while (have - at >= 24) {
                uint32_t cmd = get32(buf + at), a0 = get32(buf + at + 4),
                         len = get32(buf + at + 12);
                if (len > 4096) {
                    fprintf(stderr, "bench_push_floor: the device sent a %u-byte packet\n", len);
                    return 1;
                }
                if (have - at < 24 + (size_t)len)
                    break;
                const uint8_t *pl = buf + at + 24;
                if (cmd == ADBC_A_OKAY && len == 4) {
                    if (!rid) {
                        rid = a0;
                        t0 = now_s();
                        c0 = cpu_s();
                    }
                    credit += (int32_t)get32(pl);
                } else if (cmd == ADBC_A_WRTE) {
                    for (uint32_t i = 0; i < len && reply_len < sizeof reply; i++)
                        reply[reply_len++] = pl[i];
                } else if (cmd == ADBC_A_CLSE) {
                    fprintf(stderr, "bench_push_floor: the device closed the sync session\n");
                    return 1;
                } else {
                    fprintf(stderr, "bench_push_floor: unexpected packet %.4s (len %u)\n",
                            (const char *)(buf + at), len);
                    return 1;
                }
                at += 24 + (size_t)len;
            }
            memmove(buf, buf + at, have - at);
            have -= at;
        }
    }
    *secs = now_s() - t0;
    *cpu = cpu_s() - c0;
    *npackets = (unsigned long)npk;
    free(seg);
    free(sh);
    free(hdrs);
    free(pkstart);
    free(iov);
    free(buf);
    if (memcmp(reply, "OKAY", 4) != 0) {
        fprintf(stderr, "bench_push_floor: the device answered %.4s\n", (const char *)reply);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: bench_push_floor HOST:PORT LOCAL_FILE REMOTE_PATH\n");
        return 2;
    }
    const char *remote = argv[3];
    if (strlen(remote) == 0 || strlen(remote) > 1024) {
        fprintf(stderr, "bench_push_floor: the remote path must be 1 to 1024 bytes\n");
        return 2;
    }
    int in = open(argv[2], O_RDONLY);
    struct stat sb;
    if (in < 0 || fstat(in, &sb) != 0) {
        fprintf(stderr, "bench_push_floor: cannot open %s: %s\n", argv[2], strerror(errno));
        return 1;
    }
    /* The file mapped, not read: the pages are the page cache's own (on
     * tmpfs, the file itself), so nothing is copied before the transfer. */
    size_t size = (size_t)sb.st_size;
    uint8_t *data = size ? mmap(NULL, size, PROT_READ, MAP_PRIVATE, in, 0) : (uint8_t *)"";
    if (data == MAP_FAILED) {
        fprintf(stderr, "bench_push_floor: cannot map %s: %s\n", argv[2], strerror(errno));
        return 1;
    }
    close(in);
    size_t stream_len = 0;
    uint8_t *stream = NULL;

    floor_state f = {0};
    if (adbc_keyring_load_default(&f.keys, 1) < 0)
        return die("loading keys");
    int fd = dial(argv[1]);
    if (fd < 0) {
        fprintf(stderr, "bench_push_floor: cannot connect to %s\n", argv[1]);
        return 1;
    }
    adbc_session_config cfg;
    adbc_session_config_init(&cfg, ADBC_ROLE_HOST);
    static const adbc_session_callbacks cbs = {
        .size = sizeof(adbc_session_callbacks),
        .auth_sign = cb_sign,
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
    int opened = 0, started = 0;
    size_t pos = 0;
    unsigned long writes = 0, reads = 0;
    double t0 = 0, c0 = 0;
    /* The handshake, through the engine. */
    while (adbc_session_state_get(s) != ADBC_SESSION_ONLINE) {
        if (flush_out(s, fd, &writes) < 0) {
            fprintf(stderr, "bench_push_floor: write: %s\n", strerror(errno));
            return 1;
        }
        ssize_t n = read(fd, buf, READ_SIZE);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            fprintf(stderr, "bench_push_floor: read: %s\n", n ? strerror(errno) : "end of stream");
            return 1;
        }
        if (adbc_session_recv(s, buf, (size_t)n) < 0)
            return die("session");
    }
    if (adbc_session_delayed_ack(s)) {
        double secs = 0, cpu = 0;
        unsigned long packets = 0;
        writes = reads = 0;
        if (push_direct(fd, adbc_session_max_payload(s), remote, data, size, &secs, &cpu,
                        &packets, &writes, &reads) != 0)
            return 1;
        printf("floor: %zu bytes in %.3fs, CPU %.3f s, %lu packets (%lu writes, %lu reads)\n",
               size, secs, cpu, packets, writes, reads);
        adbc_session_free(s);
        close(fd);
        free(buf);
        adbc_free(f.pubkey);
        adbc_keyring_free(f.keys);
        return 0;
    }
    /* One packet in flight: the engine, over the framed stream in memory. */
    stream = frame(remote, data, size, &stream_len);
    if (!stream) {
        fprintf(stderr, "bench_push_floor: out of memory\n");
        return 1;
    }
    while (!f.replied) {
        if (adbc_session_state_get(s) == ADBC_SESSION_ONLINE && !opened) {
            if (adbc_session_open(&f.id, s, "sync:") < 0)
                return die("open sync:");
            opened = 1;
        }
        if (f.ready && pos < stream_len) {
            if (!started) {
                started = 1;
                t0 = now_s();
                c0 = cpu_s();
                writes = reads = 0;
            }
            long k = adbc_session_write(s, f.id, stream + pos, stream_len - pos);
            if (k < 0)
                return die("write");
            pos += (size_t)k;
        }
        if (f.consumed > 0) {
            if (adbc_session_consume(s, f.id, f.consumed) < 0)
                return die("consume");
            f.consumed = 0;
        }
        if (flush_out(s, fd, &writes) < 0) {
            fprintf(stderr, "bench_push_floor: write: %s\n", strerror(errno));
            return 1;
        }
        if (f.closed) {
            fprintf(stderr, "bench_push_floor: the device closed the sync session\n");
            return 1;
        }
        ssize_t n = read(fd, buf, READ_SIZE);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            fprintf(stderr, "bench_push_floor: read: %s\n", n ? strerror(errno) : "end of stream");
            return 1;
        }
        reads++;
        if (adbc_session_recv(s, buf, (size_t)n) < 0)
            return die("session");
    }
    double secs = now_s() - t0, cpu = cpu_s() - c0;
    if (f.failed) {
        fprintf(stderr, "bench_push_floor: the device answered %.4s\n", (const char *)f.reply);
        return 1;
    }
    unsigned long packets = (unsigned long)((stream_len + adbc_session_max_payload(s) - 1) /
                                            adbc_session_max_payload(s));
    printf("floor: %zu bytes in %.3fs, CPU %.3f s, %lu packets (%lu writes, %lu reads)\n", size,
           secs, cpu, packets, writes, reads);
    adbc_session_free(s);
    close(fd);
    free(buf);
    free(stream);
    adbc_free(f.pubkey);
    adbc_keyring_free(f.keys);
    return 0;
}
