/* SPDX-License-Identifier: Apache-2.0 */
/* The JSON reader of jread.h: one pass, an explicit stack, no recursion. */
#include "core/jread.h"

#include <stdlib.h>
#include <string.h>

#include "core/internal.h"

#define JR_MAX_DEPTH 256
#define JR_MAX_TEXT ((size_t)256 << 20)

static int add(jread *j, uint8_t type, size_t start, size_t len)
{
    if (j->n == j->cap) {
        uint32_t cap = j->cap ? j->cap * 2 : 256;
        jr_tok *t = core_realloc(j->t, (size_t)cap * sizeof *t);
        if (!t)
            return core_fail(ADBC_ENOMEM, "out of memory reading JSON");
        j->t = t;
        j->cap = cap;
    }
    jr_tok *t = &j->t[j->n];
    t->type = type;
    t->start = (uint32_t)start;
    t->len = (uint32_t)len;
    t->end = j->n + 1;
    t->n = 0;
    return (int)j->n++;
}

static size_t ws(const char *s, size_t len, size_t p)
{
    while (p < len && (s[p] == ' ' || s[p] == '\t' || s[p] == '\n' || s[p] == '\r'))
        p++;
    return p;
}

static int hex4(const char *p, unsigned *v)
{
    *v = 0;
    for (int i = 0; i < 4; i++) {
        char h = p[i];
        unsigned d;
        if (h >= '0' && h <= '9')
            d = (unsigned)(h - '0');
        else if (h >= 'a' && h <= 'f')
            d = (unsigned)(h - 'a' + 10);
        else if (h >= 'A' && h <= 'F')
            d = (unsigned)(h - 'A' + 10);
        else
            return -1;
        *v = *v * 16 + d;
    }
    return 0;
}

/* A string starting at s[p] == '"': its token; *np after the closing quote. */
static int string_tok(jread *j, size_t len, size_t p, size_t *np)
{
    const char *s = j->s;
    size_t b = ++p;
    while (p < len && s[p] != '"') {
        unsigned char c = (unsigned char)s[p];
        if (c < 0x20)
            return core_fail(ADBC_EPROTO, "JSON: a control character in a string at byte %zu", p);
        if (c == '\\') {
            if (p + 1 >= len)
                break;
            char e = s[p + 1];
            unsigned v;
            if (e == 'u') {
                if (len - p < 6 || hex4(s + p + 2, &v) < 0)
                    return core_fail(ADBC_EPROTO, "JSON: a bad \\u escape at byte %zu", p);
                p += 6;
                continue;
            }
            if (!strchr("\"\\/bfnrt", e) || e == '\0')
                return core_fail(ADBC_EPROTO, "JSON: a bad escape at byte %zu", p);
            p += 2;
            continue;
        }
        p++;
    }
    if (p >= len)
        return core_fail(ADBC_EPROTO, "JSON: a string that does not end (from byte %zu)", b - 1);
    *np = p + 1;
    return add(j, JR_STR, b, p - b);
}

static int literal_tok(jread *j, size_t len, size_t p, size_t *np)
{
    const char *s = j->s;
    static const struct {
        const char *w;
        size_t n;
        uint8_t type;
    } lits[] = {{"true", 4, JR_BOOL}, {"false", 5, JR_BOOL}, {"null", 4, JR_NULL}};
    for (size_t i = 0; i < 3; i++)
        if (len - p >= lits[i].n && memcmp(s + p, lits[i].w, lits[i].n) == 0) {
            *np = p + lits[i].n;
            return add(j, lits[i].type, p, lits[i].n);
        }
    size_t b = p;
    while (p < len && ((s[p] >= '0' && s[p] <= '9') || strchr("+-.eE", s[p]) != NULL) &&
           s[p] != '\0')
        p++;
    char num[64], *e = num;
    if (p == b || p - b >= sizeof num || !(s[b] == '-' || (s[b] >= '0' && s[b] <= '9')))
        return core_fail(ADBC_EPROTO, "JSON: no value at byte %zu", b);
    memcpy(num, s + b, p - b);
    num[p - b] = '\0';
    strtod(num, &e);
    if (*e)
        return core_fail(ADBC_EPROTO, "JSON: a malformed number at byte %zu", b);
    *np = p;
    return add(j, JR_NUM, b, p - b);
}

