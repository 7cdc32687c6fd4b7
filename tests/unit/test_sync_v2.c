/* SPDX-License-Identifier: Apache-2.0 */
/* Sync v2: SND2/RCV2 framing as AOSP's file_sync_protocol.h lays it out
 * (SyncRequest, then sync_send_v2 {id, mode, flags} / sync_recv_v2 {id,
 * flags}, SyncFlag values), the device-side decoder in every split, the
 * compressed streams (round trips through tiny buffers, reference frames
 * made by the zstd and lz4 command-line tools, corrupt, truncated and
 * trailing data), and the decompression-bomb limit, alone and in a pull
 * from a device that answers RCV2 with one. */
#include "t.h"

#include <errno.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/internal.h"
#include "sync/sync_comp.h"
#include "test_sync_dev.h"

#define TMO 5000

/* ---- framing ---- */

TEST(send2_recv2_bytes_match_aosp_layout)
{
    /* kSyncFlagBrotli = 1, kSyncFlagLZ4 = 2, kSyncFlagZstd = 4,
     * kSyncFlagDryRun = 0x80000000 */
    CHECK_EQ_INT(ADBC_SYNC_FLAG_BROTLI, 1);
    CHECK_EQ_INT(ADBC_SYNC_FLAG_LZ4, 2);
    CHECK_EQ_INT(ADBC_SYNC_FLAG_ZSTD, 4);
    CHECK(ADBC_SYNC_FLAG_DRY_RUN == 0x80000000u);
    /* SendSend2("/sdcard/x", 0100644, Zstd, dry_run): SyncRequest{SND2, 9},
     * the path, then sync_send_v2{SND2, mode, flags}, in one buffer. */
    static const uint8_t snd2[] = {'S', 'N', 'D', '2', 9, 0, 0, 0, '/', 's', 'd', 'c', 'a',
                                   'r', 'd', '/', 'x', 'S', 'N', 'D', '2', 0xa4, 0x81, 0, 0,
                                   4, 0, 0, 0x80};
    uint8_t b[64];
    long n = sync_enc_send2(b, sizeof b, "/sdcard/x", 9, 0100644,
                                 ADBC_SYNC_FLAG_ZSTD | ADBC_SYNC_FLAG_DRY_RUN);
    CHECK_EQ_INT(n, (long)sizeof snd2);
    CHECK(memcmp(b, snd2, sizeof snd2) == 0);
    /* SendRecv2("/sdcard/x", LZ4): SyncRequest{RCV2, 9}, path, {RCV2, flags} */
    static const uint8_t rcv2[] = {'R', 'C', 'V', '2', 9, 0,   0,   0,   '/', 's', 'd',
                                   'c', 'a', 'r', 'd', '/', 'x', 'R', 'C', 'V', '2', 2,
                                   0,   0,   0};
    n = sync_enc_recv2(b, sizeof b, "/sdcard/x", 9, ADBC_SYNC_FLAG_LZ4);
    CHECK_EQ_INT(n, (long)sizeof rcv2);
    CHECK(memcmp(b, rcv2, sizeof rcv2) == 0);
    /* too small a buffer, too long a path */
    CHECK_EQ_INT(sync_enc_recv2(b, 20, "/sdcard/x", 9, 0), ADBC_EINVAL);
    char longp[1030];
    memset(longp, 'a', sizeof longp);
    uint8_t big[1100];
    CHECK_EQ_INT(sync_enc_send2(big, sizeof big, longp, 1025, 0, 0), ADBC_EINVAL);
}

