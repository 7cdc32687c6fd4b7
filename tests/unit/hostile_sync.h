/* SPDX-License-Identifier: Apache-2.0 */
/* A scripted sync: service on top of hostile_peer.h, for the hostile tests
 * of push, pull and list. The peer speaks legacy flow control (one WRTE in
 * flight each way, no delayed_ack) with a large max payload, keeps the
 * host's sync bytes in a buffer, and offers helpers to read requests and to
 * answer with well-formed or deliberately hostile replies. Scripts decide
 * what to answer; returning from the script hangs up. */
#ifndef TEST_HOSTILE_SYNC_H
#define TEST_HOSTILE_SYNC_H

#include <stdlib.h>

#include "hostile_peer.h"

#define HS_ID 5u             /* our end of the stream */
#define HS_MAX 65536u /* max payload we announce (what hp_read takes) */
#define HS_BANNER "device::ro.product.name=hostile;features=shell_v2,cmd,stat_v2,ls_v2"

static inline uint32_t hs_mkid(const char *s)
{
    return hp_rd32((const uint8_t *)s);
}

typedef struct hs {
    hostile *h;
    uint32_t local;   /* the host's id for the stream */
    uint8_t *in;      /* sync bytes from the host not yet taken */
    size_t in_len, in_cap;
    int closed;       /* the host closed the stream */
    int credit;       /* our WRTE may go (the host OKAYed the last) */
    uint64_t taken;   /* sync bytes taken so far */
} hs;

/* Read and handle one packet from the host: -1 on EOF, error or silence. */
static inline int hs_pump(hs *s)
{
    if (s->h->stop || hp_read(s->h) != 0)
        return -1;
    hp_pkt_in *p = &s->h->in;
    if (p->cmd == ADBC_A_WRTE) {
        if (s->in_len + p->len > s->in_cap) {
            size_t nc = s->in_cap ? s->in_cap * 2 : 1 << 20;
            while (nc < s->in_len + p->len)
                nc *= 2;
            s->in = realloc(s->in, nc);
            s->in_cap = nc;
        }
        memcpy(s->in + s->in_len, p->data, p->len);
        s->in_len += p->len;
        hp_pkt(s->h, ADBC_A_OKAY, HS_ID, s->local, NULL, 0);
    } else if (p->cmd == ADBC_A_OKAY) {
        s->credit = 1;
    } else if (p->cmd == ADBC_A_CLSE) {
        s->closed = 1;
        return -1;
    } else if (p->cmd == ADBC_A_OPEN) {
        /* a second stream (say, a shell for mkdir): refuse it */
        hp_pkt(s->h, ADBC_A_CLSE, 0, p->a0, NULL, 0);
    }
    return 0;
}

/* Online, accept the first OPEN ("sync:"). */
static inline int hs_start(hs *s, hostile *h)
{
    memset(s, 0, sizeof *s);
    s->h = h;
    s->credit = 1;
    if (hp_online_open(h, HP_V2, HS_MAX, HS_BANNER, &s->local) != 0)
        return -1;
    return hp_pkt(h, ADBC_A_OKAY, HS_ID, s->local, NULL, 0);
}

static inline void hs_end(hs *s)
{
    free(s->in);
    s->in = NULL;
}

/* Send sync bytes as WRTEs, waiting for the host's OKAY before each. */
static inline int hs_send(hs *s, const void *data, size_t n)
{
    const uint8_t *p = data;
    while (n > 0) {
        while (!s->credit)
            if (hs_pump(s) != 0)
                return -1;
        size_t k = n < HS_MAX ? n : HS_MAX;
        if (hp_pkt(s->h, ADBC_A_WRTE, HS_ID, s->local, p, k) != 0)
            return -1;
        s->credit = 0;
        p += k;
        n -= k;
    }
    return 0;
}

/* Wait until n sync bytes from the host are buffered. */
static inline int hs_need(hs *s, size_t n)
{
    while (s->in_len < n)
        if (hs_pump(s) != 0)
            return -1;
    return 0;
}