int jread_parse(jread *j, const char *s, size_t len)
{
    memset(j, 0, sizeof *j);
    j->s = s;
    if (!s || len > JR_MAX_TEXT)
        return core_fail(ADBC_EPROTO, "JSON: no text, or more than %zu bytes", JR_MAX_TEXT);
    uint32_t stack[JR_MAX_DEPTH];
    int depth = 0;
    size_t p = 0;
    int rc;
value:
    p = ws(s, len, p);
    if (p >= len) {
        rc = core_fail(ADBC_EPROTO, "JSON: the text ends where a value should be (byte %zu)", p);
        goto fail;
    }
    if (s[p] == '{' || s[p] == '[') {
        if (depth == JR_MAX_DEPTH) {
            rc = core_fail(ADBC_EPROTO, "JSON: nested deeper than %d at byte %zu", JR_MAX_DEPTH, p);
            goto fail;
        }
        rc = add(j, s[p] == '{' ? JR_OBJ : JR_ARR, p, 0);
        if (rc < 0)
            goto fail;
        stack[depth++] = (uint32_t)rc;
        p = ws(s, len, p + 1);
        if (p < len && (s[p] == '}' || s[p] == ']')) {
            if ((s[p] == '}') != (j->t[stack[depth - 1]].type == JR_OBJ)) {
                rc = core_fail(ADBC_EPROTO, "JSON: a mismatched '%c' at byte %zu", s[p], p);
                goto fail;
            }
            jr_tok *t = &j->t[stack[--depth]];
            t->end = j->n;
            t->len = (uint32_t)(p + 1 - t->start);
            p++;
            goto after;
        }
        if (j->t[stack[depth - 1]].type == JR_OBJ)
            goto key;
        goto value;
    }
    rc = s[p] == '"' ? string_tok(j, len, p, &p) : literal_tok(j, len, p, &p);
    if (rc < 0)
        goto fail;
after:
    if (depth == 0) {
        p = ws(s, len, p);
        if (p != len) {
            rc = core_fail(ADBC_EPROTO, "JSON: more text after the value at byte %zu", p);
            goto fail;
        }
        return 0;
    }
    {
        jr_tok *top = &j->t[stack[depth - 1]];
        top->n++;
        p = ws(s, len, p);
        if (p < len && s[p] == ',') {
            p = ws(s, len, p + 1);
            if (top->type == JR_OBJ)
                goto key;
            goto value;
        }
        if (p < len && s[p] == (top->type == JR_OBJ ? '}' : ']')) {
            top->end = j->n;
            top->len = (uint32_t)(p + 1 - top->start);
            depth--;
            p++;
            goto after;
        }
        rc = core_fail(ADBC_EPROTO, "JSON: expected ',' or the end of a%s at byte %zu",
                       top->type == JR_OBJ ? "n object" : "n array", p);
        goto fail;
    }
key:
    if (p >= len || s[p] != '"') {
        rc = core_fail(ADBC_EPROTO, "JSON: expected a member name at byte %zu", p);
        goto fail;
    }
    rc = string_tok(j, len, p, &p);
    if (rc < 0)
        goto fail;
    p = ws(s, len, p);
    if (p >= len || s[p] != ':') {
        rc = core_fail(ADBC_EPROTO, "JSON: expected ':' at byte %zu", p);
        goto fail;
    }
    p++;
    goto value;
fail:
    jread_free(j);
    return rc;
}

void jread_free(jread *j)
{
    if (!j)
        return;
    core_free(j->t);
    j->t = NULL;
    j->n = j->cap = 0;
}

int jread_is(const jread *j, int i, int type)
{
    return i >= 0 && (uint32_t)i < j->n && j->t[i].type == type;
}

int jread_first(const jread *j, int c)
{
    if (!jread_is(j, c, JR_ARR) && !jread_is(j, c, JR_OBJ))
        return -1;
    return j->t[c].n ? c + 1 : -1;
}

int jread_next(const jread *j, int c, int i)
{
    if ((!jread_is(j, c, JR_ARR) && !jread_is(j, c, JR_OBJ)) || i <= c ||
        (uint32_t)i >= j->t[c].end)
        return -1;
    uint32_t nx = j->t[c].type == JR_OBJ ? j->t[i + 1].end : j->t[i].end;
    return nx < j->t[c].end ? (int)nx : -1;
}

