/* SPDX-License-Identifier: Apache-2.0 */
/* The sync: codec with byte vectors: every request and reply encoded and
 * decoded, in every split of the input, and malformed replies and requests
 * (oversize lengths, unknown ids, bad names, data when nothing is due)
 * rejected with a message naming the problem. */
#include "t.h"

#include <errno.h>
#include <sys/stat.h>

#include "sync/sync_proto.h"

/* ---- helpers ---- */

typedef struct evlog {
    adbc_sync_event ev[64];
    char text[64][300];
    int n;
    uint8_t data[200000];
    size_t dlen;
    int data_events;
    int rc; /* last return code (< 0: the error) */
} evlog;

/* Feed in pieces of `step` bytes (0: all at once); collect events. */
static void feed_r(adbc_sync_rdec *d, const uint8_t *in, size_t len, size_t step, evlog *log)
{
    memset(log, 0, sizeof *log);
    size_t pos = 0;
    while (pos < len) {
        size_t n = step && len - pos > step ? step : len - pos;
        size_t off = 0;
        while (off < n) {
            size_t used = 0;
            adbc_sync_event ev;
            int rc = sync_rdec_next(d, in + pos + off, n - off, &used, &ev);
            off += used;
            log->rc = rc;
            if (rc < 0)
                return;
            if (rc == 0) {
                if (used == 0 && off < n) { /* no progress: a decoder bug */
                    log->rc = -1000;
                    return;
                }
                continue;
            }
            if (ev.type == ADBC_SYNC_EV_DATA) {
                memcpy(log->data + log->dlen, ev.data, ev.len);
                log->dlen += ev.len;
                log->data_events++;
                if (!ev.last)
                    continue;
            }
            if (log->n < 64) {
                log->ev[log->n] = ev;
                if (ev.text)
                    snprintf(log->text[log->n], sizeof log->text[0], "%s", ev.text);
                log->n++;
            }
        }
        pos += n;
    }
}

static void feed_q(adbc_sync_qdec *d, const uint8_t *in, size_t len, size_t step, evlog *log)
{
    memset(log, 0, sizeof *log);
    size_t pos = 0;
    while (pos < len) {
        size_t n = step && len - pos > step ? step : len - pos;
        size_t off = 0;
        while (off < n) {
            size_t used = 0;
            adbc_sync_event ev;
            int rc = sync_qdec_next(d, in + pos + off, n - off, &used, &ev);
            off += used;
            log->rc = rc;
            if (rc < 0)
                return;
            if (rc == 0)
                continue;
            if (ev.type == ADBC_SYNC_EV_DATA) {
                memcpy(log->data + log->dlen, ev.data, ev.len);
                log->dlen += ev.len;
                if (!ev.last)
                    continue;
            }
            if (log->n < 64) {
                log->ev[log->n] = ev;
                if (ev.text)
                    snprintf(log->text[log->n], sizeof log->text[0], "%s", ev.text);
                log->n++;
            }
        }
        pos += n;
    }
}

/* Build a byte vector from pieces: "S:..." literal text, "U:n" u32, "Q:n" u64. */
typedef struct vec {
    uint8_t b[200000];
    size_t n;
} vec;

static void v_str(vec *v, const char *s)
{
    size_t l = strlen(s);
    memcpy(v->b + v->n, s, l);
    v->n += l;
}

static void v_u32(vec *v, uint32_t x)
{
    for (int i = 0; i < 4; i++)
        v->b[v->n++] = (uint8_t)(x >> (8 * i));
}

static void v_u64(vec *v, uint64_t x)
{
    for (int i = 0; i < 8; i++)
        v->b[v->n++] = (uint8_t)(x >> (8 * i));
}

static void v_bytes(vec *v, const void *p, size_t n)
{
    memcpy(v->b + v->n, p, n);
    v->n += n;
}

static vec V; /* scratch (too big for the stack) */
static evlog L;

/* ---- requests ---- */

