/* SPDX-License-Identifier: Apache-2.0 */
/* Ref files: a ref table saved so a later process can act on its refs.
 *
 * Text, one record a line, so a person can read it:
 *
 *   adbc-reftab 1
 *   id 9f0c3a5e7b1d2468
 *   timestamp 1732190000000
 *   frame 0000a3f1:BOOT-ID  (the frame mark; "-" when unknown)
 *   count 2
 *   1 <TAB> x1 y1 x2 y2 <TAB> x y <TAB> states window <TAB> exact identity
 *     <TAB> class resource-id text desc package      (all fields TAB-separated)
 *   ...
 *   check 0123456789abcdef
 *
 * In strings, backslash, TAB, LF and CR are written \\ \t \n \r. The last
 * line is a hash of every byte before it, so a file cut short, edited or
 * damaged on disk is refused (ADBC_EFORMAT) instead of yielding wrong tap
 * points; the tokens are recomputed from the fields and must agree too.
 * Saving writes a temporary file beside the target and renames it, so a
 * reader never sees half a file. */
#include "ui/ui_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/internal.h"

#define MAGIC "adbc-reftab "
#define MAX_FILE ((size_t)64 << 20)

static void put_field(core_buf *b, const char *s)
{
    size_t n = strlen(s);
    if (core_buf_reserve(b, 2 * n + 1) != 0)
        return;
    b->p[b->len++] = '\t';
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        const char *e = c == '\\' ? "\\\\" : c == '\t' ? "\\t" : c == '\n' ? "\\n" : c == '\r' ? "\\r" : NULL;
        if (e) {
            b->p[b->len++] = e[0];
            b->p[b->len++] = e[1];
        } else {
            b->p[b->len++] = c;
        }
    }
    b->p[b->len] = '\0';
}

static int serialize(core_buf *b, const adbc_ui_reftab *t)
{
    core_buf_printf(b, MAGIC "%d\nid %s\ntimestamp %" PRId64 "\nframe %s\ncount %zu\n",
                    ADBC_UI_REFTAB_VERSION, t->id, t->timestamp, t->frame[0] ? t->frame : "-",
                    t->count);
    for (size_t i = 0; i < t->count && !b->err; i++) {
        const adbc_ui_ref *r = &t->refs[i];
        core_buf_printf(b, "%d\t%d\t%d\t%d\t%d\t%d\t%d\t%u\t%d\t%016" PRIx64 "\t%016" PRIx64, r->ref,
                        r->x1, r->y1, r->x2, r->y2, r->x, r->y, r->states, r->window,
                        r->exact_token, r->identity_token);
        put_field(b, r->cls);
        put_field(b, r->resource_id);
        put_field(b, r->text);
        put_field(b, r->desc);
        put_field(b, r->package);
        core_buf_add(b, "\n", 1);
    }
    if (!b->err)
        core_buf_printf(b, "check %016" PRIx64 "\n", ui_hash(0xc4ec, b->p, b->len));
    return b->err;
}

static int errno_code(int e)
{
    return e == ENOENT ? ADBC_ENOTFOUND : e == EACCES || e == EPERM ? ADBC_EPERM : ADBC_EIO;
}

int adbc_ui_reftab_save(const adbc_ui_reftab *t, const char *path)
{
    if (!t || !path)
        return core_fail(ADBC_EINVAL, "adbc_ui_reftab_save: t and path must not be NULL");
    core_buf b = {0};
    if (serialize(&b, t) < 0) {
        core_free(b.p);
        return core_fail(ADBC_ENOMEM, "out of memory saving %zu refs", t->count);
    }
    int rc = core_file_write_atomic(path, b.p, b.len, 0600, CORE_FILE_SYNC);
    core_buf_free(&b);
    return rc;
}

/* ---- loading ---- */

static int bad(const char *path, const char *why)
{
    return core_fail(ADBC_EFORMAT, "ref file %s is damaged (%s): take a new snapshot", path, why);
}

