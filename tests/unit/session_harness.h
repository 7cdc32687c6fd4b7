/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers for the session engine's byte-vector tests: a peer (session plus
 * recording callbacks and deterministic fake auth), packet builders and a
 * parser for what a session queued, and an in-memory pump that carries
 * bytes between two sessions in chunks of any size.
 *
 * The fake auth is deterministic so vectors are exact: key k signs a token
 * as "SIG" k token (24 bytes); the device accepts a signature made with the
 * key number it was told to trust over the token it last sent; token number
 * n (from 0) is the bytes 0x10*n + i. */
#ifndef ADBC_TEST_SESSION_HARNESS_H
#define ADBC_TEST_SESSION_HARNESS_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adbc/auth.h"
#include "adbc/error.h"
#include "adbc/session.h"

/* ---- growable byte buffer ---- */

typedef struct hbuf {
    uint8_t *p;
    size_t len, cap;
} hbuf;

static inline void hbuf_put(hbuf *b, const void *data, size_t n)
{
    if (b->len + n > b->cap) {
        size_t nc = b->cap ? b->cap : 256;
        while (nc < b->len + n)
            nc *= 2;
        uint8_t *np = realloc(b->p, nc);
        if (!np)
            abort();
        b->p = np;
        b->cap = nc;
    }
    if (n)
        memcpy(b->p + b->len, data, n);
    b->len += n;
}

