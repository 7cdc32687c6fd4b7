/* SPDX-License-Identifier: Apache-2.0 */
/* Apps and the device's log. Package and permission names are checked to
 * be Android names before anything is sent, and quoted as one word when
 * they are (adbc_shell_quote), so no argument can reach the shell as code. */
#include "mcp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "adbc/shell.h"

static int t_launch(mcp_call *c, const cJSON *a)
{
    const char *pkg;
    if (arg_name(c, a, "package", 1, &pkg) || call_device(c))
        return -1;
    int rc = adbc_app_launch(c->dev->conn, pkg, call_remaining(c));
    if (rc < 0)
        return call_fail_adbc(c, rc, "launch");
    call_text(c, "launched %s", pkg);
    ui_after_act(c);
    return 0;
}

static int t_intent(mcp_call *c, const cJSON *a)
{
    adbc_intent in;
    memset(&in, 0, sizeof(in));
    in.size = sizeof in;
    if (arg_str(c, a, "action", 0, 512, &in.action) || arg_str(c, a, "data", 0, 4096, &in.data) ||
        arg_str(c, a, "component", 0, 512, &in.component))
        return -1;
    if (!in.action && !in.data && !in.component)
        return call_fail(c, "intent needs at least one of action, data, component");
    const cJSON *ex = cJSON_GetObjectItemCaseSensitive(a, "extras");
    adbc_intent_extra extras[32];
    size_t n = 0;
    if (ex && !cJSON_IsNull(ex)) {
        if (!cJSON_IsArray(ex))
            return call_fail(c, "argument 'extras' must be an array of {type, key, value}");
        const cJSON *e;
        cJSON_ArrayForEach(e, ex)
        {
            if (n == 32)
                return call_fail(c, "at most 32 extras");
            const char *type, *key, *value;
            mcp_call *cc = c;
            if (!cJSON_IsObject(e))
                return call_fail(c, "each extra must be an object {type, key, value}");
            if (arg_str(cc, e, "type", 1, 8, &type) || arg_str(cc, e, "key", 1, 256, &key) ||
                arg_str(cc, e, "value", 1, 4096, &value))
                return -1;
            char t = strcmp(type, "string") == 0 ? 's' : strcmp(type, "int") == 0 ? 'i'
                         : strcmp(type, "bool") == 0 ? 'b' : 0;
            if (!t)
                return call_fail(c, "extra type must be \"string\", \"int\" or \"bool\"");
            extras[n].type = t;
            extras[n].key = key;
            extras[n].value = value;
            n++;
        }
    }
    in.extras = extras;
    in.nextras = n;
    if (call_device(c) != 0)
        return -1;
    int rc = adbc_app_start(c->dev->conn, &in, call_remaining(c));
    if (rc < 0)
        return call_fail_adbc(c, rc, "intent");
    call_text(c, "started the intent");
    ui_after_act(c);
    return 0;
}

static int t_stop_app(mcp_call *c, const cJSON *a)
{
    const char *pkg;
    if (arg_name(c, a, "package", 1, &pkg) || call_device(c))
        return -1;
    int rc = adbc_app_stop(c->dev->conn, pkg, call_remaining(c));
    if (rc < 0)
        return call_fail_adbc(c, rc, "stop_app");
    call_text(c, "stopped %s", pkg);
    ui_after_act(c);
    return 0;
}

static int t_top_activity(mcp_call *c, const cJSON *a)
{
    (void)a;
    if (call_device(c) != 0)
        return -1;
    char *act = NULL, *pkg = NULL;
    int rc = adbc_app_top(&act, &pkg, c->dev->conn, call_remaining(c));
    if (rc < 0)
        return call_fail_adbc(c, rc, "top_activity");
    call_text(c, "activity: %s\npackage: %s", *act ? act : "(none)", *pkg ? pkg : "(none)");
    free(act);
    free(pkg);
    return 0;
}

static int t_install_apk(mcp_call *c, const cJSON *a)
{
    const char *path;
    if (arg_str(c, a, "path", 1, 4096, &path))
        return -1;
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return call_fail(c, "no APK file at '%s' on this computer (path is a file on the "
                            "machine running adbc-mcp)", path);
    if (call_device(c) != 0)
        return -1;
    int rc = adbc_app_install(c->dev->conn, path, call_remaining(c));
    if (rc < 0)
        return call_fail_adbc(c, rc, "install_apk");
    call_text(c, "installed %s (%lld bytes)", path, (long long)st.st_size);
    return 0;
}

/* Run `pm WORD ARG...` with each argument quoted. Failure: a nonzero exit
 * status, or the "Error"/"Failure"/"Exception" text pm prints. */
static int pm(mcp_call *c, const char *what, const char *word, const char *a1, const char *a2)
{
    char *q1 = NULL, *q2 = NULL, *cmd = NULL;
    if (adbc_shell_quote(a1, &q1) < 0 || (a2 && adbc_shell_quote(a2, &q2) < 0) ||
        asprintf(&cmd, "pm %s %s%s%s", word, q1, q2 ? " " : "", q2 ? q2 : "") < 0) {
        free(q1);
        free(q2);
        return call_fail(c, "out of memory");
    }
    free(q1);
    free(q2);
    adbc_run_result res;
    memset(&res, 0, sizeof(res));
    int rc = adbc_run(c->dev->conn, ADBC_SHELL_AUTO, cmd, NULL, 0, 65536, &res,
                      call_remaining(c));
    free(cmd);
    if (rc < 0) {
        adbc_run_result_clear(&res);
        return call_fail_adbc(c, rc, what);
    }
    const char *out = res.out ? (const char *)res.out : "";
    const char *err = res.err_len ? (const char *)res.err : "";
    int bad = res.exit_code > 0 || strstr(out, "Error") || strstr(out, "Failure") ||
              strstr(out, "Exception") || strstr(err, "Error") || strstr(err, "Exception");
    if (bad)
        rc = call_fail(c, "%s failed: the device said: %s%s%s (check the package and "
                          "permission names; runtime permissions only)", what, out,
                       *out && *err ? " " : "", err);
    else
        call_text(c, "%s: done%s%s", what, *out ? ": " : "", out);
    adbc_run_result_clear(&res);
    return rc;
}

