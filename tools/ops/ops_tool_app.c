/* SPDX-License-Identifier: Apache-2.0 */
/* Apps and the device's log. launch, intent, stop_app and top_activity are
 * tools/ops' ops_app (shared with adbc-serve). Package and permission names are checked to
 * be Android names before anything is sent, and quoted as one word when
 * they are (adbc_shell_quote), so no argument can reach the shell as code. */
#include "ops_tool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "adbc/shell.h"
#include "ops_json.h"

/* Run ops_app (shared with adbc-serve's POST /v1/app) with the tool's
 * arguments and "op": the checks, the device commands and the errors are
 * its own. *res: its result (NULL on failure). */
static int app_op(ops_call *c, const cJSON *a, const char *op, ops_ctx *oc, cJSON **res)
{
    *res = NULL;
    cJSON *args = a ? cJSON_Duplicate(a, 1) : cJSON_CreateObject();
    if (!args || !cJSON_AddStringToObject(args, "op", op)) {
        cJSON_Delete(args);
        return ops_call_fail(c, OPS_EFAIL, "out of memory");
    }
    if (ops_call_device(c) != 0) {
        cJSON_Delete(args);
        return -1;
    }
    ops_call_ctx(c, oc);
    int rc = ops_app(oc, args, res);
    cJSON_Delete(args);
    return rc != 0 ? ops_call_err(c, &oc->err) : 0;
}

/* launch, intent, stop_app: what was done, then the screen after. */
static int app_act(ops_call *c, const cJSON *a, const char *op)
{
    ops_ctx oc;
    cJSON *res;
    if (app_op(c, a, op, &oc, &res) != 0)
        return -1;
    cJSON_Delete(res);
    ops_call_text(c, "%s", oc.done);
    ops_tool_after_act(c, &oc);
    return 0;
}

static int t_launch(ops_call *c, const cJSON *a)
{
    return app_act(c, a, "launch");
}

static int t_intent(ops_call *c, const cJSON *a)
{
    return app_act(c, a, "intent");
}

static int t_stop_app(ops_call *c, const cJSON *a)
{
    return app_act(c, a, "stop");
}

static int t_top_activity(ops_call *c, const cJSON *a)
{
    ops_ctx oc;
    cJSON *res;
    if (app_op(c, a, "top", &oc, &res) != 0)
        return -1;
    const char *act = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(res, "activity"));
    const char *pkg = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(res, "package"));
    ops_call_text(c, "activity: %s\npackage: %s", act && *act ? act : "(none)",
              pkg && *pkg ? pkg : "(none)");
    cJSON_Delete(res);
    return 0;
}

static int t_install_apk(ops_call *c, const cJSON *a)
{
    const char *path;
    if (ops_call_str(c, a, "path", 1, 4096, &path))
        return -1;
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return ops_call_fail(c, OPS_EARG,
                             "no APK file at '%s' on this computer (path is a file on the "
                            "machine running adbc-mcp)", path);
    if (ops_call_device(c) != 0)
        return -1;
    int rc = adbc_app_install(c->dev->conn, path, ops_call_remaining(c));
    if (rc < 0)
        return ops_call_adbc(c, rc, "install_apk");
    ops_call_text(c, "installed %s (%lld bytes)", path, (long long)st.st_size);
    return 0;
}

/* Run `pm WORD ARG...` with each argument quoted. Failure: a nonzero exit
 * status, or the "Error"/"Failure"/"Exception" text pm prints. */
static int pm(ops_call *c, const char *what, const char *word, const char *a1, const char *a2)
{
    char *q1 = NULL, *q2 = NULL, *cmd = NULL;
    if (adbc_shell_quote(&q1, a1) < 0 || (a2 && adbc_shell_quote(&q2, a2) < 0) ||
        asprintf(&cmd, "pm %s %s%s%s", word, q1, q2 ? " " : "", q2 ? q2 : "") < 0) {
        adbc_free(q1);
        adbc_free(q2);
        return ops_call_fail(c, OPS_EFAIL, "out of memory");
    }
    adbc_free(q1);
    adbc_free(q2);
    adbc_run_result res;
    memset(&res, 0, sizeof(res));
    int rc = adbc_run(&res, c->dev->conn, ADBC_SHELL_AUTO, cmd, NULL, 0, 65536,
                      ops_call_remaining(c));
    free(cmd);
    if (rc < 0) {
        adbc_run_result_clear(&res);
        return ops_call_adbc(c, rc, what);
    }
    const char *out = res.out ? (const char *)res.out : "";
    const char *err = res.err_len ? (const char *)res.err : "";
    int bad = res.exit_code > 0 || strstr(out, "Error") || strstr(out, "Failure") ||
              strstr(out, "Exception") || strstr(err, "Error") || strstr(err, "Exception");
    if (bad)
        rc = ops_call_fail(c, OPS_EFAIL,
                           "%s failed: the device said: %s%s%s (check the package and "
                          "permission names; runtime permissions only)", what, out,
                       *out && *err ? " " : "", err);
    else
        ops_call_text(c, "%s: done%s%s", what, *out ? ": " : "", out);
    adbc_run_result_clear(&res);
    return rc;
}

static int perm_tool(ops_call *c, const cJSON *a, int grant)
{
    const char *pkg, *perm;
    if (ops_call_name(c, a, "package", 1, &pkg) || ops_call_name(c, a, "permission", 1, &perm) ||
        ops_call_device(c))
        return -1;
    return pm(c, grant ? "grant_permission" : "revoke_permission", grant ? "grant" : "revoke",
              pkg, perm);
}

static int t_grant(ops_call *c, const cJSON *a)
{
    return perm_tool(c, a, 1);
}

