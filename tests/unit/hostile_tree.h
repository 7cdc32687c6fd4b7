/* SPDX-License-Identifier: Apache-2.0 */
/* A sync service that serves a synthetic directory tree of any size, even an
 * endless one, for the tree-pull tests (issue 13, finding 2). Built on
 * hostile_peer.h, it serves several sync sessions at once, as adbd does, from
 * one event loop: replies are generated as flow control lets them go, so the
 * peer's own memory stays small whatever the tree.
 *
 * The tree: every directory listing holds ht_cfg.entries entries (after "."
 * and ".."; HT_ENDLESS: never ends). Entry i is a regular file of
 * ht_cfg.file_size bytes named "f<i>" when ht_cfg.file_every divides i (0:
 * never), else an entry of mode ht_cfg.other_mode named "d<i>" (a directory)
 * or "s<i>" (anything else). A stat of a path whose last component starts
 * with 'f' is that file; of any other path, a directory. RECV of any path
 * sends file_size bytes of 'x'. ht_cfg.pause_us slows the listing down. As a
 * safety net for the code before the fix
 * (which lists forever), the peer hangs up after ht_cfg.give_up_entries
 * entries or ht_cfg.give_up_ms. */
#ifndef TEST_HOSTILE_TREE_H
#define TEST_HOSTILE_TREE_H

#include <stdio.h>
#include <stdlib.h>

#include "hostile_sync.h"

#define HT_ENDLESS UINT64_MAX
#define HT_STREAMS 4

typedef struct ht_cfg {
    uint64_t entries;
    uint64_t file_every;
    uint32_t other_mode;
    uint32_t file_size;
    uint64_t give_up_entries;
    int64_t give_up_ms;
    int pause_us;                 /* after each listing WRTE: a slower device */
    /* what happened */
    _Atomic uint64_t sent;        /* directory entries sent */
    _Atomic uint64_t recvs;       /* RECV requests */
    _Atomic uint64_t sent_at_first_recv; /* entries sent when the first RECV came */
    _Atomic int listings_done;    /* listings sent to their end */
    _Atomic int sessions;         /* sync sessions opened */
    _Atomic int gave_up;
} ht_cfg;

static ht_cfg ht;

typedef struct ht_stream {
    uint32_t host, ours;
    uint8_t *in;
    size_t in_len, in_cap;
    int credit, open;
    int gen;               /* 0 idle, 1 listing, 2 file, 3 a reply in out[] */
    uint64_t li;           /* listing: next entry */
    uint64_t left;         /* file: bytes left */
    uint8_t out[512];      /* a short reply (stat) */
    size_t out_len;
} ht_stream;

static uint8_t ht_buf[HS_MAX];

static inline void ht_entry(uint64_t i, uint32_t *mode, char name[32], uint64_t *size)
{
    if (ht.file_every && i % ht.file_every == 0) {
        *mode = HS_REG;
        *size = ht.file_size;
        snprintf(name, 32, "f%07llu", (unsigned long long)i);
    } else {
        *mode = ht.other_mode;
        *size = 0;
        snprintf(name, 32, "%c%07llu", S_ISDIR(ht.other_mode) ? 'd' : 's',
                 (unsigned long long)i);
    }
}

/* Fill a WRTE payload from the stream's current reply; 0 when none. */
static inline size_t ht_fill(ht_stream *t)
{
    size_t n = 0;
    if (t->gen == 3) {
        memcpy(ht_buf, t->out, t->out_len);
        n = t->out_len;
        t->gen = 0;
    } else if (t->gen == 1) {
        while (n + 76 + 32 <= sizeof ht_buf) {
            if (t->li >= ht.entries) {
                uint8_t r[76];
                hs_st2(r, "DONE", 0, 0, 0, 0);
                memcpy(ht_buf + n, r, 76);
                n += 76;
                t->gen = 0;
                ht.listings_done++;
                break;
            }
            uint32_t mode;
            uint64_t size;
            char name[32];
            ht_entry(t->li++, &mode, name, &size);
            size_t nl = strlen(name);
            hs_st2(ht_buf + n, "DNT2", 0, mode, size, (uint32_t)nl);
            hp_wr32(ht_buf + n + 16, (uint32_t)t->li); /* ino: unique */
            memcpy(ht_buf + n + 76, name, nl);
            n += 76 + nl;
            ht.sent++;
        }
    } else if (t->gen == 2) {
        if (t->left == 0) {
            memcpy(ht_buf, "DONE\0\0\0\0", 8);
            t->gen = 0;
            return 8;
        }
        size_t k = t->left < sizeof ht_buf - 8 ? t->left : sizeof ht_buf - 8;
        memcpy(ht_buf, "DATA", 4);
        hp_wr32(ht_buf + 4, (uint32_t)k);
        memset(ht_buf + 8, 'x', k);
        t->left -= k;
        n = 8 + k;
    }
    return n;
}