/* Next field ending at sep; NUL-terminates it and advances *p. */
static char *field(char **p, char *end, char sep)
{
    char *s = *p;
    char *e = memchr(s, sep, (size_t)(end - s));
    if (!e)
        return NULL;
    *e = '\0';
    *p = e + 1;
    return s;
}

static int to_i64(const char *s, int64_t lo, int64_t hi, int64_t *out)
{
    if (!*s)
        return -1;
    char *e;
    errno = 0;
    long long v = strtoll(s, &e, 10);
    if (*e || errno || v < lo || v > hi || s[0] == ' ' || s[0] == '+')
        return -1;
    *out = v;
    return 0;
}

static int to_int(const char *s, int *out)
{
    int64_t v;
    if (to_i64(s, INT32_MIN, INT32_MAX, &v) < 0)
        return -1;
    *out = (int)v;
    return 0;
}

static int to_hex64(const char *s, uint64_t *out)
{
    if (strlen(s) != 16)
        return -1;
    uint64_t v = 0;
    for (int i = 0; i < 16; i++) {
        char c = s[i];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (d < 0)
            return -1;
        v = v << 4 | (uint64_t)d;
    }
    *out = v;
    return 0;
}

/* Undo the escapes of a string field, in place. */
static int unescape(char *s)
{
    char *o = s;
    for (char *p = s; *p; p++) {
        if (*p != '\\') {
            *o++ = *p;
            continue;
        }
        p++;
        switch (*p) {
        case '\\': *o++ = '\\'; break;
        case 't': *o++ = '\t'; break;
        case 'n': *o++ = '\n'; break;
        case 'r': *o++ = '\r'; break;
        default: return -1;
        }
    }
    *o = '\0';
    return 0;
}