/* SND2 + DATA "abc" + DONE 1234, then RCV2, in every split into two. */
TEST(device_decoder_reads_v2_setups_in_every_split)
{
    uint8_t in[128];
    size_t len = 0;
    len += (size_t)sync_enc_send2(in, sizeof in, "/data/f", 7, 0100600, ADBC_SYNC_FLAG_BROTLI);
    len += sync_enc_hdr(in + len, ADBC_SYNC_DATA, 3);
    memcpy(in + len, "abc", 3);
    len += 3;
    len += sync_enc_hdr(in + len, ADBC_SYNC_DONE, 1234);
    len += (size_t)sync_enc_recv2(in + len, sizeof in - len, "/data/g", 7, ADBC_SYNC_FLAG_ZSTD);
    for (size_t cut = 0; cut <= len; cut++) {
        adbc_sync_qdec q;
        sync_qdec_init(&q);
        int step = 0;
        char data[8];
        size_t dlen = 0;
        const uint8_t *parts[2] = {in, in + cut};
        size_t plen[2] = {cut, len - cut};
        for (int p = 0; p < 2; p++) {
            size_t off = 0;
            while (off < plen[p]) {
                adbc_sync_event ev;
                size_t used = 0;
                int rc = sync_qdec_next(&q, parts[p] + off, plen[p] - off, &used, &ev);
                CHECK(rc >= 0);
                off += used;
                if (rc == 0)
                    continue;
                if (ev.type == ADBC_SYNC_EV_DATA) {
                    memcpy(data + dlen, ev.data, ev.len);
                    dlen += ev.len;
                    continue;
                }
                if (step == 0) {
                    CHECK_EQ_INT(ev.type, ADBC_SYNC_EV_REQUEST);
                    CHECK(ev.id == ADBC_SYNC_SND2);
                    CHECK(strcmp(ev.text, "/data/f") == 0);
                    CHECK(ev.arg == ADBC_SYNC_FLAG_BROTLI);
                    CHECK(ev.st.mode == 0100600);
                } else if (step == 1) {
                    CHECK_EQ_INT(ev.type, ADBC_SYNC_EV_DONE);
                    CHECK(ev.arg == 1234);
                    CHECK(dlen == 3 && memcmp(data, "abc", 3) == 0);
                } else {
                    CHECK_EQ_INT(ev.type, ADBC_SYNC_EV_REQUEST);
                    CHECK(ev.id == ADBC_SYNC_RCV2);
                    CHECK(strcmp(ev.text, "/data/g") == 0);
                    CHECK(ev.arg == ADBC_SYNC_FLAG_ZSTD);
                }
                step++;
            }
        }
        CHECK_EQ_INT(step, 3);
    }
}

/* ---- compressed streams ---- */

static const uint32_t algs[] = {ADBC_SYNC_FLAG_BROTLI, ADBC_SYNC_FLAG_LZ4, ADBC_SYNC_FLAG_ZSTD};

/* Compress in with pieces of at most inmax in and outmax out. */
static uint8_t *zip(uint32_t alg, const uint8_t *in, size_t len, size_t inmax, size_t outmax,
                    size_t *zlen)
{
    adbc_sync_zenc *e;
    if (sync_zenc_new(&e, alg) != 0)
        return NULL;
    size_t cap = len + len / 2 + 4096, n = 0;
    uint8_t *z = malloc(cap);
    size_t off = 0;
    int rc = 0;
    while (rc == 0 && z) {
        const uint8_t *p = in + off;
        size_t l = len - off < inmax ? len - off : inmax;
        size_t l0 = l;
        uint8_t *o = z + n;
        size_t room = cap - n < outmax ? cap - n : outmax;
        size_t r0 = room;
        rc = sync_zenc_run(e, &p, &l, &o, &room, off + l0 == len);
        off += l0 - l;
        n += r0 - room;
        if (cap - n < 64) {
            cap *= 2;
            z = realloc(z, cap);
        }
    }
    sync_zenc_free(e);
    if (rc < 0) {
        free(z);
        return NULL;
    }
    *zlen = n;
    return z;
}

/* Decompress with pieces of at most inmax in and outmax out; 0 when the
 * result equals want. */
static int unzip_eq(uint32_t alg, const uint8_t *z, size_t zlen, size_t inmax, size_t outmax,
                    const uint8_t *want, size_t wlen)
{
    adbc_sync_zdec *d;
    if (sync_zdec_new(&d, alg, wlen) != 0)
        return -1;
    uint8_t *out = malloc(wlen + 1);
    size_t n = 0, off = 0;
    int rc = 0;
    while (off < zlen || rc == 0) {
        const uint8_t *p = z + off;
        size_t l = zlen - off < inmax ? zlen - off : inmax, l0 = l;
        uint8_t *o = out + n;
        size_t room = wlen + 1 - n < outmax ? wlen + 1 - n : outmax, r0 = room;
        rc = sync_zdec_run(d, &p, &l, &o, &room);
        if (rc < 0)
            break;
        off += l0 - l;
        n += r0 - room;
        if (rc == 0 && l0 == 0 && room == r0)
            break; /* wants input there is none of */
    }
    int ok = rc == 1 && sync_zdec_finish(d) == 0 && n == wlen && memcmp(out, want, wlen) == 0;
    sync_zdec_free(d);
    free(out);
    return ok ? 0 : -1;
}

