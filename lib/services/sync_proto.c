/* The sync: codec: request and reply encoders, and the two incremental
 * decoders. No I/O, no allocation: it is fed bytes and is fuzzed that way.
 * The layouts are described in sync_proto.h. */
#include "services/sync_proto.h"
#include "core/internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

const char *adbc_sync_id_name(uint32_t id, char buf[16])
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

size_t adbc_sync_put_hdr(uint8_t out[ADBC_SYNC_HDR], uint32_t id, uint32_t len)
{
    adbc_wr32(out, id);
    adbc_wr32(out + 4, len);
    return ADBC_SYNC_HDR;
}

long adbc_sync_put_req(uint8_t *out, size_t cap, uint32_t id, const char *path, size_t path_len)
{
    char name[16];
    if (path_len > ADBC_SYNC_PATH_MAX)
        return adbc_fail(ADBC_EINVAL,
                         "%s request: the path is %zu bytes long; the device accepts at most %d",
                         adbc_sync_id_name(id, name), path_len, ADBC_SYNC_PATH_MAX);
    if (cap < ADBC_SYNC_HDR + path_len)
        return adbc_fail(ADBC_EINVAL, "sync request buffer too small");
    adbc_sync_put_hdr(out, id, (uint32_t)path_len);
    if (path_len)
        memcpy(out + ADBC_SYNC_HDR, path, path_len);
    return (long)(ADBC_SYNC_HDR + path_len);
}

long adbc_sync_send_spec(char *out, size_t cap, const char *path, uint32_t mode)
{
    /* adb writes the full st_mode in decimal: the daemon tells a symlink from
     * a file by its type bits. */
    int n = snprintf(out, cap, "%s,%u", path, mode);
    if (n < 0 || (size_t)n >= cap || n > ADBC_SYNC_PATH_MAX)
        return adbc_fail(ADBC_EINVAL,
                         "remote path too long: \"%.80s...\" with its mode is over the %d bytes "
                         "the device accepts",
                         path, ADBC_SYNC_PATH_MAX);
    return n;
}

int adbc_sync_parse_send_spec(const char *spec, size_t len, size_t *path_len, uint32_t *mode)
{
    size_t comma = len;
    while (comma > 0 && spec[comma - 1] != ',')
        comma--;
    if (comma == 0)
        return adbc_fail(ADBC_EPROTO, "missing , in ID_SEND");
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
        return adbc_fail(ADBC_EPROTO, "bad mode");
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
            return adbc_fail(ADBC_EPROTO, "bad mode");
        if (dgt >= base)
            return adbc_fail(ADBC_EPROTO, "bad mode");
        v = v * base + dgt;
        if (v > 0xffffffffu)
            return adbc_fail(ADBC_EPROTO, "bad mode");
    }
    *path_len = comma - 1;
    *mode = (uint32_t)v;
    return 0;
}

size_t adbc_sync_put_stat_v1(uint8_t out[ADBC_SYNC_STAT_V1_SIZE], const adbc_sync_statbuf *st)
{
    adbc_wr32(out, ADBC_SYNC_STAT);
    adbc_wr32(out + 4, st->mode);
    adbc_wr32(out + 8, (uint32_t)st->size);
    adbc_wr32(out + 12, (uint32_t)st->mtime);
    return ADBC_SYNC_STAT_V1_SIZE;
}

/* The 68 bytes after the id that STA2, LST2 and DNT2 share. */
static void put_v2_fields(uint8_t *p, uint32_t error, const adbc_sync_statbuf *st)
{
    adbc_wr32(p, error);
    adbc_wr64(p + 4, st->dev);
    adbc_wr64(p + 12, st->ino);
    adbc_wr32(p + 20, st->mode);
    adbc_wr32(p + 24, st->nlink);
    adbc_wr32(p + 28, st->uid);
    adbc_wr32(p + 32, st->gid);
    adbc_wr64(p + 36, st->size);
    adbc_wr64(p + 44, (uint64_t)st->atime);
    adbc_wr64(p + 52, (uint64_t)st->mtime);
    adbc_wr64(p + 60, (uint64_t)st->ctime);
}

static void get_v2_fields(const uint8_t *p, uint32_t *error, adbc_sync_statbuf *st)
{
    memset(st, 0, sizeof *st);
    *error = adbc_rd32(p);
    st->dev = adbc_rd64(p + 4);
    st->ino = adbc_rd64(p + 12);
    st->mode = adbc_rd32(p + 20);
    st->nlink = adbc_rd32(p + 24);
    st->uid = adbc_rd32(p + 28);
    st->gid = adbc_rd32(p + 32);
    st->size = adbc_rd64(p + 36);
    st->atime = (int64_t)adbc_rd64(p + 44);
    st->mtime = (int64_t)adbc_rd64(p + 52);
    st->ctime = (int64_t)adbc_rd64(p + 60);
    st->v2 = 1;
}

