/* SPDX-License-Identifier: Apache-2.0 */
/* apps, open-url, screen-info, rotate, record, crashlog, shade: the
 * operation layer's device operations (tools/ops/ops_device.h, the same
 * ones adbc-mcp and adbc-serve serve as tools) on the command line. */
#include "snap.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ops_device.h"

const snap_cmd snap_cmds_device[];

/* The options after the command name: --json, the integer options named
 * in opts (each "--name" and its value in lo..hi, stored in vals), else
 * positional ones (at least min, at most max, moved to argv[1..]). */
typedef struct dev_opt {
    const char *name;
    int lo, hi;
    int *val;
} dev_opt;

static int args(const snap_cmd *cmd, int argc, char **argv, int min, int max,
                const dev_opt *opts, int *npos, int *json)
{
    int n = 0;
    *json = 0;
    for (int i = 1; i < argc; i++) {
        const dev_opt *o = NULL;
        for (int k = 0; opts && opts[k].name; k++)
            if (strcmp(argv[i], opts[k].name) == 0)
                o = &opts[k];
        if (strcmp(argv[i], "--json") == 0) {
            *json = 1;
        } else if (o) {
            char *end;
            long v = i + 1 < argc ? strtol(argv[i + 1], &end, 10) : 0;
            if (i + 1 >= argc || !*argv[i + 1] || *end || v < o->lo || v > o->hi) {
                fprintf(stderr, "adbc-snap %s: %s takes a number %d..%d\n", cmd->name, o->name,
                        o->lo, o->hi);
                return snap_usage(cmd, "see adbc-snap help COMMAND");
            }
            *o->val = (int)v;
            i++;
        } else if (argv[i][0] == '-' && argv[i][1] && !(argv[i][1] >= '0' && argv[i][1] <= '9')) {
            fprintf(stderr, "adbc-snap %s: unknown option %s\n", cmd->name, argv[i]);
            return snap_usage(cmd, "see adbc-snap help COMMAND");
        } else {
            argv[1 + n++] = argv[i];
        }
    }
    if (n < min || n > max)
        return snap_usage(cmd, n < min ? "missing arguments" : "too many arguments");
    *npos = n;
    return 0;
}

static const snap_cmd *named(const char *name)
{
    for (const snap_cmd *c = snap_cmds_device; c->name; c++)
        if (strcmp(c->name, name) == 0)
            return c;
    return &snap_cmds_device[0];
}

/* An operation context on the selected device, within --timeout. */
static int begin(snap_ctx *ctx, ops_ctx *oc)
{
    adbc_conn *c;
    if (snap_connect(ctx, &c) < 0)
        return SNAP_EXIT_FAIL;
    ops_ctx_init(oc, c, NULL, ops_now_ms() + ctx->timeout_ms);
    return 0;
}

static int failed(const char *what, const ops_ctx *oc)
{
    int st = oc->err.code == OPS_EARG ? SNAP_EXIT_USAGE : SNAP_EXIT_FAIL;
    return snap_error(st, what, "%s", oc->err.msg);
}

/* {"ok":true,"done":DONE} for --json, else DONE on stderr unless -q. */
static int done(snap_ctx *ctx, int json, const ops_ctx *oc)
{
    if (json) {
        printf("{\"ok\":true,\"done\":");
        snap_json_str(stdout, oc->done);
        printf("}\n");
        snap_json_mark();
    } else if (!ctx->quiet) {
        fprintf(stderr, "adbc-snap: %s\n", oc->done);
    }
    return 0;
}

static int cmd_apps(snap_ctx *ctx, int argc, char **argv)
{
    int n, json, count = 0;
    ops_ctx oc;
    char *text = NULL;
    int st = args(named(argv[0]), argc, argv, 0, 0, NULL, &n, &json);
    if (st || (st = begin(ctx, &oc)))
        return st;
    if (ops_apps(&oc, &text, &count) != 0)
        return failed("apps", &oc);
    if (json) {
        printf("{\"apps\":[");
        int k = 0;
        for (char *l = strtok(text, "\n"); l; l = strtok(NULL, "\n")) {
            printf(k++ ? "," : "");
            snap_json_str(stdout, l);
        }
        printf("]}\n");
        snap_json_mark();
    } else {
        fputs(text, stdout);
    }
    free(text);
    return 0;
}