int jread_get(const jread *j, int obj, const char *key)
{
    if (!jread_is(j, obj, JR_OBJ))
        return -1;
    int found = -1;
    for (int k = jread_first(j, obj); k >= 0; k = jread_next(j, obj, k))
        if (jread_streq(j, k, key))
            found = k + 1;
    return found;
}

/* Decode the string at i into dst (which has room for len + 1 bytes: a
 * decoded string is never longer than its escaped text). */
static size_t decode(const jread *j, const jr_tok *t, char *dst)
{
    const char *p = j->s + t->start, *e = p + t->len;
    size_t n = 0;
    while (p < e) {
        if (*p != '\\') {
            dst[n++] = *p++;
            continue;
        }
        char c = p[1];
        p += 2;
        switch (c) {
        case 'n': dst[n++] = '\n'; break;
        case 't': dst[n++] = '\t'; break;
        case 'r': dst[n++] = '\r'; break;
        case 'b': dst[n++] = '\b'; break;
        case 'f': dst[n++] = '\f'; break;
        case 'u': {
            unsigned v, lo;
            hex4(p, &v);
            p += 4;
            if (v >= 0xd800 && v <= 0xdbff && e - p >= 6 && p[0] == '\\' && p[1] == 'u' &&
                hex4(p + 2, &lo) == 0 && lo >= 0xdc00 && lo <= 0xdfff) {
                v = 0x10000 + ((v - 0xd800) << 10) + (lo - 0xdc00);
                p += 6;
            } else if ((v >= 0xd800 && v <= 0xdfff) || v == 0) {
                v = 0xfffd;
            }
            /* \uXXXX is 6 bytes of text, at most 3 of UTF-8; a pair is 12 -> 4. */
            if (v < 0x80) {
                dst[n++] = (char)v;
            } else if (v < 0x800) {
                dst[n++] = (char)(0xc0 | (v >> 6));
                dst[n++] = (char)(0x80 | (v & 0x3f));
            } else if (v < 0x10000) {
                dst[n++] = (char)(0xe0 | (v >> 12));
                dst[n++] = (char)(0x80 | ((v >> 6) & 0x3f));
                dst[n++] = (char)(0x80 | (v & 0x3f));
            } else {
                dst[n++] = (char)(0xf0 | (v >> 18));
                dst[n++] = (char)(0x80 | ((v >> 12) & 0x3f));
                dst[n++] = (char)(0x80 | ((v >> 6) & 0x3f));
                dst[n++] = (char)(0x80 | (v & 0x3f));
            }
            break;
        }
        default: dst[n++] = c; break; /* '"', '\\', '/' */
        }
    }
    dst[n] = '\0';
    return n;
}

int jread_str(const jread *j, int i, char **out)
{
    *out = NULL;
    if (!jread_is(j, i, JR_STR))
        return core_fail(ADBC_EPROTO, "JSON: expected a string");
    const jr_tok *t = &j->t[i];
    char *d = core_malloc((size_t)t->len + 1);
    if (!d)
        return core_fail(ADBC_ENOMEM, "out of memory reading JSON");
    decode(j, t, d);
    *out = d;
    return 0;
}

int jread_streq(const jread *j, int i, const char *lit)
{
    if (!jread_is(j, i, JR_STR))
        return 0;
    const jr_tok *t = &j->t[i];
    size_t n = strlen(lit);
    if (!memchr(j->s + t->start, '\\', t->len))
        return t->len == n && memcmp(j->s + t->start, lit, n) == 0;
    char small[256], *d = t->len < sizeof small ? small : core_malloc((size_t)t->len + 1);
    if (!d)
        return 0;
    size_t dn = decode(j, t, d);
    int eq = dn == n && memcmp(d, lit, n) == 0;
    if (d != small)
        core_free(d);
    return eq;
}

double jread_num(const jread *j, int i, double def)
{
    if (!jread_is(j, i, JR_NUM))
        return def;
    const jr_tok *t = &j->t[i];
    char buf[64];
    if (t->len >= sizeof buf)
        return def;
    memcpy(buf, j->s + t->start, t->len);
    buf[t->len] = '\0';
    char *end;
    double v = strtod(buf, &end);
    return *end ? def : v;
}

int jread_bool(const jread *j, int i, int def)
{
    if (!jread_is(j, i, JR_BOOL))
        return def;
    return j->s[j->t[i].start] == 't';
}
