/* SPDX-License-Identifier: Apache-2.0 */
/* Selectors: from what an element says (resource-id, text, desc, class) to
 * the refs a caller can act on.
 *
 * Every node is tested, pruned or not, so a label that was folded into its
 * parent still finds it. A match without a ref stands for its nearest
 * ancestor with one (the row around a label, the button around an icon),
 * which prune.c has already noted in each node; refs come out in document
 * order, each once. */
#include "ui/ui_internal.h"

#include <stdio.h>
#include <string.h>

#include "core/internal.h"

static inline char fold(char c)
{
    return (c >= 'A' && c <= 'Z') ? (char)(c + 32) : c;
}

int ui_matcher_init(ui_matcher *m, const char *needle, unsigned flags)
{
    memset(m, 0, sizeof *m);
    m->needle = needle;
    m->nn = strlen(needle);
    m->flags = flags;
    if (flags & ADBC_UI_MATCH_NOCASE) {
        m->cap = m->nn + 256;
        m->fold = core_malloc(m->cap);
        if (!m->fold)
            return core_fail(ADBC_ENOMEM, "out of memory for a text match");
        for (size_t i = 0; i < m->nn; i++)
            m->fold[i] = fold(needle[i]);
    }
    return 0;
}

void ui_matcher_free(ui_matcher *m)
{
    core_free(m->fold);
    m->fold = NULL;
}

int ui_matcher_test(ui_matcher *m, const char *hay, size_t hn)
{
    int contains = m->flags & ADBC_UI_MATCH_CONTAINS;
    if (!(m->flags & ADBC_UI_MATCH_NOCASE)) {
        if (!contains)
            return hn == m->nn && memcmp(hay, m->needle, hn) == 0;
        return m->nn == 0 || memmem(hay, hn, m->needle, m->nn) != NULL;
    }
    if (!contains) {
        if (hn != m->nn)
            return 0;
        for (size_t i = 0; i < hn; i++)
            if (fold(hay[i]) != m->fold[i])
                return 0;
        return 1;
    }
    if (m->nn == 0)
        return 1;
    if (hn < m->nn)
        return 0;
    if (m->nn + hn > m->cap) {
        size_t cap = m->nn + hn + 256;
        char *f = core_realloc(m->fold, cap);
        if (!f)
            return core_fail(ADBC_ENOMEM, "out of memory for a text match");
        m->fold = f;
        m->cap = cap;
    }
    char *h = m->fold + m->nn;
    for (size_t i = 0; i < hn; i++)
        h[i] = fold(hay[i]);
    return memmem(h, hn, m->fold, m->nn) != NULL;
}

static int rid_matches(const char *rid, size_t rn, const char *want)
{
    size_t wn = strlen(want);
    if (strchr(want, '/'))
        return rn == wn && memcmp(rid, want, rn) == 0;
    const char *slash = memrchr(rid, '/', rn);
    const char *name = slash ? slash + 1 : rid;
    size_t nn = rn - (size_t)(name - rid);
    return nn == wn && memcmp(name, want, wn) == 0;
}

static int cls_matches(const char *cls, size_t cn, const char *want)
{
    size_t wn = strlen(want);
    if (strchr(want, '.'))
        return cn == wn && memcmp(cls, want, cn) == 0;
    const char *dot = memrchr(cls, '.', cn);
    const char *seg = dot ? dot + 1 : cls;
    size_t sn = cn - (size_t)(seg - cls);
    return sn == wn && memcmp(seg, want, wn) == 0;
}

static void describe(char *out, size_t cap, const adbc_ui_selector *sel)
{
    size_t n = 0;
    out[0] = '\0';
    const struct { const char *name; const char *v; } f[] = {
        {"resource-id", sel->resource_id}, {"text", sel->text}, {"desc", sel->desc},
        {"class", sel->cls},
    };
    for (size_t i = 0; i < 4 && n < cap; i++)
        if (f[i].v)
            n += (size_t)snprintf(out + n, cap - n, "%s%s \"%.60s\"", n ? " and " : "",
                                  f[i].name, f[i].v);
}