size_t adbc_sync_put_stat_v2(uint8_t out[ADBC_SYNC_STAT_V2_SIZE], uint32_t id, uint32_t error,
                             const adbc_sync_statbuf *st)
{
    static const adbc_sync_statbuf zero;
    adbc_wr32(out, id);
    put_v2_fields(out + 4, error, error ? &zero : st);
    return ADBC_SYNC_STAT_V2_SIZE;
}

size_t adbc_sync_put_dent_v1(uint8_t out[ADBC_SYNC_DENT_V1_SIZE], const adbc_sync_statbuf *st,
                             uint32_t namelen)
{
    adbc_wr32(out, ADBC_SYNC_DENT);
    adbc_wr32(out + 4, st->mode);
    adbc_wr32(out + 8, (uint32_t)st->size);
    adbc_wr32(out + 12, (uint32_t)st->mtime);
    adbc_wr32(out + 16, namelen);
    return ADBC_SYNC_DENT_V1_SIZE;
}

size_t adbc_sync_put_dent_v2(uint8_t out[ADBC_SYNC_DENT_V2_SIZE], uint32_t error,
                             const adbc_sync_statbuf *st, uint32_t namelen)
{
    static const adbc_sync_statbuf zero;
    adbc_wr32(out, ADBC_SYNC_DNT2);
    put_v2_fields(out + 4, error, error ? &zero : st);
    adbc_wr32(out + 72, namelen);
    return ADBC_SYNC_DENT_V2_SIZE;
}

size_t adbc_sync_put_list_end(uint8_t out[ADBC_SYNC_DENT_V2_SIZE], int v2)
{
    size_t n = v2 ? ADBC_SYNC_DENT_V2_SIZE : ADBC_SYNC_DENT_V1_SIZE;
    memset(out, 0, n);
    adbc_wr32(out, ADBC_SYNC_DONE);
    return n;
}

/* ---- reply decoder (host side) ---- */

enum { P_ID = 0, P_HDR, P_TEXT, P_DATA };

static const char *expect_name(adbc_sync_expect x)
{
    switch (x) {
    case ADBC_SYNC_X_STAT_V1: return "a STAT request";
    case ADBC_SYNC_X_STAT_V2: return "a STA2/LST2 request";
    case ADBC_SYNC_X_LIST_V1: return "a LIST request";
    case ADBC_SYNC_X_LIST_V2: return "a LIS2 request";
    case ADBC_SYNC_X_RECV: return "a RECV request";
    case ADBC_SYNC_X_STATUS: return "the end of a SEND";
    default: return "nothing (no request pending)";
    }
}

void adbc_sync_rdec_expect(adbc_sync_rdec *d, adbc_sync_expect x, uint32_t want_id)
{
    d->expect = x;
    d->want_id = want_id;
    d->phase = P_ID;
    d->have = 0;
    d->need = 4;
    d->left = 0;
    d->tlen = 0;
}

static int bad_reply(const adbc_sync_rdec *d, const char *what)
{
    char name[16];
    return adbc_fail(ADBC_EPROTO,
                     "sync protocol error: the device sent %s (message '%s') in reply to %s; "
                     "its sync service is broken or this is not adbd",
                     what, adbc_sync_id_name(d->id, name), expect_name(d->expect));
}

