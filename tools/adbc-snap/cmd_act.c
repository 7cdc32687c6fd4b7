/* SPDX-License-Identifier: Apache-2.0 */
/* adbc-snap act commands: input by ref or point, the grid, typing and keys
 * (screenshots: cmd_screen.c; apps and device queries: cmd_apps.c).
 *
 * Acts on a ref use the table the last `snapshot` saved for the device and
 * are verified by default: a fresh dump must show the element (in place, or
 * moved but unmistakable) or the act is refused with exit status 3 and
 * nothing is sent. --snapshot prints the screen after the act (after
 * --settle MS, default 0: uiautomator dump waits for an idle UI itself)
 * and saves its refs, which is what an agent wants to read next. What was done is said on stderr (-q: silent);
 * stdout carries only data.
 *
 * The acts themselves are tools/ops' core (ops_act_run), the same ones
 * adbc-mcp and adbc-serve run; this file reads the command line into an
 * ops_act and says what was done in adbc-snap's words. */
#include "snap_ui.h"

#include "ops_core.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum {
    O_UI = 1 << 0,    /* --snapshot, --json, --settle, --no-verify */
    O_CLEAR = 1 << 1, /* --clear */
};

typedef struct act_args {
    char **pos;
    int npos;
    int verify, show, json, settle_ms, clear;
} act_args;

static const snap_cmd *cmd_named(const char *name);

/* Split argv into positional arguments and the common options; "--" ends
 * the options (to type text that starts with "--"). */
static int parse(act_args *a, const snap_cmd *cmd, int argc, char **argv, unsigned allow,
                 int min, int max)
{
    memset(a, 0, sizeof *a);
    a->verify = 1;
    a->settle_ms = 0; /* uiautomator dump waits for an idle UI itself */
    a->pos = calloc((size_t)argc + 1, sizeof *a->pos);
    if (!a->pos)
        return SNAP_EXIT_FAIL;
    int opts_done = 0;
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        if (opts_done || s[0] != '-' || strcmp(s, "-") == 0) {
            a->pos[a->npos++] = argv[i];
            continue;
        }
        long v;
        if (strcmp(s, "--") == 0)
            opts_done = 1;
        else if ((allow & O_UI) && strcmp(s, "--no-verify") == 0)
            a->verify = 0;
        else if ((allow & O_UI) && strcmp(s, "--snapshot") == 0)
            a->show = 1;
        else if ((allow & O_UI) && strcmp(s, "--json") == 0)
            a->show = a->json = 1;
        else if ((allow & O_UI) && strcmp(s, "--settle") == 0 && i + 1 < argc &&
                 snap_int(argv[i + 1], 0, 60000, &v) == 0) {
            a->settle_ms = (int)v;
            i++;
        } else if ((allow & O_CLEAR) && strcmp(s, "--clear") == 0)
            a->clear = 1;
        else {
            free(a->pos);
            a->pos = NULL;
            fprintf(stderr, "adbc-snap %s: unknown option %s\n", cmd->name, s);
            return snap_usage(cmd, "see adbc-snap --help");
        }
    }
    if (a->npos < min || a->npos > max) {
        free(a->pos);
        a->pos = NULL;
        return snap_usage(cmd, a->npos < min ? "missing arguments" : "too many arguments");
    }
    return 0;
}

static void pause_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {
    }
}

/* The common end of an act: say what was done, then the new screen if
 * asked for (with the page's content when the act was on a web element). */
static int finish(snap_ctx *ctx, const act_args *a, adbc_conn *c, const ops_ctx *oc,
                  const char *done)
{
    if (!ctx->quiet && done)
        fprintf(stderr, "adbc-snap: %s\n", done);
    int status = 0;
    if (a->show) {
        pause_ms(a->settle_ms);
        adbc_ui_opts o;
        snap_ui_opts(ctx, &o);
        if (oc->web) /* an act on a web element: the page is read too */
            o.web = 1;
        adbc_ui_snap *s;
        int rc = adbc_ui_snapshot(&s, c, &o);
        if (rc < 0)
            return snap_fail("snapshot after the act", rc);
        status = snap_print(stdout, s, a->json, ctx->quiet);
        if (status == 0)
            status = snap_refs_save(ctx, s);
        adbc_ui_snap_free(s);
    }
    free(a->pos);
    return status;
}

