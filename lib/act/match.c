/* SPDX-License-Identifier: Apache-2.0 */
/* Stale-ref refusal: finding the element a ref named on the screen as it is
 * now, or refusing.
 *
 * A ref is a number in one snapshot. Between that snapshot and the act the
 * screen may scroll, change or go away; tapping the recorded point would
 * then hit whatever is there now. So a verified act takes a fresh dump and
 * accepts only an unambiguous match: the exact token (same content, same
 * place on a 16 px grid), else the one element with the identity token
 * (same content and size, anywhere). Two candidates are as bad as none:
 * picking one would be a guess, and a wrong tap can send a message or
 * delete something. */
#include "act/act_internal.h"

#include <string.h>

#include "core/internal.h"

static int same_bounds(const adbc_ui_ref *a, const adbc_ui_ref *b)
{
    return a->x1 == b->x1 && a->y1 == b->y1 && a->x2 == b->x2 && a->y2 == b->y2;
}

/* "Button "Send" (id send_btn)": enough for a person to know which. */
static const char *label(const adbc_ui_ref *r)
{
    return r->text[0] ? r->text : r->desc[0] ? r->desc : r->resource_id;
}

static const char *short_class(const char *cls)
{
    const char *dot = strrchr(cls, '.');
    return !cls[0] ? "View" : dot ? dot + 1 : cls;
}

int adbc_act_match(const adbc_ui_ref **found, adbc_act_how *how, const adbc_ui_reftab *fresh,
                   const adbc_ui_ref *old)
{
    if (!found || !fresh || !old)
        return core_fail(ADBC_EINVAL, "adbc_act_match: found, fresh and old must not be NULL");
    *found = NULL;
    const adbc_ui_ref *exact = NULL, *exact_same = NULL, *ident = NULL;
    size_t nexact = 0, nexact_same = 0, nident = 0;
    size_t n = adbc_ui_reftab_count(fresh);
    for (size_t i = 1; i <= n; i++) {
        const adbc_ui_ref *r = adbc_ui_reftab_get(fresh, (int)i);
        if (!r)
            continue;
        if (r->exact_token == old->exact_token) {
            exact = r;
            nexact++;
            if (same_bounds(r, old)) {
                exact_same = r;
                nexact_same++;
            }
        }
        if (r->identity_token == old->identity_token) {
            ident = r;
            nident++;
        }
    }
    const adbc_ui_ref *hit = NULL;
    adbc_act_how h = ADBC_ACT_SAME;
    if (nexact == 1)
        hit = exact;
    else if (nexact > 1 && nexact_same == 1)
        hit = exact_same;
    else if (nexact == 0 && nident == 1) {
        hit = ident;
        h = ADBC_ACT_MOVED;
    }
    if (!hit) {
        size_t many = nexact > 1 ? nexact : nident;
        if (many > 1)
            return core_fail(ADBC_ESTALE,
                             "stale ref %d (%s \"%.60s\"): %zu elements on the screen now look "
                             "like it, so adbc will not guess; nothing was sent. Take a new "
                             "snapshot and use its refs",
                             old->ref, short_class(old->cls), label(old), many);
        /* A web element covered or clipped away since has no ref, though
         * the page still has it (docs/webview.md): say so. */
        return core_fail(ADBC_ESTALE,
                         "stale ref %d (%s \"%.60s\"): it is not on the screen any more%s; "
                         "nothing was sent. Take a new snapshot and use its refs",
                         old->ref, short_class(old->cls), label(old),
                         act_is_web(old) ? ", or its page now covers it or clips it away" : "");
    }
    *found = hit;
    if (how)
        *how = h;
    return 0;
}
