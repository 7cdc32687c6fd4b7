/* SPDX-License-Identifier: Apache-2.0 */
/* adbc-snap app and device commands: start, stop, install and remove apps,
 * send intents, the resumed activity, system properties and the log. What
 * was done is said on stderr (-q: silent); stdout carries only data. */
#include "snap_ui.h"

#include "ops_core.h"

#include <stdlib.h>
#include <string.h>

static const snap_cmd *cmd_named(const char *name);

/* The arguments after the command name: --json, else positional ("--"
 * ends the options, for an argument that starts with "-"); between min and
 * max positional ones, moved to argv[1..*npos]. */
static int positional(const snap_cmd *cmd, int argc, char **argv, int min, int max, int *npos,
                      int *json)
{
    int n = 0, opts = 1;
    *json = 0;
    for (int i = 1; i < argc; i++) {
        if (opts && strcmp(argv[i], "--") == 0)
            opts = 0;
        else if (opts && strcmp(argv[i], "--json") == 0)
            *json = 1;
        else if (opts && argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "adbc-snap %s: unknown option %s\n", cmd->name, argv[i]);
            return snap_usage(cmd, "see adbc-snap help COMMAND");
        } else
            argv[1 + n++] = argv[i];
    }
    if (n < min || n > max)
        return snap_usage(cmd, n < min ? "missing arguments" : "too many arguments");
    *npos = n;
    return 0;
}

/* {"ok":true,"done":DONE,"what":ARG} for --json acts without data. */
static void json_ok(const char *done, const char *arg)
{
    printf("{\"ok\":true,\"done\":");
    snap_json_str(stdout, done);
    if (arg) {
        printf(",\"what\":");
        snap_json_str(stdout, arg);
    }
    printf("}\n");
}

/* An app operation through tools/ops' core (as adbc-mcp and adbc-serve
 * run it) within --timeout; 0, or the exit status after saying why. */
static int app_core(snap_ctx *ctx, const char *what, const ops_app_req *r, char **act,
                    char **pkg)
{
    adbc_conn *c;
    if (snap_connect(ctx, &c) < 0)
        return SNAP_EXIT_FAIL;
    ops_ctx oc;
    ops_ctx_init(&oc, c, NULL, ops_now_ms() + ctx->timeout_ms);
    if (ops_app_run(&oc, r, act, pkg) == 0)
        return 0;
    if (oc.err.rc)
        return snap_fail_act(what, oc.err.rc);
    fprintf(stderr, "adbc-snap: %s: %s\n", what, oc.err.msg);
    snap_json_error(what, 0, oc.err.msg, NULL, SNAP_EXIT_FAIL);
    return SNAP_EXIT_FAIL;
}

/* Commands of the form NAME ARG: launch, stop (the core's), install,
 * uninstall (fn). */
static int one_arg(snap_ctx *ctx, int argc, char **argv,
                   int (*fn)(adbc_conn *, const char *, int), const char *done)
{
    const snap_cmd *cmd = cmd_named(argv[0]);
    int n, json;
    int st = positional(cmd, argc, argv, 1, 1, &n, &json);
    if (st)
        return st;
    if (!fn) {
        ops_app_req r = {.op = strcmp(cmd->name, "launch") == 0 ? OPS_APP_LAUNCH : OPS_APP_STOP,
                         .package = argv[1]};
        if ((st = app_core(ctx, cmd->name, &r, NULL, NULL)) != 0)
            return st;
    } else {
        adbc_conn *c;
        if (snap_connect(ctx, &c) < 0)
            return SNAP_EXIT_FAIL;
        int rc = fn(c, argv[1], ctx->timeout_ms);
        if (rc < 0)
            return snap_fail_act(cmd->name, rc);
    }
    if (json)
        json_ok(done, argv[1]);
    if (!ctx->quiet)
        fprintf(stderr, "adbc-snap: %s %s\n", done, argv[1]);
    return 0;
}

static int cmd_launch(snap_ctx *ctx, int argc, char **argv)
{
    return one_arg(ctx, argc, argv, NULL, "launched");
}

static int cmd_stop(snap_ctx *ctx, int argc, char **argv)
{
    return one_arg(ctx, argc, argv, NULL, "stopped");
}