/* The first 4 bytes are in: decide how long the fixed part is. */
static int classify(adbc_sync_rdec *d)
{
    uint32_t id = d->id;
    if (id == ADBC_SYNC_FAIL) {
        d->need = ADBC_SYNC_HDR;
        return 0;
    }
    switch (d->expect) {
    case ADBC_SYNC_X_STAT_V1:
        if (id == ADBC_SYNC_STAT) {
            d->need = ADBC_SYNC_STAT_V1_SIZE;
            return 0;
        }
        break;
    case ADBC_SYNC_X_STAT_V2:
        /* adb accepts either v2 id for either request; so does adbc. */
        if (id == ADBC_SYNC_STA2 || id == ADBC_SYNC_LST2) {
            d->need = ADBC_SYNC_STAT_V2_SIZE;
            return 0;
        }
        break;
    case ADBC_SYNC_X_LIST_V1:
        if (id == ADBC_SYNC_DENT || id == ADBC_SYNC_DONE) {
            d->need = ADBC_SYNC_DENT_V1_SIZE;
            return 0;
        }
        break;
    case ADBC_SYNC_X_LIST_V2:
        if (id == ADBC_SYNC_DNT2 || id == ADBC_SYNC_DONE) {
            d->need = ADBC_SYNC_DENT_V2_SIZE;
            return 0;
        }
        break;
    case ADBC_SYNC_X_RECV:
        if (id == ADBC_SYNC_DATA || id == ADBC_SYNC_DONE) {
            d->need = ADBC_SYNC_HDR;
            return 0;
        }
        break;
    case ADBC_SYNC_X_STATUS:
        if (id == ADBC_SYNC_OKAY) {
            d->need = ADBC_SYNC_HDR;
            return 0;
        }
        break;
    default:
        return adbc_fail(ADBC_EPROTO,
                         "sync protocol error: the device sent data when no reply was due");
    }
    return bad_reply(d, "an unexpected message");
}

static void finish(adbc_sync_rdec *d)
{
    d->expect = ADBC_SYNC_X_NONE;
    d->phase = P_ID;
    d->have = 0;
    d->need = 4;
}

static int text_done(adbc_sync_rdec *d, adbc_sync_event *ev);

/* The fixed part is complete: produce an event (1), move on to a payload
 * (0), or fail. */
static int header_done(adbc_sync_rdec *d, adbc_sync_event *ev)
{
    const uint8_t *h = d->hdr;
    uint32_t id = d->id;
    memset(ev, 0, sizeof *ev);
    ev->id = id;
    if (id == ADBC_SYNC_FAIL) {
        uint32_t n = adbc_rd32(h + 4);
        if (n > ADBC_SYNC_TEXT_MAX)
            return bad_reply(d, "an oversize FAIL message");
        d->left = n;
        d->tlen = 0;
        d->phase = P_TEXT;
        return n == 0 ? text_done(d, ev) : 0;
    }
    switch (d->expect) {
    case ADBC_SYNC_X_STAT_V1:
        ev->type = ADBC_SYNC_EV_STAT;
        ev->st.mode = adbc_rd32(h + 4);
        ev->st.size = adbc_rd32(h + 8);
        ev->st.mtime = adbc_rd32(h + 12);
        finish(d);
        return 1;
    case ADBC_SYNC_X_STAT_V2:
        ev->type = ADBC_SYNC_EV_STAT;
        get_v2_fields(h + 4, &ev->error, &ev->st);
        finish(d);
        return 1;
    case ADBC_SYNC_X_LIST_V1:
    case ADBC_SYNC_X_LIST_V2: {
        int v2 = d->expect == ADBC_SYNC_X_LIST_V2;
        if (id == ADBC_SYNC_DONE) {
            ev->type = ADBC_SYNC_EV_LIST_END;
            finish(d);
            return 1;
        }
        uint32_t namelen;
        if (v2) {
            get_v2_fields(h + 4, &d->error, &d->st);
            namelen = adbc_rd32(h + 72);
        } else {
            memset(&d->st, 0, sizeof d->st);
            d->error = 0;
            d->st.mode = adbc_rd32(h + 4);
            d->st.size = adbc_rd32(h + 8);
            d->st.mtime = adbc_rd32(h + 12);
            namelen = adbc_rd32(h + 16);
        }
        if (namelen == 0)
            return bad_reply(d, "a directory entry with an empty name");
        if (namelen > ADBC_SYNC_NAME_MAX)
            return bad_reply(d, "a directory entry with an oversize name (over 255 bytes)");
        d->left = namelen;
        d->tlen = 0;
        d->phase = P_TEXT;
        return 0;
    }
    case ADBC_SYNC_X_RECV:
        if (id == ADBC_SYNC_DONE) {
            ev->type = ADBC_SYNC_EV_DONE;
            ev->arg = adbc_rd32(h + 4);
            finish(d);
            return 1;
        }
        d->left = adbc_rd32(h + 4);
        if (d->left > ADBC_SYNC_DATA_MAX)
            return bad_reply(d, "an oversize DATA chunk (over 64 KiB)");
        d->phase = d->left ? P_DATA : P_ID;
        d->have = 0;
        d->need = 4;
        return 0;
    case ADBC_SYNC_X_STATUS:
        /* OKAY's length "can be ignored" (SYNC.TXT); adbd sends 0 and adb
         * reads nothing after it. */
        ev->type = ADBC_SYNC_EV_OKAY;
        finish(d);
        return 1;
    default:
        return bad_reply(d, "an unexpected message");
    }
}

