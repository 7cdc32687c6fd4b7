/* SPDX-License-Identifier: Apache-2.0 */
/* The dump parser: uiautomator XML, read in place, in one pass.
 *
 * Only what a dump holds is understood: <node> elements and their
 * attributes. Everything else (the <?xml ?> declaration, <hierarchy>,
 * comments, unknown elements, text between tags, a shell banner before
 * and a "dumped to" line after) is stepped over. Nodes go into a flat
 * array in document order; the innermost open node is the only state, and
 * an end tag moves to its parent by index, so depth costs no stack.
 *
 * The parser is total: every byte string gives nodes or ADBC_EFORMAT.
 * Input that breaks off or goes wrong keeps every node read whole so far,
 * and the first problem is recorded in d->damage. */
#include "ui/ui_internal.h"

#include <stdio.h>
#include <string.h>

#include "core/internal.h"

enum { P_OK = 0, P_STOP = 1 }; /* P_STOP: the input ended inside markup */

static inline int is_ws(char c)
{
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

/* Characters that end an attribute name. */
static const uint8_t name_stop[256] = {
    [' '] = 1, ['\n'] = 1, ['\r'] = 1, ['\t'] = 1, ['='] = 1, ['>'] = 1,
    ['/'] = 1, ['<'] = 1, ['"'] = 1, ['\''] = 1,
};

/* The closing quote of a value starting at v. Values are mostly short
 * ("true", ""), where a call to memchr costs more than the search, so the
 * first 32 bytes are searched a word at a time. */
static inline char *find_quote(char *v, char *end, char q)
{
    char *p = v;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
    const uint64_t qq = ones * (uint8_t)q;
    while (end - p >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        w ^= qq; /* a zero byte where q is */
        uint64_t z = (w - ones) & ~w & highs;
        if (z)
            return p + (__builtin_ctzll(z) >> 3);
        p += 8;
        if (p - v >= 32)
            return memchr(p, q, (size_t)(end - p));
    }
#endif
    for (; p < end; p++)
        if (*p == q)
            return p;
    return NULL;
}

/* "EditText" somewhere in the class (the spec's test for editable). */
static int has_edittext(const char *s, size_t n)
{
    for (size_t i = 0; i + 8 <= n; i++)
        if (s[i] == 'E' && memcmp(s + i, "EditText", 8) == 0)
            return 1;
    return 0;
}

static void damage(ui_doc *d, const char *what, size_t at)
{
    if (d->damage[0] == '\0')
        snprintf(d->damage, sizeof d->damage, "%s at byte %zu of %zu", what, at, d->len);
}

/* "<name" at p followed by a delimiter (or the end of input). */
static int tag_is(const char *p, const char *end, const char *name, size_t n)
{
    if ((size_t)(end - p) < n + 1 || memcmp(p + 1, name, n) != 0)
        return 0;
    if (p + 1 + n == end)
        return 1;
    char c = p[1 + n];
    return is_ws(c) || c == '>' || c == '/';
}

/* Past the '>' closing the tag at p, stepping over quoted values; NULL if
 * the input ends first. */
static char *skip_tag(char *p, char *end)
{
    for (p++; p < end; p++) {
        if (*p == '>')
            return p + 1;
        if (*p == '"' || *p == '\'') {
            char *q = memchr(p + 1, *p, (size_t)(end - p - 1));
            if (!q)
                return NULL;
            p = q;
        }
    }
    return NULL;
}

static char *skip_past(char *p, char *end, const char *marker)
{
    char *q = memmem(p, (size_t)(end - p), marker, strlen(marker));
    return q ? q + strlen(marker) : NULL;
}

/* A coordinate: optional '-' and digits, clamped to the int32 range. */
static const char *parse_int(const char *p, const char *e, int32_t *out)
{
    int neg = 0;
    int64_t v = 0;
    if (p < e && *p == '-')
        neg = 1, p++;
    if (p >= e || *p < '0' || *p > '9')
        return NULL;
    while (p < e && *p >= '0' && *p <= '9') {
        if (v < 10000000000)
            v = v * 10 + (*p - '0');
        p++;
    }
    if (neg)
        v = -v;
    if (v > INT32_MAX)
        v = INT32_MAX;
    if (v < -INT32_MAX)
        v = -INT32_MAX;
    *out = (int32_t)v;
    return p;
}

/* "[x1,y1][x2,y2]"; anything else leaves the bounds at zero. */
static void parse_bounds(ui_node *nd, const char *p, const char *e)
{
    int32_t v[4];
    for (int i = 0; i < 4; i++) {
        if (!(i & 1)) {
            if (p >= e || *p != '[')
                return;
            p++;
        }
        p = parse_int(p, e, &v[i]);
        if (!p || p >= e || *p != ((i & 1) ? ']' : ','))
            return;
        p++;
    }
    nd->x1 = v[0], nd->y1 = v[1], nd->x2 = v[2], nd->y2 = v[3];
}

static inline uint64_t ld8(const char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static inline uint32_t ld4(const char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* a[0..n) == lit[0..n) for 4 <= n <= 16, in at most four loads: the hot
 * compare of attribute names, where a call to memcmp costs more than it
 * does. */
static inline int same(const char *a, const char *lit, size_t n)
{
    if (n >= 8)
        return ld8(a) == ld8(lit) && ld8(a + n - 8) == ld8(lit + n - 8);
    return ld4(a) == ld4(lit) && ld4(a + n - 4) == ld4(lit + n - 4);
}

static inline int is_true(const char *v, size_t n)
{
    return n == 4 && same(v, "true", 4);
}

typedef enum attr_id {
    A_OTHER, A_TEXT, A_CLASS, A_BOUNDS, A_CHECKED, A_FOCUSED, A_ENABLED, A_PACKAGE,
    A_SELECTED, A_CLICKABLE, A_SCROLLABLE, A_RID, A_DESC
} attr_id;

#define K(s, id) {s, sizeof(s) - 1, id}

/* The attributes uiautomator writes, in the order it writes them. The
 * parser guesses that the next attribute is the one after the last, which
 * holds for almost every attribute of a real dump and turns the name into
 * one compare; anything else is looked up here, then ignored if unknown. */
static const struct {
    const char *name;
    uint8_t len;
    uint8_t id;
} known[] = {
    K("index", A_OTHER),         K("text", A_TEXT),           K("resource-id", A_RID),
    K("class", A_CLASS),         K("package", A_PACKAGE),     K("content-desc", A_DESC),
    K("checkable", A_OTHER),     K("checked", A_CHECKED),     K("clickable", A_CLICKABLE),
    K("enabled", A_ENABLED),     K("focusable", A_OTHER),     K("focused", A_FOCUSED),
    K("scrollable", A_SCROLLABLE), K("long-clickable", A_OTHER), K("password", A_OTHER),
    K("selected", A_SELECTED),   K("visible-to-user", A_OTHER), K("bounds", A_BOUNDS),
    K("drawing-order", A_OTHER), K("hint", A_OTHER),          K("display-id", A_OTHER),
};
#define NKNOWN (sizeof known / sizeof known[0])

/* Index into known[] of the name, or -1. */
static int lookup(const char *name, size_t n)
{
    for (size_t k = 0; k < NKNOWN; k++)
        if (known[k].len == n && known[k].name[0] == name[0] && memcmp(known[k].name, name, n) == 0)
            return (int)k;
    return -1;
}

static inline void set_flag(ui_node *nd, uint32_t flag, int on)
{
    nd->flags = on ? nd->flags | flag : nd->flags & ~flag;
}

/* Store one attribute value of nd. */
static int attribute(ui_doc *d, ui_node *nd, int id, char *v, size_t vlen)
{
    if (vlen > UINT32_MAX)
        return 0;
    uint32_t n = (uint32_t)vlen;
    switch (id) {
    case A_TEXT: return ui_decode_value(d, v, n, 1, &nd->text);
    case A_DESC: return ui_decode_value(d, v, n, 1, &nd->desc);
    case A_CLASS: return ui_decode_value(d, v, n, 0, &nd->cls);
    case A_RID: return ui_decode_value(d, v, n, 0, &nd->rid);
    case A_PACKAGE: return ui_decode_value(d, v, n, 0, &nd->pkg);
    case A_BOUNDS: parse_bounds(nd, v, v + vlen); break;
    case A_CHECKED: set_flag(nd, UI_CHECKED, is_true(v, vlen)); break;
    case A_FOCUSED: set_flag(nd, UI_FOCUSED, is_true(v, vlen)); break;
    case A_SELECTED: set_flag(nd, UI_SELECTED, is_true(v, vlen)); break;
    case A_CLICKABLE: set_flag(nd, UI_CLICKABLE, is_true(v, vlen)); break;
    case A_SCROLLABLE: set_flag(nd, UI_SCROLLABLE, is_true(v, vlen)); break;
    case A_ENABLED: set_flag(nd, UI_ENABLED, !(vlen == 5 && memcmp(v, "false", 5) == 0)); break;
    }
    return 0;
}

static int grow(ui_doc *d)
{
    /* Real dumps spend 300 to 450 bytes on a node. */
    uint32_t cap = d->cap ? d->cap + d->cap / 2 + 16 : (uint32_t)(d->len / 320 + 8);
    ui_node *nn = core_realloc(d->nodes, (size_t)cap * sizeof *nn);
    if (!nn)
        return core_fail(ADBC_ENOMEM, "out of memory: a dump of %zu bytes", d->len);
    d->nodes = nn;
    d->cap = cap;
    return 0;
}

/* The start tag at *pp ("<node"). On P_OK the node is linked in and *cur
 * is updated; on P_STOP the input ended inside the tag and the node is
 * not kept. */
static int node_tag(ui_doc *d, char **pp, char *end, uint32_t *cur)
{
    if (d->n == d->cap) {
        int rc = grow(d);
        if (rc < 0)
            return rc;
    }
    char *p = *pp + 5;
    uint32_t idx = d->n;
    ui_node *nd = &d->nodes[idx];
    memset(nd, 0, sizeof *nd);
    nd->flags = UI_ENABLED;
    int selfclose = 0;
    size_t guess = 0;
    /* The scans below stop at '>' among other characters, so as long as
     * a '>' lies ahead of p (d->last_gt) they need no bounds checks. When
     * none does, this tag cannot end: the dump was cut inside it. */
    for (;;) {
        if (!d->last_gt || p > d->last_gt)
            goto cut;
        while (is_ws(*p))
            p++;
        char c = *p;
        if (c == '>') {
            p++;
            break;
        }
        if (c == '/') {
            if (p[1] == '>') {
                p += 2;
                selfclose = 1;
                break;
            }
            damage(d, "stray '/' in a <node> tag", (size_t)(p - d->buf));
            p++;
            continue;
        }
        if (c == '<') {
            /* The tag never closed; the next one starts here. */
            damage(d, "unclosed <node> tag", (size_t)(*pp - d->buf));
            break;
        }
        /* The name: first the guess (see known[]), then a scan. Both stop
         * short of the last '>' (the guess only reads 16 bytes when that
         * many lie before it). */
        char *name = p;
        int id = A_OTHER;
        if (guess < NKNOWN && d->last_gt - p >= 16 && same(p, known[guess].name, known[guess].len) &&
            p[known[guess].len] == '=') {
            id = known[guess].id;
            p += known[guess].len;
            guess++;
        } else {
            while (!name_stop[(uint8_t)*p])
                p++;
            size_t nlen = (size_t)(p - name);
            if (nlen == 0) { /* '=' or a quote where a name should be */
                damage(d, "malformed attribute", (size_t)(p - d->buf));
                p++;
                continue;
            }
            int k = lookup(name, nlen);
            if (k >= 0) {
                id = known[k].id;
                guess = (size_t)k + 1;
            }
            while (is_ws(*p))
                p++;
        }
        if (*p != '=') {
            damage(d, "attribute without a value", (size_t)(name - d->buf));
            continue;
        }
        p++;
        while (is_ws(*p))
            p++;
        char q = *p;
        if (q != '"' && q != '\'') {
            damage(d, "unquoted attribute value", (size_t)(p - d->buf));
            continue;
        }
        char *v = p + 1;
        char *e = find_quote(v, end, q);
        if (!e)
            goto cut;
        /* Format v1 reads double-quoted values only (uiautomator writes
         * nothing else); a single-quoted one, as some tools re-serialize,
         * is stepped over whole and ignored. */
        if (q == '"' && id != A_OTHER) {
            int rc = attribute(d, nd, id, v, (size_t)(e - v));
            if (rc < 0)
                return rc;
        }
        p = e + 1;
    }
    if (nd->cls.len >= 8 && has_edittext(ui_sp(d, nd->cls), nd->cls.len))
        nd->flags |= UI_EDITABLE;
    nd->first = nd->last = nd->next = UI_NONE;
    nd->parent = *cur;
    if (*cur != UI_NONE) {
        ui_node *par = &d->nodes[*cur];
        nd->window = par->window;
        if (nd->pkg.len == 0)
            nd->pkg = par->pkg; /* a node without a package is in its parent's */
        if (par->last == UI_NONE)
            par->first = idx;
        else
            d->nodes[par->last].next = idx;
        par->last = idx;
    } else {
        nd->window = d->nwin++;
        if (d->win_last == UI_NONE)
            d->win_first = idx;
        else
            d->nodes[d->win_last].next = idx;
        d->win_last = idx;
    }
    d->n++;
    if (!selfclose)
        *cur = idx;
    *pp = p;
    return P_OK;
cut:
    damage(d, "dump cut short inside a <node> tag", (size_t)(*pp - d->buf));
    return P_STOP;
}

/* A printable preview of the first bytes, for the "no <node>" error. */
static void preview(char *out, size_t cap, const char *b, size_t len)
{
    size_t o = 0;
    for (size_t i = 0; i < len && i < 48 && o + 5 < cap; i++) {
        unsigned char c = (unsigned char)b[i];
        if (c >= 0x20 && c < 0x7f && c != '\\')
            out[o++] = (char)c;
        else if (c == '\n')
            o += (size_t)snprintf(out + o, cap - o, "\\n");
        else
            o += (size_t)snprintf(out + o, cap - o, "\\x%02x", c);
    }
    if (len > 48 && o + 4 < cap)
        o += (size_t)snprintf(out + o, cap - o, "...");
    out[o] = '\0';
}

int ui_xml_parse(ui_doc *d)
{
    char first[256];
    preview(first, sizeof first, d->buf, d->len);
    d->win_first = d->win_last = UI_NONE;
    d->damage[0] = '\0';
    if (d->len > UI_MAX_DUMP)
        return core_fail(ADBC_EFORMAT, "dump of %zu bytes is larger than any screen (limit %zu)",
                         d->len, UI_MAX_DUMP);

    char *p = d->buf, *end = d->buf + d->len;
    /* Skip whatever comes before the first <hierarchy or <node. */
    while ((p = memchr(p, '<', (size_t)(end - p))) != NULL) {
        if (tag_is(p, end, "hierarchy", 9) || tag_is(p, end, "node", 4))
            break;
        p++;
    }

    d->last_gt = memrchr(d->buf, '>', d->len);

    uint32_t cur = UI_NONE;
    int in_hier = 0, hier_closed = 0, stopped = 0;
    while (p && p < end && (*p == '<' || (p = memchr(p, '<', (size_t)(end - p))) != NULL)) {
        size_t at = (size_t)(p - d->buf);
        char c = p + 1 < end ? p[1] : '\0';
        if (c == 'n' && tag_is(p, end, "node", 4)) {
            int rc = node_tag(d, &p, end, &cur);
            if (rc < 0)
                return rc;
            if (rc == P_STOP) {
                stopped = 1;
                break;
            }
            continue;
        }
        char *next;
        if (c == '/') {
            next = skip_tag(p, end);
            if (next && tag_is(p + 1, end, "node", 4)) {
                if (cur != UI_NONE)
                    cur = d->nodes[cur].parent;
                else
                    damage(d, "</node> without a matching <node>", at);
            } else if (next && tag_is(p + 1, end, "hierarchy", 9)) {
                hier_closed = 1;
                break;
            }
        } else if (c == '!') {
            if ((size_t)(end - p) >= 4 && memcmp(p, "<!--", 4) == 0)
                next = skip_past(p + 4, end, "-->");
            else if ((size_t)(end - p) >= 9 && memcmp(p, "<![CDATA[", 9) == 0)
                next = skip_past(p + 9, end, "]]>");
            else
                next = skip_tag(p, end);
        } else if (c == '?') {
            next = skip_past(p + 2 <= end ? p + 2 : end, end, "?>");
        } else {
            if (tag_is(p, end, "hierarchy", 9))
                in_hier = 1;
            if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':')
                next = skip_tag(p, end);
            else
                next = p + 1; /* a lone '<' in text */
        }
        if (!next) {
            stopped = 1;
            break;
        }
        p = next;
    }

    if (d->n == 0)
        return core_fail(ADBC_EFORMAT,
                         "no <node> element in the %zu bytes received (they start \"%s\"): this is "
                         "not a uiautomator dump; if the device printed an error, retry or check "
                         "that the screen is on",
                         d->len, first);

    if (cur != UI_NONE) {
        uint32_t open = 0;
        for (uint32_t i = cur; i != UI_NONE; i = d->nodes[i].parent)
            open++;
        char what[96];
        snprintf(what, sizeof what, "dump cut short with %u <node> elements still open", open);
        damage(d, what, d->len);
    } else if (in_hier && !hier_closed && !stopped) {
        damage(d, "dump cut short before </hierarchy>", d->len);
    } else if (stopped) {
        damage(d, "dump cut short inside markup", d->len);
    }
    d->complete = d->damage[0] == '\0';

    d->winroot = core_malloc((size_t)d->nwin * sizeof *d->winroot);
    if (!d->winroot)
        return core_fail(ADBC_ENOMEM, "out of memory: a dump of %zu bytes", d->len);
    uint32_t w = 0;
    for (uint32_t i = d->win_first; i != UI_NONE; i = d->nodes[i].next)
        d->winroot[w++] = i;
    return 0;
}