static int cmd_open_url(snap_ctx *ctx, int argc, char **argv)
{
    int n, json;
    ops_ctx oc;
    ops_err e;
    int st = args(named(argv[0]), argc, argv, 1, 1, NULL, &n, &json);
    if (st)
        return st;
    if (ops_url_check(&e, argv[1]) != 0) /* nothing is sent for a refused URL */
        return snap_error(SNAP_EXIT_USAGE, "open-url", "%s", e.msg);
    if ((st = begin(ctx, &oc)))
        return st;
    if (ops_open_url(&oc, argv[1]) != 0)
        return failed("open-url", &oc);
    return done(ctx, json, &oc);
}

static int cmd_screen_info(snap_ctx *ctx, int argc, char **argv)
{
    int n, json;
    ops_ctx oc;
    ops_screen s;
    ops_orient o;
    int st = args(named(argv[0]), argc, argv, 0, 0, NULL, &n, &json);
    if (st || (st = begin(ctx, &oc)))
        return st;
    if (ops_screen_info(&oc, &s) != 0 || ops_orientation_get(&oc, &o) != 0)
        return failed("screen-info", &oc);
    if (json) {
        printf("{\"width\":%d,\"height\":%d,\"physical_width\":%d,\"physical_height\":%d,"
               "\"density\":%d,\"physical_density\":%d,\"auto_rotate\":%s,\"rotation\":%d,"
               "\"locked_by_adbc\":%s}\n",
               s.width, s.height, s.phys_width, s.phys_height, s.density, s.phys_density,
               o.auto_rotate < 0 ? "null" : o.auto_rotate ? "true" : "false", o.rotation,
               o.locked_by_adbc ? "true" : "false");
        snap_json_mark();
    } else {
        printf("size: %dx%d (physical %dx%d)\ndensity: %d (physical %d)\nauto-rotate: %s\n"
               "rotation: %d%s\n",
               s.width, s.height, s.phys_width, s.phys_height, s.density, s.phys_density,
               o.auto_rotate < 0 ? "unset" : o.auto_rotate ? "on" : "off", o.rotation,
               o.locked_by_adbc ? " (locked by adbc: rotate restore)" : "");
    }
    return 0;
}

static int cmd_rotate(snap_ctx *ctx, int argc, char **argv)
{
    int n, json;
    ops_ctx oc;
    const snap_cmd *cmd = named(argv[0]);
    int st = args(cmd, argc, argv, 1, 1, NULL, &n, &json);
    if (st)
        return st;
    int deg = strcmp(argv[1], "restore") == 0 ? -1
              : strcmp(argv[1], "0") == 0     ? 0
              : strcmp(argv[1], "90") == 0    ? 90
              : strcmp(argv[1], "180") == 0   ? 180
              : strcmp(argv[1], "270") == 0   ? 270
                                              : -2;
    if (deg == -2)
        return snap_usage(cmd, "give 0, 90, 180, 270 or restore");
    if ((st = begin(ctx, &oc)))
        return st;
    if (ops_orientation_set(&oc, deg) != 0)
        return failed("rotate", &oc);
    return done(ctx, json, &oc);
}

/* record SECONDS FILE: ops_record_start, a wait (Ctrl-C ends it early),
 * ops_record_stop pulling the video to FILE. */
