/* SPDX-License-Identifier: Apache-2.0 */
/* Compressed sync v2 contents: brotli, LZ4 frame and zstd streams over
 * caller buffers (see sync_comp.h). Each library is compiled in only when
 * the build found it (ADBC_HAVE_*). */
#include "sync/sync_comp.h"
#include "core/internal.h"

#include <string.h>

#ifdef ADBC_HAVE_ZSTD
#include <zstd.h>
#endif
#ifdef ADBC_HAVE_LZ4
#include <lz4frame.h>
#endif
#ifdef ADBC_HAVE_BROTLI
#include <brotli/decode.h>
#include <brotli/encode.h>
#endif

/* Compression levels: the fast end of each, as adbd's encoders use, since
 * compressing must keep up with the link (see docs/sync.md, "Compression"). */
#define ZSTD_LEVEL 1
#define BROTLI_QUALITY 1
#define LZ4_BLOCK (64 * 1024)

uint32_t sync_comp_built(void)
{
    uint32_t m = 0;
#ifdef ADBC_HAVE_BROTLI
    m |= ADBC_SYNC_FLAG_BROTLI;
#endif
#ifdef ADBC_HAVE_LZ4
    m |= ADBC_SYNC_FLAG_LZ4;
#endif
#ifdef ADBC_HAVE_ZSTD
    m |= ADBC_SYNC_FLAG_ZSTD;
#endif
    return m;
}

const char *sync_comp_flag_name(uint32_t flag)
{
    switch (flag) {
    case 0: return "none";
    case ADBC_SYNC_FLAG_BROTLI: return "brotli";
    case ADBC_SYNC_FLAG_LZ4: return "lz4";
    case ADBC_SYNC_FLAG_ZSTD: return "zstd";
    default: return "?";
    }
}

static int not_built(uint32_t flag)
{
    return core_fail(ADBC_EUNSUPPORTED,
                     "this adbc was built without %s compression (configure with "
                     "-DADBC_WITH_%s=ON and its -dev package installed)",
                     sync_comp_flag_name(flag),
                     flag == ADBC_SYNC_FLAG_ZSTD  ? "ZSTD"
                     : flag == ADBC_SYNC_FLAG_LZ4 ? "LZ4"
                                                  : "BROTLI");
}

/* ---- encoder ---- */

struct adbc_sync_zenc {
    uint32_t flag;
    int ended; /* the whole stream has been handed out */
#ifdef ADBC_HAVE_ZSTD
    ZSTD_CCtx *z;
#endif
#ifdef ADBC_HAVE_BROTLI
    BrotliEncoderState *b;
#endif
#ifdef ADBC_HAVE_LZ4
    LZ4F_cctx *l;
    LZ4F_preferences_t prefs;
    int begun, closed;
    uint8_t *stage; /* LZ4F writes whole blocks: they wait here for room */
    size_t stage_cap, stage_off, stage_len;
#endif
};

void sync_zenc_free(adbc_sync_zenc *e)
{
    if (!e)
        return;
#ifdef ADBC_HAVE_ZSTD
    ZSTD_freeCCtx(e->z);
#endif
#ifdef ADBC_HAVE_BROTLI
    if (e->b)
        BrotliEncoderDestroyInstance(e->b);
#endif
#ifdef ADBC_HAVE_LZ4
    if (e->l)
        LZ4F_freeCompressionContext(e->l);
    core_free(e->stage);
#endif
    core_free(e);
}

