/* SPDX-License-Identifier: Apache-2.0 */
/* The TOML subset of the tools' configuration files (ops_config.h). Every
 * value is checked as it is read, and the first problem stops the parse
 * with its line number. */
#include "ops_config.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CONFIG_MAX_BYTES (1 << 20)

void ops_cfg_list_free(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}


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

void ops_cfg_val_free(ops_cfg_val *v)
{
    free(v->s);
    ops_cfg_list_free(v->arr, v->n);
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

static int parse_value(parser *ps, ops_cfg_val *v)
{
    memset(v, 0, sizeof(*v));
    if (ps->p >= ps->end || *ps->p == '\n' || *ps->p == '\r' || *ps->p == '#')
        return fail(ps, "missing value after '='");
    char c = *ps->p;
    if (c == '"' || c == '\'') {
        v->type = OPS_CFG_STR;
        return parse_string(ps, &v->s);
    }
    if (word_is(ps, "true") || word_is(ps, "false")) {
        v->type = OPS_CFG_BOOL;
        v->b = *ps->p == 't';
        ps->p += v->b ? 4 : 5;
        return 0;
    }
    if (c == '[') {
        v->type = OPS_CFG_ARR;
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
        v->type = OPS_CFG_INT;
        return parse_int(ps, &v->i);
    }
    return fail(ps, "expected a value (a \"string\", a number, true, false or [ ... ])");
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

char *ops_cfg_path(const char *file)
{
    const char *x = getenv("XDG_CONFIG_HOME");
    const char *home = getenv("HOME");
    char *p = NULL;
    if (!file)
        return NULL;
    if (x && *x) {
        if (asprintf(&p, "%s/adbc/%s", x, file) < 0)
            p = NULL;
    } else if (home && *home) {
        if (asprintf(&p, "%s/.config/adbc/%s", home, file) < 0)
            p = NULL;
    }
    return p;
}

const char *ops_cfg_type_name(ops_cfg_type t)
{
    return t == OPS_CFG_STR ? "a string" : t == OPS_CFG_INT ? "an integer"
           : t == OPS_CFG_BOOL ? "true or false" : "an array";
}

int ops_cfg_want(const ops_cfg_val *v, ops_cfg_type type, const char *table, const char *key,
                 char *err, size_t errlen)
{
    if (v->type == type)
        return 0;
    snprintf(err, errlen, "[%s] %s must be %s, not %s", table, key, ops_cfg_type_name(type),
             ops_cfg_type_name(v->type));
    return -1;
}

int ops_cfg_unknown(const char *table, const char *key, const char *const *known, char *err,
                    size_t errlen)
{
    char list[512] = "";
    size_t o = 0;
    for (int k = 0; known && known[k]; k++) {
        int w = snprintf(list + o, sizeof(list) - o, "%s%s", k ? ", " : "", known[k]);
        if (w < 0 || (size_t)w >= sizeof(list) - o)
            break;
        o += (size_t)w;
    }
    snprintf(err, errlen, "unknown key '%s' in [%s] (known: %s)", key, table, list);
    return -1;
}

int ops_cfg_text(const ops_cfg_val *v, char *buf, size_t cap)
{
    int n;
    switch (v->type) {
    case OPS_CFG_STR: n = snprintf(buf, cap, "%s", v->s); break;
    case OPS_CFG_INT: n = snprintf(buf, cap, "%lld", v->i); break;
    case OPS_CFG_BOOL: n = snprintf(buf, cap, "%s", v->b ? "true" : "false"); break;
    default: return -1;
    }
    return n < 0 || (size_t)n >= cap ? -1 : 0;
}

/* "[a], [b] or [c]" */
static void table_list(const char *const *tables, char *buf, size_t cap)
{
    size_t o = 0;
    int n = 0;
    while (tables[n])
        n++;
    buf[0] = 0;
    for (int t = 0; t < n; t++) {
        const char *sep = t == 0 ? "" : t == n - 1 ? " or " : ", ";
        int w = snprintf(buf + o, cap - o, "%s[%s]", sep, tables[t]);
        if (w < 0 || (size_t)w >= cap - o)
            return;
        o += (size_t)w;
    }
}

typedef struct seen {
    char **names; /* "table\nkey" or "table" */
    size_t n;
} seen;

/* 1 when name was seen before; else remembered (0), -1 out of memory. */
static int seen_add(seen *s, const char *table, const char *key)
{
    char buf[160];
    snprintf(buf, sizeof(buf), "%s\n%s", table, key ? key : "");
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->names[i], buf) == 0)
            return 1;
    char **g = realloc(s->names, (s->n + 1) * sizeof(*g));
    if (!g)
        return -1;
    s->names = g;
    if (!(s->names[s->n] = strdup(buf)))
        return -1;
    s->n++;
    return 0;
}

