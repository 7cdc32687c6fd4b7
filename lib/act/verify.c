/* SPDX-License-Identifier: Apache-2.0 */
/* Verified acts: make sure the ref's element is where the act goes, so an
 * act on a stale ref sends nothing.
 *
 * Two ways, the cheap one first. When the ref's table carries the device's
 * frame mark (the page-flip count and the boot id, read right after its
 * dump), one script reads them again and sends the input only if they are
 * unchanged: no
 * frame drawn means the screen is the one the ref was read from, and the
 * act costs its input plus one `service call`, in one round trip. Any other
 * answer (a frame drawn, no mark, a device that does not say) means a fresh
 * dump and the element found again in it (match.c has the rule), as
 * before. docs/act.md says what each costs. */
#include "act/act_internal.h"

#include <string.h>

#include "core/internal.h"
#include "ui/ui_observe.h"

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
    if (old->resource_id && strncmp(old->resource_id, "web:", 4) == 0) {
        uo.web = 1;
        /* Finding a web ref again needs its page: it gets the act's time. */
        if (o->timeout_ms > uo.web_budget_ms)
            uo.web_budget_ms = o->timeout_ms > 60000 ? 60000 : o->timeout_ms;
    }
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
        /* The screen the input would land on, checked before it is sent. */
        char why[512] = "";
        if (o->check && o->check(o->check_user, *snap, hit, why, sizeof why) != 0) {
            adbc_ui_snap_free(*snap);
            *snap = NULL;
            why[sizeof why - 1] = 0;
            return core_fail(ADBC_EPERM, "refused before the input, nothing was sent: the "
                             "screen the act would land on failed its check: %s",
                             *why ? why : "(the check gave no reason)");
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

/* The frame check and the input in one script: the input runs only when
 * the device's page-flip count still reads as at the dump; otherwise the
 * script prints the changed marker and sends nothing. */
#define CHANGED "@adbc-act-changed"

/* 1: sent (rc 0) or failed (rc < 0) on the unchanged screen; 0: the screen
 * changed or the check could not be made, nothing sent. */
static int unchanged_run(int *rc, adbc_conn *c, const char *frame, const char *cmd,
                         int64_t deadline)
{
    const char *pre = act_input_prefix(c, act_left(deadline));
    core_buf b = {0};
    /* frame is "COUNT:BOOT" (ui_frame_valid: hex digits and dashes only). */
    core_buf_printf(&b, "%s" UI_BOOT_READ "case \"$(" UI_FRAME_COMMAND ")|$b\" in "
                   "'Result: Parcel(%.8s '*'|%s') %s;; *) echo " CHANGED ";; esac", pre, frame,
                   frame + 9, cmd);
    char *line;
    *rc = act_buf_take(&b, &line);
    if (*rc < 0)
        return 1;
    act_out o;
    *rc = act_run(&o, c, line, 0, act_left(deadline));
    core_free(line);
    if (*rc < 0)
        return 1; /* the round trip failed: whether the input ran is unknown */
    if (o.status == 0 && strcmp(o.text, CHANGED "\n") == 0) {
        act_out_free(&o);
        return 0;
    }
    *rc = act_out_ok(&o, cmd);
    act_out_free(&o);
    return 1;
}

int act_input_checked(adbc_conn *c, const char *cmd, const char *what, const adbc_act_opts *o,
                      int64_t deadline)
{
    if (!o->check)
        return act_run_input(c, cmd, what, deadline);
    /* No frame drawn since the caller's dump: the screen is the one the
     * caller checked, and the input rides in the frame check's round trip. */
    const char *frame = o->refs ? adbc_ui_reftab_frame(o->refs) : "";
    int rc;
    if (ui_frame_valid(frame) && unchanged_run(&rc, c, frame, cmd, deadline))
        return rc;
    /* The screen drew since (or the caller's dump has no mark): the screen
     * the input would land on, read and checked first. */
    adbc_ui_opts uo;
    adbc_ui_opts_init(&uo);
    if (core_abi_take(&uo, sizeof uo, o->ui, "adbc_ui_opts") < 0)
        return ADBC_EINVAL;
    int left = act_left(deadline);
    if (uo.timeout_ms < 0 || uo.timeout_ms > left)
        uo.timeout_ms = left;
    adbc_ui_snap *snap = NULL;
    rc = adbc_ui_snapshot(&snap, c, &uo);
    if (rc < 0)
        return rc;
    char why[512] = "";
    int refused = o->check(o->check_user, snap, NULL, why, sizeof why) != 0;
    adbc_ui_snap_free(snap);
    if (refused) {
        why[sizeof why - 1] = 0;
        return core_fail(ADBC_EPERM, "refused before the input, nothing was sent: the screen "
                         "the act would land on failed its check: %s",
                         *why ? why : "(the check gave no reason)");
    }
    return act_run_input(c, cmd, what, deadline);
}

int act_on_ref(adbc_act_where *where, adbc_conn *c, const adbc_ui_ref *ref,
               const adbc_act_opts *o, int64_t deadline, act_cmd_fn build, void *user)
{
    if (!c || !ref)
        return core_fail(ADBC_EINVAL, "an act on a ref needs a connection and a ref record");
    /* The fast way needs the ref's own table (the record must be the one
     * the table holds, not a look-alike) and a frame mark in it. */
    const char *frame = o->verify && o->refs ? adbc_ui_reftab_frame(o->refs) : "";
    if (ui_frame_valid(frame) && adbc_ui_reftab_get(o->refs, ref->ref) == ref) {
        char *cmd;
        int rc = build(&cmd, ref, user);
        if (rc < 0)
            return rc;
        int done = unchanged_run(&rc, c, frame, cmd, deadline);
        core_free(cmd);
        if (done) {
            if (rc == 0 && where) {
                where->x = ref->x;
                where->y = ref->y;
                where->ref = ref->ref;
                where->how = ADBC_ACT_UNCHANGED;
            }
            return rc;
        }
        /* The screen drew since the dump: find the element again. */
    }
    const adbc_ui_ref *now;
    adbc_ui_snap *snap;
    int rc = act_resolve(where, &now, &snap, c, ref, o, deadline);
    if (rc < 0)
        return rc;
    char *cmd;
    rc = build(&cmd, now, user);
    adbc_ui_snap_free(snap);
    if (rc < 0)
        return rc;
    rc = act_run_input(c, cmd, cmd, deadline);
    core_free(cmd);
    return rc;
}
