/* SPDX-License-Identifier: Apache-2.0 */
/* The floor for a push: the least work any host can do to push a file over
 * ADB on TCP, the twin of bench_pull_floor. One thread drives the session
 * engine over a blocking socket: it reads the local file into memory first
 * (so no file I/O is timed), frames it as the sync protocol's SEND / DATA /
 * DONE, hands the engine as much as the window allows, writes what the
 * engine queued with one writev per batch (header and payload together),
 * and reads the device's packets with large reads. No second thread, no
 * copy but the engine's own. Against a legacy device (one packet in flight)
 * what this reaches is the device's round trip plus the least host
 * turnaround; scripts/bench-sync runs it beside adb and adbc.
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
    size_t size = (size_t)sb.st_size;
    uint8_t *data = malloc(size ? size : 1);
    for (size_t got = 0; data && got < size;) {
        ssize_t n = read(in, data + got, size - got);
        if (n <= 0) {
            fprintf(stderr, "bench_push_floor: reading %s failed\n", argv[2]);
            return 1;
        }
        got += (size_t)n;
    }
    close(in);
    size_t stream_len;
    uint8_t *stream = data ? frame(remote, data, size, &stream_len) : NULL;
    if (!stream) {
        fprintf(stderr, "bench_push_floor: out of memory\n");
        return 1;
    }
    free(data);

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