static int fail(const act_args *a, const char *what, int rc)
{
    free(a->pos);
    return snap_fail_act(what, rc);
}

static const char *how_text(const adbc_act_where *w)
{
    return w->how == ADBC_ACT_MOVED ? " (it moved since the snapshot)" : "";
}

/* Connect and run act through the core within --timeout. 0, or the exit
 * status after saying why (a.pos freed): 3 for a stale ref. */
static int run(snap_ctx *ctx, act_args *a, const ops_act *act, const char *what,
               adbc_conn **c, ops_ctx *oc)
{
    if (snap_connect(ctx, c) < 0) {
        free(a->pos);
        return SNAP_EXIT_FAIL;
    }
    static adbc_ui_snap *none; /* acts here name their element; no snapshot is kept */
    ops_ctx_init(oc, *c, &none, ops_now_ms() + ctx->timeout_ms);
    if (ops_act_run(oc, act) == 0)
        return 0;
    if (oc->err.rc)
        return fail(a, what, oc->err.rc);
    free(a->pos);
    fprintf(stderr, "adbc-snap: %s: %s\n", what, oc->err.msg);
    snap_json_error(what, 0, oc->err.msg, NULL, SNAP_EXIT_FAIL);
    return SNAP_EXIT_FAIL;
}

/* ---- acts on refs -------------------------------------------------------------- */

typedef enum { R_TAP, R_LONG, R_SCROLL, R_TYPE } ref_act;

static int on_ref(snap_ctx *ctx, int argc, char **argv, ref_act kind)
{
    const snap_cmd *cmd = cmd_named(argv[0]);
    act_args a;
    int min = kind == R_TAP || kind == R_LONG ? 1 : 2;
    int max = kind == R_TYPE ? argc : min;
    int st = parse(&a, cmd, argc, argv, O_UI | (kind == R_TYPE ? O_CLEAR : 0), min, max);
    if (st)
        return st;
    adbc_dir dir = ADBC_DIR_DOWN;
    if (kind == R_SCROLL && adbc_dir_parse(&dir, a.pos[1]) < 0) {
        free(a.pos);
        return snap_usage(cmd, adbc_last_error());
    }
    adbc_ui_reftab *tab;
    const adbc_ui_ref *ref;
    if ((st = snap_ref_lookup(ctx, a.pos[0], &tab, &ref)) != 0) {
        free(a.pos);
        return st;
    }
    static const ops_action action[] = {[R_TAP] = OPS_TAP, [R_LONG] = OPS_LONG_PRESS,
                                        [R_SCROLL] = OPS_SCROLL, [R_TYPE] = OPS_TYPE};
    ops_act act = {.action = action[kind], .ref = ref->ref, .elem = ref, .no_verify = !a.verify,
                   .elem_refs = tab, .ms = 1000, .dir = dir, .dir_name = kind == R_SCROLL ? a.pos[1] : NULL,
                   .clear = a.clear};
    char *text = NULL;
    if (kind == R_TYPE && !(act.text = text = snap_join(a.npos, a.pos, 1))) {
        /* several words: one text, as a shell joins */
        adbc_ui_reftab_free(tab);
        return fail(&a, cmd->name, ADBC_ENOMEM);
    }
    char what[48], done[160];
    snprintf(what, sizeof what, "%s ref %d", cmd->name, ref->ref);
    adbc_conn *c;
    ops_ctx oc;
    st = run(ctx, &a, &act, what, &c, &oc);
    free(text);
    adbc_ui_reftab_free(tab);
    if (st)
        return st;
    snprintf(done, sizeof done, "%s at %d,%d%s", what, oc.where.x, oc.where.y,
             how_text(&oc.where));
    return finish(ctx, &a, c, &oc, done);
}

static int cmd_tap(snap_ctx *ctx, int argc, char **argv)
{
    if (snap_is_select(argc, argv))
        return snap_tap_select(ctx, cmd_named(argv[0]), argc, argv);
    return on_ref(ctx, argc, argv, R_TAP);
}

static int cmd_long_press(snap_ctx *ctx, int argc, char **argv)
{
    return on_ref(ctx, argc, argv, R_LONG);
}

static int cmd_scroll(snap_ctx *ctx, int argc, char **argv)
{
    return on_ref(ctx, argc, argv, R_SCROLL);
}

