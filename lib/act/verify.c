/* SPDX-License-Identifier: Apache-2.0 */
/* Verified acts: take a fresh dump and find the ref's element in it
 * (act_match.c has the rule), so an act on a stale ref sends nothing. */
#include "act/act_internal.h"

#include <string.h>

#include "core/internal.h"

int adbc_act_locate(adbc_ui_snap **snap, const adbc_ui_ref **found, adbc_act_how *how,
                    adbc_conn *c, const adbc_ui_ref *old, const adbc_act_opts *opts)
{
    if (!snap || !found || !c || !old)
        return core_fail(ADBC_EINVAL, "adbc_act_locate: snap, found, c and old must not be NULL");
    *snap = NULL;
    *found = NULL;
    adbc_act_opts store;
    const adbc_act_opts *o = act_opts(opts, &store);
    if (!o)
        return ADBC_EINVAL;
    adbc_ui_opts uo;
    adbc_ui_opts_init(&uo);
    if (core_abi_take(&uo, sizeof uo, o->ui, "adbc_ui_opts") < 0)
        return ADBC_EINVAL;
    /* A web ref is found again among the page's nodes: the fresh
     * snapshot reads the web part too. */
    if (old->resource_id && strncmp(old->resource_id, "web:", 4) == 0)
        uo.web = 1;
    /* The act's budget bounds the dump too. */
    if (o->timeout_ms >= 0 && (uo.timeout_ms < 0 || uo.timeout_ms > o->timeout_ms))
        uo.timeout_ms = o->timeout_ms;
    int rc = adbc_ui_snapshot(snap, c, &uo);
    if (rc < 0)
        return rc;
    return adbc_act_match(found, how, adbc_ui_snap_refs(*snap), old);
}

int act_resolve(adbc_act_where *where, const adbc_ui_ref **now, adbc_ui_snap **snap,
                adbc_conn *c, const adbc_ui_ref *ref, const adbc_act_opts *o, int64_t deadline)
{
    *now = NULL;
    *snap = NULL;
    if (!c || !ref)
        return core_fail(ADBC_EINVAL, "an act on a ref needs a connection and a ref record");
    adbc_act_how how = ADBC_ACT_UNVERIFIED;
    const adbc_ui_ref *hit = ref;
    if (o->verify) {
        adbc_act_opts lo = *o;
        lo.timeout_ms = act_left(deadline);
        int rc = adbc_act_locate(snap, &hit, &how, c, ref, &lo);
        if (rc < 0) {
            adbc_ui_snap_free(*snap);
            *snap = NULL;
            return rc;
        }
    }
    *now = hit;
    if (where) {
        where->x = hit->x;
        where->y = hit->y;
        where->ref = hit->ref;
        where->how = how;
    }
    return 0;
}
