/* SPDX-License-Identifier: Apache-2.0 */
/* adbc-snap tap --text T | --id ID | --desc D: tap the one element a
 * selector names in a fresh snapshot, by the five tiers of tools/ops
 * (resource-id, own text, a label's clickable parent, content-desc, an
 * editable field). Several matches are refused with the candidates listed
 * and exit status 3, like a stale ref: nothing was sent. The snapshot the
 * element was picked from is saved as the device's refs. */
#include "snap_ui.h"

#include "ops_core.h"

#include <errno.h>
#include <string.h>
#include <time.h>

int snap_is_select(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0)
            return 0;
        if (strcmp(argv[i], "--text") == 0 || strcmp(argv[i], "--id") == 0 ||
            strcmp(argv[i], "--desc") == 0)
            return 1;
    }
    return 0;
}

int snap_tap_select(snap_ctx *ctx, const snap_cmd *cmd, int argc, char **argv)
{
    ops_sel sel = {0};
    int show = 0, json = 0;
    long settle = 0; /* uiautomator dump waits for an idle UI itself */
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        const char **field = strcmp(s, "--text") == 0 ? &sel.text
                             : strcmp(s, "--id") == 0 ? &sel.id
                             : strcmp(s, "--desc") == 0 ? &sel.desc
                                                        : NULL;
        if (field && i + 1 < argc && argv[i + 1][0]) {
            *field = argv[++i];
        } else if (strcmp(s, "--snapshot") == 0) {
            show = 1;
        } else if (strcmp(s, "--json") == 0) {
            show = json = 1;
        } else if (strcmp(s, "--settle") == 0 && i + 1 < argc &&
                   snap_int(argv[i + 1], 0, 60000, &settle) == 0) {
            i++;
        } else {
            return snap_usage(cmd, field ? "--text, --id and --desc take a non-empty value"
                                         : "a selector tap takes --text T, --id ID, --desc D, "
                                           "--snapshot, --json, --settle MS (no ref)");
        }
    }
    adbc_conn *c;
    if (snap_connect(ctx, &c) < 0)
        return SNAP_EXIT_FAIL;
    /* The pick and the tap are tools/ops' core, as adbc-mcp's and
     * adbc-serve's selector acts; the snapshot is saved as the device's refs
     * before anything is sent. */
    adbc_ui_snap *snap = NULL;
    ops_ctx oc;
    ops_ctx_init(&oc, c, &snap, ops_now_ms() + ctx->timeout_ms);
    int ref = 0, tier = 0;
    if (ops_snapshot(&oc) < 0)
        return snap_fail("snapshot", oc.err.rc);
    if (ops_select(&ref, &tier, snap, &sel, &oc.err) < 0) {
        fprintf(stderr, "adbc-snap: tap: %s\n", oc.err.msg);
        int st = oc.err.code == OPS_EAMBIGUOUS ? SNAP_EXIT_STALE : SNAP_EXIT_FAIL;
        snap_json_error("tap", 0, oc.err.msg, NULL, st);
        adbc_ui_snap_free(snap);
        return st;
    }
    int st = snap_refs_save(ctx, snap);
    ops_act act = {.action = OPS_TAP, .ref = ref, .no_verify = 1, /* picked from the dump just taken */
                   .elem = adbc_ui_reftab_get(adbc_ui_snap_refs(snap), ref)};
    int rc = st ? 0 : ops_act_run(&oc, &act);
    adbc_ui_snap_free(snap);
    if (st)
        return st;
    if (rc < 0)
        return snap_fail_act("tap", oc.err.rc);
    adbc_act_where w = oc.where;
    static const char *const how[] = {"", "resource-id", "text", "text in a clickable parent",
                                      "content-desc", "editable field"};
    if (!ctx->quiet)
        fprintf(stderr, "adbc-snap: tap ref %d (by %s) at %d,%d\n", ref, how[tier], w.x, w.y);
    if (!show)
        return 0;
    struct timespec ts = {settle / 1000, (settle % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {
    }
    snap = NULL;
    adbc_ui_opts uo;
    snap_ui_opts(ctx, &uo);
    rc = adbc_ui_snapshot(&snap, c, &uo);
    if (rc < 0)
        return snap_fail("snapshot after the act", rc);
    st = snap_print(stdout, snap, json, ctx->quiet);
    if (st == 0)
        st = snap_refs_save(ctx, snap);
    adbc_ui_snap_free(snap);
    return st;
}