/* A directory entry name must be usable as one path component: a device
 * that sends "../x" or "a/b" must not steer a tree pull outside its target. */
static int name_ok(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] == '/' || s[i] == '\0')
            return 0;
    return 1;
}

/* A name or message is complete: the DENT or FAIL event. */
static int text_done(adbc_sync_rdec *d, adbc_sync_event *ev)
{
    d->text[d->tlen] = '\0';
    memset(ev, 0, sizeof *ev);
    ev->id = d->id;
    ev->text = d->text;
    ev->text_len = d->tlen;
    if (d->id == ADBC_SYNC_FAIL) {
        /* The message goes into error text: keep it printable. */
        for (size_t i = 0; i < d->tlen; i++)
            if ((unsigned char)d->text[i] < 0x20 || d->text[i] == 0x7f)
                d->text[i] = '?';
        ev->type = ADBC_SYNC_EV_FAIL;
        finish(d);
        return 1;
    }
    if (!name_ok(d->text, d->tlen))
        return bad_reply(d, "a directory entry name containing '/' or NUL");
    ev->type = ADBC_SYNC_EV_DENT;
    ev->st = d->st;
    ev->error = d->error;
    d->phase = P_ID;
    d->have = 0;
    d->need = 4;
    return 1;
}

int adbc_sync_rdec_next(adbc_sync_rdec *d, const uint8_t *in, size_t len, size_t *used,
                        adbc_sync_event *ev)
{
    size_t pos = 0;
    int rc = 0;
    while (pos < len) {
        if (d->phase == P_ID || d->phase == P_HDR) {
            size_t n = d->need - d->have;
            if (n > len - pos)
                n = len - pos;
            memcpy(d->hdr + d->have, in + pos, n);
            d->have += n;
            pos += n;
            if (d->have < d->need)
                break;
            if (d->phase == P_ID) {
                d->id = adbc_rd32(d->hdr);
                if ((rc = classify(d)) < 0)
                    break;
                d->phase = P_HDR;
                if (d->have < d->need)
                    continue;
            }
            rc = header_done(d, ev);
            if (rc != 0)
                break;
            continue;
        }
        if (d->phase == P_DATA) {
            size_t n = d->left < len - pos ? d->left : len - pos;
            memset(ev, 0, sizeof *ev);
            ev->type = ADBC_SYNC_EV_DATA;
            ev->id = ADBC_SYNC_DATA;
            ev->data = in + pos;
            ev->len = n;
            d->left -= (uint32_t)n;
            pos += n;
            ev->last = d->left == 0;
            if (ev->last) {
                d->phase = P_ID;
                d->have = 0;
                d->need = 4;
            }
            rc = 1;
            break;
        }
        /* P_TEXT */
        size_t n = d->left < len - pos ? d->left : len - pos;
        memcpy(d->text + d->tlen, in + pos, n);
        d->tlen += n;
        d->left -= (uint32_t)n;
        pos += n;
        if (d->left > 0)
            break;
        rc = text_done(d, ev);
        break;
    }
    *used = pos;
    return rc;
}

/* ---- request decoder (device side) ---- */

enum { Q_REQ = 0, Q_PATH, Q_BODY, Q_DATA };

void adbc_sync_qdec_init(adbc_sync_qdec *d)
{
    memset(d, 0, sizeof *d);
}