int sync_zenc_new(adbc_sync_zenc **out, uint32_t flag)
{
    *out = NULL;
    if (!(sync_comp_built() & flag) || (flag & (flag - 1)))
        return not_built(flag);
    adbc_sync_zenc *e = core_calloc(1, sizeof *e);
    if (!e)
        return core_fail(ADBC_ENOMEM, "out of memory");
    e->flag = flag;
    int ok = 0;
    switch (flag) {
#ifdef ADBC_HAVE_ZSTD
    case ADBC_SYNC_FLAG_ZSTD:
        e->z = ZSTD_createCCtx();
        ok = e->z && !ZSTD_isError(ZSTD_CCtx_setParameter(e->z, ZSTD_c_compressionLevel,
                                                          ZSTD_LEVEL));
        break;
#endif
#ifdef ADBC_HAVE_BROTLI
    case ADBC_SYNC_FLAG_BROTLI:
        e->b = BrotliEncoderCreateInstance(NULL, NULL, NULL);
        ok = e->b && BrotliEncoderSetParameter(e->b, BROTLI_PARAM_QUALITY, BROTLI_QUALITY);
        break;
#endif
#ifdef ADBC_HAVE_LZ4
    case ADBC_SYNC_FLAG_LZ4:
        memset(&e->prefs, 0, sizeof e->prefs);
        e->prefs.frameInfo.blockSizeID = LZ4F_max64KB;
        e->stage_cap = LZ4F_compressBound(LZ4_BLOCK, &e->prefs) + LZ4F_HEADER_SIZE_MAX;
        e->stage = core_malloc(e->stage_cap);
        ok = e->stage && !LZ4F_isError(LZ4F_createCompressionContext(&e->l, LZ4F_VERSION));
        break;
#endif
    default:
        break;
    }
    if (!ok) {
        sync_zenc_free(e);
        return core_fail(ADBC_ENOMEM, "cannot set up %s compression: out of memory",
                         sync_comp_flag_name(flag));
    }
    *out = e;
    return 0;
}

#ifdef ADBC_HAVE_LZ4
static int lz4_enc(adbc_sync_zenc *e, const uint8_t **in, size_t *in_len, uint8_t **out,
                   size_t *out_cap, int finish)
{
    for (;;) {
        if (e->stage_off < e->stage_len) {
            size_t n = e->stage_len - e->stage_off;
            if (n > *out_cap)
                n = *out_cap;
            memcpy(*out, e->stage + e->stage_off, n);
            *out += n;
            *out_cap -= n;
            e->stage_off += n;
            if (e->stage_off < e->stage_len)
                return 0;
        }
        e->stage_off = e->stage_len = 0;
        size_t r;
        if (e->closed) {
            e->ended = 1;
            return 1;
        } else if (!e->begun) {
            r = LZ4F_compressBegin(e->l, e->stage, e->stage_cap, &e->prefs);
            e->begun = 1;
        } else if (*in_len > 0) {
            size_t n = *in_len < LZ4_BLOCK ? *in_len : LZ4_BLOCK;
            r = LZ4F_compressUpdate(e->l, e->stage, e->stage_cap, *in, n, NULL);
            if (!LZ4F_isError(r)) {
                *in += n;
                *in_len -= n;
            }
        } else if (finish) {
            r = LZ4F_compressEnd(e->l, e->stage, e->stage_cap, NULL);
            e->closed = 1;
        } else {
            return 0;
        }
        if (LZ4F_isError(r))
            return core_fail(ADBC_EIO, "lz4 compression failed: %s", LZ4F_getErrorName(r));
        e->stage_len = r;
    }
}
#endif

