/* SPDX-License-Identifier: Apache-2.0 */
/* The sync: codec's encoders: requests and replies in both directions, as
 * bytes. The decoders are sync_reply.c (host) and sync_request.c (device);
 * errno on the wire is sync_errno.c. The layouts are in sync_proto.h. */
#include "sync/sync_proto.h"
#include "core/internal.h"

#include <stdio.h>
#include <string.h>

const char *sync_id_name(uint32_t id, char buf[16])
{
    int printable = 1;
    for (int i = 0; i < 4; i++) {
        unsigned char ch = (unsigned char)(id >> (8 * i));
        if (ch < 0x20 || ch > 0x7e)
            printable = 0;
        buf[i] = (char)ch;
    }
    if (printable)
        buf[4] = '\0';
    else
        snprintf(buf, 16, "0x%08x", id);
    return buf;
}

/* ---- encoders ---- */

size_t sync_enc_hdr(uint8_t out[ADBC_SYNC_HDR], uint32_t id, uint32_t len)
{
    core_wr32(out, id);
    core_wr32(out + 4, len);
    return ADBC_SYNC_HDR;
}

long sync_enc_req(uint8_t *out, size_t cap, uint32_t id, const char *path, size_t path_len)
{
    char name[16];
    if (path_len > ADBC_SYNC_PATH_MAX)
        return core_fail(ADBC_EINVAL,
                         "%s request: the path is %zu bytes long; the device accepts at most %d",
                         sync_id_name(id, name), path_len, ADBC_SYNC_PATH_MAX);
    if (cap < ADBC_SYNC_HDR + path_len)
        return core_fail(ADBC_EINVAL, "sync request buffer too small");
    sync_enc_hdr(out, id, (uint32_t)path_len);
    if (path_len)
        memcpy(out + ADBC_SYNC_HDR, path, path_len);
    return (long)(ADBC_SYNC_HDR + path_len);
}

static long put_v2(uint8_t *out, size_t cap, uint32_t id, const char *path, size_t path_len,
                   const uint32_t *setup, size_t nsetup)
{
    long n = sync_enc_req(out, cap, id, path, path_len);
    if (n < 0)
        return n;
    if (cap - (size_t)n < 4 + 4 * nsetup)
        return core_fail(ADBC_EINVAL, "sync request buffer too small");
    uint8_t *p = out + n;
    core_wr32(p, id);
    for (size_t i = 0; i < nsetup; i++)
        core_wr32(p + 4 + 4 * i, setup[i]);
    return n + 4 + 4 * (long)nsetup;
}

long sync_enc_send2(uint8_t *out, size_t cap, const char *path, size_t path_len,
                         uint32_t mode, uint32_t flags)
{
    const uint32_t setup[2] = {mode, flags};
    return put_v2(out, cap, ADBC_SYNC_SND2, path, path_len, setup, 2);
}

long sync_enc_recv2(uint8_t *out, size_t cap, const char *path, size_t path_len,
                         uint32_t flags)
{
    return put_v2(out, cap, ADBC_SYNC_RCV2, path, path_len, &flags, 1);
}

long sync_send_spec(char *out, size_t cap, const char *path, uint32_t mode)
{
    /* adb writes the full st_mode in decimal: the daemon tells a symlink from
     * a file by its type bits. */
    int n = snprintf(out, cap, "%s,%u", path, mode);
    if (n < 0 || (size_t)n >= cap || n > ADBC_SYNC_PATH_MAX)
        return core_fail(ADBC_EINVAL,
                         "remote path too long: \"%.80s...\" with its mode is over the %d bytes "
                         "the device accepts",
                         path, ADBC_SYNC_PATH_MAX);
    return n;
}

