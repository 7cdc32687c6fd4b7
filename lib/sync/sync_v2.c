/* SPDX-License-Identifier: Apache-2.0 */
/* Sync v2 on the host: which features the device offers (sendrecv_v2,
 * sendrecv_v2_brotli / _lz4 / _zstd / _dry_run_send, as adb's
 * file_sync_client.cpp reads them), and what a transfer uses: the caller's
 * choice, or by default the best algorithm both sides have unless the link
 * is faster than the compressor. */
#include "sync/sync_int.h"

#include <string.h>
#include <strings.h>

static const struct {
    adbc_sync_compression c;
    const char *name;
    uint32_t flag;
} names[] = {
    {ADBC_SYNC_COMPRESS_AUTO, "auto", 0},
    {ADBC_SYNC_COMPRESS_NONE, "none", 0},
    {ADBC_SYNC_COMPRESS_ANY, "any", 0},
    {ADBC_SYNC_COMPRESS_BROTLI, "brotli", ADBC_SYNC_FLAG_BROTLI},
    {ADBC_SYNC_COMPRESS_LZ4, "lz4", ADBC_SYNC_FLAG_LZ4},
    {ADBC_SYNC_COMPRESS_ZSTD, "zstd", ADBC_SYNC_FLAG_ZSTD},
};
#define NNAMES (sizeof names / sizeof names[0])

int adbc_sync_compression_parse(adbc_sync_compression *out, const char *name)
{
    /* "auto" is adbc's default, not a name adb takes: it is not parsed. */
    for (size_t i = 1; name && i < NNAMES; i++)
        if (strcasecmp(name, names[i].name) == 0) {
            *out = names[i].c;
            return 0;
        }
    return core_fail(ADBC_EINVAL,
                     "unknown compression '%s': use any, none, brotli, lz4 or zstd",
                     name ? name : "(null)");
}

const char *adbc_sync_compression_name(adbc_sync_compression c)
{
    for (size_t i = 0; i < NNAMES; i++)
        if (names[i].c == c)
            return names[i].name;
    return "?";
}

static uint32_t flag_of(adbc_sync_compression c)
{
    for (size_t i = 0; i < NNAMES; i++)
        if (names[i].c == c)
            return names[i].flag;
    return 0;
}

static adbc_sync_compression of_flag(uint32_t flag)
{
    for (size_t i = 3; i < NNAMES; i++)
        if (names[i].flag == flag)
            return names[i].c;
    return ADBC_SYNC_COMPRESS_NONE;
}

/* Links that outrun the compressor (docs/sync.md, "Compression", has the
 * figures), as the transport reports its link: TCP to this machine (also
 * under TLS: wireless debugging on the phone itself) and USB 3. USB 2, USB
 * of unknown speed, remote TCP and other descriptors count as slow. */
static int link_is_fast(const adbc_conn *c)
{
    adbc_transport_link l;
    conn_link(&l, c);
    return l.local || l.mbps >= 5000;
}

void sync_v2_init(adbc_sync *s)
{
    adbc_conn *c = s->c;
    s->send_v2 = adbc_conn_has_feature(c, "sendrecv_v2");
    s->dry_run_v2 = s->send_v2 && adbc_conn_has_feature(c, "sendrecv_v2_dry_run_send");
    s->comp_dev = 0;
    if (s->send_v2) {
        if (adbc_conn_has_feature(c, "sendrecv_v2_brotli"))
            s->comp_dev |= ADBC_SYNC_FLAG_BROTLI;
        if (adbc_conn_has_feature(c, "sendrecv_v2_lz4"))
            s->comp_dev |= ADBC_SYNC_FLAG_LZ4;
        if (adbc_conn_has_feature(c, "sendrecv_v2_zstd"))
            s->comp_dev |= ADBC_SYNC_FLAG_ZSTD;
    }
    s->link_fast = link_is_fast(c);
}

int adbc_sync_has_send_v2(const adbc_sync *s)
{
    return s && s->send_v2;
}

static uint32_t shared(const adbc_sync *s)
{
    return s->comp_dev & sync_comp_built();
}

int adbc_sync_has_compression(const adbc_sync *s, adbc_sync_compression c)
{
    if (!s)
        return 0;
    if (c == ADBC_SYNC_COMPRESS_ANY)
        return shared(s) != 0;
    uint32_t f = flag_of(c);
    return f && (shared(s) & f);
}

/* adb's order (ResolveCompressionType): zstd, lz4, brotli. */
static uint32_t best(const adbc_sync *s)
{
    uint32_t m = shared(s);
    if (m & ADBC_SYNC_FLAG_ZSTD)
        return ADBC_SYNC_FLAG_ZSTD;
    if (m & ADBC_SYNC_FLAG_LZ4)
        return ADBC_SYNC_FLAG_LZ4;
    return m & ADBC_SYNC_FLAG_BROTLI;
}

adbc_sync_compression adbc_sync_compression_resolve(const adbc_sync *s, adbc_sync_compression c)
{
    if (!s)
        return ADBC_SYNC_COMPRESS_NONE;
    switch (c) {
    case ADBC_SYNC_COMPRESS_AUTO:
        return s->link_fast ? ADBC_SYNC_COMPRESS_NONE : of_flag(best(s));
    case ADBC_SYNC_COMPRESS_ANY:
        return of_flag(best(s));
    default:
        return adbc_sync_has_compression(s, c) ? c : ADBC_SYNC_COMPRESS_NONE;
    }
}

int sync_job_setup(adbc_sync *s, sync_job *j, int push)
{
    adbc_sync_compression want = j->opts->compression;
    int dry = push && (j->opts->flags & ADBC_SYNC_DRY_RUN);
    j->v2 = 0;
    j->flags = 0;
    j->res.compression = ADBC_SYNC_COMPRESS_NONE;
    if (want < ADBC_SYNC_COMPRESS_AUTO || want > ADBC_SYNC_COMPRESS_ZSTD)
        return core_fail(ADBC_EINVAL, "unknown compression value %d", (int)want);
    if (dry && !s->dry_run_v2)
        return core_fail(ADBC_EUNSUPPORTED,
                         "dry-run not supported by the device (it does not advertise "
                         "sendrecv_v2_dry_run_send)");
    uint32_t f = flag_of(want);
    if (f && !(shared(s) & f)) {
        if (!(sync_comp_built() & f))
            return core_fail(ADBC_EUNSUPPORTED,
                             "%s compression: this adbc was built without it (ADBC_WITH_%s)",
                             names[want].name,
                             f == ADBC_SYNC_FLAG_ZSTD  ? "ZSTD"
                             : f == ADBC_SYNC_FLAG_LZ4 ? "LZ4"
                                                       : "BROTLI");
        return core_fail(ADBC_EUNSUPPORTED,
                         "%s compression: the device does not offer it (no sendrecv_v2_%s "
                         "in its features)",
                         names[want].name, names[want].name);
    }
    adbc_sync_compression use = adbc_sync_compression_resolve(s, want);
    j->flags = flag_of(use) | (dry ? ADBC_SYNC_FLAG_DRY_RUN : 0);
    /* v1 where nothing needs v2: every adbd and adb speak it. */
    j->v2 = j->flags != 0;
    j->res.compression = use;
    if (j->flags & ADBC_SYNC_FLAGS_COMP) {
        j->zbuf = core_malloc(SYNC_ZBUF);
        if (!j->zbuf)
            return core_fail(ADBC_ENOMEM, "out of memory");
    }
    return 0;
}

void sync_job_done(sync_job *j)
{
    core_free(j->zbuf);
    j->zbuf = NULL;
}
