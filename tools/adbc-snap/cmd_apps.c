/* adbc-snap app and device commands: start, stop, install and remove apps,
 * send intents, the resumed activity, system properties and the log. What
 * was done is said on stderr (-q: silent); stdout carries only data. */
#include "snap_ui.h"

#include <stdlib.h>
#include <string.h>

static const snap_cmd *cmd_named(const char *name);

/* The arguments after the command name, all positional ("--" first allows
 * one that starts with "-"): between min and max of them. *pos points at
 * the first. */
static int positional(const snap_cmd *cmd, int argc, char **argv, int min, int max,
                      char ***pos)
{
    int from = 1;
    if (from < argc && strcmp(argv[from], "--") == 0)
        from++;
    else
        for (int i = 1; i < argc; i++)
            if (argv[i][0] == '-' && argv[i][1]) {
                fprintf(stderr, "adbc-snap %s: unknown option %s\n", cmd->name, argv[i]);
                return snap_usage(cmd, "see adbc-snap help COMMAND");
            }
    int n = argc - from;
    if (n < min || n > max)
        return snap_usage(cmd, n < min ? "missing arguments" : "too many arguments");
    *pos = argv + from;
    return 0;
}

/* Commands of the form NAME ARG: launch, stop, install, uninstall. */
static int one_arg(snap_ctx *ctx, int argc, char **argv,
                   int (*fn)(adbc_conn *, const char *, int), const char *done)
{
    const snap_cmd *cmd = cmd_named(argv[0]);
    char **pos;
    int st = positional(cmd, argc, argv, 1, 1, &pos);
    if (st)
        return st;
    adbc_conn *c;
    if (snap_connect(ctx, &c) < 0)
        return SNAP_EXIT_FAIL;
    int rc = fn(c, pos[0], ctx->timeout_ms);
    if (rc < 0)
        return snap_fail_act(cmd->name, rc);
    if (!ctx->quiet)
        fprintf(stderr, "adbc-snap: %s %s\n", done, pos[0]);
    return 0;
}

static int cmd_launch(snap_ctx *ctx, int argc, char **argv)
{
    return one_arg(ctx, argc, argv, adbc_app_launch, "launched");
}

static int cmd_stop(snap_ctx *ctx, int argc, char **argv)
{
    return one_arg(ctx, argc, argv, adbc_app_stop, "stopped");
}

static int cmd_install(snap_ctx *ctx, int argc, char **argv)
{
    return one_arg(ctx, argc, argv, adbc_app_install, "installed");
}

static int cmd_uninstall(snap_ctx *ctx, int argc, char **argv)
{
    return one_arg(ctx, argc, argv, adbc_app_uninstall, "uninstalled");
}

static int cmd_intent(snap_ctx *ctx, int argc, char **argv)
{
    const snap_cmd *cmd = cmd_named(argv[0]);
    adbc_intent in = {0};
    adbc_intent_extra *ex = calloc((size_t)argc, sizeof *ex);
    if (!ex)
        return SNAP_EXIT_FAIL;
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        if (strcmp(s, "--data") == 0 && i + 1 < argc)
            in.data = argv[++i];
        else if (strcmp(s, "--component") == 0 && i + 1 < argc)
            in.component = argv[++i];
        else if ((strcmp(s, "--es") == 0 || strcmp(s, "--ei") == 0 || strcmp(s, "--ez") == 0) &&
                 i + 2 < argc) {
            ex[in.nextras].type = s[3] == 's' ? 's' : s[3] == 'i' ? 'i' : 'b';
            ex[in.nextras].key = argv[i + 1];
            ex[in.nextras].value = argv[i + 2];
            in.nextras++;
            i += 2;
        } else if (s[0] != '-' && !in.action)
            in.action = s;
        else {
            free(ex);
            return snap_usage(cmd, "unknown or incomplete argument");
        }
    }
    if (!in.action && !in.data && !in.component) {
        free(ex);
        return snap_usage(cmd, "give an action, --data or --component");
    }
    in.extras = ex;
    adbc_conn *c;
    if (snap_connect(ctx, &c) < 0) {
        free(ex);
        return SNAP_EXIT_FAIL;
    }
    int rc = adbc_app_start(c, &in, ctx->timeout_ms);
    free(ex);
    if (rc < 0)
        return snap_fail("intent", rc);
    if (!ctx->quiet)
        fprintf(stderr, "adbc-snap: started the intent\n");
    return 0;
}