static inline void hbuf_free(hbuf *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

/* ---- wire vectors ---- */

static inline uint32_t h_rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline void h_wr32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

/* The byte sum, computed here independently of the engine. */
static inline uint32_t h_sum(const void *data, size_t n)
{
    uint32_t s = 0;
    for (size_t i = 0; i < n; i++)
        s += ((const uint8_t *)data)[i];
    return s;
}

/* Append a packet with an explicit data check. */
static inline void h_pkt_check(hbuf *b, uint32_t cmd, uint32_t a0, uint32_t a1, const void *data,
                               size_t n, uint32_t check)
{
    uint8_t h[24];
    h_wr32(h, cmd);
    h_wr32(h + 4, a0);
    h_wr32(h + 8, a1);
    h_wr32(h + 12, (uint32_t)n);
    h_wr32(h + 16, check);
    h_wr32(h + 20, cmd ^ 0xffffffffu);
    hbuf_put(b, h, 24);
    hbuf_put(b, data, n);
}

/* Append a packet carrying the byte sum (what a 0x01000000 peer sends). */
static inline void h_pkt(hbuf *b, uint32_t cmd, uint32_t a0, uint32_t a1, const void *data,
                         size_t n)
{
    h_pkt_check(b, cmd, a0, a1, data, n, h_sum(data, n));
}

/* Append a packet with data check 0 (what a 0x01000001 peer sends). */
static inline void h_pkt0(hbuf *b, uint32_t cmd, uint32_t a0, uint32_t a1, const void *data,
                          size_t n)
{
    h_pkt_check(b, cmd, a0, a1, data, n, 0);
}

/* An OKAY whose payload is a 4-byte window update. */
static inline void h_okay_win(hbuf *b, uint32_t a0, uint32_t a1, uint32_t win)
{
    uint8_t w[4];
    h_wr32(w, win);
    h_pkt0(b, ADBC_A_OKAY, a0, a1, w, 4);
}

/* One packet parsed out of a byte stream. */
typedef struct hpkt {
    uint32_t cmd, a0, a1, len, check, magic;
    const uint8_t *data;
} hpkt;

/* Parse the packet at *off; 0 when there is no whole packet left. */
static inline int h_parse(const hbuf *b, size_t *off, hpkt *p)
{
    if (*off + 24 > b->len)
        return 0;
    const uint8_t *h = b->p + *off;
    p->cmd = h_rd32(h);
    p->a0 = h_rd32(h + 4);
    p->a1 = h_rd32(h + 8);
    p->len = h_rd32(h + 12);
    p->check = h_rd32(h + 16);
    p->magic = h_rd32(h + 20);
    if (*off + 24 + (size_t)p->len > b->len)
        return 0;
    p->data = h + 24;
    *off += 24 + p->len;
    return 1;
}

/* Number of whole packets in b (and whether the bytes end on a boundary). */
static inline size_t h_count(const hbuf *b, int *exact)
{
    size_t off = 0, n = 0;
    hpkt p;
    while (h_parse(b, &off, &p))
        n++;
    if (exact)
        *exact = off == b->len;
    return n;
}

/* The i-th packet of b; 0 if there are fewer. */
static inline int h_nth(const hbuf *b, size_t i, hpkt *p)
{
    size_t off = 0;
    for (size_t k = 0;; k++) {
        if (!h_parse(b, &off, p))
            return 0;
        if (k == i)
            return 1;
    }
}

/* Take everything the session queued, segment by segment. */
static inline size_t h_take(adbc_session *s, hbuf *out)
{
    size_t total = 0;
    const uint8_t *d;
    size_t n;
    while ((n = adbc_session_next_send(&d, s)) > 0) {
        hbuf_put(out, d, n);
        adbc_session_sent(s, n);
        total += n;
    }
    return total;
}

/* Feed bytes in chunks of `chunk` (0: all at once). Returns the first
 * negative result, or the total consumed. */
static inline long h_feed(adbc_session *s, const uint8_t *data, size_t len, size_t chunk)
{
    size_t off = 0;
    long total = 0;
    if (!chunk)
        chunk = len ? len : 1;
    while (off < len) {
        size_t n = len - off < chunk ? len - off : chunk;
        int rc = adbc_session_recv(s, data + off, n);
        if (rc < 0)
            return rc;
        total += rc;
        if ((size_t)rc < n)
            return total; /* TLS took over */
        off += n;
    }
    return total;
}

static inline long h_feed_buf(adbc_session *s, const hbuf *b, size_t chunk)
{
    return h_feed(s, b->p, b->len, chunk);
}

/* ---- a peer: one session and what its callbacks saw ---- */

#define H_MAX_STREAMS 4096

typedef struct hpeer {
    adbc_session *s;
    char log[16384]; /* one line per event */
    size_t loglen;
    size_t last_data_at; /* offset of the last "data" line */

    /* host auth */
    unsigned nkeys;      /* keys auth_sign knows: 0 .. nkeys-1 */
    int sign_error;      /* nonzero: auth_sign returns this */
    const char *pubkey;  /* auth_public_key result */
    unsigned sign_calls, prompt_calls;

    /* device auth */
    int trust_key;       /* key index auth_verify accepts; -1 none */
    int offer_accept;    /* auth_offer result */
    unsigned random_calls, verify_calls, offer_calls;
    char offered[4200];
    uint8_t last_token[ADBC_AUTH_TOKEN_SIZE];

    /* streams */
    int refuse_open;                 /* on_open result */
    int close_in_open;               /* on_open closes the stream itself */
    const char *write_in_open;       /* on_open writes this right away */
    ssize_t write_in_open_rc;
    const char *write_on_writable;   /* the first on_writable writes this */
    ssize_t write_on_writable_rc;
    int auto_consume;                /* consume data as it arrives */
    hbuf rx[H_MAX_STREAMS];          /* data received, by stream id */
    int closed_reason[H_MAX_STREAMS];
    int closed[H_MAX_STREAMS];
    int ready[H_MAX_STREAMS];
    unsigned writable_calls[H_MAX_STREAMS];
    char last_service[256];
    unsigned online_calls;
} hpeer;

static inline void h_log(hpeer *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(p->log + p->loglen, sizeof p->log - p->loglen, fmt, ap);
    va_end(ap);
    if (n > 0 && p->loglen + (size_t)n < sizeof p->log)
        p->loglen += (size_t)n;
}

static inline int hcb_sign(void *u, unsigned index, const uint8_t *token, size_t token_len,
                           uint8_t *sig, size_t *sig_len)
{
    hpeer *p = u;
    p->sign_calls++;
    h_log(p, "sign %u\n", index);
    if (p->sign_error)
        return p->sign_error;
    if (index >= p->nkeys)
        return ADBC_ENOTFOUND;
    memcpy(sig, "SIG", 3);
    sig[3] = (uint8_t)index;
    memcpy(sig + 4, token, token_len);
    *sig_len = 4 + token_len;
    return 0;
}

static inline const char *hcb_pubkey(void *u)
{
    hpeer *p = u;
    h_log(p, "pubkey\n");
    return p->pubkey;
}

static inline void hcb_prompt(void *u)
{
    hpeer *p = u;
    p->prompt_calls++;
    h_log(p, "prompt\n");
}

static inline int hcb_random(void *u, uint8_t *token, size_t len)
{
    hpeer *p = u;
    for (size_t i = 0; i < len; i++)
        token[i] = (uint8_t)(0x10 * p->random_calls + i);
    if (len <= sizeof p->last_token)
        memcpy(p->last_token, token, len);
    p->random_calls++;
    return 0;
}

static inline int hcb_verify(void *u, const uint8_t *token, size_t token_len, const uint8_t *sig,
                             size_t sig_len)
{
    hpeer *p = u;
    p->verify_calls++;
    h_log(p, "verify %zu\n", sig_len);
    return p->trust_key >= 0 && sig_len == 4 + token_len && memcmp(sig, "SIG", 3) == 0 &&
           sig[3] == (uint8_t)p->trust_key && memcmp(sig + 4, token, token_len) == 0;
}

static inline int hcb_offer(void *u, const char *key)
{
    hpeer *p = u;
    p->offer_calls++;
    snprintf(p->offered, sizeof p->offered, "%s", key);
    h_log(p, "offer\n");
    return p->offer_accept;
}

static inline void hcb_online(void *u)
{
    hpeer *p = u;
    p->online_calls++;
    h_log(p, "online\n");
}

static inline int hcb_open(void *u, uint32_t id, const char *service)
{
    hpeer *p = u;
    snprintf(p->last_service, sizeof p->last_service, "%s", service);
    h_log(p, "open %u %s\n", id, service);
    if (p->close_in_open)
        adbc_session_close_stream(p->s, id);
    if (p->write_in_open)
        p->write_in_open_rc = adbc_session_write(p->s, id, (const uint8_t *)p->write_in_open,
                                                 strlen(p->write_in_open));
    return p->refuse_open;
}

static inline void hcb_ready(void *u, uint32_t id)
{
    hpeer *p = u;
    if (id < H_MAX_STREAMS)
        p->ready[id] = 1;
    h_log(p, "ready %u\n", id);
}

static inline void hcb_data(void *u, uint32_t id, const uint8_t *data, size_t len)
{
    hpeer *p = u;
    if (id < H_MAX_STREAMS)
        hbuf_put(&p->rx[id], data, len);
    /* Stream data is a byte stream: the engine may hand a WRTE payload over
     * in pieces (as it arrives), so consecutive data events of one stream
     * are logged as one. */
    size_t prev = p->last_data_at, total = len;
    unsigned pid;
    size_t plen;
    if (p->loglen > 0 && prev < p->loglen &&
        sscanf(p->log + prev, "data %u %zu\n", &pid, &plen) == 2 && pid == id &&
        strchr(p->log + prev, '\n') == p->log + p->loglen - 1) {
        p->loglen = prev;
        p->log[prev] = '\0';
        total += plen;
    }
    p->last_data_at = p->loglen;
    h_log(p, "data %u %zu\n", id, total);
    if (p->auto_consume)
        adbc_session_consume(p->s, id, len);
}

static inline void hcb_writable(void *u, uint32_t id)
{
    hpeer *p = u;
    if (id < H_MAX_STREAMS)
        p->writable_calls[id]++;
    h_log(p, "writable %u\n", id);
    if (p->write_on_writable) {
        const char *w = p->write_on_writable;
        p->write_on_writable = NULL;
        p->write_on_writable_rc = adbc_session_write(p->s, id, (const uint8_t *)w, strlen(w));
    }
}

static inline void hcb_closed(void *u, uint32_t id, int reason)
{
    hpeer *p = u;
    if (id < H_MAX_STREAMS) {
        p->closed[id] = 1;
        p->closed_reason[id] = reason;
    }
    h_log(p, "closed %u %d\n", id, reason);
}

static inline adbc_session_callbacks h_callbacks(void)
{
    adbc_session_callbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.size = sizeof cb;
    cb.auth_sign = hcb_sign;
    cb.auth_public_key = hcb_pubkey;
    cb.auth_prompt = hcb_prompt;
    cb.auth_random = hcb_random;
    cb.auth_verify = hcb_verify;
    cb.auth_offer = hcb_offer;
    cb.on_online = hcb_online;
    cb.on_open = hcb_open;
    cb.on_ready = hcb_ready;
    cb.on_data = hcb_data;
    cb.on_writable = hcb_writable;
    cb.on_closed = hcb_closed;
    return cb;
}

/* A peer with its defaults: one key, a public key, the device trusting key
 * 0, consumers that consume at once. cfg NULL: config_init for the role. */
static inline hpeer *h_peer_new(adbc_role role, const adbc_session_config *cfg)
{
    hpeer *p = calloc(1, sizeof *p);
    if (!p)
        abort();
    p->nkeys = 1;
    p->pubkey = "QUFBQQ== user@host";
    p->trust_key = 0;
    p->auto_consume = 1;
    adbc_session_config def;
    if (!cfg) {
        adbc_session_config_init(&def, role);
        cfg = &def;
    }
    adbc_session_callbacks cb = h_callbacks();
    if (adbc_session_new(&p->s, cfg, &cb, p) < 0) {
        free(p);
        return NULL;
    }
    return p;
}

static inline void h_peer_free(hpeer *p)
{
    if (!p)
        return;
    adbc_session_free(p->s);
    for (size_t i = 0; i < H_MAX_STREAMS; i++)
        hbuf_free(&p->rx[i]);
    free(p);
}

/* Carry bytes both ways until neither side has anything to send, feeding
 * each side in chunks of `chunk` bytes (0: whole segments). Returns 0, or
 * the first negative recv result. */
static inline int h_pump(hpeer *a, hpeer *b, size_t chunk)
{
    for (int rounds = 0; rounds < 100000; rounds++) {
        hbuf ab = {0}, ba = {0};
        h_take(a->s, &ab);
        h_take(b->s, &ba);
        if (!ab.len && !ba.len)
            return 0;
        long rc = 0;
        if (ab.len)
            rc = h_feed_buf(b->s, &ab, chunk);
        if (rc >= 0 && ba.len)
            rc = h_feed_buf(a->s, &ba, chunk);
        hbuf_free(&ab);
        hbuf_free(&ba);
        if (rc < 0)
            return (int)rc;
    }
    return ADBC_ETIMEDOUT; /* never settles: a livelock */
}

/* A message that names a packet and what went wrong: non-empty and
 * containing `needle` (case-sensitive). */
static inline int h_msg_has(const char *msg, const char *needle)
{
    return msg && msg[0] && strstr(msg, needle) != NULL;
}

/* A host that sent its CNXN and got the device's: (ver, max, banner), with
 * data check 0 from a 0x01000001 device and the sum from an older one. The
 * host's CNXN is left in *sent when sent is not NULL. */
static inline hpeer *h_host_online(uint32_t ver, uint32_t max, const char *banner,
                                   const adbc_session_config *cfg, hbuf *sent)
{
    hpeer *p = h_peer_new(ADBC_ROLE_HOST, cfg);
    if (!p || adbc_session_start(p->s) < 0)
        return NULL;
    hbuf out = {0}, in = {0};
    h_take(p->s, &out);
    if (sent)
        *sent = out;
    else
        hbuf_free(&out);
    if (ver >= ADBC_VERSION_SKIP_CHECKSUM)
        h_pkt0(&in, ADBC_A_CNXN, ver, max, banner, strlen(banner));
    else
        h_pkt(&in, ADBC_A_CNXN, ver, max, banner, strlen(banner));
    long rc = h_feed_buf(p->s, &in, 0);
    hbuf_free(&in);
    if (rc < 0 || adbc_session_state_get(p->s) != ADBC_SESSION_ONLINE) {
        h_peer_free(p);
        return NULL;
    }
    return p;
}

/* A device (no auth) that got the host's CNXN (ver, max, banner, always
 * with its sum, as adb sends it) and answered with its own; the answer is
 * left in *sent when sent is not NULL. */
static inline hpeer *h_device_online(uint32_t ver, uint32_t max, const char *banner,
                                     const adbc_session_config *cfg, hbuf *sent)
{
    adbc_session_config def;
    if (!cfg) {
        adbc_session_config_init(&def, ADBC_ROLE_DEVICE);
        def.auth_required = 0;
        cfg = &def;
    }
    hpeer *p = h_peer_new(ADBC_ROLE_DEVICE, cfg);
    if (!p)
        return NULL;
    hbuf in = {0}, out = {0};
    h_pkt(&in, ADBC_A_CNXN, ver, max, banner, strlen(banner));
    long rc = h_feed_buf(p->s, &in, 0);
    hbuf_free(&in);
    h_take(p->s, &out);
    if (sent)
        *sent = out;
    else
        hbuf_free(&out);
    if (rc < 0 || adbc_session_state_get(p->s) != ADBC_SESSION_ONLINE) {
        h_peer_free(p);
        return NULL;
    }
    return p;
}

#define H_HOST_BANNER "host::features=shell_v2,cmd,stat_v2,ls_v2,fixed_push_mkdir,delayed_ack"
#define H_DEVICE_BANNER                                                                        \
    "device::ro.product.name=panther;ro.product.model=Pixel 7;ro.product.device=panther;"     \
    "features=shell_v2,cmd,stat_v2,ls_v2,fixed_push_mkdir,delayed_ack"
#define H_LEGACY_DEVICE_BANNER "device::ro.product.name=old;features=shell_v2,cmd"

#endif