int sync_parse_send_spec(const char *spec, size_t len, size_t *path_len, uint32_t *mode)
{
    size_t comma = len;
    while (comma > 0 && spec[comma - 1] != ',')
        comma--;
    if (comma == 0)
        return core_fail(ADBC_EPROTO, "missing , in ID_SEND");
    const char *m = spec + comma;
    size_t mlen = len - comma;
    /* strtoul(.., 0): 0x.. hex, 0.. octal, else decimal. */
    unsigned base = 10;
    size_t i = 0;
    if (mlen >= 2 && m[0] == '0' && (m[1] == 'x' || m[1] == 'X')) {
        base = 16;
        i = 2;
    } else if (mlen >= 1 && m[0] == '0') {
        base = 8;
    }
    uint64_t v = 0;
    if (i >= mlen)
        return core_fail(ADBC_EPROTO, "bad mode");
    for (; i < mlen; i++) {
        unsigned dgt;
        char ch = m[i];
        if (ch >= '0' && ch <= '9')
            dgt = (unsigned)(ch - '0');
        else if (ch >= 'a' && ch <= 'f')
            dgt = (unsigned)(ch - 'a' + 10);
        else if (ch >= 'A' && ch <= 'F')
            dgt = (unsigned)(ch - 'A' + 10);
        else
            return core_fail(ADBC_EPROTO, "bad mode");
        if (dgt >= base)
            return core_fail(ADBC_EPROTO, "bad mode");
        v = v * base + dgt;
        if (v > 0xffffffffu)
            return core_fail(ADBC_EPROTO, "bad mode");
    }
    *path_len = comma - 1;
    *mode = (uint32_t)v;
    return 0;
}

size_t sync_enc_stat_v1(uint8_t out[ADBC_SYNC_STAT_V1_SIZE], const adbc_sync_statbuf *st)
{
    core_wr32(out, ADBC_SYNC_STAT);
    core_wr32(out + 4, st->mode);
    core_wr32(out + 8, (uint32_t)st->size);
    core_wr32(out + 12, (uint32_t)st->mtime);
    return ADBC_SYNC_STAT_V1_SIZE;
}

/* The 68 bytes after the id that STA2, LST2 and DNT2 share. */
static void put_v2_fields(uint8_t *p, uint32_t error, const adbc_sync_statbuf *st)
{
    core_wr32(p, error);
    core_wr64(p + 4, st->dev);
    core_wr64(p + 12, st->ino);
    core_wr32(p + 20, st->mode);
    core_wr32(p + 24, st->nlink);
    core_wr32(p + 28, st->uid);
    core_wr32(p + 32, st->gid);
    core_wr64(p + 36, st->size);
    core_wr64(p + 44, (uint64_t)st->atime);
    core_wr64(p + 52, (uint64_t)st->mtime);
    core_wr64(p + 60, (uint64_t)st->ctime);
}


size_t sync_enc_stat_v2(uint8_t out[ADBC_SYNC_STAT_V2_SIZE], uint32_t id, uint32_t error,
                             const adbc_sync_statbuf *st)
{
    static const adbc_sync_statbuf zero;
    core_wr32(out, id);
    put_v2_fields(out + 4, error, error ? &zero : st);
    return ADBC_SYNC_STAT_V2_SIZE;
}

size_t sync_enc_dent_v1(uint8_t out[ADBC_SYNC_DENT_V1_SIZE], const adbc_sync_statbuf *st,
                             uint32_t namelen)
{
    core_wr32(out, ADBC_SYNC_DENT);
    core_wr32(out + 4, st->mode);
    core_wr32(out + 8, (uint32_t)st->size);
    core_wr32(out + 12, (uint32_t)st->mtime);
    core_wr32(out + 16, namelen);
    return ADBC_SYNC_DENT_V1_SIZE;
}

size_t sync_enc_dent_v2(uint8_t out[ADBC_SYNC_DENT_V2_SIZE], uint32_t error,
                             const adbc_sync_statbuf *st, uint32_t namelen)
{
    static const adbc_sync_statbuf zero;
    core_wr32(out, ADBC_SYNC_DNT2);
    put_v2_fields(out + 4, error, error ? &zero : st);
    core_wr32(out + 72, namelen);
    return ADBC_SYNC_DENT_V2_SIZE;
}

size_t sync_enc_list_end(uint8_t out[ADBC_SYNC_DENT_V2_SIZE], int v2)
{
    size_t n = v2 ? ADBC_SYNC_DENT_V2_SIZE : ADBC_SYNC_DENT_V1_SIZE;
    memset(out, 0, n);
    core_wr32(out, ADBC_SYNC_DONE);
    return n;
}