static int cmd_top(snap_ctx *ctx, int argc, char **argv)
{
    const snap_cmd *cmd = cmd_named(argv[0]);
    int json = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0)
            json = 1;
        else
            return snap_usage(cmd, "unknown argument");
    }
    adbc_conn *c;
    if (snap_connect(ctx, &c) < 0)
        return SNAP_EXIT_FAIL;
    char *act, *pkg;
    int rc = adbc_app_top(&act, &pkg, c, ctx->timeout_ms);
    if (rc < 0)
        return snap_fail("top", rc);
    if (json) {
        printf("{\"activity\":");
        snap_json_str(stdout, act);
        printf(",\"package\":");
        snap_json_str(stdout, pkg);
        printf("}\n");
    } else {
        printf("activity: %s\npackage: %s\n", act, pkg);
    }
    free(act);
    free(pkg);
    return 0;
}

static int cmd_getprop(snap_ctx *ctx, int argc, char **argv)
{
    const snap_cmd *cmd = cmd_named(argv[0]);
    char **pos;
    int st = positional(cmd, argc, argv, 0, 1, &pos);
    if (st)
        return st;
    int npos = (int)(argv + argc - pos);
    adbc_conn *c;
    if (snap_connect(ctx, &c) < 0)
        return SNAP_EXIT_FAIL;
    char *v;
    int rc = adbc_getprop(&v, c, npos ? pos[0] : NULL, ctx->timeout_ms);
    if (rc < 0)
        return snap_fail_act("getprop", rc);
    fputs(v, stdout);
    if (npos)
        putchar('\n');
    free(v);
    return 0;
}

static int cmd_logcat(snap_ctx *ctx, int argc, char **argv)
{
    const snap_cmd *cmd = cmd_named(argv[0]);
    long lines = 0;
    int ms = 0;
    for (int i = 1; i < argc; i++) {
        char *end;
        if (strcmp(argv[i], "-n") == 0 && i + 1 < argc &&
            snap_int(argv[i + 1], 1, 1000000, &lines) == 0) {
            i++;
        } else if (strcmp(argv[i], "-t") == 0 && i + 1 < argc) {
            double s = strtod(argv[++i], &end);
            if (end == argv[i] || *end || !(s > 0) || s > 3600)
                return snap_usage(cmd, "-t takes seconds (0 < S <= 3600)");
            ms = (int)(s * 1000);
        } else {
            return snap_usage(cmd, "unknown argument");
        }
    }
    if (!lines && !ms)
        lines = 200; /* bounded by default: the last 200 lines */
    adbc_conn *c;
    if (snap_connect(ctx, &c) < 0)
        return SNAP_EXIT_FAIL;
    char *out;
    size_t len;
    int rc = adbc_logcat(&out, &len, c, (int)lines, ms, ctx->timeout_ms);
    if (rc < 0)
        return snap_fail("logcat", rc);
    fwrite(out, 1, len, stdout);
    free(out);
    return 0;
}

const snap_cmd snap_cmds_apps[] = {
    {"launch", cmd_launch, "launch PKG", "start an app's launcher activity"},
    {"intent", cmd_intent, "intent ACTION [--data URI] [--component C]",
     "am start, with --es K V, --ei K N, --ez K true|false extras"},
    {"stop", cmd_stop, "stop PKG", "force-stop an app"},
    {"top", cmd_top, "top [--json]", "the resumed activity and the focused package"},
    {"install", cmd_install, "install APK", "install an APK (streamed when the device can)"},
    {"uninstall", cmd_uninstall, "uninstall PKG", "remove an app"},
    {"getprop", cmd_getprop, "getprop [NAME]", "a system property, or all of them"},
    {"logcat", cmd_logcat, "logcat [-n LINES] [-t SECONDS]",
     "the last lines of the log (default 200), or follow it for a time"},
    {NULL, NULL, NULL, NULL},
};

static const snap_cmd *cmd_named(const char *name)
{
    for (const snap_cmd *c = snap_cmds_apps; c->name; c++)
        if (strcmp(c->name, name) == 0)
            return c;
    return &snap_cmds_apps[0];
}
