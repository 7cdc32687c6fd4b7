/* SPDX-License-Identifier: Apache-2.0 */
/* The snapshot text (format v1 of SNAPSHOT.md):
 *
 *   - Role [ref=N] "text" (desc) [checked, selected, focused, disabled]
 *
 * one line per kept node, pre-order, two spaces of indent per level,
 * windows one after another at depth 0, joined by '\n' with no trailing
 * newline. The size is computed first and the text written once into an
 * exact allocation; the walk follows pruned-tree links, never recursion. */
#include "ui/ui_internal.h"

#include <string.h>

#include "core/internal.h"

size_t ui_output_limit(const ui_doc *d)
{
    return ((size_t)64 << 20) + 8 * d->len;
}

static size_t digits(uint32_t v)
{
    size_t n = 1;
    while (v >= 10)
        v /= 10, n++;
    return n;
}

static char *put_u32(char *o, uint32_t v)
{
    char tmp[10];
    size_t n = 0;
    do
        tmp[n++] = (char)('0' + v % 10);
    while (v /= 10);
    while (n)
        *o++ = tmp[--n];
    return o;
}

static const struct {
    uint32_t flag;
    int when_set;
    const char *name;
} states[] = {
    {UI_CHECKED, 1, "checked"},
    {UI_SELECTED, 1, "selected"},
    {UI_FOCUSED, 1, "focused"},
    {UI_ENABLED, 0, "disabled"},
};

static int has_state(uint32_t flags, int k)
{
    return !!(flags & states[k].flag) == states[k].when_set;
}

static size_t line_len(const ui_doc *d, const ui_node *nd, uint32_t depth)
{
    const char *role = nd->role;
    uint32_t rlen = nd->rlen;
    size_t n = (size_t)depth * 2 + 2 + ui_escape_len(role, rlen);
    if (nd->ref)
        n += 7 + digits(nd->ref);
    if (nd->text.len)
        n += 3 + ui_escape_len(ui_sp(d, nd->text), nd->text.len);
    if (nd->desc.len)
        n += 3 + ui_escape_len(ui_sp(d, nd->desc), nd->desc.len);
    size_t st = 0;
    for (int k = 0; k < 4; k++)
        if (has_state(nd->flags, k))
            st += (st ? 2 : 3) + strlen(states[k].name);
    return n + st;
}

static char *line_write(char *o, const ui_doc *d, const ui_node *nd, uint32_t depth)
{
    const char *role = nd->role;
    uint32_t rlen = nd->rlen;
    memset(o, ' ', (size_t)depth * 2);
    o += (size_t)depth * 2;
    *o++ = '-';
    *o++ = ' ';
    o = ui_escape(o, role, rlen);
    if (nd->ref) {
        memcpy(o, " [ref=", 6);
        o = put_u32(o + 6, nd->ref);
        *o++ = ']';
    }
    if (nd->text.len) {
        *o++ = ' ';
        *o++ = '"';
        o = ui_escape(o, ui_sp(d, nd->text), nd->text.len);
        *o++ = '"';
    }
    if (nd->desc.len) {
        *o++ = ' ';
        *o++ = '(';
        o = ui_escape(o, ui_sp(d, nd->desc), nd->desc.len);
        *o++ = ')';
    }
    int any = 0;
    for (int k = 0; k < 4; k++) {
        if (!has_state(nd->flags, k))
            continue;
        if (any) {
            *o++ = ',';
            *o++ = ' ';
        } else {
            *o++ = ' ';
            *o++ = '[';
        }
        size_t l = strlen(states[k].name);
        memcpy(o, states[k].name, l);
        o += l;
        any = 1;
    }
    if (any)
        *o++ = ']';
    return o;
}

/* One pass over the pruned tree: with out == NULL it only measures (and
 * stops past limit), else it writes. Returns the size. */
static size_t walk(const ui_doc *d, char *out, size_t limit)
{
    const ui_node *nodes = d->nodes;
    size_t pos = 0;
    int first = 1;
    for (uint32_t w = 0; w < d->nwin; w++) {
        uint32_t root = nodes[d->winroot[w]].rep;
        if (root == UI_NONE)
            continue;
        uint32_t cur = root, depth = 0;
        for (;;) {
            if (!first) {
                if (out)
                    out[pos] = '\n';
                pos++;
            }
            first = 0;
            if (out) {
                pos = (size_t)(line_write(out + pos, d, &nodes[cur], depth) - out);
            } else {
                pos += line_len(d, &nodes[cur], depth);
                if (pos > limit)
                    return pos;
            }
            if (nodes[cur].pfirst != UI_NONE) {
                cur = nodes[cur].pfirst;
                depth++;
                continue;
            }
            while (cur != root && nodes[cur].pnext == UI_NONE) {
                cur = nodes[cur].pparent;
                depth--;
            }
            if (cur == root)
                break;
            cur = nodes[cur].pnext;
        }
    }
    return pos;
}

int ui_format_text(char **out, size_t *len, const ui_doc *d)
{
    size_t limit = ui_output_limit(d);
    size_t n = walk(d, NULL, limit);
    if (n > limit)
        return core_fail(ADBC_EFORMAT,
                         "snapshot text would exceed %zu bytes: the dump nests elements too deeply "
                         "to be a real screen", limit);
    char *s = core_malloc(n + 1);
    if (!s)
        return core_fail(ADBC_ENOMEM, "out of memory for a snapshot text of %zu bytes", n);
    size_t w = walk(d, s, 0);
    s[w] = '\0';
    *out = s;
    *len = w;
    return 0;
}