TEST(round_trips_through_tiny_and_large_buffers)
{
    uint32_t built = sync_comp_built();
    size_t big = 300000;
    uint8_t *text = malloc(big), *rnd = malloc(big);
    CHECK(text && rnd);
    for (size_t i = 0; i < big; i++) {
        text[i] = (uint8_t)"I ActivityManager: Start proc 1234\n"[i % 35];
        rnd[i] = (uint8_t)(random() >> 7);
    }
    for (size_t a = 0; a < 3; a++) {
        if (!(built & algs[a])) {
            adbc_sync_zenc *e;
            CHECK_EQ_INT(sync_zenc_new(&e, algs[a]), ADBC_EUNSUPPORTED);
            continue;
        }
        static const size_t sizes[] = {0, 1, 65535, 65536, 65537, 300000};
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
            for (int r = 0; r < 2; r++) {
                const uint8_t *src = r ? rnd : text;
                size_t zl;
                uint8_t *z = zip(algs[a], src, sizes[k], 65536, 65536, &zl);
                CHECK(z != NULL);
                if (r == 0 && sizes[k] == 300000)
                    CHECK(zl < 30000); /* repetitive text shrinks */
                CHECK_EQ_INT(unzip_eq(algs[a], z, zl, 65536, 262144, src, sizes[k]), 0);
                if (sizes[k] <= 65537) /* byte by byte in, 3 bytes out */
                    CHECK_EQ_INT(unzip_eq(algs[a], z, zl, 1, 3, src, sizes[k]), 0);
                free(z);
                /* compressed through 5-byte outputs and 7-byte inputs */
                if (sizes[k] <= 65537) {
                    z = zip(algs[a], src, sizes[k], 7, 5, &zl);
                    CHECK(z != NULL);
                    CHECK_EQ_INT(unzip_eq(algs[a], z, zl, 4096, 4096, src, sizes[k]), 0);
                    free(z);
                }
            }
        }
    }
    free(text);
    free(rnd);
}

/* Frames made by the reference tools: `printf 'adbc sync v2\n' | zstd -1`
 * and `| lz4` (zstd 1.5.4, lz4 1.9.4): adbd's streams are these formats. */
TEST(decodes_frames_made_by_the_reference_tools)
{
    static const uint8_t want[] = "adbc sync v2\n";
    static const uint8_t zst[] = {0x28, 0xb5, 0x2f, 0xfd, 0x04, 0x48, 0x69, 0x00, 0x00, 0x61,
                                  0x64, 0x62, 0x63, 0x20, 0x73, 0x79, 0x6e, 0x63, 0x20, 0x76,
                                  0x32, 0x0a, 0x53, 0x7d, 0x85, 0xdd};
    static const uint8_t lz4[] = {0x04, 0x22, 0x4d, 0x18, 0x64, 0x40, 0xa7, 0x0d, 0x00,
                                  0x00, 0x80, 0x61, 0x64, 0x62, 0x63, 0x20, 0x73, 0x79,
                                  0x6e, 0x63, 0x20, 0x76, 0x32, 0x0a, 0x00, 0x00, 0x00,
                                  0x00, 0x9c, 0xb4, 0x19, 0x6b};
    uint32_t built = sync_comp_built();
    if (built & ADBC_SYNC_FLAG_ZSTD) {
        CHECK_EQ_INT(unzip_eq(ADBC_SYNC_FLAG_ZSTD, zst, sizeof zst, 64, 64, want, 13), 0);
        CHECK_EQ_INT(unzip_eq(ADBC_SYNC_FLAG_ZSTD, zst, sizeof zst, 1, 1, want, 13), 0);
    }
    if (built & ADBC_SYNC_FLAG_LZ4) {
        CHECK_EQ_INT(unzip_eq(ADBC_SYNC_FLAG_LZ4, lz4, sizeof lz4, 64, 64, want, 13), 0);
        CHECK_EQ_INT(unzip_eq(ADBC_SYNC_FLAG_LZ4, lz4, sizeof lz4, 1, 1, want, 13), 0);
    }
}