TEST(request_vectors)
{
    uint8_t out[2048];
    static const struct {
        uint32_t id;
        const char *name;
    } ids[] = {
        {ADBC_SYNC_STAT, "STAT"}, {ADBC_SYNC_STA2, "STA2"}, {ADBC_SYNC_LST2, "LST2"},
        {ADBC_SYNC_LIST, "LIST"}, {ADBC_SYNC_LIS2, "LIS2"}, {ADBC_SYNC_RECV, "RECV"},
        {ADBC_SYNC_SEND, "SEND"},
    };
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        long n = sync_enc_req(out, sizeof out, ids[i].id, "/sdcard/a b", 11);
        CHECK_EQ_INT(n, 19);
        CHECK_MEM(out, ids[i].name, 4);
        CHECK_MEM(out + 4, "\x0b\x00\x00\x00/sdcard/a b", 15);
    }
    CHECK_EQ_INT(sync_enc_req(out, sizeof out, ADBC_SYNC_QUIT, "", 0), 8);
    CHECK_MEM(out, "QUIT\0\0\0\0", 8);
    /* DATA and DONE headers: DONE carries the mtime in its length field. */
    sync_enc_hdr(out, ADBC_SYNC_DATA, 65536);
    CHECK_MEM(out, "DATA\x00\x00\x01\x00", 8);
    sync_enc_hdr(out, ADBC_SYNC_DONE, 1700000000u);
    CHECK_MEM(out, "DONE\x00\xf1\x53\x65", 8);
}

TEST(request_path_limit)
{
    static char path[1100];
    static uint8_t out[1200];
    memset(path, 'a', sizeof path);
    CHECK_EQ_INT(sync_enc_req(out, sizeof out, ADBC_SYNC_RECV, path, 1024), 1032);
    CHECK_EQ_INT(sync_enc_req(out, sizeof out, ADBC_SYNC_RECV, path, 1025), ADBC_EINVAL);
    CHECK(strstr(adbc_last_error(), "1025") != NULL);
    /* too small an output buffer is a clean error too */
    CHECK_EQ_INT(sync_enc_req(out, 10, ADBC_SYNC_RECV, path, 5), ADBC_EINVAL);
}

TEST(send_spec)
{
    char spec[1100];
    CHECK_EQ_INT(sync_send_spec(spec, sizeof spec, "/data/local/tmp/f", S_IFREG | 0644),
                 strlen("/data/local/tmp/f,33188"));
    CHECK_STR(spec, "/data/local/tmp/f,33188");
    sync_send_spec(spec, sizeof spec, "/sdcard/l", S_IFLNK | 0777);
    CHECK_STR(spec, "/sdcard/l,41471");
    static char longp[1030];
    memset(longp, 'x', 1020);
    longp[1020] = '\0'; /* 1020 + ",33188" = 1026 > 1024 */
    CHECK_EQ_INT(sync_send_spec(spec, sizeof spec, longp, 33188), ADBC_EINVAL);

    size_t plen;
    uint32_t mode;
    const char *s1 = "/a,b/c,33188";
    CHECK_EQ_INT(sync_parse_send_spec(s1, strlen(s1), &plen, &mode), 0);
    CHECK_EQ_INT(plen, 6); /* the last comma splits, as adbd does */
    CHECK_EQ_INT(mode, 33188);
    CHECK_EQ_INT(sync_parse_send_spec("/x,0644", 7, &plen, &mode), 0);
    CHECK_EQ_INT(mode, 0644); /* strtoul(.., 0): a leading 0 is octal */
    CHECK_EQ_INT(sync_parse_send_spec("/x,0x1ff", 8, &plen, &mode), 0);
    CHECK_EQ_INT(mode, 0x1ff);
    CHECK_EQ_INT(sync_parse_send_spec("/x", 2, &plen, &mode), ADBC_EPROTO);
    CHECK_STR(adbc_last_error(), "missing , in ID_SEND");
    CHECK_EQ_INT(sync_parse_send_spec("/x,", 3, &plen, &mode), ADBC_EPROTO);
    CHECK_STR(adbc_last_error(), "bad mode");
    CHECK_EQ_INT(sync_parse_send_spec("/x,12z", 6, &plen, &mode), ADBC_EPROTO);
    CHECK_EQ_INT(sync_parse_send_spec("/x,099", 6, &plen, &mode), ADBC_EPROTO);
    CHECK_EQ_INT(sync_parse_send_spec("/x,99999999999", 14, &plen, &mode), ADBC_EPROTO);
}