static int read_all(char **out, size_t *len, const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        return core_fail(errno_code(e), "cannot open ref file %s: %s%s", path, strerror(e),
                         e == ENOENT ? " (take a snapshot first)" : "");
    }
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > MAX_FILE) {
        close(fd);
        return bad(path, "not a regular file of a plausible size");
    }
    size_t n = (size_t)st.st_size, got = 0;
    char *b = core_malloc(n + 1);
    if (!b) {
        close(fd);
        return core_fail(ADBC_ENOMEM, "out of memory reading %s", path);
    }
    while (got < n) {
        ssize_t r = read(fd, b + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    if (got != n) {
        core_free(b);
        return core_fail(ADBC_EIO, "cannot read ref file %s: it changed while being read", path);
    }
    b[n] = '\0';
    *out = b;
    *len = n;
    return 0;
}

static int parse(adbc_ui_reftab *t, char *b, size_t n, const char *path)
{
    char *end = b + n;
    if (n < sizeof MAGIC || memcmp(b, MAGIC, sizeof MAGIC - 1) != 0)
        return bad(path, "not an adbc ref file");
    if (memchr(b, '\0', n))
        return bad(path, "NUL byte");
    /* The check line closes the file and covers everything before it. */
    if (b[n - 1] != '\n')
        return bad(path, "cut short");
    char *last = end - 1;
    while (last > b && last[-1] != '\n')
        last--;
    uint64_t want;
    if (end - last != 23 || memcmp(last, "check ", 6) != 0)
        return bad(path, "cut short: no check line");
    last[22] = '\0';
    if (to_hex64(last + 6, &want) < 0 || ui_hash(0xc4ec, b, (size_t)(last - b)) != want)
        return bad(path, "check line does not match the contents");
    end = last;

    char *p = b + sizeof MAGIC - 1;
    char *ver = field(&p, end, '\n');
    int64_t v;
    if (!ver || to_i64(ver, 0, 1000000, &v) < 0)
        return bad(path, "bad version line");
    if (v != ADBC_UI_REFTAB_VERSION)
        return core_fail(ADBC_EFORMAT, "ref file %s has format %lld, this adbc reads %d: take a "
                         "new snapshot", path, (long long)v, ADBC_UI_REFTAB_VERSION);
    char *id = NULL, *ts = NULL, *fr = NULL, *cnt = NULL;
    if (field(&p, end, ' ') == NULL || !(id = field(&p, end, '\n')) ||
        field(&p, end, ' ') == NULL || !(ts = field(&p, end, '\n')) ||
        field(&p, end, ' ') == NULL || !(fr = field(&p, end, '\n')) ||
        field(&p, end, ' ') == NULL || !(cnt = field(&p, end, '\n')))
        return bad(path, "header cut short");
    /* The frame mark (ui_observe.h), or "-". */
    if (strcmp(fr, "-") != 0 && !ui_frame_valid(fr))
        return bad(path, "bad frame line");
    snprintf(t->frame, sizeof t->frame, "%s", fr[0] == '-' ? "" : fr);
    uint64_t idv;
    int64_t count;
    if (to_hex64(id, &idv) < 0 || to_i64(ts, 0, INT64_MAX, &t->timestamp) < 0 ||
        to_i64(cnt, 0, (int64_t)(n / 16), &count) < 0)
        return bad(path, "bad header");
    memcpy(t->id, id, 17);
    t->refs = core_calloc(count ? (size_t)count : 1, sizeof *t->refs);
    if (!t->refs)
        return core_fail(ADBC_ENOMEM, "out of memory loading %s", path);
    t->count = (size_t)count;
    for (size_t i = 0; i < t->count; i++) {
        adbc_ui_ref *r = &t->refs[i];
        char *line = field(&p, end, '\n');
        if (!line)
            return bad(path, "fewer refs than announced");
        char *le = line + strlen(line), *q = line;
        char *f[16];
        for (int k = 0; k < 16; k++) {
            f[k] = field(&q, le + 1, k == 15 ? '\0' : '\t');
            if (!f[k])
                return bad(path, "a ref line has too few fields");
        }
        int64_t st, win;
        uint64_t ex, id2;
        if (to_int(f[0], &r->ref) < 0 || r->ref != (int)i + 1 || to_int(f[1], &r->x1) < 0 ||
            to_int(f[2], &r->y1) < 0 || to_int(f[3], &r->x2) < 0 || to_int(f[4], &r->y2) < 0 ||
            to_int(f[5], &r->x) < 0 || to_int(f[6], &r->y) < 0 ||
            to_i64(f[7], 0, UI_PUBLIC_STATES, &st) < 0 || to_i64(f[8], 0, INT32_MAX, &win) < 0 ||
            to_hex64(f[9], &ex) < 0 || to_hex64(f[10], &id2) < 0)
            return bad(path, "a ref line has a bad number");
        if (strchr(f[15], '\t'))
            return bad(path, "a ref line has too many fields");
        for (int k = 11; k < 16; k++)
            if (unescape(f[k]) < 0)
                return bad(path, "bad escape in a string");
        r->states = (unsigned)st;
        r->window = (int)win;
        r->cls = f[11];
        r->resource_id = f[12];
        r->text = f[13];
        r->desc = f[14];
        r->package = f[15];
        ui_ref_tokens(r);
        if (r->exact_token != ex || r->identity_token != id2)
            return bad(path, "tokens do not match the fields");
    }
    if (p != end)
        return bad(path, "more refs than announced");
    return 0;
}

int adbc_ui_reftab_load(adbc_ui_reftab **out, const char *path)
{
    if (!out || !path)
        return core_fail(ADBC_EINVAL, "adbc_ui_reftab_load: out and path must not be NULL");
    *out = NULL;
    char *b = NULL;
    size_t n = 0;
    int rc = read_all(&b, &n, path);
    if (rc < 0)
        return rc;
    adbc_ui_reftab *t = core_calloc(1, sizeof *t);
    if (!t) {
        core_free(b);
        return core_fail(ADBC_ENOMEM, "out of memory loading %s", path);
    }
    t->strings = b;
    t->owned = 1;
    rc = parse(t, b, n, path);
    if (rc < 0) {
        adbc_ui_reftab_free(t);
        return rc;
    }
    *out = t;
    return 0;
}

void adbc_ui_reftab_free(adbc_ui_reftab *t)
{
    if (!t || !t->owned)
        return;
    core_free(t->refs);
    core_free(t->strings);
    core_free(t);
}