TEST(corrupt_truncated_and_trailing_data_are_errors)
{
    uint32_t built = sync_comp_built();
    static const uint8_t text[] = "a line of text, a line of text, a line of text\n";
    for (size_t a = 0; a < 3; a++) {
        if (!(built & algs[a]))
            continue;
        size_t zl;
        uint8_t *z = zip(algs[a], text, sizeof text, 4096, 4096, &zl);
        CHECK(z != NULL && zl > 4);
        uint8_t out[256];
        /* truncated: DONE before the stream ended */
        adbc_sync_zdec *d;
        CHECK_EQ_INT(sync_zdec_new(&d, algs[a], 0), 0);
        const uint8_t *p = z;
        size_t l = zl - 3, room = sizeof out;
        uint8_t *o = out;
        CHECK_EQ_INT(sync_zdec_run(d, &p, &l, &o, &room), 0);
        CHECK_EQ_INT(sync_zdec_finish(d), ADBC_EPROTO);
        CHECK(strstr(adbc_last_error(), "ended early") != NULL);
        sync_zdec_free(d);
        /* trailing bytes after the end */
        uint8_t *zz = malloc(zl + 1);
        memcpy(zz, z, zl);
        zz[zl] = 0x55;
        CHECK_EQ_INT(sync_zdec_new(&d, algs[a], 0), 0);
        p = zz;
        l = zl + 1;
        room = sizeof out;
        o = out;
        CHECK_EQ_INT(sync_zdec_run(d, &p, &l, &o, &room), ADBC_EPROTO);
        CHECK(strstr(adbc_last_error(), "follow the end") != NULL);
        sync_zdec_free(d);
        free(zz);
        /* garbage from the start */
        uint8_t junk[64];
        memset(junk, 0xff, sizeof junk);
        CHECK_EQ_INT(sync_zdec_new(&d, algs[a], 0), 0);
        int rc = 0;
        p = junk;
        l = sizeof junk;
        while (rc == 0 && l > 0) {
            room = sizeof out;
            o = out;
            rc = sync_zdec_run(d, &p, &l, &o, &room);
        }
        CHECK_EQ_INT(rc, ADBC_EPROTO);
        sync_zdec_free(d);
        free(z);
    }
}

/* 256 MiB of zeros compress to a few KB; from a file the device said is
 * 1 KB long, that is a bomb: refused after at most 64 MiB + 4096 per
 * compressed byte. The same stream for a file that is 256 MiB passes. */
static uint8_t *zero_stream(uint32_t alg, size_t total, size_t *zlen)
{
    adbc_sync_zenc *e;
    if (sync_zenc_new(&e, alg) != 0)
        return NULL;
    static uint8_t zeros[1 << 20];
    size_t cap = 1 << 20, n = 0, fed = 0;
    uint8_t *z = malloc(cap);
    int rc = 0;
    while (rc == 0 && z && cap - n > 0) {
        const uint8_t *p = zeros;
        size_t l = total - fed < sizeof zeros ? total - fed : sizeof zeros, l0 = l;
        uint8_t *o = z + n;
        size_t room = cap - n, r0 = room;
        rc = sync_zenc_run(e, &p, &l, &o, &room, fed + l0 == total);
        fed += l0 - l;
        n += r0 - room;
    }
    sync_zenc_free(e);
    *zlen = n;
    return rc == 1 ? z : (free(z), NULL);
}

static int inflate_all(uint32_t alg, const uint8_t *z, size_t zlen, uint64_t expected,
                       uint64_t *out_total)
{
    adbc_sync_zdec *d;
    if (sync_zdec_new(&d, alg, expected) != 0)
        return -100;
    static uint8_t out[1 << 18];
    int rc = 0;
    size_t off = 0;
    while (rc == 0) {
        const uint8_t *p = z + off;
        size_t l = zlen - off < 65536 ? zlen - off : 65536, l0 = l;
        uint8_t *o = out;
        size_t room = sizeof out;
        rc = sync_zdec_run(d, &p, &l, &o, &room);
        off += l0 - l;
        if (rc == 0 && l0 == 0 && room == sizeof out)
            break;
    }
    *out_total = sync_zdec_out(d);
    sync_zdec_free(d);
    return rc;
}

TEST(decompression_bombs_are_refused)
{
    uint32_t built = sync_comp_built();
    const size_t total = 256u << 20;
    for (size_t a = 0; a < 3; a++) {
        if (!(built & algs[a]) || algs[a] == ADBC_SYNC_FLAG_LZ4)
            continue; /* LZ4 cannot beat 255:1: no bomb to build */
        size_t zl;
        uint8_t *z = zero_stream(algs[a], total, &zl);
        CHECK(z != NULL);
        fprintf(stderr, "  %s: 256 MiB of zeros in %zu bytes\n", sync_comp_flag_name(algs[a]), zl);
        CHECK(zl < 65536);
        uint64_t out = 0;
        CHECK_EQ_INT(inflate_all(algs[a], z, zl, 1024, &out), ADBC_EPROTO);
        CHECK(strstr(adbc_last_error(), "decompression bomb") != NULL);
        CHECK(out <= 1024 + ADBC_SYNC_BOMB_BASE + ADBC_SYNC_BOMB_RATIO * zl + (1 << 18));
        CHECK(out < total);
        CHECK_EQ_INT(inflate_all(algs[a], z, zl, total, &out), 1);
        CHECK(out == total);
        free(z);
    }
}