/* Start the reply to the next complete request; -1 to hang up. */
static inline int ht_request(ht_stream *t)
{
    if (t->gen != 0 || t->in_len < 8)
        return 0;
    uint32_t id = hp_rd32(t->in), len = hp_rd32(t->in + 4);
    if (id == hs_mkid("QUIT"))
        return -1;
    if (len > 1024)
        return -1;
    if (t->in_len < 8 + (size_t)len)
        return 0;
    char path[1025];
    memcpy(path, t->in + 8, len);
    path[len] = '\0';
    memmove(t->in, t->in + 8 + len, t->in_len - 8 - len);
    t->in_len -= 8 + len;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if (id == hs_mkid("LIS2")) {
        t->gen = 1;
        t->li = 0;
    } else if (id == hs_mkid("STA2") || id == hs_mkid("LST2")) {
        hs_st2(t->out, id == hs_mkid("STA2") ? "STA2" : "LST2", 0,
               base[0] == 'f' ? HS_REG : HS_DIR, base[0] == 'f' ? ht.file_size : 0, 0);
        t->out_len = 72;
        t->gen = 3;
    } else if (id == hs_mkid("RECV")) {
        if (ht.recvs++ == 0)
            ht.sent_at_first_recv = ht.sent;
        t->gen = 2;
        t->left = ht.file_size;
    } else {
        return -1;
    }
    return 0;
}

static inline ht_stream *ht_find(ht_stream *v, uint32_t ours)
{
    for (int i = 0; i < HT_STREAMS; i++)
        if (v[i].open && v[i].ours == ours)
            return &v[i];
    return NULL;
}

static void ht_script(hostile *h)
{
    static ht_stream v[HT_STREAMS];
    memset(v, 0, sizeof v);
    int64_t t0 = hp_now_ms();
    if (hp_online(h, HP_V2, HS_MAX, HS_BANNER) != 0)
        return;
    while (!h->stop) {
        if (ht.sent > ht.give_up_entries || hp_now_ms() - t0 > ht.give_up_ms) {
            ht.gave_up = 1;
            break;
        }
        /* Everything that may go, goes; then wait for the host. */
        for (int i = 0; i < HT_STREAMS; i++) {
            ht_stream *t = &v[i];
            if (!t->open || !t->credit)
                continue;
            if (ht_request(t) != 0)
                goto out;
            size_t n = ht_fill(t);
            if (n == 0)
                continue;
            int listing = t->gen == 1;
            if (hp_pkt(h, ADBC_A_WRTE, t->ours, t->host, ht_buf, n) != 0)
                goto out;
            t->credit = 0;
            if (listing && ht.pause_us)
                usleep((useconds_t)ht.pause_us);
        }
        if (hp_read(h) != 0)
            break;
        hp_pkt_in *p = &h->in;
        ht_stream *t = ht_find(v, p->a1);
        if (p->cmd == ADBC_A_OPEN) {
            int k = 0;
            while (k < HT_STREAMS && v[k].open)
                k++;
            if (k == HT_STREAMS || strncmp((const char *)p->data, "sync:", 5) != 0) {
                hp_pkt(h, ADBC_A_CLSE, 0, p->a0, NULL, 0);
                continue;
            }
            free(v[k].in);
            memset(&v[k], 0, sizeof v[k]);
            v[k].open = 1;
            v[k].credit = 1;
            v[k].host = p->a0;
            v[k].ours = 100 + (uint32_t)ht.sessions++;
            hp_pkt(h, ADBC_A_OKAY, v[k].ours, v[k].host, NULL, 0);
        } else if (p->cmd == ADBC_A_WRTE && t) {
            if (t->in_len + p->len > t->in_cap) {
                t->in_cap = (t->in_len + p->len) * 2;
                t->in = realloc(t->in, t->in_cap);
            }
            memcpy(t->in + t->in_len, p->data, p->len);
            t->in_len += p->len;
            hp_pkt(h, ADBC_A_OKAY, t->ours, t->host, NULL, 0);
        } else if (p->cmd == ADBC_A_OKAY && t) {
            t->credit = 1;
        } else if (p->cmd == ADBC_A_CLSE && t) {
            t->open = 0;
            hp_pkt(h, ADBC_A_CLSE, t->ours, t->host, NULL, 0);
        }
    }
out:
    for (int i = 0; i < HT_STREAMS; i++) {
        free(v[i].in);
        v[i].in = NULL;
    }
}

/* Reset the tree and its counters. */
static inline void ht_set(uint64_t entries, uint64_t file_every, uint32_t other_mode,
                          uint32_t file_size)
{
    ht.entries = entries;
    ht.file_every = file_every;
    ht.other_mode = other_mode;
    ht.file_size = file_size;
    ht.give_up_entries = 3000000;
    ht.give_up_ms = 120000; /* a bound on a hang: a busy machine is many times slower */
    ht.pause_us = 0;
    ht.sent = ht.recvs = ht.sent_at_first_recv = 0;
    ht.listings_done = ht.sessions = ht.gave_up = 0;
}

#endif
