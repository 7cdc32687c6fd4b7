/* SPDX-License-Identifier: Apache-2.0 */
/* The TOML subset adbc-mcp reads: [table] headers, bare keys, basic and
 * literal strings, decimal integers, booleans and arrays of strings (which
 * may span lines). Everything is checked against the known keys as it is
 * read, and the first problem stops the parse with its line number. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CONFIG_MAX_BYTES (1 << 20)

void mcp_config_init(mcp_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->usb = 1;
    cfg->call_ms = 30000;
    cfg->connect_ms = 10000;
    cfg->settle_ms = 0; /* uiautomator dump waits for an idle UI itself */
}

static void free_list(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

void mcp_config_free(mcp_config *cfg)
{
    free_list(cfg->allowlist, cfg->nallow);
    free_list(cfg->targets, cfg->ntargets);
    free(cfg->default_serial);
    free(cfg->screenshot_dir);
    mcp_config_init(cfg);
}

int mcp_config_allowed(const mcp_config *cfg, const char *serial)
{
    if (!serial || !*serial)
        return 0;
    for (size_t i = 0; i < cfg->nallow; i++)
        if (strcmp(cfg->allowlist[i], serial) == 0)
            return 1;
    return 0;
}

/* ---- the reader ---- */

enum { V_STR, V_INT, V_BOOL, V_ARR };

typedef struct val {
    int type;
    char *s;
    long long i;
    int b;
    char **arr;
    size_t n;
} val;

typedef struct parser {
    const char *p, *end;
    int line;
    const char *name;
    char *err;
    size_t errlen;
} parser;

static int fail(parser *ps, const char *fmt, ...)
{
    int n = snprintf(ps->err, ps->errlen, "%s:%d: ", ps->name, ps->line);
    if (n < 0 || (size_t)n >= ps->errlen)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ps->err + n, ps->errlen - (size_t)n, fmt, ap);
    va_end(ap);
    return -1;
}

static void val_free(val *v)
{
    free(v->s);
    free_list(v->arr, v->n);
    memset(v, 0, sizeof(*v));
}

static void skip_blank(parser *ps)
{
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t'))
        ps->p++;
}

/* Blanks, newlines and comments (inside arrays). */
static void skip_space(parser *ps)
{
    for (;;) {
        skip_blank(ps);
        if (ps->p < ps->end && *ps->p == '#') {
            while (ps->p < ps->end && *ps->p != '\n')
                ps->p++;
        }
        if (ps->p < ps->end && *ps->p == '\n') {
            ps->p++;
            ps->line++;
            continue;
        }
        if (ps->end - ps->p >= 2 && ps->p[0] == '\r' && ps->p[1] == '\n') {
            ps->p += 2;
            ps->line++;
            continue;
        }
        return;
    }
}

/* After a header or a key/value: blanks, an optional comment, then the end
 * of the line (or of the file). */
static int end_of_line(parser *ps)
{
    skip_blank(ps);
    if (ps->p < ps->end && *ps->p == '#')
        while (ps->p < ps->end && *ps->p != '\n')
            ps->p++;
    if (ps->p < ps->end && *ps->p == '\r')
        ps->p++;
    if (ps->p >= ps->end)
        return 0;
    if (*ps->p != '\n')
        return fail(ps, "unexpected '%c' after the value (one key = value a line)", *ps->p);
    ps->p++;
    ps->line++;
    return 0;
}

static int put_utf8(char *o, unsigned long cp)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xC0 | (cp >> 6));
        o[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | (cp >> 12));
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | (cp >> 18));
    o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

