/* SPDX-License-Identifier: Apache-2.0 */
/* The snapshot as JSON: the same pruned tree as the text, in a stable
 * schema named in the output ("schema": "adbc.ui.snapshot/1"; the fields
 * are described in docs/snapshot.md). Every key is always present, so a
 * consumer never has to guess; an element without a ref has "ref": null,
 * a window whose elements were all pruned has "root": null. One line, no
 * trailing newline; built without recursion like the text. */
#include "ui/ui_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "core/internal.h"

static void puts_(core_buf *b, const char *s)
{
    core_buf_add(b, s, strlen(s));
}

static void putf_i64(core_buf *b, int64_t v)
{
    char tmp[24];
    int n = snprintf(tmp, sizeof tmp, "%" PRId64, v);
    core_buf_add(b, tmp, (size_t)n);
}

static void put_str(core_buf *b, const char *s, size_t n)
{
    size_t e = ui_escape_len(s, n);
    if (core_buf_reserve(b, e + 2) == 0) {
        b->p[b->len++] = '"';
        b->len = (size_t)(ui_escape(b->p + b->len, s, n) - b->p);
        b->p[b->len++] = '"';
        b->p[b->len] = '\0';
    }
}

static void put_bool(core_buf *b, const char *key, int v)
{
    puts_(b, key);
    puts_(b, v ? "true" : "false");
}

/* An element up to and including the opening of its children array. */
static void open_element(core_buf *b, const ui_doc *d, const ui_node *nd)
{
    const char *role = nd->role;
    uint32_t rlen = nd->rlen;
    puts_(b, "{\"ref\":");
    if (nd->ref)
        putf_i64(b, nd->ref);
    else
        puts_(b, "null");
    puts_(b, ",\"role\":");
    put_str(b, role, rlen);
    puts_(b, ",\"class\":");
    put_str(b, ui_sp(d, nd->cls), nd->cls.len);
    puts_(b, ",\"text\":");
    put_str(b, ui_sp(d, nd->text), nd->text.len);
    puts_(b, ",\"desc\":");
    put_str(b, ui_sp(d, nd->desc), nd->desc.len);
    puts_(b, ",\"resource_id\":");
    put_str(b, ui_sp(d, nd->rid), nd->rid.len);
    puts_(b, ",\"bounds\":{\"x\":");
    putf_i64(b, nd->x1);
    puts_(b, ",\"y\":");
    putf_i64(b, nd->y1);
    puts_(b, ",\"w\":");
    putf_i64(b, (int64_t)nd->x2 - nd->x1);
    puts_(b, ",\"h\":");
    putf_i64(b, (int64_t)nd->y2 - nd->y1);
    put_bool(b, "},\"states\":{\"clickable\":", nd->flags & UI_CLICKABLE);
    put_bool(b, ",\"editable\":", nd->flags & UI_EDITABLE);
    put_bool(b, ",\"scrollable\":", nd->flags & UI_SCROLLABLE);
    put_bool(b, ",\"checked\":", nd->flags & UI_CHECKED);
    put_bool(b, ",\"selected\":", nd->flags & UI_SELECTED);
    put_bool(b, ",\"focused\":", nd->flags & UI_FOCUSED);
    put_bool(b, ",\"enabled\":", nd->flags & UI_ENABLED);
    puts_(b, "},\"children\":[");
}

static void tree(core_buf *b, const ui_doc *d, uint32_t root)
{
    const ui_node *nodes = d->nodes;
    uint32_t cur = root;
    while (!b->err) {
        open_element(b, d, &nodes[cur]);
        if (nodes[cur].pfirst != UI_NONE) {
            cur = nodes[cur].pfirst;
            continue;
        }
        puts_(b, "]}");
        while (cur != root && nodes[cur].pnext == UI_NONE) {
            cur = nodes[cur].pparent;
            puts_(b, "]}");
        }
        if (cur == root)
            break;
        puts_(b, ",");
        cur = nodes[cur].pnext;
    }
}

int ui_format_json(char **out, size_t *len, const ui_doc *d, const char *id, int64_t ts)
{
    core_buf b = {.limit = ui_output_limit(d)};
    puts_(&b, "{\"schema\":\"" ADBC_UI_JSON_SCHEMA "\",\"id\":\"");
    puts_(&b, id);
    puts_(&b, "\",\"timestamp_ms\":");
    putf_i64(&b, ts);
    put_bool(&b, ",\"complete\":", d->complete);
    puts_(&b, ",\"damage\":");
    put_str(&b, d->damage, strlen(d->damage));
    puts_(&b, ",\"refs\":");
    putf_i64(&b, d->nrefs);
    puts_(&b, ",\"windows\":[");
    for (uint32_t w = 0; w < d->nwin; w++) {
        const ui_node *wr = &d->nodes[d->winroot[w]];
        if (w)
            puts_(&b, ",");
        puts_(&b, "{\"index\":");
        putf_i64(&b, w);
        puts_(&b, ",\"package\":");
        put_str(&b, ui_sp(d, wr->pkg), wr->pkg.len);
        puts_(&b, ",\"root\":");
        if (wr->rep == UI_NONE)
            puts_(&b, "null");
        else
            tree(&b, d, wr->rep);
        puts_(&b, "}");
    }
    puts_(&b, "]}");
    if (b.err == ADBC_ELIMIT) {
        core_buf_free(&b);
        return core_fail(ADBC_EFORMAT, "snapshot JSON would exceed %zu bytes: the dump is not "
                                       "a real screen", b.limit);
    }
    if (b.err == ADBC_ENOMEM) {
        core_buf_free(&b);
        return core_fail(ADBC_ENOMEM, "out of memory for the snapshot JSON");
    }
    return core_buf_take(&b, out, len);
}
