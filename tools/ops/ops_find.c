/* SPDX-License-Identifier: Apache-2.0 */
/* Finding elements: a fresh snapshot (kept as the latest, so the refs found
 * are the refs acts take) and the refs of the elements matching every given
 * field, listed one a line with their bounds and tap points. */
#include "ops_core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ops_find(ops_ctx *c, const adbc_ui_selector *sel, char **text)
{
    *text = NULL;
    if (ops_snapshot(c) != 0)
        return -1;
    const adbc_ui_snap *snap = *c->last;
    int *refs = NULL;
    size_t n = 0;
    int rc = adbc_ui_find(&refs, &n, snap, sel);
    if (rc < 0)
        return ops_fail_adbc(&c->err, rc, "find");
    size_t cap = 0;
    FILE *f = open_memstream(text, &cap);
    if (!f) {
        adbc_free(refs);
        return ops_fail(&c->err, OPS_EFAIL, "out of memory");
    }
    fprintf(f, "%zu match%s in screen %s:", n, n == 1 ? "" : "es", adbc_ui_snap_id(snap));
    const adbc_ui_reftab *t = adbc_ui_snap_refs(snap);
    for (size_t i = 0; i < n; i++) {
        const adbc_ui_ref *r = adbc_ui_reftab_get(t, refs[i]);
        if (!r)
            continue;
        const char *cls = strrchr(r->cls, '.');
        fprintf(f, "\n[ref=%d] %s", r->ref, cls ? cls + 1 : r->cls);
        if (r->text[0])
            fprintf(f, " \"%s\"", r->text);
        if (r->desc[0])
            fprintf(f, " (%s)", r->desc);
        if (r->resource_id[0])
            fprintf(f, " id=%s", r->resource_id);
        fprintf(f, " at (%d,%d) bounds [%d,%d][%d,%d]", r->x, r->y, r->x1, r->y1, r->x2, r->y2);
    }
    adbc_free(refs);
    if (fclose(f) != 0 || !*text) {
        free(*text);
        *text = NULL;
        return ops_fail(&c->err, OPS_EFAIL, "out of memory");
    }
    snprintf(c->done, sizeof c->done, "found %zu", n);
    return 0;
}