int sync_zenc_run(adbc_sync_zenc *e, const uint8_t **in, size_t *in_len, uint8_t **out,
                       size_t *out_cap, int finish)
{
    if (e->ended)
        return 1;
    switch (e->flag) {
#ifdef ADBC_HAVE_ZSTD
    case ADBC_SYNC_FLAG_ZSTD: {
        ZSTD_inBuffer ib = {*in, *in_len, 0};
        ZSTD_outBuffer ob = {*out, *out_cap, 0};
        size_t r = ZSTD_compressStream2(e->z, &ob, &ib, finish ? ZSTD_e_end : ZSTD_e_continue);
        if (ZSTD_isError(r))
            return core_fail(ADBC_EIO, "zstd compression failed: %s", ZSTD_getErrorName(r));
        *in += ib.pos;
        *in_len -= ib.pos;
        *out += ob.pos;
        *out_cap -= ob.pos;
        e->ended = finish && r == 0 && *in_len == 0;
        return e->ended;
    }
#endif
#ifdef ADBC_HAVE_BROTLI
    case ADBC_SYNC_FLAG_BROTLI: {
        if (!BrotliEncoderCompressStream(e->b,
                                         finish ? BROTLI_OPERATION_FINISH
                                                : BROTLI_OPERATION_PROCESS,
                                         in_len, in, out_cap, out, NULL))
            return core_fail(ADBC_EIO, "brotli compression failed");
        e->ended = finish && BrotliEncoderIsFinished(e->b);
        return e->ended;
    }
#endif
#ifdef ADBC_HAVE_LZ4
    case ADBC_SYNC_FLAG_LZ4:
        return lz4_enc(e, in, in_len, out, out_cap, finish);
#endif
    default:
        (void)in;
        (void)in_len;
        (void)out;
        (void)out_cap;
        (void)finish;
        return not_built(e->flag);
    }
}

/* ---- decoder ---- */

struct adbc_sync_zdec {
    uint32_t flag;
    int ended;
    uint64_t expected, in_total, out_total;
#ifdef ADBC_HAVE_ZSTD
    ZSTD_DCtx *z;
#endif
#ifdef ADBC_HAVE_BROTLI
    BrotliDecoderState *b;
#endif
#ifdef ADBC_HAVE_LZ4
    LZ4F_dctx *l;
#endif
};

void sync_zdec_free(adbc_sync_zdec *d)
{
    if (!d)
        return;
#ifdef ADBC_HAVE_ZSTD
    ZSTD_freeDCtx(d->z);
#endif
#ifdef ADBC_HAVE_BROTLI
    if (d->b)
        BrotliDecoderDestroyInstance(d->b);
#endif
#ifdef ADBC_HAVE_LZ4
    if (d->l)
        LZ4F_freeDecompressionContext(d->l);
#endif
    core_free(d);
}

int sync_zdec_new(adbc_sync_zdec **out, uint32_t flag, uint64_t expected)
{
    *out = NULL;
    if (!(sync_comp_built() & flag) || (flag & (flag - 1)))
        return not_built(flag);
    adbc_sync_zdec *d = core_calloc(1, sizeof *d);
    if (!d)
        return core_fail(ADBC_ENOMEM, "out of memory");
    d->flag = flag;
    d->expected = expected;
    int ok = 0;
    switch (flag) {
#ifdef ADBC_HAVE_ZSTD
    case ADBC_SYNC_FLAG_ZSTD:
        d->z = ZSTD_createDCtx();
        ok = d->z && !ZSTD_isError(ZSTD_DCtx_setParameter(d->z, ZSTD_d_windowLogMax,
                                                          ADBC_SYNC_ZSTD_WINDOW_LOG_MAX));
        break;
#endif
#ifdef ADBC_HAVE_BROTLI
    case ADBC_SYNC_FLAG_BROTLI:
        d->b = BrotliDecoderCreateInstance(NULL, NULL, NULL);
        ok = d->b != NULL;
        break;
#endif
#ifdef ADBC_HAVE_LZ4
    case ADBC_SYNC_FLAG_LZ4:
        ok = !LZ4F_isError(LZ4F_createDecompressionContext(&d->l, LZ4F_VERSION));
        break;
#endif
    default:
        break;
    }
    if (!ok) {
        sync_zdec_free(d);
        return core_fail(ADBC_ENOMEM, "cannot set up %s decompression: out of memory",
                         sync_comp_flag_name(flag));
    }
    *out = d;
    return 0;
}

static int corrupt(const adbc_sync_zdec *d, const char *why)
{
    return core_fail(ADBC_EPROTO, "the %s-compressed data is corrupt after %llu compressed bytes: %s",
                     sync_comp_flag_name(d->flag), (unsigned long long)d->in_total, why);
}