int adbc_sync_qdec_next(adbc_sync_qdec *d, const uint8_t *in, size_t len, size_t *used,
                        adbc_sync_event *ev)
{
    size_t pos = 0;
    int rc = 0;
    while (pos < len) {
        if (d->phase == Q_REQ || d->phase == Q_BODY) {
            size_t n = ADBC_SYNC_HDR - d->have;
            if (n > len - pos)
                n = len - pos;
            memcpy(d->hdr + d->have, in + pos, n);
            d->have += n;
            pos += n;
            if (d->have < ADBC_SYNC_HDR)
                break;
            d->have = 0;
            d->id = adbc_rd32(d->hdr);
            d->left = adbc_rd32(d->hdr + 4);
            if (d->phase == Q_REQ) {
                /* adbd's own checks and replies, in its order. */
                if (d->left > ADBC_SYNC_PATH_MAX) {
                    rc = adbc_fail(ADBC_EPROTO, "path too long");
                    break;
                }
                d->plen = 0;
                d->phase = Q_PATH;
                if (d->left > 0)
                    continue;
            } else if (d->id == ADBC_SYNC_DATA) {
                if (d->left > ADBC_SYNC_DATA_MAX) {
                    rc = adbc_fail(ADBC_EPROTO, "oversize data message");
                    break;
                }
                d->phase = d->left ? Q_DATA : Q_BODY;
                continue;
            } else if (d->id == ADBC_SYNC_DONE) {
                memset(ev, 0, sizeof *ev);
                ev->type = ADBC_SYNC_EV_DONE;
                ev->id = ADBC_SYNC_DONE;
                ev->arg = d->left;
                d->phase = Q_REQ;
                rc = 1;
                break;
            } else {
                rc = adbc_fail(ADBC_EPROTO, "invalid data message");
                break;
            }
        }
        if (d->phase == Q_PATH) {
            size_t n = d->left < len - pos ? d->left : len - pos;
            memcpy(d->path + d->plen, in + pos, n);
            d->plen += n;
            d->left -= (uint32_t)n;
            pos += n;
            if (d->left > 0)
                break;
            d->path[d->plen] = '\0';
            memset(ev, 0, sizeof *ev);
            ev->type = ADBC_SYNC_EV_REQUEST;
            ev->id = d->id;
            ev->text = d->path;
            ev->text_len = d->plen;
            d->phase = d->id == ADBC_SYNC_SEND ? Q_BODY : Q_REQ;
            rc = 1;
            break;
        }
        /* Q_DATA */
        size_t n = d->left < len - pos ? d->left : len - pos;
        memset(ev, 0, sizeof *ev);
        ev->type = ADBC_SYNC_EV_DATA;
        ev->id = ADBC_SYNC_DATA;
        ev->data = in + pos;
        ev->len = n;
        d->left -= (uint32_t)n;
        pos += n;
        ev->last = d->left == 0;
        if (ev->last)
            d->phase = Q_BODY;
        rc = 1;
        break;
    }
    *used = pos;
    return rc;
}

/* ---- errno ---- */

/* adb's wire errno values are Linux's (sysdeps/errno.cpp). */
static const struct {
    uint32_t wire;
    int host;
    const char *name, *text;
} errnos[] = {
    {1, EPERM, "EPERM", "Operation not permitted"},
    {2, ENOENT, "ENOENT", "No such file or directory"},
    {4, EINTR, "EINTR", "Interrupted system call"},
    {5, EIO, "EIO", "I/O error"},
    {12, ENOMEM, "ENOMEM", "Out of memory"},
    {13, EACCES, "EACCES", "Permission denied"},
    {14, EFAULT, "EFAULT", "Bad address"},
    {17, EEXIST, "EEXIST", "File exists"},
    {20, ENOTDIR, "ENOTDIR", "Not a directory"},
    {21, EISDIR, "EISDIR", "Is a directory"},
    {22, EINVAL, "EINVAL", "Invalid argument"},
    {23, ENFILE, "ENFILE", "Too many open files in system"},
    {24, EMFILE, "EMFILE", "Too many open files"},
    {26, ETXTBSY, "ETXTBSY", "Text file busy"},
    {27, EFBIG, "EFBIG", "File too large"},
    {28, ENOSPC, "ENOSPC", "No space left on device"},
    {30, EROFS, "EROFS", "Read-only file system"},
    {36, ENAMETOOLONG, "ENAMETOOLONG", "File name too long"},
    {40, ELOOP, "ELOOP", "Too many levels of symbolic links"},
    {75, EOVERFLOW, "EOVERFLOW", "Value too large for defined data type"},
};

#define NERRNOS (sizeof errnos / sizeof errnos[0])

const char *adbc_sync_errno_name(uint32_t wire)
{
    for (size_t i = 0; i < NERRNOS; i++)
        if (errnos[i].wire == wire)
            return errnos[i].name;
    return "E?";
}

const char *adbc_sync_errno_text(uint32_t wire)
{
    for (size_t i = 0; i < NERRNOS; i++)
        if (errnos[i].wire == wire)
            return errnos[i].text;
    return "unknown error";
}

int adbc_sync_errno_code(uint32_t wire)
{
    switch (wire) {
    case 2: return ADBC_ENOTFOUND;
    case 1:
    case 13: return ADBC_EPERM;
    default: return ADBC_EREMOTE;
    }
}

uint32_t adbc_sync_errno_to_wire(int host)
{
    for (size_t i = 0; i < NERRNOS; i++)
        if (errnos[i].host == host)
            return errnos[i].wire;
    return (uint32_t)host;
}