static int parse_all(parser *ps, const ops_cfg_schema *schema, seen *sn)
{
    const char *table = NULL;
    char tbuf[64];
    char where[160];
    table_list(schema->tables, where, sizeof(where));
    for (;;) {
        skip_space(ps);
        if (ps->p >= ps->end)
            return 0;
        char buf[64];
        if (*ps->p == '[') {
            ps->p++;
            if (ps->p < ps->end && *ps->p == '[')
                return fail(ps, "arrays of tables ([[...]]) are not supported");
            skip_blank(ps);
            if (read_name(ps, buf, sizeof(buf), "table") != 0)
                return -1;
            skip_blank(ps);
            if (ps->p >= ps->end || *ps->p != ']')
                return fail(ps, "expected ']' after [%s", buf);
            ps->p++;
            table = NULL;
            for (int t = 0; schema->tables[t]; t++)
                if (strcmp(schema->tables[t], buf) == 0)
                    table = schema->tables[t];
            if (!table) {
                char known[160];
                table_list(schema->tables, known, sizeof(known));
                for (char *o = strstr(known, " or "); o; o = strstr(o, " or ")) {
                    memmove(o + 2, o + 4, strlen(o + 4) + 1);
                    o[0] = ',';
                    o[1] = ' ';
                }
                return fail(ps, "unknown table [%s] (known: %s)", buf, known);
            }
            int d = seen_add(sn, table, NULL);
            if (d != 0)
                return fail(ps, d > 0 ? "table [%s] defined twice" : "out of memory", buf);
            snprintf(tbuf, sizeof(tbuf), "%s", table);
            if (end_of_line(ps) != 0)
                return -1;
            continue;
        }
        if (read_name(ps, buf, sizeof(buf), "key") != 0)
            return -1;
        if (!table)
            return fail(ps, "key '%s' outside a table: put it under %s", buf, where);
        int d = seen_add(sn, tbuf, buf);
        if (d != 0)
            return fail(ps, d > 0 ? "key '%s' set twice in [%s]" : "out of memory", buf, tbuf);
        skip_blank(ps);
        int key_line = ps->line;
        if (ps->p >= ps->end || *ps->p != '=')
            return fail(ps, "expected '=' after '%s'", buf);
        ps->p++;
        skip_blank(ps);
        ops_cfg_val v;
        if (parse_value(ps, &v) != 0) {
            ops_cfg_val_free(&v);
            return -1;
        }
        int end_line = ps->line;
        ps->line = key_line; /* a type, range or name error names the key's line */
        char msg[512] = "";
        int rc = schema->key(schema->ud, tbuf, buf, &v, msg, sizeof(msg));
        ops_cfg_val_free(&v);
        if (rc != 0)
            return fail(ps, "%s", msg[0] ? msg : "refused");
        ps->line = end_line;
        if (end_of_line(ps) != 0)
            return -1;
    }
}

int ops_cfg_parse(const char *text, size_t len, const char *name, const ops_cfg_schema *schema,
                  char *err, size_t errlen)
{
    parser ps = {text, text + len, 1, name ? name : "config", err, errlen};
    if (!schema || !schema->tables || !schema->key || (!text && len))
        return fail(&ps, "no schema or text (a bad call)");
    if (len && memchr(text, 0, len)) {
        const char *z = memchr(text, 0, len);
        for (const char *s = text; s < z; s++)
            ps.line += *s == '\n';
        return fail(&ps, "NUL byte: this is not a text file");
    }
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0)
        ps.p += 3;
    seen sn = {0};
    int rc = parse_all(&ps, schema, &sn);
    ops_cfg_list_free(sn.names, sn.n);
    return rc;
}

int ops_cfg_load(const char *path, int must_exist, const ops_cfg_schema *schema, char *err,
                 size_t errlen)
{
    FILE *f = fopen(path, "rbe");
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
                 bad ? "read error" : "larger than 1 MiB: this is not a configuration file");
        return -1;
    }
    int rc = ops_cfg_parse(buf, n, path, schema, err, errlen);
    free(buf);
    return rc;
}