static int cmd_type(snap_ctx *ctx, int argc, char **argv)
{
    return on_ref(ctx, argc, argv, R_TYPE);
}

/* ---- acts on points and keys ----------------------------------------------------- */

/* Parse n coordinates/durations from a.pos[from..]. */
static int ints(const act_args *a, int from, int n, long *v, long max)
{
    for (int i = 0; i < n; i++)
        if (snap_int(a->pos[from + i], 0, max, &v[i]) < 0)
            return -1;
    return 0;
}

static int cmd_tap_xy(snap_ctx *ctx, int argc, char **argv)
{
    const snap_cmd *cmd = cmd_named(argv[0]);
    act_args a;
    int st = parse(&a, cmd, argc, argv, O_UI, 2, 2);
    if (st)
        return st;
    long v[2];
    if (ints(&a, 0, 2, v, 65535) < 0) {
        free(a.pos);
        return snap_usage(cmd, "X and Y are pixels from 0 to 65535");
    }
    ops_act act = {.action = OPS_TAP, .has_xy = 1, .x = (int)v[0], .y = (int)v[1]};
    adbc_conn *c;
    ops_ctx oc;
    if ((st = run(ctx, &a, &act, "tap-xy", &c, &oc)) != 0)
        return st;
    char done[64];
    snprintf(done, sizeof done, "tap at %ld,%ld", v[0], v[1]);
    return finish(ctx, &a, c, &oc, done);
}

static int cmd_swipe(snap_ctx *ctx, int argc, char **argv)
{
    const snap_cmd *cmd = cmd_named(argv[0]);
    act_args a;
    int st = parse(&a, cmd, argc, argv, O_UI, 4, 5);
    if (st)
        return st;
    long v[5] = {0, 0, 0, 0, 300};
    if (ints(&a, 0, 4, v, 65535) < 0 || (a.npos == 5 && ints(&a, 4, 1, v + 4, 60000) < 0) ||
        v[4] < 1) {
        free(a.pos);
        return snap_usage(cmd, "coordinates are pixels from 0 to 65535, MS from 1 to 60000");
    }
    ops_act act = {.action = OPS_SWIPE, .x1 = (int)v[0], .y1 = (int)v[1], .x2 = (int)v[2],
                   .y2 = (int)v[3], .ms = (int)v[4]};
    adbc_conn *c;
    ops_ctx oc;
    if ((st = run(ctx, &a, &act, "swipe", &c, &oc)) != 0)
        return st;
    char done[96];
    snprintf(done, sizeof done, "swipe %ld,%ld -> %ld,%ld in %ld ms", v[0], v[1], v[2], v[3],
             v[4]);
    return finish(ctx, &a, c, &oc, done);
}

static int press(snap_ctx *ctx, int argc, char **argv, const char *fixed)
{
    const snap_cmd *cmd = cmd_named(argv[0]);
    act_args a;
    int st = parse(&a, cmd, argc, argv, O_UI, fixed ? 0 : 1, fixed ? 0 : 1);
    if (st)
        return st;
    int code;
    if (adbc_keycode_parse(&code, fixed ? fixed : a.pos[0]) < 0) {
        free(a.pos);
        return snap_usage(cmd, adbc_last_error());
    }
    ops_act act = {.action = OPS_PRESS, .key = code, .key_name = fixed ? fixed : a.pos[0]};
    adbc_conn *c;
    ops_ctx oc;
    if ((st = run(ctx, &a, &act, cmd->name, &c, &oc)) != 0)
        return st;
    char done[64];
    const char *name = adbc_keycode_name(code);
    snprintf(done, sizeof done, "pressed %s%s(%d)", name ? name : "", name ? " " : "", code);
    return finish(ctx, &a, c, &oc, done);
}

static int cmd_press(snap_ctx *ctx, int argc, char **argv)
{
    return press(ctx, argc, argv, NULL);
}

static int cmd_back(snap_ctx *ctx, int argc, char **argv)
{
    return press(ctx, argc, argv, "back");
}

static int cmd_home(snap_ctx *ctx, int argc, char **argv)
{
    return press(ctx, argc, argv, "home");
}

/* ---- grid ------------------------------------------------------------------------- */