static int parse_string(parser *ps, char **out)
{
    char q = *ps->p;
    if (ps->end - ps->p >= 3 && ps->p[1] == q && ps->p[2] == q)
        return fail(ps, "multi-line strings are not supported: write the value on one line");
    ps->p++;
    const char *start = ps->p;
    size_t cap = 1;
    while (ps->p < ps->end && *ps->p != q && *ps->p != '\n') {
        if (q == '"' && *ps->p == '\\' && ps->p + 1 < ps->end)
            ps->p++;
        ps->p++;
        cap++;
    }
    if (ps->p >= ps->end || *ps->p != q)
        return fail(ps, "unterminated string: close it with %c on the same line", q);
    const char *stop = ps->p;
    ps->p++;
    /* Escapes only shrink, except \uXXXX (6 bytes -> at most 4) and
     * \UXXXXXXXX: the source length is a safe bound. */
    char *o = malloc(cap + 4);
    if (!o)
        return fail(ps, "out of memory");
    size_t n = 0;
    for (const char *s = start; s < stop; s++) {
        unsigned char c = (unsigned char)*s;
        if ((c < 0x20 && c != '\t') || c == 0x7F) {
            free(o);
            return fail(ps, "control character 0x%02x in a string: write it as an escape", c);
        }
        if (q == '\'' || c != '\\') {
            o[n++] = (char)c;
            continue;
        }
        char e = *++s;
        switch (e) {
        case 'b': o[n++] = '\b'; break;
        case 't': o[n++] = '\t'; break;
        case 'n': o[n++] = '\n'; break;
        case 'f': o[n++] = '\f'; break;
        case 'r': o[n++] = '\r'; break;
        case '"': o[n++] = '"'; break;
        case '\\': o[n++] = '\\'; break;
        case 'u':
        case 'U': {
            int digits = e == 'u' ? 4 : 8;
            unsigned long cp = 0;
            if (stop - s - 1 < digits) {
                free(o);
                return fail(ps, "\\%c needs %d hex digits", e, digits);
            }
            for (int k = 1; k <= digits; k++) {
                char h = s[k];
                int d = h >= '0' && h <= '9' ? h - '0'
                        : h >= 'a' && h <= 'f' ? h - 'a' + 10
                        : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
                if (d < 0) {
                    free(o);
                    return fail(ps, "\\%c needs %d hex digits", e, digits);
                }
                cp = cp * 16 + (unsigned long)d;
            }
            s += digits;
            if (cp == 0 || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
                free(o);
                return fail(ps, "\\%c escape is not a usable character (NUL, surrogate or "
                                "beyond U+10FFFF)", e);
            }
            n += (size_t)put_utf8(o + n, cp);
            break;
        }
        default:
            free(o);
            return fail(ps, "unknown escape \\%c (TOML has \\b \\t \\n \\f \\r \\\" \\\\ \\u \\U)",
                        e ? e : '?');
        }
    }
    o[n] = 0;
    *out = o;
    return 0;
}

static int parse_int(parser *ps, long long *out)
{
    const char *s = ps->p;
    char buf[32];
    size_t n = 0;
    if (s < ps->end && (*s == '+' || *s == '-'))
        buf[n++] = *s++;
    const char *digits = s;
    int prev_digit = 0;
    while (s < ps->end && ((*s >= '0' && *s <= '9') || *s == '_')) {
        if (*s == '_') {
            if (!prev_digit || s + 1 >= ps->end || s[1] < '0' || s[1] > '9')
                return fail(ps, "'_' in a number must sit between digits");
            prev_digit = 0;
        } else {
            if (n >= sizeof(buf) - 1)
                return fail(ps, "number too long");
            buf[n++] = *s;
            prev_digit = 1;
        }
        s++;
    }
    if (s == digits)
        return fail(ps, "expected a value (a \"string\", a number, true, false or [ ... ])");
    if (digits[0] == '0' && s - digits > 1)
        return fail(ps, "leading zeros are not allowed in a number");
    if (s < ps->end && (*s == '.' || *s == 'e' || *s == 'E' || *s == 'x' || *s == ':'))
        return fail(ps, "only decimal integers are supported here");
    buf[n] = 0;
    errno = 0;
    long long v = strtoll(buf, NULL, 10);
    if (errno)
        return fail(ps, "number out of range");
    ps->p = s;
    *out = v;
    return 0;
}

static int word_is(parser *ps, const char *w)
{
    size_t n = strlen(w);
    if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, w, n) != 0)
        return 0;
    const char *a = ps->p + n;
    return a >= ps->end || !((*a >= 'a' && *a <= 'z') || (*a >= 'A' && *a <= 'Z') ||
                             (*a >= '0' && *a <= '9') || *a == '_' || *a == '-');
}

