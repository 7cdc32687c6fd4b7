/* SPDX-License-Identifier: Apache-2.0 */
/* Finding an element of an earlier snapshot again in a new one.
 *
 * Three tries, from strict to loose, each accepted only when it is not
 * ambiguous: the exact token (same content, same place give or take a few
 * pixels); the identity token when one element alone has it (the content
 * scrolled); and, for elements whose own text changes when they change
 * state (a switch reading ON then OFF), class and resource-id at the same
 * tap point within 16 px. Anything else is stale: acting on a guess would
 * tap the wrong thing. */
#include "ui/ui_internal.h"

#include <stdlib.h>
#include <string.h>

#include "core/internal.h"

int adbc_ui_snap_locate(int *ref, const adbc_ui_snap *s, const adbc_ui_ref *old)
{
    if (!ref || !s || !old)
        return core_fail(ADBC_EINVAL, "adbc_ui_snap_locate: arguments must not be NULL");
    const adbc_ui_reftab *t = &s->refs;
    const adbc_ui_ref *exact = NULL, *ident = NULL, *place = NULL;
    size_t nident = 0, nplace = 0;
    for (size_t i = 0; i < t->count; i++) {
        const adbc_ui_ref *r = &t->refs[i];
        if (r->exact_token == old->exact_token) {
            /* Several at one place: prefer identical bounds, else the first. */
            if (!exact || (r->x1 == old->x1 && r->y1 == old->y1 && r->x2 == old->x2 &&
                           r->y2 == old->y2 &&
                           !(exact->x1 == old->x1 && exact->y1 == old->y1 &&
                             exact->x2 == old->x2 && exact->y2 == old->y2)))
                exact = r;
        }
        if (r->identity_token == old->identity_token) {
            ident = r;
            nident++;
        }
        if (strcmp(r->cls, old->cls) == 0 && strcmp(r->resource_id, old->resource_id) == 0 &&
            llabs((long long)r->x - old->x) <= 16 && llabs((long long)r->y - old->y) <= 16) {
            place = r;
            nplace++;
        }
    }
    const adbc_ui_ref *hit = exact ? exact : nident == 1 ? ident : nplace == 1 ? place : NULL;
    if (!hit) {
        const char *what = old->text[0] ? old->text : old->desc[0] ? old->desc : old->resource_id;
        return core_fail(ADBC_ESTALE,
                         "ref %d (%s \"%.60s\") is not on the screen any more%s: take a new "
                         "snapshot and use its refs", old->ref, old->cls[0] ? old->cls : "View",
                         what, nident > 1 || nplace > 1 ? " (several elements look like it)" : "");
    }
    *ref = hit->ref;
    return 0;
}