/* ---- replies: encoders ---- */

static adbc_sync_statbuf sample(void)
{
    adbc_sync_statbuf st = {0};
    st.mode = S_IFREG | 0640;
    st.size = 0x123456789aULL;
    st.mtime = 1700000001;
    st.atime = 1700000002;
    st.ctime = -5;
    st.dev = 0x0102030405060708ULL;
    st.ino = 77;
    st.nlink = 2;
    st.uid = 2000;
    st.gid = 1015;
    st.v2 = 1;
    return st;
}

static void v2_fields(vec *v, uint32_t err, const adbc_sync_statbuf *st)
{
    v_u32(v, err);
    v_u64(v, st->dev);
    v_u64(v, st->ino);
    v_u32(v, st->mode);
    v_u32(v, st->nlink);
    v_u32(v, st->uid);
    v_u32(v, st->gid);
    v_u64(v, st->size);
    v_u64(v, (uint64_t)st->atime);
    v_u64(v, (uint64_t)st->mtime);
    v_u64(v, (uint64_t)st->ctime);
}

TEST(reply_encoders)
{
    adbc_sync_statbuf st = sample();
    uint8_t out[80];

    V.n = 0;
    v_str(&V, "STAT");
    v_u32(&V, st.mode);
    v_u32(&V, 0x3456789a); /* v1: the low 32 bits */
    v_u32(&V, 1700000001);
    CHECK_EQ_INT(sync_enc_stat_v1(out, &st), 16);
    CHECK_MEM(out, V.b, 16);

    V.n = 0;
    v_str(&V, "STA2");
    v2_fields(&V, 0, &st);
    CHECK_EQ_INT(V.n, 72);
    CHECK_EQ_INT(sync_enc_stat_v2(out, ADBC_SYNC_STA2, 0, &st), 72);
    CHECK_MEM(out, V.b, 72);

    /* an error zeroes every field, as adbd sends it */
    static const adbc_sync_statbuf zero;
    V.n = 0;
    v_str(&V, "LST2");
    v2_fields(&V, 2, &zero);
    CHECK_EQ_INT(sync_enc_stat_v2(out, ADBC_SYNC_LST2, 2, &st), 72);
    CHECK_MEM(out, V.b, 72);

    V.n = 0;
    v_str(&V, "DENT");
    v_u32(&V, st.mode);
    v_u32(&V, 0x3456789a);
    v_u32(&V, 1700000001);
    v_u32(&V, 5);
    CHECK_EQ_INT(sync_enc_dent_v1(out, &st, 5), 20);
    CHECK_MEM(out, V.b, 20);

    V.n = 0;
    v_str(&V, "DNT2");
    v2_fields(&V, 0, &st);
    v_u32(&V, 9);
    CHECK_EQ_INT(sync_enc_dent_v2(out, 0, &st, 9), 76);
    CHECK_MEM(out, V.b, 76);

    /* the end of a listing is a whole entry-sized record */
    uint8_t end[76];
    CHECK_EQ_INT(sync_enc_list_end(end, 0), 20);
    CHECK_MEM(end, "DONE\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 20);
    CHECK_EQ_INT(sync_enc_list_end(end, 1), 76);
    CHECK_MEM(end, "DONE", 4);
    for (int i = 4; i < 76; i++)
        CHECK_EQ_INT(end[i], 0);
}

/* ---- replies: decoder, in every split ---- */

static const size_t steps[] = {0, 1, 2, 3, 5, 7, 8, 13, 64, 4096};
#define NSTEPS (sizeof steps / sizeof steps[0])

TEST(decode_stat_v1)
{
    adbc_sync_statbuf st = sample();
    uint8_t b[16];
    sync_enc_stat_v1(b, &st);
    for (size_t k = 0; k < NSTEPS; k++) {
        adbc_sync_rdec d;
        sync_rdec_expect(&d, ADBC_SYNC_X_STAT_V1, ADBC_SYNC_STAT);
        feed_r(&d, b, 16, steps[k], &L);
        CHECK_EQ_INT(L.rc, 1);
        CHECK_EQ_INT(L.n, 1);
        CHECK_EQ_INT(L.ev[0].type, ADBC_SYNC_EV_STAT);
        CHECK_EQ_INT(L.ev[0].st.mode, st.mode);
        CHECK_EQ_INT(L.ev[0].st.size, 0x3456789a);
        CHECK_EQ_INT(L.ev[0].st.mtime, 1700000001);
        CHECK_EQ_INT(L.ev[0].st.v2, 0);
        CHECK_EQ_INT(d.expect, ADBC_SYNC_X_NONE);
    }
}

TEST(decode_stat_v2)
{
    adbc_sync_statbuf st = sample();
    uint8_t b[72];
    for (int which = 0; which < 2; which++) {
        uint32_t id = which ? ADBC_SYNC_LST2 : ADBC_SYNC_STA2;
        sync_enc_stat_v2(b, id, 0, &st);
        for (size_t k = 0; k < NSTEPS; k++) {
            adbc_sync_rdec d;
            sync_rdec_expect(&d, ADBC_SYNC_X_STAT_V2, ADBC_SYNC_STA2);
            feed_r(&d, b, 72, steps[k], &L);
            CHECK_EQ_INT(L.n, 1);
            const adbc_sync_statbuf *g = &L.ev[0].st;
            CHECK_EQ_INT(L.ev[0].error, 0);
            CHECK_EQ_INT(g->mode, st.mode);
            CHECK(g->size == st.size);
            CHECK(g->dev == st.dev);
            CHECK_EQ_INT(g->ino, 77);
            CHECK_EQ_INT(g->nlink, 2);
            CHECK_EQ_INT(g->uid, 2000);
            CHECK_EQ_INT(g->gid, 1015);
            CHECK_EQ_INT(g->atime, 1700000002);
            CHECK_EQ_INT(g->mtime, 1700000001);
            CHECK_EQ_INT(g->ctime, -5);
            CHECK_EQ_INT(g->v2, 1);
        }
    }
    /* how v2 reports an error: the errno field, everything else zero */
    sync_enc_stat_v2(b, ADBC_SYNC_STA2, 13, &st);
    adbc_sync_rdec d;
    sync_rdec_expect(&d, ADBC_SYNC_X_STAT_V2, ADBC_SYNC_STA2);
    feed_r(&d, b, 72, 0, &L);
    CHECK_EQ_INT(L.n, 1);
    CHECK_EQ_INT(L.ev[0].error, 13);
    CHECK_EQ_INT(L.ev[0].st.mode, 0);
}

TEST(decode_list_v1_and_v2)
{
    adbc_sync_statbuf st = sample();
    for (int v2 = 0; v2 < 2; v2++) {
        V.n = 0;
        uint8_t h[76];
        V.n += v2 ? sync_enc_dent_v2(V.b + V.n, 0, &st, 1)
                  : sync_enc_dent_v1(V.b + V.n, &st, 1);
        v_str(&V, ".");
        V.n += v2 ? sync_enc_dent_v2(V.b + V.n, 0, &st, 9)
                  : sync_enc_dent_v1(V.b + V.n, &st, 9);
        v_str(&V, "file name");
        if (v2) { /* an entry the device could not lstat */
            V.n += sync_enc_dent_v2(V.b + V.n, 13, &st, 3);
            v_str(&V, "bad");
        }
        size_t e = sync_enc_list_end(h, v2);
        v_bytes(&V, h, e);
        for (size_t k = 0; k < NSTEPS; k++) {
            adbc_sync_rdec d;
            sync_rdec_expect(&d, v2 ? ADBC_SYNC_X_LIST_V2 : ADBC_SYNC_X_LIST_V1, 0);
            feed_r(&d, V.b, V.n, steps[k], &L);
            CHECK_EQ_INT(L.rc, 1);
            CHECK_EQ_INT(L.n, v2 ? 4 : 3);
            CHECK_EQ_INT(L.ev[0].type, ADBC_SYNC_EV_DENT);
            CHECK_STR(L.text[0], ".");
            CHECK_STR(L.text[1], "file name");
            CHECK_EQ_INT(L.ev[1].st.mode, st.mode);
            CHECK_EQ_INT(L.ev[1].st.v2, v2);
            if (v2) {
                CHECK_EQ_INT(L.ev[2].error, 13);
                CHECK_STR(L.text[2], "bad");
                CHECK(L.ev[1].st.size == st.size);
            }
            CHECK_EQ_INT(L.ev[L.n - 1].type, ADBC_SYNC_EV_LIST_END);
            CHECK_EQ_INT(d.expect, ADBC_SYNC_X_NONE);
        }
    }
}

TEST(decode_recv)
{
    V.n = 0;
    v_str(&V, "DATA");
    v_u32(&V, 3);
    v_str(&V, "abc");
    v_str(&V, "DATA"); /* an empty chunk is allowed and ignored */
    v_u32(&V, 0);
    v_str(&V, "DATA");
    v_u32(&V, 65536);
    for (int i = 0; i < 65536; i++)
        V.b[V.n++] = (uint8_t)(i * 13);
    v_str(&V, "DONE");
    v_u32(&V, 0);
    for (size_t k = 0; k < NSTEPS; k++) {
        adbc_sync_rdec d;
        sync_rdec_expect(&d, ADBC_SYNC_X_RECV, ADBC_SYNC_RECV);
        feed_r(&d, V.b, V.n, steps[k], &L);
        CHECK_EQ_INT(L.rc, 1);
        CHECK_EQ_INT(L.dlen, 3 + 65536);
        CHECK_MEM(L.data, "abc", 3);
        int bad = 0;
        for (int i = 0; i < 65536; i++)
            bad |= L.data[3 + i] != (uint8_t)(i * 13);
        CHECK_EQ_INT(bad, 0);
        /* the two data chunks end with an event each, then DONE */
        CHECK_EQ_INT(L.n, 3);
        CHECK_EQ_INT(L.ev[2].type, ADBC_SYNC_EV_DONE);
    }
}

TEST(decode_status_and_fail)
{
    adbc_sync_rdec d;
    sync_rdec_expect(&d, ADBC_SYNC_X_STATUS, ADBC_SYNC_SEND);
    feed_r(&d, (const uint8_t *)"OKAY\0\0\0\0", 8, 1, &L);
    CHECK_EQ_INT(L.n, 1);
    CHECK_EQ_INT(L.ev[0].type, ADBC_SYNC_EV_OKAY);

    /* FAIL can answer any request; its text reaches the caller */
    static const adbc_sync_expect xs[] = {ADBC_SYNC_X_STAT_V1, ADBC_SYNC_X_STAT_V2,
                                          ADBC_SYNC_X_LIST_V1, ADBC_SYNC_X_LIST_V2,
                                          ADBC_SYNC_X_RECV,    ADBC_SYNC_X_STATUS};
    V.n = 0;
    v_str(&V, "FAIL");
    v_u32(&V, 38);
    v_str(&V, "couldn't create file: Is a directory\n\x01");
    for (size_t x = 0; x < 6; x++)
        for (size_t k = 0; k < NSTEPS; k++) {
            sync_rdec_expect(&d, xs[x], ADBC_SYNC_STA2);
            feed_r(&d, V.b, V.n, steps[k], &L);
            CHECK_EQ_INT(L.n, 1);
            CHECK_EQ_INT(L.ev[0].type, ADBC_SYNC_EV_FAIL);
            /* control bytes are made printable */
            CHECK_STR(L.text[0], "couldn't create file: Is a directory??");
        }
    /* an empty FAIL completes at once, with nothing after it */
    sync_rdec_expect(&d, ADBC_SYNC_X_RECV, 0);
    feed_r(&d, (const uint8_t *)"FAIL\0\0\0\0", 8, 0, &L);
    CHECK_EQ_INT(L.n, 1);
    CHECK_EQ_INT(L.ev[0].type, ADBC_SYNC_EV_FAIL);
    CHECK_STR(L.text[0], "");
}

/* ---- malformed replies ---- */

static int bad(adbc_sync_expect x, uint32_t want, const vec *v, const char *needle)
{
    for (size_t k = 0; k < NSTEPS; k++) {
        adbc_sync_rdec d;
        sync_rdec_expect(&d, x, want);
        feed_r(&d, v->b, v->n, steps[k], &L);
        if (L.rc != ADBC_EPROTO) {
            fprintf(stderr, "    step %zu: rc %d, wanted EPROTO (%s)\n", steps[k], L.rc, needle);
            return 0;
        }
        if (!strstr(adbc_last_error(), needle)) {
            fprintf(stderr, "    message \"%s\" lacks \"%s\"\n", adbc_last_error(), needle);
            return 0;
        }
    }
    return 1;
}

TEST(malformed_replies)
{
    adbc_sync_statbuf st = sample();
    /* oversize DATA */
    V.n = 0;
    v_str(&V, "DATA");
    v_u32(&V, 65537);
    CHECK(bad(ADBC_SYNC_X_RECV, 0, &V, "oversize DATA"));
    V.n = 0;
    v_str(&V, "DATA");
    v_u32(&V, 0xffffffffu);
    CHECK(bad(ADBC_SYNC_X_RECV, 0, &V, "oversize DATA"));
    /* oversize FAIL */
    V.n = 0;
    v_str(&V, "FAIL");
    v_u32(&V, 4097);
    CHECK(bad(ADBC_SYNC_X_STATUS, 0, &V, "oversize FAIL"));
    /* unknown ids, printable and not */
    V.n = 0;
    v_str(&V, "XYZW");
    v_u32(&V, 0);
    CHECK(bad(ADBC_SYNC_X_RECV, 0, &V, "'XYZW'"));
    V.n = 0;
    v_u32(&V, 0x01020304);
    v_u32(&V, 0);
    CHECK(bad(ADBC_SYNC_X_STAT_V1, 0, &V, "0x01020304"));
    /* right ids, wrong request */
    V.n = 0;
    v_str(&V, "OKAY");
    v_u32(&V, 0);
    CHECK(bad(ADBC_SYNC_X_RECV, 0, &V, "RECV"));
    V.n = 0;
    v_str(&V, "DATA");
    v_u32(&V, 1);
    CHECK(bad(ADBC_SYNC_X_STAT_V2, ADBC_SYNC_STA2, &V, "'DATA'"));
    V.n = 0;
    V.n += sync_enc_dent_v1(V.b, &st, 1);
    v_str(&V, "a");
    CHECK(bad(ADBC_SYNC_X_LIST_V2, 0, &V, "'DENT'"));
    V.n = 0;
    V.n += sync_enc_stat_v1(V.b, &st);
    CHECK(bad(ADBC_SYNC_X_STAT_V2, ADBC_SYNC_STA2, &V, "'STAT'"));
    V.n = 0;
    V.n += sync_enc_stat_v2(V.b, ADBC_SYNC_STA2, 0, &st);
    CHECK(bad(ADBC_SYNC_X_STAT_V1, 0, &V, "'STA2'"));
    /* directory entry names: oversize, empty, with a slash or NUL */
    V.n = 0;
    V.n += sync_enc_dent_v2(V.b, 0, &st, 256);
    CHECK(bad(ADBC_SYNC_X_LIST_V2, 0, &V, "oversize name"));
    V.n = 0;
    V.n += sync_enc_dent_v1(V.b, &st, 0x7fffffff);
    CHECK(bad(ADBC_SYNC_X_LIST_V1, 0, &V, "oversize name"));
    V.n = 0;
    V.n += sync_enc_dent_v1(V.b, &st, 0);
    CHECK(bad(ADBC_SYNC_X_LIST_V1, 0, &V, "empty name"));
    V.n = 0;
    V.n += sync_enc_dent_v1(V.b, &st, 5);
    v_str(&V, "../up");
    CHECK(bad(ADBC_SYNC_X_LIST_V1, 0, &V, "containing '/'"));
    V.n = 0;
    V.n += sync_enc_dent_v1(V.b, &st, 3);
    v_bytes(&V, "a\0b", 3);
    CHECK(bad(ADBC_SYNC_X_LIST_V1, 0, &V, "NUL"));
    /* anything when no reply is due */
    V.n = 0;
    v_str(&V, "OKAY");
    CHECK(bad(ADBC_SYNC_X_NONE, 0, &V, "no reply was due"));
    /* bytes after a complete reply, before the next is expected */
    V.n = 0;
    v_str(&V, "OKAY");
    v_u32(&V, 0);
    v_str(&V, "OKAY");
    v_u32(&V, 0);
    adbc_sync_rdec d;
    sync_rdec_expect(&d, ADBC_SYNC_X_STATUS, 0);
    feed_r(&d, V.b, V.n, 0, &L);
    CHECK_EQ_INT(L.rc, ADBC_EPROTO);
    CHECK_EQ_INT(L.n, 1);
}

TEST(truncated_data_waits_for_more)
{
    /* The decoder cannot know the stream ended: it hands out what came and
     * keeps waiting; the client turns the end of the stream into an error. */
    V.n = 0;
    v_str(&V, "DATA");
    v_u32(&V, 100);
    for (int i = 0; i < 50; i++)
        V.b[V.n++] = (uint8_t)i;
    adbc_sync_rdec d;
    sync_rdec_expect(&d, ADBC_SYNC_X_RECV, 0);
    feed_r(&d, V.b, V.n, 7, &L);
    CHECK_EQ_INT(L.dlen, 50);
    CHECK_EQ_INT(L.n, 0);             /* the chunk never completed */
    CHECK_EQ_INT(d.expect, ADBC_SYNC_X_RECV); /* still inside the reply */
}

/* ---- requests: device-side decoder ---- */

TEST(decode_requests)
{
    V.n = 0;
    V.n += (size_t)sync_enc_req(V.b + V.n, 100, ADBC_SYNC_LST2, "/sdcard", 7);
    V.n += (size_t)sync_enc_req(V.b + V.n, 100, ADBC_SYNC_SEND, "/data/f,33188", 13);
    v_str(&V, "DATA");
    v_u32(&V, 5);
    v_str(&V, "hello");
    v_str(&V, "DATA");
    v_u32(&V, 0);
    v_str(&V, "DATA");
    v_u32(&V, 65536);
    memset(V.b + V.n, 'z', 65536);
    V.n += 65536;
    v_str(&V, "DONE");
    v_u32(&V, 1234567);
    V.n += (size_t)sync_enc_req(V.b + V.n, 100, ADBC_SYNC_QUIT, "", 0);
    for (size_t k = 0; k < NSTEPS; k++) {
        adbc_sync_qdec d;
        sync_qdec_init(&d);
        feed_q(&d, V.b, V.n, steps[k], &L);
        CHECK_EQ_INT(L.rc, 1);
        CHECK_EQ_INT(L.n, 6); /* LST2, SEND, DATA end x2, DONE, QUIT */
        CHECK_EQ_INT(L.ev[0].type, ADBC_SYNC_EV_REQUEST);
        CHECK_EQ_INT(L.ev[0].id, ADBC_SYNC_LST2);
        CHECK_STR(L.text[0], "/sdcard");
        CHECK_EQ_INT(L.ev[1].id, ADBC_SYNC_SEND);
        CHECK_STR(L.text[1], "/data/f,33188");
        CHECK_EQ_INT(L.ev[4].type, ADBC_SYNC_EV_DONE);
        CHECK_EQ_INT(L.ev[4].arg, 1234567);
        CHECK_EQ_INT(L.ev[5].id, ADBC_SYNC_QUIT);
        CHECK_EQ_INT(L.dlen, 5 + 65536);
        CHECK_MEM(L.data, "hello", 5);
    }
}

static int qbad(const vec *v, const char *msg)
{
    for (size_t k = 0; k < NSTEPS; k++) {
        adbc_sync_qdec d;
        sync_qdec_init(&d);
        feed_q(&d, v->b, v->n, steps[k], &L);
        if (L.rc != ADBC_EPROTO || strcmp(adbc_last_error(), msg) != 0) {
            fprintf(stderr, "    step %zu: rc %d \"%s\", wanted \"%s\"\n", steps[k], L.rc,
                    adbc_last_error(), msg);
            return 0;
        }
    }
    return 1;
}

TEST(malformed_requests)
{
    V.n = 0;
    v_str(&V, "RECV");
    v_u32(&V, 1025);
    CHECK(qbad(&V, "path too long"));
    V.n = 0;
    V.n += (size_t)sync_enc_req(V.b, 100, ADBC_SYNC_SEND, "/f,33188", 8);
    v_str(&V, "DATA");
    v_u32(&V, 65537);
    CHECK(qbad(&V, "oversize data message"));
    V.n = 0;
    V.n += (size_t)sync_enc_req(V.b, 100, ADBC_SYNC_SEND, "/f,33188", 8);
    v_str(&V, "STAT");
    v_u32(&V, 0);
    CHECK(qbad(&V, "invalid data message"));
}

TEST(errno_table)
{
    CHECK_STR(adbc_sync_errno_name(2), "ENOENT");
    CHECK_STR(adbc_sync_errno_text(2), "No such file or directory");
    CHECK_STR(adbc_sync_errno_name(75), "EOVERFLOW");
    CHECK_STR(adbc_sync_errno_name(9999), "E?");
    CHECK_EQ_INT(sync_errno_code(2), ADBC_ENOTFOUND);
    CHECK_EQ_INT(sync_errno_code(13), ADBC_EPERM);
    CHECK_EQ_INT(sync_errno_code(1), ADBC_EPERM);
    CHECK_EQ_INT(sync_errno_code(28), ADBC_EREMOTE);
    CHECK_EQ_INT(sync_errno_to_wire(ENOENT), 2);
    CHECK_EQ_INT(sync_errno_to_wire(ENOTDIR), 20);
    CHECK_EQ_INT(sync_errno_to_wire(ELOOP), 40);
}

TEST(id_names)
{
    char b[16];
    CHECK_STR(sync_id_name(ADBC_SYNC_DNT2, b), "DNT2");
    CHECK_STR(sync_id_name(0x00000001u, b), "0x00000001");
}

/* Random bytes in every expectation: no crash, and either events, a need
 * for more input, or a clean EPROTO. */
TEST(random_input_is_total)
{
    uint32_t seed = 12345;
    for (int round = 0; round < 3000; round++) {
        uint8_t buf[300];
        size_t n = (size_t)(round % 300);
        for (size_t i = 0; i < n; i++) {
            seed = seed * 1103515245u + 12345u;
            buf[i] = (uint8_t)(seed >> 16);
            /* bias towards real ids so decoding goes deep */
            if (i % 8 == 0 && (seed & 3) == 0)
                memcpy(buf + i, (const char *[]){"DATA", "DONE", "DENT", "DNT2", "FAIL", "STA2",
                                                 "OKAY", "STAT"}[(seed >> 4) & 7],
                       n - i >= 4 ? 4 : n - i);
        }
        adbc_sync_rdec d;
        sync_rdec_expect(&d, (adbc_sync_expect)(1 + round % 6), ADBC_SYNC_STA2);
        feed_r(&d, buf, n, (size_t)(round % 7), &L);
        CHECK(L.rc == 0 || L.rc == 1 || L.rc == ADBC_EPROTO);
        adbc_sync_qdec q;
        sync_qdec_init(&q);
        feed_q(&q, buf, n, (size_t)(round % 5), &L);
        CHECK(L.rc == 0 || L.rc == 1 || L.rc == ADBC_EPROTO);
    }
}

int main(void)
{
    RUN(request_vectors);
    RUN(request_path_limit);
    RUN(send_spec);
    RUN(reply_encoders);
    RUN(decode_stat_v1);
    RUN(decode_stat_v2);
    RUN(decode_list_v1_and_v2);
    RUN(decode_recv);
    RUN(decode_status_and_fail);
    RUN(malformed_replies);
    RUN(truncated_data_waits_for_more);
    RUN(decode_requests);
    RUN(malformed_requests);
    RUN(errno_table);
    RUN(id_names);
    RUN(random_input_is_total);
    return T_DONE();
}