/* install / install-multiple: pm install's flags as adb takes them, then the
 * files. The flags become ADBC_INSTALL_* bits and the library builds the
 * device's command (lib/act/install.c). */
static int install_cmd(snap_ctx *ctx, int argc, char **argv, size_t max_files)
{
    static const struct {
        const char *opt;
        unsigned bit;
    } flags[] = {{"-l", ADBC_INSTALL_FORWARD_LOCK}, {"-r", ADBC_INSTALL_REPLACE},
                 {"-t", ADBC_INSTALL_TEST},         {"-s", ADBC_INSTALL_EXTERNAL},
                 {"-d", ADBC_INSTALL_DOWNGRADE},    {"-g", ADBC_INSTALL_GRANT},
                 {"--instant", ADBC_INSTALL_INSTANT}};
    const snap_cmd *cmd = cmd_named(argv[0]);
    adbc_install_opts o;
    adbc_install_opts_init(&o);
    o.timeout_ms = ctx->timeout_ms;
    int json = 0, opts = 1;
    size_t n = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        size_t k = 0;
        if (opts && strcmp(a, "--") == 0) {
            opts = 0;
            continue;
        }
        if (!opts || a[0] != '-' || !a[1]) {
            argv[1 + n++] = argv[i];
            continue;
        }
        if (strcmp(a, "--json") == 0) {
            json = 1;
            continue;
        }
        if (strcmp(a, "--user") == 0) {
            if (i + 1 >= argc)
                return snap_usage(cmd, "--user takes a user id, all or current");
            o.user = argv[++i];
            continue;
        }
        while (k < sizeof flags / sizeof flags[0] && strcmp(a, flags[k].opt) != 0)
            k++;
        if (k == sizeof flags / sizeof flags[0]) {
            fprintf(stderr, "adbc-snap %s: unknown option %s\n", cmd->name, a);
            return snap_usage(cmd, "see adbc-snap help COMMAND");
        }
        o.flags |= flags[k].bit;
    }
    if (n == 0 || n > max_files)
        return snap_usage(cmd, n == 0 ? "missing the APK" : "one APK (install-multiple takes "
                                                             "several)");
    adbc_conn *c;
    if (snap_connect(ctx, &c) < 0)
        return SNAP_EXIT_FAIL;
    int rc = adbc_app_install_apks(c, (const char *const *)argv + 1, n, &o);
    if (rc < 0)
        return snap_fail_act(cmd->name, rc);
    if (json)
        json_ok("installed", argv[1]);
    if (!ctx->quiet)
        for (size_t i = 0; i < n; i++)
            fprintf(stderr, "adbc-snap: installed %s\n", argv[1 + i]);
    return 0;
}

static int cmd_install(snap_ctx *ctx, int argc, char **argv)
{
    return install_cmd(ctx, argc, argv, 1);
}

static int cmd_install_multiple(snap_ctx *ctx, int argc, char **argv)
{
    return install_cmd(ctx, argc, argv, 64);
}

static int cmd_uninstall(snap_ctx *ctx, int argc, char **argv)
{
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
        if (strcmp(argv[i], "-k") == 0) {
            /* As adb: the data left behind could not be removed afterwards. */
            printf("The -k option uninstalls the application while retaining the data/cache.\n"
                   "At the moment, there is no way to remove the remaining data.\n"
                   "You will have to reinstall the application with the same signature, and "
                   "fully uninstall it.\n"
                   "If you truly wish to continue, execute 'adbc-snap shell cmd package "
                   "uninstall -k PACKAGE'.\n");
            return SNAP_EXIT_FAIL;
        }
    }
    return one_arg(ctx, argc, argv, adbc_app_uninstall, "uninstalled");
}

static int cmd_intent(snap_ctx *ctx, int argc, char **argv)
{
    const snap_cmd *cmd = cmd_named(argv[0]);
    adbc_intent in = {.size = sizeof(adbc_intent)};
    int json = 0;
    adbc_intent_extra *ex = calloc((size_t)argc, sizeof *ex);
    if (!ex)
        return SNAP_EXIT_FAIL;
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        if (strcmp(s, "--json") == 0)
            json = 1;
        else if (strcmp(s, "--data") == 0 && i + 1 < argc)
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
    ops_app_req r = {.op = OPS_APP_INTENT, .intent = in};
    int st = app_core(ctx, "intent", &r, NULL, NULL);
    free(ex);
    if (st)
        return st;
    if (json)
        json_ok("started the intent", in.action);
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
    char *act, *pkg;
    ops_app_req r = {.op = OPS_APP_TOP};
    int st = app_core(ctx, "top", &r, &act, &pkg);
    if (st)
        return st;
    if (json) {
        printf("{\"activity\":");
        snap_json_str(stdout, act);
        printf(",\"package\":");
        snap_json_str(stdout, pkg);
        printf("}\n");
    } else {
        printf("activity: %s\npackage: %s\n", act, pkg);
    }
    adbc_free(act);
    adbc_free(pkg);
    return 0;
}

