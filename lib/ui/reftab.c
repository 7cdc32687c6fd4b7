/* SPDX-License-Identifier: Apache-2.0 */
/* The ref table of a snapshot, and the recognition tokens of each ref.
 *
 * A ref number only means something within its snapshot. To act on a ref
 * later (another process, another dump) the element must be recognised
 * again, so each record carries two 64-bit tokens:
 *   exact:    class, resource-id, text, desc, bounds on a 16 px grid;
 *   identity: class, resource-id, text, desc, the clickable/editable/
 *             scrollable flags and the size on a 32 px grid.
 * The exact token tells rows of a list apart by place and shrugs off a
 * pixel of jitter; the identity token survives scrolling. States such as
 * checked or focused are left out of both, so an element is still itself
 * after it is toggled. */
#include "ui/ui_internal.h"

#include <stdio.h>
#include <string.h>

#include "core/internal.h"

/* Nearest multiple of grid, as an index, rounding the same way for
 * negative coordinates. */
static int64_t coarse(int64_t v, int64_t grid)
{
    int64_t a = v + grid / 2;
    int64_t q = a / grid;
    if (a % grid < 0)
        q--;
    return q;
}

static uint64_t hash_str(uint64_t h, const char *s)
{
    return ui_hash(h, s, strlen(s));
}

static uint64_t hash_fields(uint64_t seed, const adbc_ui_ref *r)
{
    uint64_t h = hash_str(seed, r->cls);
    h = hash_str(h, r->resource_id);
    h = hash_str(h, r->text);
    return hash_str(h, r->desc);
}

void ui_ref_tokens(adbc_ui_ref *r)
{
    uint64_t h = hash_fields(0xe1, r);
    h = ui_hash_u64(h, (uint64_t)coarse(r->x1, 16));
    h = ui_hash_u64(h, (uint64_t)coarse(r->y1, 16));
    h = ui_hash_u64(h, (uint64_t)coarse(r->x2, 16));
    h = ui_hash_u64(h, (uint64_t)coarse(r->y2, 16));
    r->exact_token = h;

    h = hash_fields(0x1d, r);
    h = ui_hash_u64(h, r->states & (ADBC_UI_CLICKABLE | ADBC_UI_EDITABLE | ADBC_UI_SCROLLABLE));
    h = ui_hash_u64(h, (uint64_t)coarse((int64_t)r->x2 - r->x1, 32));
    h = ui_hash_u64(h, (uint64_t)coarse((int64_t)r->y2 - r->y1, 32));
    r->identity_token = h;
}

/* Centre, rounded down (also for negative coordinates). */
static int centre(int a, int b)
{
    int64_t s = (int64_t)a + b;
    return (int)(s >= 0 ? s / 2 : -((-s + 1) / 2));
}

int ui_reftab_build(adbc_ui_reftab *t, const ui_doc *d)
{
    memset(t, 0, sizeof *t);
    t->refs = core_calloc(d->nrefs ? d->nrefs : 1, sizeof *t->refs);
    if (!t->refs)
        return core_fail(ADBC_ENOMEM, "out of memory for a table of %u refs", d->nrefs);
    t->count = d->nrefs;
    for (uint32_t k = 1; k <= d->nrefs; k++) {
        const ui_node *nd = &d->nodes[d->refnode[k]];
        adbc_ui_ref *r = &t->refs[k - 1];
        r->ref = (int)k;
        r->x1 = nd->x1, r->y1 = nd->y1, r->x2 = nd->x2, r->y2 = nd->y2;
        r->x = centre(nd->x1, nd->x2);
        r->y = centre(nd->y1, nd->y2);
        r->states = nd->flags & UI_PUBLIC_STATES;
        r->window = (int)nd->window;
        r->cls = ui_sp(d, nd->cls);
        r->resource_id = ui_sp(d, nd->rid);
        r->text = ui_sp(d, nd->text);
        r->desc = ui_sp(d, nd->desc);
        r->package = ui_sp(d, nd->pkg);
        ui_ref_tokens(r);
    }
    return 0;
}

size_t adbc_ui_reftab_count(const adbc_ui_reftab *t)
{
    return t ? t->count : 0;
}

const adbc_ui_ref *adbc_ui_reftab_get(const adbc_ui_reftab *t, int ref)
{
    if (!t || ref < 1 || (size_t)ref > t->count)
        return NULL;
    return &t->refs[ref - 1];
}

const char *adbc_ui_reftab_snapshot_id(const adbc_ui_reftab *t)
{
    return t ? t->id : "";
}

int64_t adbc_ui_reftab_timestamp(const adbc_ui_reftab *t)
{
    return t ? t->timestamp : 0;
}

const char *adbc_ui_reftab_frame(const adbc_ui_reftab *t)
{
    return t ? t->frame : "";
}

int adbc_ui_reftab_tsv(char **out, size_t *len, const adbc_ui_reftab *t)
{
    if (!out || !t)
        return core_fail(ADBC_EINVAL, "adbc_ui_reftab_tsv: out and t must not be NULL");
    size_t cap = t->count * 36 + 1, n = 0;
    char *s = core_malloc(cap);
    if (!s)
        return core_fail(ADBC_ENOMEM, "out of memory listing %zu refs", t->count);
    for (size_t i = 0; i < t->count; i++) {
        const adbc_ui_ref *r = &t->refs[i];
        n += (size_t)snprintf(s + n, cap - n, "%d\t%d\t%d\n", r->ref, r->x, r->y);
    }
    s[n] = '\0';
    *out = s;
    if (len)
        *len = n;
    return 0;
}