static int t_revoke(ops_call *c, const cJSON *a)
{
    return perm_tool(c, a, 0);
}

static int t_clear_app_data(ops_call *c, const cJSON *a)
{
    const char *pkg;
    if (ops_call_name(c, a, "package", 1, &pkg) || ops_call_device(c))
        return -1;
    return pm(c, "clear_app_data", "clear", pkg, NULL);
}

static int t_logcat(ops_call *c, const cJSON *a)
{
    int lines = 200;
    if (ops_call_int(c, a, "lines", 0, 1, 5000, &lines) || ops_call_device(c))
        return -1;
    char *out = NULL;
    size_t len = 0;
    int rc = adbc_logcat(&out, &len, c->dev->conn, lines, 0, ops_call_remaining(c));
    if (rc < 0)
        return ops_call_adbc(c, rc, "logcat");
    ops_call_text_raw(c, len ? out : "(the log is empty)");
    adbc_free(out);
    return 0;
}

#define PKG_PROP                                                                              \
    "\"package\":" OPS_SCHEMA_NAME(",\"description\":\"an Android package name, e.g. "        \
                                   "com.android.settings\"")
#define PERM_PROP "\"permission\":" OPS_SCHEMA_NAME("")
/* intent's action, component and extras' keys: 1..N bytes, no blank or
 * control byte (ops_intent_check); data: no blank at its ends. */
#define NO_BLANK "\"minLength\":1,\"pattern\":\"^[^\\\\u0000-\\\\u0020\\\\u007f]+$\""
#define DATA_PATTERN                                                                          \
    "\"minLength\":1,\"pattern\":\"^[^\\\\u0000-\\\\u0020\\\\u007f]"                            \
    "([^\\\\u0000-\\\\u001f\\\\u007f]*[^\\\\u0000-\\\\u0020\\\\u007f])?$\""

const ops_tool ops_tools_app[] = {
    {"launch", "Launch an app", "Start an app's launcher activity by package name. Returns the "
     "screen after.",
     "{\"type\":\"object\",\"properties\":{" PKG_PROP "},\"required\":[\"package\"],"
     "\"additionalProperties\":false}",
     t_launch, 0},
    {"intent", "Start an intent",
     "Start an activity with an intent (am start): action (android.intent.action.VIEW), "
     "data (a URI), component (\"pkg/.Activity\"), extras [{type: string|int|bool, key, "
     "value}]. At least one of action, data, component.",
     "{\"type\":\"object\",\"properties\":{\"action\":{\"type\":\"string\",\"maxLength\":512,"
     NO_BLANK "},\"data\":{\"type\":\"string\",\"maxLength\":4096," DATA_PATTERN "},"
     "\"component\":{\"type\":\"string\",\"maxLength\":512," NO_BLANK "},\"extras\":{\"type\":"
     "\"array\",\"maxItems\":32,\"items\":{\"type\":\"object\",\"properties\":{\"type\":{\"type\":"
     "\"string\",\"enum\":[\"string\",\"int\",\"bool\"]},\"key\":{\"type\":\"string\","
     "\"maxLength\":256," NO_BLANK "},\"value\":{\"type\":\"string\",\"maxLength\":4096}},"
     "\"required\":[\"type\",\"key\",\"value\"],\"additionalProperties\":false}}},\"not\":"
     "{\"properties\":{\"action\":false,\"data\":false,\"component\":false}},"
     "\"additionalProperties\":false}",
     t_intent, 0},
    {"stop_app", "Stop an app", "Force-stop an app by package name. Returns the screen after.",
     "{\"type\":\"object\",\"properties\":{" PKG_PROP "},\"required\":[\"package\"],"
     "\"additionalProperties\":false}",
     t_stop_app, 0},
    {"top_activity", "Current activity",
     "The activity in front and the package of the focused window.",
     "{\"type\":\"object\",\"properties\":{},\"additionalProperties\":false}", t_top_activity,
     OPS_TOOL_READONLY},
    {"install_apk", "Install an APK",
     "Install (or update) an APK file from this computer onto the device.",
     "{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\",\"maxLength\":4096,"
     "\"description\":\"path "
     "of the .apk on the machine running adbc-mcp\"}},\"required\":[\"path\"],"
     "\"additionalProperties\":false}",
     t_install_apk, OPS_TOOL_HOSTFILE},
    {"grant_permission", "Grant a permission",
     "Grant a runtime permission (android.permission.CAMERA) to a package.",
     "{\"type\":\"object\",\"properties\":{" PKG_PROP "," PERM_PROP "},"
     "\"required\":[\"package\",\"permission\"],\"additionalProperties\":false}",
     t_grant, 0},
    {"revoke_permission", "Revoke a permission",
     "Revoke a runtime permission from a package.",
     "{\"type\":\"object\",\"properties\":{" PKG_PROP "," PERM_PROP "},"
     "\"required\":[\"package\",\"permission\"],\"additionalProperties\":false}",
     t_revoke, 0},
    {"clear_app_data", "Clear app data",
     "Delete all of a package's data (pm clear): it starts as freshly installed.",
     "{\"type\":\"object\",\"properties\":{" PKG_PROP "},\"required\":[\"package\"],"
     "\"additionalProperties\":false}",
     t_clear_app_data, OPS_TOOL_DESTRUCTIVE},
    {"logcat", "Read the log",
     "The last lines of the device log (default 200, at most 5000).",
     "{\"type\":\"object\",\"properties\":{\"lines\":{\"type\":\"integer\",\"minimum\":1,"
     "\"maximum\":5000}},\"additionalProperties\":false}",
     t_logcat, OPS_TOOL_READONLY},
    {NULL, NULL, NULL, NULL, NULL, 0},
};