/* One step of the library's decoder; *ended set at the end of its stream. */
static int step(adbc_sync_zdec *d, const uint8_t **in, size_t *in_len, uint8_t **out,
                size_t *out_cap, int *ended)
{
    switch (d->flag) {
#ifdef ADBC_HAVE_ZSTD
    case ADBC_SYNC_FLAG_ZSTD: {
        ZSTD_inBuffer ib = {*in, *in_len, 0};
        ZSTD_outBuffer ob = {*out, *out_cap, 0};
        size_t r = ZSTD_decompressStream(d->z, &ob, &ib);
        if (ZSTD_isError(r))
            return corrupt(d, ZSTD_getErrorName(r));
        *in += ib.pos;
        *in_len -= ib.pos;
        *out += ob.pos;
        *out_cap -= ob.pos;
        *ended = r == 0;
        return 0;
    }
#endif
#ifdef ADBC_HAVE_BROTLI
    case ADBC_SYNC_FLAG_BROTLI: {
        BrotliDecoderResult r = BrotliDecoderDecompressStream(d->b, in_len, in, out_cap, out, NULL);
        if (r == BROTLI_DECODER_RESULT_ERROR)
            return corrupt(d, BrotliDecoderErrorString(BrotliDecoderGetErrorCode(d->b)));
        *ended = r == BROTLI_DECODER_RESULT_SUCCESS;
        return 0;
    }
#endif
#ifdef ADBC_HAVE_LZ4
    case ADBC_SYNC_FLAG_LZ4: {
        size_t dst = *out_cap, src = *in_len;
        size_t r = LZ4F_decompress(d->l, *out, &dst, *in, &src, NULL);
        if (LZ4F_isError(r))
            return corrupt(d, LZ4F_getErrorName(r));
        *in += src;
        *in_len -= src;
        *out += dst;
        *out_cap -= dst;
        *ended = r == 0;
        return 0;
    }
#endif
    default:
        (void)in;
        (void)in_len;
        (void)out;
        (void)out_cap;
        (void)ended;
        return not_built(d->flag);
    }
}

int sync_zdec_run(adbc_sync_zdec *d, const uint8_t **in, size_t *in_len, uint8_t **out,
                       size_t *out_cap)
{
    if (!d->ended && (*in_len > 0 || *out_cap > 0)) {
        size_t in0 = *in_len, out0 = *out_cap;
        int ended = 0;
        int rc = step(d, in, in_len, out, out_cap, &ended);
        if (rc < 0)
            return rc;
        d->in_total += in0 - *in_len;
        d->out_total += out0 - *out_cap;
        d->ended = ended;
        uint64_t limit = d->expected + ADBC_SYNC_BOMB_BASE + ADBC_SYNC_BOMB_RATIO * d->in_total;
        if (d->out_total > limit)
            return core_fail(ADBC_EPROTO,
                             "refused: %llu compressed bytes inflate past %llu bytes (%s), more "
                             "than the %llu bytes expected + 64 MiB + 4096 per compressed byte "
                             "a real file may take; this looks like a decompression bomb",
                             (unsigned long long)d->in_total, (unsigned long long)d->out_total,
                             sync_comp_flag_name(d->flag), (unsigned long long)d->expected);
        if (!ended && *in_len == in0 && *out_cap == out0 && in0 > 0 && out0 > 0)
            return corrupt(d, "the decoder made no progress");
    }
    if (d->ended && *in_len > 0)
        return corrupt(d, "bytes follow the end of the compressed stream");
    return d->ended;
}

int sync_zdec_finish(const adbc_sync_zdec *d)
{
    if (d->ended)
        return 0;
    return core_fail(ADBC_EPROTO,
                     "the %s-compressed data ended early: DONE came after %llu compressed "
                     "bytes (%llu bytes decompressed) with the stream unfinished",
                     sync_comp_flag_name(d->flag), (unsigned long long)d->in_total,
                     (unsigned long long)d->out_total);
}

uint64_t sync_zdec_in(const adbc_sync_zdec *d)
{
    return d->in_total;
}

uint64_t sync_zdec_out(const adbc_sync_zdec *d)
{
    return d->out_total;
}