/* ---- a pull from a device that answers RCV2 with a bomb ---- */

static char tmpdir[] = "/tmp/adbc-sync-v2.XXXXXX";
static uint8_t *bomb;
static size_t bomb_len;

static int bomb_hook(fdev *d, const adbc_sync_event *ev)
{
    if (ev->id != ADBC_SYNC_RCV2)
        return 0;
    for (size_t off = 0; off < bomb_len;) {
        size_t k = bomb_len - off < ADBC_SYNC_DATA_MAX ? bomb_len - off : ADBC_SYNC_DATA_MAX;
        fd_hdr(d, ADBC_SYNC_DATA, (uint32_t)k);
        fd_out(d, bomb + off, k);
        off += k;
    }
    fd_hdr(d, ADBC_SYNC_DONE, 0);
    return 1;
}

TEST(pull_refuses_a_bomb_and_leaves_no_file)
{
    if (!(sync_comp_built() & ADBC_SYNC_FLAG_ZSTD))
        return;
    CHECK(mkdtemp(tmpdir) != NULL);
    bomb = zero_stream(ADBC_SYNC_FLAG_ZSTD, 256u << 20, &bomb_len);
    CHECK(bomb != NULL);
    static fdev d;
    memset(&d, 0, sizeof d);
    adbc_conn *c;
    CHECK_EQ_INT(fd_start(&d, "device::features=shell_v2,stat_v2,ls_v2,sendrecv_v2,"
                              "sendrecv_v2_zstd", &c), 0);
    fd_put(&d, "/data/f", S_IFREG | 0644, "0123456789", 10, 1);
    d.hook = bomb_hook;
    adbc_sync *s;
    CHECK_EQ_INT(adbc_sync_open(&s, c, TMO), 0);
    CHECK_EQ_INT(adbc_sync_has_compression(s, ADBC_SYNC_COMPRESS_ZSTD), 1);
    CHECK_EQ_INT(adbc_sync_has_compression(s, ADBC_SYNC_COMPRESS_LZ4), 0);
    adbc_sync_opts o;
    adbc_sync_opts_init(&o);
    o.compression = ADBC_SYNC_COMPRESS_ZSTD;
    char local[300];
    snprintf(local, sizeof local, "%s/f", tmpdir);
    int rc = adbc_sync_pull(NULL, s, "/data/f", local, &o, TMO);
    CHECK_EQ_INT(rc, ADBC_EPROTO);
    CHECK(strstr(adbc_last_error(), "decompression bomb") != NULL);
    CHECK(strstr(adbc_last_error(), "nothing was written") != NULL);
    CHECK(access(local, F_OK) != 0);
    /* nothing else left in the directory (no temporary) */
    char cmd[400];
    snprintf(cmd, sizeof cmd, "test -z \"$(ls -A '%s')\"", tmpdir);
    CHECK_EQ_INT(system(cmd), 0);
    /* the handle recovers: the real file, compressed by the fake device's
     * honest path (v1 here: the hook is gone and -Z asked) */
    d.hook = NULL;
    o.compression = ADBC_SYNC_COMPRESS_NONE;
    CHECK_EQ_INT(adbc_sync_pull(NULL, s, "/data/f", local, &o, TMO), 0);
    adbc_sync_close(s);
    fd_stop(&d, c);
    unlink(local);
    rmdir(tmpdir);
    free(bomb);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    RUN(send2_recv2_bytes_match_aosp_layout);
    RUN(device_decoder_reads_v2_setups_in_every_split);
    RUN(round_trips_through_tiny_and_large_buffers);
    RUN(decodes_frames_made_by_the_reference_tools);
    RUN(corrupt_truncated_and_trailing_data_are_errors);
    RUN(decompression_bombs_are_refused);
    RUN(pull_refuses_a_bomb_and_leaves_no_file);
    (void)fd_link; /* test_sync_dev.h helper these tests do not need */
    return T_DONE();
}