static int cmd_record(snap_ctx *ctx, int argc, char **argv)
{
    int n, json;
    ops_ctx oc;
    const snap_cmd *cmd = named(argv[0]);
    int st = args(cmd, argc, argv, 2, 2, NULL, &n, &json);
    if (st)
        return st;
    char *end;
    long secs = strtol(argv[1], &end, 10);
    if (!*argv[1] || *end || secs < 1 || secs > 180)
        return snap_usage(cmd, "SECONDS is 1..180 (screenrecord's bound)");
    adbc_conn *c;
    if (snap_connect(ctx, &c) < 0)
        return SNAP_EXIT_FAIL;
    ops_dev d; /* the recording's holder, as the pool's device is in the servers */
    memset(&d, 0, sizeof d);
    d.conn = c;
    atomic_int stop = 0;
    snap_signals_flag(&stop);
    ops_ctx_init(&oc, c, NULL, ops_now_ms() + ctx->timeout_ms);
    if (ops_record_start(&oc, &d, (int)secs) != 0) {
        snap_signals_flag(NULL);
        return failed("record", &oc);
    }
    if (!ctx->quiet && !json)
        fprintf(stderr, "adbc-snap: recording for %ld s (Ctrl-C stops it sooner)\n", secs);
    int64_t until = ops_now_ms() + secs * 1000 + 500; /* the time limit ends it on the device */
    while (ops_now_ms() < until && !atomic_load(&stop)) {
        struct timespec ts = {0, 50 * 1000000L};
        nanosleep(&ts, NULL);
    }
    snap_signals_flag(NULL);
    char remote[256];
    uint64_t bytes = 0;
    ops_ctx_init(&oc, c, NULL, ops_now_ms() + ctx->timeout_ms);
    if (ops_record_stop(&oc, &d, argv[2], remote, sizeof remote, &bytes) != 0)
        return failed("record", &oc);
    if (json) {
        printf("{\"ok\":true,\"path\":");
        snap_json_str(stdout, argv[2]);
        printf(",\"bytes\":%llu}\n", (unsigned long long)bytes);
        snap_json_mark();
    } else if (!ctx->quiet) {
        fprintf(stderr, "adbc-snap: %s\n", oc.done);
    }
    return 0;
}

static int cmd_crashlog(snap_ctx *ctx, int argc, char **argv)
{
    int n, json, lines = 200, entries = 20;
    ops_ctx oc;
    char *text = NULL;
    const dev_opt opts[] = {{"--lines", 1, 5000, &lines}, {"--entries", 1, 200, &entries},
                            {NULL, 0, 0, NULL}};
    int st = args(named(argv[0]), argc, argv, 0, 0, opts, &n, &json);
    if (st || (st = begin(ctx, &oc)))
        return st;
    if (ops_crashlog(&oc, lines, entries, &text) != 0)
        return failed("crashlog", &oc);
    if (json) {
        printf("{\"text\":");
        snap_json_str(stdout, text);
        printf("}\n");
        snap_json_mark();
    } else {
        fputs(text, stdout);
    }
    free(text);
    return 0;
}

static int cmd_shade(snap_ctx *ctx, int argc, char **argv)
{
    int n, json;
    ops_ctx oc;
    const snap_cmd *cmd = named(argv[0]);
    int st = args(cmd, argc, argv, 1, 1, NULL, &n, &json);
    if (st)
        return st;
    int open = strcmp(argv[1], "open") == 0;
    if (!open && strcmp(argv[1], "close") != 0)
        return snap_usage(cmd, "give open or close");
    if ((st = begin(ctx, &oc)))
        return st;
    if (ops_shade(&oc, open) != 0)
        return failed("shade", &oc);
    return done(ctx, json, &oc);
}

const snap_cmd snap_cmds_device[] = {
    {"apps", cmd_apps, "apps [--json]", "the packages with a launcher activity"},
    {"open-url", cmd_open_url, "open-url URL [--json]", "open an http(s) URL (VIEW intent)"},
    {"screen-info", cmd_screen_info, "screen-info [--json]",
     "screen size, density, auto-rotate and rotation"},
    {"rotate", cmd_rotate, "rotate 0|90|180|270|restore [--json]",
     "lock the rotation, or restore the settings as they were"},
    {"record", cmd_record, "record SECONDS FILE [--json]",
     "record the screen (screenrecord) into a local MP4"},
    {"crashlog", cmd_crashlog, "crashlog [--lines N] [--entries N] [--json]",
     "the crash buffer and dropbox crash entries, newest first"},
    {"shade", cmd_shade, "shade open|close [--json]", "open or close the notification shade"},
    {NULL, NULL, NULL, NULL},
};