/* getprop's listing ("[name]: [value]" lines; a value may span lines) as
 * one JSON object. */
static void props_json(const char *all)
{
    int n = 0;
    printf("{");
    for (const char *p = all; *p;) {
        const char *eol = strchr(p, '\n');
        if (!eol)
            eol = p + strlen(p);
        const char *sep = *p == '[' ? strstr(p, "]: [") : NULL;
        if (!sep || sep > eol) { /* not a property line: skip it */
            p = *eol ? eol + 1 : eol;
            continue;
        }
        /* The value goes on up to the next line that starts a property. */
        const char *q = eol;
        while (*q == '\n' && q[1] && q[1] != '[') {
            const char *nx = strchr(q + 1, '\n');
            q = nx ? nx : q + 1 + strlen(q + 1);
        }
        const char *v = sep + 4, *ve = q;
        while (ve > v && ve[-1] == '\r')
            ve--;
        if (ve > v && ve[-1] == ']')
            ve--;
        printf(n++ ? "," : "");
        snap_json_strn(stdout, p + 1, (size_t)(sep - p - 1));
        putchar(':');
        snap_json_strn(stdout, v, (size_t)(ve - v));
        p = *q ? q + 1 : q;
    }
    printf("}\n");
}

static int cmd_getprop(snap_ctx *ctx, int argc, char **argv)
{
    const snap_cmd *cmd = cmd_named(argv[0]);
    int npos, json;
    int st = positional(cmd, argc, argv, 0, 1, &npos, &json);
    if (st)
        return st;
    adbc_conn *c;
    if (snap_connect(ctx, &c) < 0)
        return SNAP_EXIT_FAIL;
    char *v;
    int rc = adbc_getprop(&v, c, npos ? argv[1] : NULL, ctx->timeout_ms);
    if (rc < 0)
        return snap_fail_act("getprop", rc);
    if (json && npos) {
        printf("{");
        snap_json_str(stdout, argv[1]);
        putchar(':');
        snap_json_str(stdout, v);
        printf("}\n");
    } else if (json) {
        props_json(v);
    } else {
        fputs(v, stdout);
        if (npos)
            putchar('\n');
    }
    adbc_free(v);
    return 0;
}

const snap_cmd snap_cmds_apps[] = {
    {"launch", cmd_launch, "launch PKG [--json]", "start an app's launcher activity"},
    {"intent", cmd_intent, "intent ACTION [--data URI] [--component C] [--json]",
     "am start, with --es K V, --ei K N, --ez K true|false extras"},
    {"stop", cmd_stop, "stop PKG [--json]", "force-stop an app"},
    {"top", cmd_top, "top [--json]", "the resumed activity and the focused package"},
    {"install", cmd_install,
     "install [-l] [-r] [-t] [-s] [-d] [-g] [--instant] [--user USER] [--json] APK",
     "install an APK (streamed when the device can), with pm install's flags"},
    {"install-multiple", cmd_install_multiple,
     "install-multiple [-l] [-r] [-t] [-s] [-d] [-g] [--instant] [--user USER] [--json] APK...",
     "install one app from several APKs (a base and its splits) in one install session"},
    {"uninstall", cmd_uninstall, "uninstall [-k] PKG [--json]",
     "remove an app (-k is refused, as adb refuses it)"},
    {"getprop", cmd_getprop, "getprop [--json] [NAME]", "a system property, or all of them"},
    {NULL, NULL, NULL, NULL},
};

static const snap_cmd *cmd_named(const char *name)
{
    for (const snap_cmd *c = snap_cmds_apps; c->name; c++)
        if (strcmp(c->name, name) == 0)
            return c;
    return &snap_cmds_apps[0];
}