static int parse_value(parser *ps, val *v)
{
    memset(v, 0, sizeof(*v));
    if (ps->p >= ps->end || *ps->p == '\n' || *ps->p == '\r' || *ps->p == '#')
        return fail(ps, "missing value after '='");
    char c = *ps->p;
    if (c == '"' || c == '\'') {
        v->type = V_STR;
        return parse_string(ps, &v->s);
    }
    if (word_is(ps, "true") || word_is(ps, "false")) {
        v->type = V_BOOL;
        v->b = *ps->p == 't';
        ps->p += v->b ? 4 : 5;
        return 0;
    }
    if (c == '[') {
        v->type = V_ARR;
        ps->p++;
        int open_line = ps->line;
        for (;;) {
            skip_space(ps);
            if (ps->p >= ps->end) {
                ps->line = open_line;
                return fail(ps, "unterminated array: close it with ]");
            }
            if (*ps->p == ']') {
                ps->p++;
                return 0;
            }
            if (*ps->p != '"' && *ps->p != '\'')
                return fail(ps, "arrays here hold strings only: quote each element");
            char *s;
            if (parse_string(ps, &s) != 0)
                return -1;
            char **grown = realloc(v->arr, (v->n + 1) * sizeof(*grown));
            if (!grown) {
                free(s);
                return fail(ps, "out of memory");
            }
            v->arr = grown;
            v->arr[v->n++] = s;
            skip_space(ps);
            if (ps->p < ps->end && *ps->p == ',') {
                ps->p++;
                continue;
            }
            if (ps->p < ps->end && *ps->p == ']')
                continue;
            if (ps->p >= ps->end) {
                ps->line = open_line;
                return fail(ps, "unterminated array: close it with ]");
            }
            return fail(ps, "expected ',' or ']' in the array");
        }
    }
    if (c == '+' || c == '-' || (c >= '0' && c <= '9')) {
        v->type = V_INT;
        return parse_int(ps, &v->i);
    }
    return fail(ps, "expected a value (a \"string\", a number, true, false or [ ... ])");
}

/* ---- the schema ---- */

static const char *type_name(int t)
{
    return t == V_STR ? "a string" : t == V_INT ? "an integer" : t == V_BOOL ? "true or false"
                                                                            : "an array";
}

static int want(parser *ps, const char *table, const char *key, const val *v, int type)
{
    if (v->type == type)
        return 0;
    return fail(ps, "[%s] %s must be %s, not %s", table, key, type_name(type),
                type_name(v->type));
}

static int set_int(parser *ps, const char *key, const val *v, int *dst, int lo, int hi)
{
    if (want(ps, "timeouts", key, v, V_INT) != 0)
        return -1;
    if (v->i < lo || v->i > hi)
        return fail(ps, "[timeouts] %s = %lld is out of range (%d..%d milliseconds)", key, v->i,
                    lo, hi);
    *dst = (int)v->i;
    return 0;
}

static int set_str(parser *ps, const char *table, const char *key, val *v, char **dst)
{
    if (want(ps, table, key, v, V_STR) != 0)
        return -1;
    if (!v->s[0])
        return fail(ps, "[%s] %s must not be empty", table, key);
    free(*dst);
    *dst = v->s;
    v->s = NULL;
    return 0;
}

static int set_list(parser *ps, const char *key, val *v, char ***dst, size_t *n)
{
    if (want(ps, "device", key, v, V_ARR) != 0)
        return -1;
    for (size_t i = 0; i < v->n; i++)
        if (!v->arr[i][0])
            return fail(ps, "[device] %s: element %zu is empty", key, i + 1);
    free_list(*dst, *n);
    *dst = v->arr;
    *n = v->n;
    v->arr = NULL;
    v->n = 0;
    return 0;
}

static const char *const tables[] = {"device", "timeouts", "screenshots", NULL};
static const char *const keys[][6] = {
    {"allowlist", "default", "targets", "usb", "mdns", NULL},
    {"call_ms", "connect_ms", "settle_ms", NULL},
    {"dir", NULL},
};

static int apply(parser *ps, mcp_config *cfg, int table, int key, val *v)
{
    switch (table * 8 + key) {
    case 0: return set_list(ps, "allowlist", v, &cfg->allowlist, &cfg->nallow);
    case 1: return set_str(ps, "device", "default", v, &cfg->default_serial);
    case 2: return set_list(ps, "targets", v, &cfg->targets, &cfg->ntargets);
    case 3:
        if (want(ps, "device", "usb", v, V_BOOL) != 0)
            return -1;
        cfg->usb = v->b;
        return 0;
    case 4:
        if (want(ps, "device", "mdns", v, V_BOOL) != 0)
            return -1;
        cfg->mdns = v->b;
        return 0;
    case 8: return set_int(ps, "call_ms", v, &cfg->call_ms, 1000, 600000);
    case 9: return set_int(ps, "connect_ms", v, &cfg->connect_ms, 100, 120000);
    case 10: return set_int(ps, "settle_ms", v, &cfg->settle_ms, 0, 10000);
    case 16: return set_str(ps, "screenshots", "dir", v, &cfg->screenshot_dir);
    }
    return fail(ps, "internal: no setter");
}

static int bare_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '-';
}

