/* SPDX-License-Identifier: Apache-2.0 */
/* Selectors by five tiers, the order in which people name what they see:
 * an exact resource-id, a control's own text, a label inside a clickable
 * row (the row is what takes the tap), a content description, and last an
 * editable field by the text or hint it shows. The first tier that matches
 * anything decides; several matches in it are refused with the candidates
 * listed, because a wrong tap can send a message or delete something. */
#include "ops_core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "adbc/error.h"

/* adbc_ui_find, with "nothing matched" as no refs rather than an error. */
static int find(int **refs, size_t *n, const adbc_ui_snap *s, const adbc_ui_selector *q,
                ops_err *e)
{
    *refs = NULL;
    *n = 0;
    int rc = adbc_ui_find(refs, n, s, q);
    if (rc == ADBC_ENOTFOUND) {
        *n = 0;
        return 0;
    }
    return rc < 0 ? ops_fail_adbc(e, rc, "select") : 0;
}

static int icontains(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++)
        if (strncasecmp(hay, needle, n) == 0)
            return 1;
    return n == 0;
}

static void describe(char *buf, size_t cap, const adbc_ui_ref *r)
{
    const char *cls = strrchr(r->cls, '.');
    int k = snprintf(buf, cap, "[ref=%d] %s", r->ref, cls ? cls + 1 : r->cls);
    if (k > 0 && (size_t)k < cap && r->text[0])
        k += snprintf(buf + k, cap - (size_t)k, " \"%.60s\"", r->text);
    if (k > 0 && (size_t)k < cap && r->desc[0])
        k += snprintf(buf + k, cap - (size_t)k, " (%.60s)", r->desc);
    if (k > 0 && (size_t)k < cap && r->resource_id[0])
        k += snprintf(buf + k, cap - (size_t)k, " id=%.80s", r->resource_id);
    if (k > 0 && (size_t)k < cap)
        snprintf(buf + k, cap - (size_t)k, " at (%d,%d)", r->x, r->y);
}

static const char *const tier_names[] = {"", "resource-id", "text", "text inside a clickable "
                                         "parent", "content-desc", "editable field"};

/* Decide on a tier's matches: one is the answer, several are refused. */
static int decide(int *ref, const adbc_ui_snap *s, const int *refs, size_t n, int tier,
                  ops_err *e)
{
    if (n == 1) {
        *ref = refs[0];
        return 0;
    }
    const adbc_ui_reftab *t = adbc_ui_snap_refs(s);
    int k = snprintf(e->msg, sizeof e->msg, "the selector matches %zu elements by %s; refusing "
                     "to guess (name one by ref, or add id/desc to tell them apart):", n,
                     tier_names[tier]);
    for (size_t i = 0; i < n && k > 0 && (size_t)k < sizeof e->msg; i++) {
        const adbc_ui_ref *r = adbc_ui_reftab_get(t, refs[i]);
        char line[320];
        if (!r)
            continue;
        describe(line, sizeof line, r);
        k += snprintf(e->msg + k, sizeof e->msg - (size_t)k, "\n  %s", line);
    }
    e->code = OPS_EAMBIGUOUS;
    return -1;
}

int ops_select(int *ref, int *tier, const adbc_ui_snap *s, const ops_sel *sel, ops_err *e)
{
    const adbc_ui_reftab *t = adbc_ui_snap_refs(s);
    size_t nrefs = adbc_ui_reftab_count(t);
    int *refs = NULL;
    size_t n = 0;
    int tr = 0, rc = 0;
    *ref = 0;
    for (tr = 1; tr <= 5 && n == 0; tr++) {
        adbc_free(refs);
        refs = NULL;
        n = 0;
        adbc_ui_selector q;
        memset(&q, 0, sizeof q);
        q.size = sizeof q;
        if (tr == 1 && sel->id) {
            q.resource_id = sel->id;
            rc = find(&refs, &n, s, &q, e);
        } else if ((tr == 2 || tr == 5) && sel->text) {
            refs = calloc(nrefs ? nrefs : 1, sizeof *refs);
            if (!refs)
                return ops_fail(e, OPS_EFAIL, "out of memory");
            for (size_t i = 1; i <= nrefs; i++) {
                const adbc_ui_ref *r = adbc_ui_reftab_get(t, (int)i);
                if (!r)
                    continue;
                int hit = tr == 2 ? strcmp(r->text, sel->text) == 0
                                  : (r->states & ADBC_UI_EDITABLE) &&
                                        (icontains(r->text, sel->text) ||
                                         icontains(r->desc, sel->text));
                if (hit)
                    refs[n++] = r->ref;
            }
        } else if (tr == 3 && sel->text) {
            q.text = sel->text;
            rc = find(&refs, &n, s, &q, e);
        } else if (tr == 4 && (sel->desc || sel->text)) {
            q.desc = sel->desc ? sel->desc : sel->text;
            rc = find(&refs, &n, s, &q, e);
        }
        if (rc < 0) {
            adbc_free(refs);
            return -1;
        }
        if (n)
            break;
    }
    if (n == 0) {
        adbc_free(refs);
        return ops_fail(e, OPS_ENOMATCH, "nothing on screen %s matches the selector%s%s%s%s%s%s "
                        "(by resource-id, text, a label in a clickable parent, content-desc or "
                        "an editable field): take a snapshot and check what it shows",
                        adbc_ui_snap_id(s), sel->id ? " id=" : "", sel->id ? sel->id : "",
                        sel->text ? " text=" : "", sel->text ? sel->text : "",
                        sel->desc ? " desc=" : "", sel->desc ? sel->desc : "");
    }
    if (tier)
        *tier = tr;
    rc = decide(ref, s, refs, n, tr, e);
    adbc_free(refs);
    return rc;
}