int adbc_ui_find(int **refs, size_t *count, const adbc_ui_snap *s, const adbc_ui_selector *sel)
{
    if (!refs || !count || !s || !sel)
        return core_fail(ADBC_EINVAL, "adbc_ui_find: refs, count, s and sel must not be NULL");
    *refs = NULL;
    *count = 0;
    adbc_ui_selector own = {.size = sizeof own};
    if (core_abi_take(&own, sizeof own, sel, "adbc_ui_selector") < 0)
        return ADBC_EINVAL;
    sel = &own;
    if (!sel->resource_id && !sel->text && !sel->desc && !sel->cls)
        return core_fail(ADBC_EINVAL, "empty selector: give a resource-id, text, desc or class");
    const ui_doc *d = &s->doc;
    ui_matcher mt, md;
    int rc = ui_matcher_init(&mt, sel->text ? sel->text : "", sel->flags);
    if (rc < 0)
        return rc;
    rc = ui_matcher_init(&md, sel->desc ? sel->desc : "", sel->flags);
    uint8_t *hit = rc < 0 ? NULL : core_calloc((size_t)d->nrefs + 1, 1);
    if (!hit) {
        ui_matcher_free(&mt);
        ui_matcher_free(&md);
        return rc < 0 ? rc : core_fail(ADBC_ENOMEM, "out of memory matching a selector");
    }
    size_t matched = 0, found = 0;
    for (uint32_t i = 0; i < d->n && rc >= 0; i++) {
        const ui_node *nd = &d->nodes[i];
        if (sel->resource_id && !rid_matches(ui_sp(d, nd->rid), nd->rid.len, sel->resource_id))
            continue;
        if (sel->cls && !cls_matches(ui_sp(d, nd->cls), nd->cls.len, sel->cls))
            continue;
        if (sel->text && (rc = ui_matcher_test(&mt, ui_sp(d, nd->text), nd->text.len)) <= 0)
            continue;
        if (sel->desc && (rc = ui_matcher_test(&md, ui_sp(d, nd->desc), nd->desc.len)) <= 0)
            continue;
        matched++;
        if (nd->actref && !hit[nd->actref]) {
            hit[nd->actref] = 1;
            found++;
        }
    }
    ui_matcher_free(&mt);
    ui_matcher_free(&md);
    if (rc < 0) {
        core_free(hit);
        return rc;
    }
    char what[300];
    if (!found) {
        core_free(hit);
        describe(what, sizeof what, sel);
        if (matched)
            return core_fail(ADBC_ENOTFOUND,
                             "%zu element(s) match %s, but neither they nor any element around "
                             "them can be tapped, typed into or scrolled", matched, what);
        return core_fail(ADBC_ENOTFOUND, "no element matches %s on this screen: check the "
                         "snapshot text, or wait for it with wait-text", what);
    }
    int *out = core_malloc(found * sizeof *out);
    if (!out) {
        core_free(hit);
        return core_fail(ADBC_ENOMEM, "out of memory listing %zu refs", found);
    }
    size_t k = 0;
    for (uint32_t r = 1; r <= d->nrefs; r++)
        if (hit[r])
            out[k++] = (int)r;
    core_free(hit);
    *refs = out;
    *count = found;
    return 0;
}

int adbc_ui_snap_count_text(size_t *count, const adbc_ui_snap *s, const char *text,
                            unsigned flags)
{
    if (!count || !s || !text)
        return core_fail(ADBC_EINVAL, "adbc_ui_snap_count_text: arguments must not be NULL");
    const ui_doc *d = &s->doc;
    ui_matcher m;
    int rc = ui_matcher_init(&m, text, flags);
    size_t n = 0;
    for (uint32_t i = 0; i < d->n && rc >= 0; i++) {
        const ui_node *nd = &d->nodes[i];
        rc = ui_matcher_test(&m, ui_sp(d, nd->text), nd->text.len);
        if (rc == 0)
            rc = ui_matcher_test(&m, ui_sp(d, nd->desc), nd->desc.len);
        if (rc > 0)
            n++;
    }
    ui_matcher_free(&m);
    if (rc < 0)
        return rc;
    *count = n;
    return 0;
}
