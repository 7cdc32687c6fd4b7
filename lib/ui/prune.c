/* SPDX-License-Identifier: Apache-2.0 */
/* Refs and pruning, exactly as fixtures/snapshot/SNAPSHOT.md lays them out.
 *
 * Refs go to clickable, editable and scrollable nodes in document order,
 * which is array order. Pruning is bottom-up; walking the array backwards
 * reaches every child before its parent, so it needs neither recursion nor
 * a stack. Each node ends with a representative (rep): itself, the child
 * it collapsed into, or nothing when dropped, and the kept nodes are
 * linked into the pruned tree (pfirst/pnext/pparent).
 *
 * Dedup compares (class, text) among one parent's children through a hash
 * table whose slots are stamped with the parent, so it is never cleared
 * and a screen with 100,000 identical rows stays linear. */
#include "ui/ui_internal.h"

#include <string.h>

#include "core/internal.h"

typedef struct slot {
    uint32_t stamp; /* parent index + 1; other values are free slots */
    uint32_t node;
} slot;

static uint64_t dedup_hash(const ui_doc *d, const ui_node *nd)
{
    uint64_t h = ui_hash(0x5eed, ui_sp(d, nd->cls), nd->cls.len);
    return ui_hash(h, ui_sp(d, nd->text), nd->text.len);
}

static int same_key(const ui_doc *d, const ui_node *a, const ui_node *b)
{
    return a->cls.len == b->cls.len && a->text.len == b->text.len &&
           memcmp(ui_sp(d, a->cls), ui_sp(d, b->cls), a->cls.len) == 0 &&
           memcmp(ui_sp(d, a->text), ui_sp(d, b->text), a->text.len) == 0;
}

/* 1 if an earlier child of parent has r's class and text; else remembers r. */
static int seen_before(const ui_doc *d, slot *tab, uint32_t mask, uint32_t parent, uint32_t r)
{
    uint32_t stamp = parent + 1;
    uint32_t i = (uint32_t)dedup_hash(d, &d->nodes[r]) & mask;
    while (tab[i].stamp == stamp) {
        if (same_key(d, &d->nodes[tab[i].node], &d->nodes[r]))
            return 1;
        i = (i + 1) & mask;
    }
    tab[i].stamp = stamp;
    tab[i].node = r;
    return 0;
}

int ui_prune(ui_doc *d)
{
    ui_node *nodes = d->nodes;
    uint32_t nrefs = 0, ntext = 0;
    for (uint32_t i = 0; i < d->n; i++) {
        if (nodes[i].flags & (UI_CLICKABLE | UI_EDITABLE | UI_SCROLLABLE))
            nrefs++;
        if (nodes[i].text.len)
            ntext++;
    }
    d->refnode = core_malloc(((size_t)nrefs + 1) * sizeof *d->refnode);
    uint32_t size = 16;
    while (size < 2 * (uint64_t)ntext)
        size *= 2;
    slot *tab = core_calloc(size, sizeof *tab);
    if (!d->refnode || !tab) {
        core_free(tab);
        return core_fail(ADBC_ENOMEM, "out of memory pruning a dump of %u nodes", d->n);
    }
    d->refnode[0] = UI_NONE;
    for (uint32_t i = 0; i < d->n; i++) {
        ui_node *nd = &nodes[i];
        nd->ref = 0;
        if (nd->flags & (UI_CLICKABLE | UI_EDITABLE | UI_SCROLLABLE)) {
            nd->ref = ++d->nrefs;
            d->refnode[d->nrefs] = i;
        }
        /* Parents come first, so theirs is already known (selectors use it
         * to hand a plain label's match to the button around it). */
        nd->actref = nd->ref ? nd->ref : nd->parent != UI_NONE ? nodes[nd->parent].actref : 0;
    }

    for (uint32_t i = d->n; i-- > 0;) {
        ui_node *nd = &nodes[i];
        if (nd->ref)
            nd->flags |= UI_SUBREF;
        uint32_t head = UI_NONE, tail = UI_NONE, count = 0;
        uint32_t cand[8], ncand = 0; /* dedup candidates, while few */
        for (uint32_t c = nd->first; c != UI_NONE; c = nodes[c].next) {
            uint32_t r = nodes[c].rep;
            if (r == UI_NONE)
                continue;
            ui_node *rn = &nodes[r];
            /* Dedup: only text without refs below it; a ref is never removed.
             * The first few candidates are compared directly; past eight,
             * every candidate goes through the table. */
            if (rn->text.len && !(rn->flags & UI_SUBREF)) {
                int dup = 0;
                if (ncand < 8) {
                    for (uint32_t k = 0; k < ncand && !dup; k++)
                        dup = same_key(d, &nodes[cand[k]], rn);
                    if (!dup)
                        cand[ncand++] = r;
                    if (ncand == 8) /* switch over: the eight go into the table */
                        for (uint32_t k = 0; k < 8; k++)
                            seen_before(d, tab, size - 1, i, cand[k]);
                } else {
                    dup = seen_before(d, tab, size - 1, i, r);
                }
                if (dup)
                    continue;
            }
            rn->pnext = UI_NONE;
            if (tail == UI_NONE)
                head = r;
            else
                nodes[tail].pnext = r;
            tail = r;
            count++;
        }
        if ((nd->flags & UI_SUBREF) && nd->parent != UI_NONE)
            nodes[nd->parent].flags |= UI_SUBREF;

        int keep = nd->ref || nd->text.len || nd->desc.len ||
                   (nd->flags & (UI_CHECKED | UI_SELECTED | UI_FOCUSED));
        if (!keep && count == 1 && ui_is_wrapper(ui_sp(d, nd->cls), nd->cls.len)) {
            nd->rep = head;
        } else if (!keep && count == 0) {
            nd->rep = UI_NONE;
        } else {
            nd->rep = i;
            nd->pfirst = head;
            ui_role(ui_sp(d, nd->cls), nd->cls.len, &nd->role, &nd->rlen);
            for (uint32_t r = head; r != UI_NONE; r = nodes[r].pnext)
                nodes[r].pparent = i;
        }
    }
    for (uint32_t w = 0; w < d->nwin; w++) {
        uint32_t r = nodes[d->winroot[w]].rep;
        if (r != UI_NONE) {
            nodes[r].pparent = UI_NONE;
            nodes[r].pnext = UI_NONE;
        }
    }
    core_free(tab);
    return 0;
}