static inline void hs_take(hs *s, size_t n)
{
    memmove(s->in, s->in + n, s->in_len - n);
    s->in_len -= n;
    s->taken += n;
}

/* The next request: *id, and for requests with a path, the path
 * (NUL-terminated, up to 1024 bytes) in path. DONE and DATA carry no path:
 * for DATA the payload stays buffered (*arg is its length); for DONE *arg
 * is the mtime. */
static inline int hs_req(hs *s, uint32_t *id, char path[1025], uint32_t *arg)
{
    if (hs_need(s, 8) != 0)
        return -1;
    *id = hp_rd32(s->in);
    *arg = hp_rd32(s->in + 4);
    hs_take(s, 8);
    path[0] = '\0';
    if (*id == hs_mkid("DONE") || *id == hs_mkid("DATA") || *id == hs_mkid("QUIT"))
        return 0;
    if (*arg > 1024 || hs_need(s, *arg) != 0)
        return -1;
    memcpy(path, s->in, *arg);
    path[*arg] = '\0';
    hs_take(s, *arg);
    return 0;
}

/* A v2 stat record: 72 bytes (STA2/LST2 reply), or 76 for a DNT2 (the
 * name's length last). */
static inline void hs_st2(uint8_t r[76], const char *id, uint32_t err, uint32_t mode,
                          uint64_t size, uint32_t namelen)
{
    memset(r, 0, 76);
    memcpy(r, id, 4);
    hp_wr32(r + 4, err);
    hp_wr32(r + 24, mode);
    hp_wr32(r + 28, 1);
    hp_wr32(r + 40, (uint32_t)size);
    hp_wr32(r + 44, (uint32_t)(size >> 32));
    hp_wr32(r + 56, 1700000000u); /* mtime */
    hp_wr32(r + 72, namelen);     /* DNT2 only */
}

static inline int hs_stat(hs *s, uint32_t req, uint32_t err, uint32_t mode, uint64_t size)
{
    uint8_t r[76];
    char id[5];
    memcpy(id, &req, 4);
    id[4] = 0;
    hs_st2(r, id, err, mode, size, 0);
    return hs_send(s, r, 72);
}

static inline int hs_dent(hs *s, const char *name, uint32_t mode, uint64_t size)
{
    uint8_t r[76 + 256];
    size_t n = strlen(name);
    hs_st2(r, "DNT2", 0, mode, size, (uint32_t)n);
    memcpy(r + 76, name, n);
    return hs_send(s, r, 76 + n);
}

/* An 8-byte header: DONE, DATA (then the payload), FAIL (then the text). */
static inline int hs_hdr(hs *s, const char *id, uint32_t arg)
{
    uint8_t b[8];
    memcpy(b, id, 4);
    hp_wr32(b + 4, arg);
    return hs_send(s, b, 8);
}

static inline int hs_fail(hs *s, const char *msg)
{
    size_t n = strlen(msg);
    uint8_t b[8 + 256];
    memcpy(b, "FAIL", 4);
    hp_wr32(b + 4, (uint32_t)n);
    memcpy(b + 8, msg, n);
    return hs_send(s, b, 8 + n);
}

/* DATA chunks of filler until limit bytes (UINT64_MAX: endless) or the host
 * closes the stream. */
static inline int hs_data_stream(hs *s, uint64_t limit)
{
    static uint8_t chunk[8 + 65536];
    memcpy(chunk, "DATA", 4);
    uint64_t sent = 0;
    while (sent < limit && !s->h->stop) {
        uint64_t k = limit - sent < 65536 ? limit - sent : 65536;
        hp_wr32(chunk + 4, (uint32_t)k);
        memset(chunk + 8, 'x', (size_t)k);
        if (hs_send(s, chunk, 8 + (size_t)k) != 0)
            return -1;
        sent += k;
    }
    return 0;
}

/* Directory and file modes. */
#define HS_DIR 0040755u
#define HS_REG 0100644u

#endif