static int read_name(parser *ps, char *buf, size_t cap, const char *what)
{
    size_t n = 0;
    if (ps->p < ps->end && (*ps->p == '"' || *ps->p == '\''))
        return fail(ps, "quoted %s names are not supported: use a bare name", what);
    while (ps->p < ps->end && bare_char(*ps->p)) {
        if (n + 1 >= cap)
            return fail(ps, "%s name too long", what);
        buf[n++] = *ps->p++;
    }
    buf[n] = 0;
    if (!n)
        return fail(ps, "expected a %s name", what);
    if (ps->p < ps->end && *ps->p == '.')
        return fail(ps, "dotted %s names are not supported", what);
    return 0;
}

int mcp_config_parse(mcp_config *cfg, const char *text, size_t len, const char *name, char *err,
                     size_t errlen)
{
    parser ps = {text, text + len, 1, name ? name : "config", err, errlen};
    if (len && memchr(text, 0, len)) {
        const char *z = memchr(text, 0, len);
        for (const char *s = text; s < z; s++)
            ps.line += *s == '\n';
        return fail(&ps, "NUL byte: this is not a text file");
    }
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0)
        ps.p += 3;
    int table = -1;
    unsigned seen_tables = 0, seen_keys[3] = {0, 0, 0};
    for (;;) {
        skip_space(&ps);
        if (ps.p >= ps.end)
            return 0;
        char buf[64];
        if (*ps.p == '[') {
            ps.p++;
            if (ps.p < ps.end && *ps.p == '[')
                return fail(&ps, "arrays of tables ([[...]]) are not supported");
            skip_blank(&ps);
            if (read_name(&ps, buf, sizeof(buf), "table") != 0)
                return -1;
            skip_blank(&ps);
            if (ps.p >= ps.end || *ps.p != ']')
                return fail(&ps, "expected ']' after [%s", buf);
            ps.p++;
            table = -1;
            for (int t = 0; tables[t]; t++)
                if (strcmp(tables[t], buf) == 0)
                    table = t;
            if (table < 0)
                return fail(&ps, "unknown table [%s] (known: [device], [timeouts], [screenshots])",
                            buf);
            if (seen_tables & (1u << table))
                return fail(&ps, "table [%s] defined twice", buf);
            seen_tables |= 1u << table;
            if (end_of_line(&ps) != 0)
                return -1;
            continue;
        }
        if (read_name(&ps, buf, sizeof(buf), "key") != 0)
            return -1;
        if (table < 0)
            return fail(&ps, "key '%s' outside a table: put it under [device], [timeouts] or "
                             "[screenshots]", buf);
        int key = -1;
        for (int k = 0; keys[table][k]; k++)
            if (strcmp(keys[table][k], buf) == 0)
                key = k;
        if (key < 0) {
            char known[128] = "";
            for (int k = 0; keys[table][k]; k++) {
                strcat(known, k ? ", " : "");
                strcat(known, keys[table][k]);
            }
            return fail(&ps, "unknown key '%s' in [%s] (known: %s)", buf, tables[table], known);
        }
        if (seen_keys[table] & (1u << key))
            return fail(&ps, "key '%s' set twice in [%s]", buf, tables[table]);
        seen_keys[table] |= 1u << key;
        skip_blank(&ps);
        if (ps.p >= ps.end || *ps.p != '=')
            return fail(&ps, "expected '=' after '%s'", buf);
        ps.p++;
        skip_blank(&ps);
        int start_line = ps.line;
        val v;
        if (parse_value(&ps, &v) != 0) {
            val_free(&v);
            return -1;
        }
        int end_line = ps.line;
        ps.line = start_line; /* a type or range error names the key's line */
        int rc = apply(&ps, cfg, table, key, &v);
        ps.line = end_line;
        val_free(&v);
        if (rc != 0 || end_of_line(&ps) != 0)
            return -1;
    }
}

int mcp_config_load(mcp_config *cfg, const char *path, int must_exist, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        if (errno == ENOENT && !must_exist)
            return 0;
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    char *buf = malloc(CONFIG_MAX_BYTES + 1);
    if (!buf) {
        fclose(f);
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    size_t n = fread(buf, 1, CONFIG_MAX_BYTES + 1, f);
    int bad = ferror(f);
    fclose(f);
    if (bad || n > CONFIG_MAX_BYTES) {
        free(buf);
        snprintf(err, errlen, "%s: %s", path,
                 bad ? "read error" : "larger than 1 MiB: this is not an adbc-mcp config");
        return -1;
    }
    int rc = mcp_config_parse(cfg, buf, n, path, err, errlen);
    free(buf);
    return rc;
}