static int perm_tool(mcp_call *c, const cJSON *a, int grant)
{
    const char *pkg, *perm;
    if (arg_name(c, a, "package", 1, &pkg) || arg_name(c, a, "permission", 1, &perm) ||
        call_device(c))
        return -1;
    return pm(c, grant ? "grant_permission" : "revoke_permission", grant ? "grant" : "revoke",
              pkg, perm);
}

static int t_grant(mcp_call *c, const cJSON *a)
{
    return perm_tool(c, a, 1);
}

static int t_revoke(mcp_call *c, const cJSON *a)
{
    return perm_tool(c, a, 0);
}

static int t_clear_app_data(mcp_call *c, const cJSON *a)
{
    const char *pkg;
    if (arg_name(c, a, "package", 1, &pkg) || call_device(c))
        return -1;
    return pm(c, "clear_app_data", "clear", pkg, NULL);
}

static int t_logcat(mcp_call *c, const cJSON *a)
{
    int lines = 200;
    if (arg_int(c, a, "lines", 0, 1, 5000, &lines) || call_device(c))
        return -1;
    char *out = NULL;
    size_t len = 0;
    int rc = adbc_logcat(&out, &len, c->dev->conn, lines, 0, call_remaining(c));
    if (rc < 0)
        return call_fail_adbc(c, rc, "logcat");
    call_text_raw(c, len ? out : "(the log is empty)");
    free(out);
    return 0;
}

#define PKG_PROP "\"package\":{\"type\":\"string\",\"description\":\"an Android package name, e.g. com.android.settings\"}"

const mcp_tool mcp_tools_app[] = {
    {"launch", "Launch an app", "Start an app's launcher activity by package name. Returns the "
     "screen after.",
     "{\"type\":\"object\",\"properties\":{" PKG_PROP "},\"required\":[\"package\"],"
     "\"additionalProperties\":false}",
     t_launch, 0},
    {"intent", "Start an intent",
     "Start an activity with an intent (am start): action (android.intent.action.VIEW), "
     "data (a URI), component (\"pkg/.Activity\"), extras [{type: string|int|bool, key, "
     "value}]. At least one of action, data, component.",
     "{\"type\":\"object\",\"properties\":{\"action\":{\"type\":\"string\"},\"data\":{\"type\":"
     "\"string\"},\"component\":{\"type\":\"string\"},\"extras\":{\"type\":\"array\",\"items\":"
     "{\"type\":\"object\",\"properties\":{\"type\":{\"type\":\"string\",\"enum\":[\"string\","
     "\"int\",\"bool\"]},\"key\":{\"type\":\"string\"},\"value\":{\"type\":\"string\"}},"
     "\"required\":[\"type\",\"key\",\"value\"]}}},\"additionalProperties\":false}",
     t_intent, 0},
    {"stop_app", "Stop an app", "Force-stop an app by package name. Returns the screen after.",
     "{\"type\":\"object\",\"properties\":{" PKG_PROP "},\"required\":[\"package\"],"
     "\"additionalProperties\":false}",
     t_stop_app, 0},
    {"top_activity", "Current activity",
     "The activity in front and the package of the focused window.",
     "{\"type\":\"object\",\"properties\":{},\"additionalProperties\":false}", t_top_activity,
     TOOL_READONLY},
    {"install_apk", "Install an APK",
     "Install (or update) an APK file from this computer onto the device.",
     "{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\",\"description\":\"path "
     "of the .apk on the machine running adbc-mcp\"}},\"required\":[\"path\"],"
     "\"additionalProperties\":false}",
     t_install_apk, 0},
    {"grant_permission", "Grant a permission",
     "Grant a runtime permission (android.permission.CAMERA) to a package.",
     "{\"type\":\"object\",\"properties\":{" PKG_PROP ",\"permission\":{\"type\":\"string\"}},"
     "\"required\":[\"package\",\"permission\"],\"additionalProperties\":false}",
     t_grant, 0},
    {"revoke_permission", "Revoke a permission",
     "Revoke a runtime permission from a package.",
     "{\"type\":\"object\",\"properties\":{" PKG_PROP ",\"permission\":{\"type\":\"string\"}},"
     "\"required\":[\"package\",\"permission\"],\"additionalProperties\":false}",
     t_revoke, 0},
    {"clear_app_data", "Clear app data",
     "Delete all of a package's data (pm clear): it starts as freshly installed.",
     "{\"type\":\"object\",\"properties\":{" PKG_PROP "},\"required\":[\"package\"],"
     "\"additionalProperties\":false}",
     t_clear_app_data, 0},
    {"logcat", "Read the log",
     "The last lines of the device log (default 200, at most 5000).",
     "{\"type\":\"object\",\"properties\":{\"lines\":{\"type\":\"integer\",\"minimum\":1,"
     "\"maximum\":5000}},\"additionalProperties\":false}",
     t_logcat, TOOL_READONLY},
    {NULL, NULL, NULL, NULL, NULL, 0},
};
