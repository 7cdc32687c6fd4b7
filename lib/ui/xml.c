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
static inline int name_end(char c)
{
    return is_ws(c) || c == '=' || c == '>' || c == '/' || c == '<' || c == '"' || c == '\'';
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

static inline int is_true(const char *v, size_t n)
{
    return n == 4 && memcmp(v, "true", 4) == 0;
}

/* Store one attribute of nd. Unknown names are ignored. */
static int attribute(ui_doc *d, ui_node *nd, const char *name, size_t nlen, char *v, size_t vlen)
{
    if (vlen > UINT32_MAX)
        return 0;
    uint32_t n = (uint32_t)vlen;
    switch (nlen) {
    case 4:
        if (memcmp(name, "text", 4) == 0)
            return ui_decode_value(d, v, n, 1, &nd->text);
        break;
    case 5:
        if (memcmp(name, "class", 5) == 0)
            return ui_decode_value(d, v, n, 0, &nd->cls);
        break;
    case 6:
        if (memcmp(name, "bounds", 6) == 0)
            parse_bounds(nd, v, v + vlen);
        break;
    case 7:
        if (memcmp(name, "checked", 7) == 0) {
            nd->flags = is_true(v, vlen) ? nd->flags | UI_CHECKED : nd->flags & ~UI_CHECKED;
        } else if (memcmp(name, "focused", 7) == 0) {
            nd->flags = is_true(v, vlen) ? nd->flags | UI_FOCUSED : nd->flags & ~UI_FOCUSED;
        } else if (memcmp(name, "enabled", 7) == 0) {
            int off = vlen == 5 && memcmp(v, "false", 5) == 0;
            nd->flags = off ? nd->flags & ~UI_ENABLED : nd->flags | UI_ENABLED;
        } else if (memcmp(name, "package", 7) == 0) {
            return ui_decode_value(d, v, n, 0, &nd->pkg);
        }
        break;
    case 8:
        if (memcmp(name, "selected", 8) == 0)
            nd->flags = is_true(v, vlen) ? nd->flags | UI_SELECTED : nd->flags & ~UI_SELECTED;
        break;
    case 9:
        if (memcmp(name, "clickable", 9) == 0)
            nd->flags = is_true(v, vlen) ? nd->flags | UI_CLICKABLE : nd->flags & ~UI_CLICKABLE;
        break;
    case 10:
        if (memcmp(name, "scrollable", 10) == 0)
            nd->flags = is_true(v, vlen) ? nd->flags | UI_SCROLLABLE : nd->flags & ~UI_SCROLLABLE;
        break;
    case 11:
        if (memcmp(name, "resource-id", 11) == 0)
            return ui_decode_value(d, v, n, 0, &nd->rid);
        break;
    case 12:
        if (memcmp(name, "content-desc", 12) == 0)
            return ui_decode_value(d, v, n, 1, &nd->desc);
        break;
    }
    return 0;
}

static int grow(ui_doc *d)
{
    uint32_t cap = d->cap ? d->cap + d->cap / 2 + 16 : (uint32_t)(d->len / 600 + 64);
    ui_node *nn = adbc_realloc(d->nodes, (size_t)cap * sizeof *nn);
    if (!nn)
        return adbc_fail(ADBC_ENOMEM, "out of memory: a dump of %zu bytes", d->len);
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
    for (;;) {
        while (p < end && is_ws(*p))
            p++;
        if (p >= end)
            goto cut;
        char c = *p;
        if (c == '>') {
            p++;
            break;
        }
        if (c == '/') {
            if (p + 1 >= end)
                goto cut;
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
        char *name = p;
        while (p < end && !name_end(*p))
            p++;
        size_t nlen = (size_t)(p - name);
        if (p >= end)
            goto cut;
        if (nlen == 0) { /* '=' or a quote where a name should be */
            damage(d, "malformed attribute", (size_t)(p - d->buf));
            p++;
            continue;
        }
        while (p < end && is_ws(*p))
            p++;
        if (p >= end)
            goto cut;
        if (*p != '=') {
            damage(d, "attribute without a value", (size_t)(name - d->buf));
            continue;
        }
        p++;
        while (p < end && is_ws(*p))
            p++;
        if (p >= end)
            goto cut;
        char q = *p;
        if (q != '"' && q != '\'') {
            damage(d, "unquoted attribute value", (size_t)(p - d->buf));
            continue;
        }
        char *v = p + 1;
        char *e = memchr(v, q, (size_t)(end - v));
        if (!e)
            goto cut;
        /* Format v1 reads double-quoted values only (uiautomator writes
         * nothing else); a single-quoted one, as some tools re-serialize,
         * is stepped over whole and ignored. */
        if (q == '"') {
            int rc = attribute(d, nd, name, nlen, v, (size_t)(e - v));
            if (rc < 0)
                return rc;
        }
        p = e + 1;
    }
    if (nd->cls.len && memmem(ui_sp(d, nd->cls), nd->cls.len, "EditText", 8))
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
        return adbc_fail(ADBC_EFORMAT, "dump of %zu bytes is larger than any screen (limit %zu)",
                         d->len, UI_MAX_DUMP);

    char *p = d->buf, *end = d->buf + d->len;
    /* Skip whatever comes before the first <hierarchy or <node. */
    while ((p = memchr(p, '<', (size_t)(end - p))) != NULL) {
        if (tag_is(p, end, "hierarchy", 9) || tag_is(p, end, "node", 4))
            break;
        p++;
    }

    uint32_t cur = UI_NONE;
    int in_hier = 0, hier_closed = 0, stopped = 0;
    while (p && p < end && (p = memchr(p, '<', (size_t)(end - p))) != NULL) {
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
        return adbc_fail(ADBC_EFORMAT,
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

    d->winroot = adbc_malloc((size_t)d->nwin * sizeof *d->winroot);
    if (!d->winroot)
        return adbc_fail(ADBC_ENOMEM, "out of memory: a dump of %zu bytes", d->len);
    uint32_t w = 0;
    for (uint32_t i = d->win_first; i != UI_NONE; i = d->nodes[i].next)
        d->winroot[w++] = i;
    return 0;
}