static int cmd_grid(snap_ctx *ctx, int argc, char **argv)
{
    const snap_cmd *cmd = cmd_named(argv[0]);
    int json = argc == 2 && strcmp(argv[1], "--json") == 0;
    act_args a;
    int st = parse(&a, cmd, argc - json, argv, 0, 0, 0);
    if (st)
        return st;
    free(a.pos);
    adbc_conn *c;
    if (snap_connect(ctx, &c) < 0)
        return SNAP_EXIT_FAIL;
    adbc_act_opts o;
    adbc_act_opts_init(&o);
    o.timeout_ms = ctx->timeout_ms;
    adbc_grid g;
    char *legend = NULL;
    int rc = adbc_act_grid(&g, c, &o);
    if (rc == 0 && !json)
        rc = adbc_grid_legend(&legend, &g);
    if (rc < 0)
        return snap_fail("grid", rc);
    if (json) {
        /* The centre of every column (in row 1) and every row (in column A). */
        printf("{\"width\":%d,\"height\":%d,\"cols\":%d,\"rows\":%d,\"column_centres\":{",
               g.width, g.height, g.cols, g.rows);
        for (int i = 0; i < g.cols; i++) {
            char name[16];
            int x, y;
            snprintf(name, sizeof name, "%c1", 'A' + i);
            if (adbc_grid_cell(&x, &y, &g, name) < 0)
                return snap_fail("grid", ADBC_EINVAL);
            printf("%s\"%c\":%d", i ? "," : "", 'A' + i, x);
        }
        printf("},\"row_centres\":{");
        for (int r = 1; r <= g.rows; r++) {
            char name[16];
            int x, y;
            snprintf(name, sizeof name, "A%d", r);
            if (adbc_grid_cell(&x, &y, &g, name) < 0)
                return snap_fail("grid", ADBC_EINVAL);
            printf("%s\"%d\":%d", r > 1 ? "," : "", r, y);
        }
        printf("}}\n");
        return 0;
    }
    fputs(legend, stdout);
    adbc_free(legend);
    return 0;
}

static int cmd_tap_grid(snap_ctx *ctx, int argc, char **argv)
{
    const snap_cmd *cmd = cmd_named(argv[0]);
    act_args a;
    int st = parse(&a, cmd, argc, argv, O_UI, 1, 1);
    if (st)
        return st;
    ops_act act = {.action = OPS_TAP, .cell = a.pos[0]};
    adbc_conn *c;
    ops_ctx oc;
    if ((st = run(ctx, &a, &act, "tap-grid", &c, &oc)) != 0)
        return st;
    char done[64];
    snprintf(done, sizeof done, "tap cell %.8s at %d,%d", a.pos[0], oc.where.x, oc.where.y);
    return finish(ctx, &a, c, &oc, done);
}

const snap_cmd snap_cmds_act[] = {
    {"tap", cmd_tap, "tap REF | --text T | --id ID | --desc D",
     "tap an element of the last snapshot, or the one a selector names; acts take --snapshot [--json] [--settle MS], "
     "--no-verify"},
    {"tap-xy", cmd_tap_xy, "tap-xy X Y", "tap a point"},
    {"tap-grid", cmd_tap_grid, "tap-grid CELL", "tap the centre of a grid cell (C5)"},
    {"grid", cmd_grid, "grid [--json]", "the screen's grid: ten columns A-J, near-square rows"},
    {"type", cmd_type, "type REF TEXT [--clear]", "focus the element and type (--clear first)"},
    {"press", cmd_press, "press KEY", "a key by name (back, enter, ...) or code"},
    {"swipe", cmd_swipe, "swipe X1 Y1 X2 Y2 [MS]", "a swipe (default 300 ms)"},
    {"scroll", cmd_scroll, "scroll REF DIR", "scroll inside an element: up, down, left, right"},
    {"long-press", cmd_long_press, "long-press REF", "hold on an element for a second"},
    {"back", cmd_back, "back", "the back key"},
    {"home", cmd_home, "home", "the home key"},
    {NULL, NULL, NULL, NULL},
};

static const snap_cmd *cmd_named(const char *name)
{
    for (const snap_cmd *c = snap_cmds_act; c->name; c++)
        if (strcmp(c->name, name) == 0)
            return c;
    return &snap_cmds_act[0];
}
