/* SPDX-License-Identifier: Apache-2.0 */
/* A scripted, misbehaving device for the hostile-device tests: raw bytes on
 * one end of a socketpair, driven by a script function on its own thread,
 * with the library connected to the other end through adbc_transport_fd.
 * Scripts read what the host sent (hp_read) and answer with well-formed or
 * deliberately broken packets (hp_pkt, hp_raw), go silent (hp_hold) or hang
 * up (returning closes the socket). */
#ifndef TEST_HOSTILE_PEER_H
#define TEST_HOSTILE_PEER_H

#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "adbc/adbc.h"

#define HP_V1 0x01000000u
#define HP_V2 0x01000001u
#define HP_BANNER "device::ro.product.name=hostile;features=shell_v2,cmd,stat_v2,ls_v2"

typedef struct hp_pkt_in {
    uint32_t cmd, a0, a1, len;
    uint8_t data[65536];
} hp_pkt_in;

typedef struct hostile hostile;
typedef void (*hp_script)(hostile *h);

struct hostile {
    int fd;         /* the peer's end */
    hp_script script;
    int arg;        /* a parameter for the script (a cut offset, a count...) */
    _Atomic int stop;
    pthread_t thr;
    hp_pkt_in in;   /* the last packet read */
};

static inline void hp_wr32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static inline uint32_t hp_rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline int hp_raw(hostile *h, const void *p, size_t n)
{
    const uint8_t *b = p;
    while (n > 0) {
        ssize_t w = send(h->fd, b, n, MSG_NOSIGNAL);
        if (w <= 0)
            return -1;
        b += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Build a packet into out (24 + n bytes); magic and check as given. */
static inline size_t hp_build(uint8_t *out, uint32_t cmd, uint32_t a0, uint32_t a1,
                              const void *data, size_t n, uint32_t check, uint32_t magic)
{
    hp_wr32(out, cmd);
    hp_wr32(out + 4, a0);
    hp_wr32(out + 8, a1);
    hp_wr32(out + 12, (uint32_t)n);
    hp_wr32(out + 16, check);
    hp_wr32(out + 20, magic);
    if (n)
        memcpy(out + 24, data, n);
    return 24 + n;
}

static inline uint32_t hp_sum(const void *d, size_t n)
{
    uint32_t s = 0;
    for (size_t i = 0; i < n; i++)
        s += ((const uint8_t *)d)[i];
    return s;
}

/* A well-formed packet (byte sum included, which every peer accepts). */
static inline int hp_pkt(hostile *h, uint32_t cmd, uint32_t a0, uint32_t a1, const void *data,
                         size_t n)
{
    static __thread uint8_t buf[24 + 2 * 1024 * 1024];
    size_t len = hp_build(buf, cmd, a0, a1, data, n, hp_sum(data, n), cmd ^ 0xffffffffu);
    return hp_raw(h, buf, len);
}

/* Read one packet from the host into h->in; -1 on EOF, error or 5 s without one. */
static inline int hp_read(hostile *h)
{
    uint8_t hdr[24];
    size_t got = 0;
    while (got < 24) {
        struct pollfd p = {h->fd, POLLIN, 0};
        if (poll(&p, 1, 5000) <= 0)
            return -1;
        ssize_t r = recv(h->fd, hdr + got, 24 - got, 0);
        if (r <= 0)
            return -1;
        got += (size_t)r;
    }
    h->in.cmd = hp_rd32(hdr);
    h->in.a0 = hp_rd32(hdr + 4);
    h->in.a1 = hp_rd32(hdr + 8);
    h->in.len = hp_rd32(hdr + 12);
    if (h->in.len > sizeof h->in.data)
        return -1;
    got = 0;
    while (got < h->in.len) {
        struct pollfd p = {h->fd, POLLIN, 0};
        if (poll(&p, 1, 5000) <= 0)
            return -1;
        ssize_t r = recv(h->fd, h->in.data + got, h->in.len - got, 0);
        if (r <= 0)
            return -1;
        got += (size_t)r;
    }
    return 0;
}

/* Read until a packet with this command arrives. */
static inline int hp_expect(hostile *h, uint32_t cmd)
{
    for (int i = 0; i < 64; i++) {
        if (hp_read(h) != 0)
            return -1;
        if (h->in.cmd == cmd)
            return 0;
    }
    return -1;
}

/* Say nothing more: drain what the host sends until told to stop. */
static inline void hp_hold(hostile *h)
{
    uint8_t sink[4096];
    while (!h->stop) {
        struct pollfd p = {h->fd, POLLIN, 0};
        if (poll(&p, 1, 50) > 0 && recv(h->fd, sink, sizeof sink, 0) <= 0)
            return;
    }
}

/* The usual start: wait for the host's CNXN and answer with ours. */
static inline int hp_online(hostile *h, uint32_t version, uint32_t maxdata, const char *banner)
{
    if (hp_expect(h, ADBC_A_CNXN) != 0)
        return -1;
    return hp_pkt(h, ADBC_A_CNXN, version, maxdata, banner, strlen(banner));
}

/* Online, then wait for the host's OPEN; *local gets its id. */
static inline int hp_online_open(hostile *h, uint32_t version, uint32_t maxdata,
                                 const char *banner, uint32_t *local)
{
    if (hp_online(h, version, maxdata, banner) != 0 || hp_expect(h, ADBC_A_OPEN) != 0)
        return -1;
    *local = h->in.a0;
    return 0;
}

static void *hp_main(void *arg)
{
    hostile *h = arg;
    h->script(h);
    /* Returning hangs up: the host sees the connection close. */
    shutdown(h->fd, SHUT_RDWR);
    return NULL;
}

/* Start a peer running script; *t gets the host's transport. */
static inline int hp_start(hostile *h, hp_script script, int arg, adbc_transport **t)
{
    int sv[2];
    memset(h, 0, sizeof *h);
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
        return -1;
    h->fd = sv[1];
    h->script = script;
    h->arg = arg;
    if (adbc_transport_fd(t, sv[0], 1) != 0)
        return -1;
    return pthread_create(&h->thr, NULL, hp_main, h) == 0 ? 0 : -1;
}

static inline void hp_stop(hostile *h)
{
    h->stop = 1;
    pthread_join(h->thr, NULL);
    close(h->fd);
}

static inline int64_t hp_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

#endif
