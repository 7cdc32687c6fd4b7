/* SPDX-License-Identifier: Apache-2.0 */
/* Apps and waits: launch, stop, the resumed activity, an intent; waiting
 * for text or a still screen. Package names are checked to be Android names
 * before anything is sent; every string reaches the device as one quoted
 * word (the act API quotes it). */
#include "ops_core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int ops_android_name(const char *s)
{
    if (!s)
        return 0;
    int ok = (s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z');
    for (const char *p = s; ok && *p; p++)
        ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
             *p == '_' || *p == '.';
    return ok;
}

/* ---- the intent policy ----
 * Sources (AOSP): Intent.java documents ACTION_CALL as placing the call
 * (ACTION_DIAL shows the dialer instead); Telecom's UserCallIntentProcessor
 * places a call for CALL, CALL_PRIVILEGED and CALL_EMERGENCY with no screen
 * between; the phone app's OutgoingCallBroadcaster (before Telecom) turned
 * any action it was started with into CALL; ShutdownActivity shuts the
 * device down on start (reboots for ACTION_REBOOT) unless EXTRA_KEY_CONFIRM
 * is true, whatever the action; ActivityStarter starts REQUEST_SHUTDOWN and
 * REBOOT as activities. Actions are compared ignoring case and schemes
 * ignoring case, which refuses more than the case-sensitive device would
 * act on, never less. docs/mcp.md lists every entry with its reason. */
typedef struct intent_rule {
    const char *name;
    unsigned allow; /* the name that lets it through */
    const char *why;
} intent_rule;

static const intent_rule INTENT_ACTIONS[] = {
    {"android.intent.action.CALL", OPS_ALLOW_INTENT_CALL, "places a phone call on start"},
    {"android.intent.action.CALL_PRIVILEGED", OPS_ALLOW_INTENT_CALL,
     "places a phone call on start (emergency numbers included)"},
    {"android.intent.action.CALL_EMERGENCY", OPS_ALLOW_INTENT_CALL,
     "places an emergency call on start"},
    {"android.intent.action.NEW_OUTGOING_CALL", OPS_ALLOW_INTENT_CALL,
     "is the outgoing-call broadcast of a call being placed"},
    {"android.intent.action.RESPOND_VIA_MESSAGE", OPS_ALLOW_INTENT_SMS,
     "sends a text message with no screen"},
    {"android.intent.action.REBOOT", OPS_ALLOW_INTENT_ANY,
     "reboots the device on start (ShutdownActivity)"},
    {"android.intent.action.ACTION_REQUEST_SHUTDOWN", OPS_ALLOW_INTENT_ANY,
     "shuts the device down on start (ShutdownActivity)"},
    {"com.android.internal.intent.action.REQUEST_SHUTDOWN", OPS_ALLOW_INTENT_ANY,
     "shuts the device down on start (ShutdownActivity)"},
    {"android.intent.action.ACTION_SHUTDOWN", OPS_ALLOW_INTENT_ANY,
     "is the shutdown broadcast"},
    {"android.intent.action.FACTORY_RESET", OPS_ALLOW_INTENT_ANY, "erases the device"},
    {"android.intent.action.MASTER_CLEAR", OPS_ALLOW_INTENT_ANY, "erases the device"},
    {"android.intent.action.DELETE", OPS_ALLOW_INTENT_ANY,
     "uninstalls a package once its dialog is confirmed: uninstall_app and its list decide "
     "uninstalls"},
    {"android.intent.action.UNINSTALL_PACKAGE", OPS_ALLOW_INTENT_ANY,
     "uninstalls a package once its dialog is confirmed: uninstall_app and its list decide "
     "uninstalls"},
    {"android.intent.action.INSTALL_PACKAGE", OPS_ALLOW_INTENT_ANY,
     "installs a package once its dialog is confirmed"},
};

/* Explicit components, by class name (any package: vendors keep the names),
 * that act on start whatever the action. */
static const intent_rule INTENT_CLASSES[] = {
    {"OutgoingCallBroadcaster", OPS_ALLOW_INTENT_CALL,
     "places a call with any action (the phone app turns it into CALL)"},
    {"PrivilegedOutgoingCallBroadcaster", OPS_ALLOW_INTENT_CALL, "places a call on start"},
    {"EmergencyOutgoingCallBroadcaster", OPS_ALLOW_INTENT_CALL, "places an emergency call"},
    {"CallActivity", OPS_ALLOW_INTENT_CALL, "is Telecom's call entry"},
    {"UserCallActivity", OPS_ALLOW_INTENT_CALL, "is Telecom's call entry"},
    {"PrivilegedCallActivity", OPS_ALLOW_INTENT_CALL, "is Telecom's call entry"},
    {"EmergencyCallActivity", OPS_ALLOW_INTENT_CALL, "is Telecom's emergency call entry"},
    {"ShutdownActivity", OPS_ALLOW_INTENT_ANY,
     "shuts the device down on start, whatever the action"},
    {"UninstallerActivity", OPS_ALLOW_INTENT_ANY,
     "uninstalls a package once confirmed: uninstall_app and its list decide uninstalls"},
};

/* Data schemes: the safe list needs no name; the others need theirs. */
static const char *const INTENT_SAFE_SCHEMES[] = {"http", "https", "geo", "mailto", "market"};
static const intent_rule INTENT_SCHEMES[] = {
    {"tel", OPS_ALLOW_INTENT_CALL, "is a phone number: one tap from a call"},
    {"sip", OPS_ALLOW_INTENT_CALL, "is a call address"},
    {"voicemail", OPS_ALLOW_INTENT_CALL, "calls the voicemail"},
    {"sms", OPS_ALLOW_INTENT_SMS, "is a text message to a number"},
    {"smsto", OPS_ALLOW_INTENT_SMS, "is a text message to a number"},
    {"mms", OPS_ALLOW_INTENT_SMS, "is a multimedia message to a number"},
    {"mmsto", OPS_ALLOW_INTENT_SMS, "is a multimedia message to a number"},
};

static const char *allow_name(unsigned allow)
{
    return allow == OPS_ALLOW_INTENT_CALL  ? "intent_call"
           : allow == OPS_ALLOW_INTENT_SMS ? "intent_sms"
                                           : "intent_any";
}

static int intent_refuse(ops_err *e, const char *what, const char *value, const intent_rule *r)
{
    const char *name = allow_name(r->allow);
    return ops_fail(e, OPS_EARG,
                    "refused, nothing sent: the intent's %s %.200s %s, with no screen for a "
                    "person to confirm it. Only a person may allow it, by name: adbc-mcp "
                    "[tools] allow = [\"%s\"] in its config; adbc-serve --allow-tool %s "
                    "(docs/mcp.md, \"Intents\")",
                    what, value, r->why, name, name);
}

/* Control bytes anywhere, or a blank at either end: nothing a device
 * matches on has them, and they would hide a name from the checks below. */
static int intent_clean(ops_err *e, const char *what, const char *v)
{
    if (!v)
        return 0;
    size_t n = strlen(v);
    if (n == 0)
        return ops_fail(e, OPS_EARG, "argument '%s' is empty: leave it out instead", what);
    if (v[0] == ' ' || v[n - 1] == ' ')
        return ops_fail(e, OPS_EARG, "argument '%s' starts or ends with a blank", what);
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)v[i] < 0x20 || v[i] == 0x7f)
            return ops_fail(e, OPS_EARG, "argument '%s' holds a control byte at byte %zu", what,
                            i);
    if (strcmp(what, "data") != 0 && strchr(v, ' '))
        return ops_fail(e, OPS_EARG, "argument '%s' holds a blank: an Android %s has none",
                        what, what);
    return 0;
}

int ops_intent_check(ops_err *e, const adbc_intent *in, unsigned allow)
{
    if (!in)
        return ops_fail(e, OPS_EARG, "ops_intent_check: no intent");
    if (intent_clean(e, "action", in->action) || intent_clean(e, "data", in->data) ||
        intent_clean(e, "component", in->component))
        return -1;
    for (size_t i = 0; i < in->nextras; i++)
        if (intent_clean(e, "extras' key", in->extras[i].key))
            return -1;
    if (allow & OPS_ALLOW_INTENT_ANY)
        return 0;
    if (in->action)
        for (size_t i = 0; i < sizeof INTENT_ACTIONS / sizeof *INTENT_ACTIONS; i++)
            if (strcasecmp(in->action, INTENT_ACTIONS[i].name) == 0 &&
                !(allow & INTENT_ACTIONS[i].allow))
                return intent_refuse(e, "action", in->action, &INTENT_ACTIONS[i]);
    if (in->component) {
        /* "pkg/.Cls", "pkg/Cls" or "pkg/full.name.Cls": the class's last part */
        const char *slash = strchr(in->component, '/');
        const char *cls = slash ? slash + 1 : in->component;
        const char *dot = strrchr(cls, '.');
        if (dot)
            cls = dot + 1;
        for (size_t i = 0; i < sizeof INTENT_CLASSES / sizeof *INTENT_CLASSES; i++)
            if (strcasecmp(cls, INTENT_CLASSES[i].name) == 0 &&
                !(allow & INTENT_CLASSES[i].allow))
                return intent_refuse(e, "component", in->component, &INTENT_CLASSES[i]);
    }
    if (in->data) {
        /* The scheme is what precedes the first ':' (android.net.Uri.parse). */
        const char *colon = strchr(in->data, ':');
        size_t n = colon ? (size_t)(colon - in->data) : 0;
        if (n == 0)
            return ops_fail(e, OPS_EARG, "refused, nothing sent: argument 'data' must be a URI "
                            "with a scheme (http, https, geo, mailto or market without "
                            "allowing; docs/mcp.md, \"Intents\")");
        for (size_t i = 0; i < sizeof INTENT_SAFE_SCHEMES / sizeof *INTENT_SAFE_SCHEMES; i++)
            if (strlen(INTENT_SAFE_SCHEMES[i]) == n &&
                strncasecmp(in->data, INTENT_SAFE_SCHEMES[i], n) == 0)
                return 0;
        char scheme[64];
        snprintf(scheme, sizeof scheme, "%.*s:", (int)(n < 60 ? n : 60), in->data);
        for (size_t i = 0; i < sizeof INTENT_SCHEMES / sizeof *INTENT_SCHEMES; i++)
            if (strlen(INTENT_SCHEMES[i].name) == n &&
                strncasecmp(in->data, INTENT_SCHEMES[i].name, n) == 0) {
                if (allow & INTENT_SCHEMES[i].allow)
                    return 0;
                return intent_refuse(e, "data scheme", scheme, &INTENT_SCHEMES[i]);
            }
        intent_rule other = {NULL, OPS_ALLOW_INTENT_ANY,
                             "is not on the safe list (http, https, geo, mailto, market)"};
        return intent_refuse(e, "data scheme", scheme, &other);
    }
    return 0;
}

int ops_app_run(ops_ctx *c, const ops_app_req *r, char **activity, char **package)
{
    if (activity)
        *activity = NULL;
    if (package)
        *package = NULL;
    int rc;
    switch (r->op) {
    case OPS_APP_LAUNCH:
    case OPS_APP_STOP: {
        int launch = r->op == OPS_APP_LAUNCH;
        if (!ops_android_name(r->package))
            return ops_fail(&c->err, OPS_EARG, "package must be an Android name such as "
                                               "com.example.app (letters, digits, '_' and '.')");
        rc = launch ? adbc_app_launch(c->conn, r->package, ops_remaining(c))
                    : adbc_app_stop(c->conn, r->package, ops_remaining(c));
        if (rc < 0)
            return ops_fail_adbc(&c->err, rc, launch ? "launch" : "stop_app");
        snprintf(c->done, sizeof c->done, "%s %s", launch ? "launched" : "stopped", r->package);
        return 0;
    }
    case OPS_APP_INTENT:
        if (!r->intent.action && !r->intent.data && !r->intent.component)
            return ops_fail(&c->err, OPS_EARG, "intent needs at least one of action, data, "
                                               "component");
        if (ops_intent_check(&c->err, &r->intent, c->allow) != 0)
            return -1;
        rc = adbc_app_start(c->conn, &r->intent, ops_remaining(c));
        if (rc < 0)
            return ops_fail_adbc(&c->err, rc, "intent");
        snprintf(c->done, sizeof c->done, "started the intent");
        return 0;
    case OPS_APP_TOP: {
        char *act = NULL, *p = NULL;
        rc = adbc_app_top(&act, &p, c->conn, ops_remaining(c));
        if (rc < 0)
            return ops_fail_adbc(&c->err, rc, "top_activity");
        if (activity)
            *activity = act;
        else
            adbc_free(act);
        if (package)
            *package = p;
        else
            adbc_free(p);
        snprintf(c->done, sizeof c->done, "top");
        return 0;
    }
    }
    return ops_fail(&c->err, OPS_EARG, "the app operation must be launch, stop, top or intent");
}

int ops_wait_run(ops_ctx *c, const ops_wait_req *r)
{
    if (r->timeout_ms < 1)
        return ops_fail(&c->err, OPS_EARG, "timeout_ms must be at least 1");
    int64_t left = c->deadline - ops_now_ms();
    if (r->timeout_ms > left - 500)
        return ops_fail(&c->err, OPS_EARG, "timeout_ms %d is beyond the call limit (%lld ms "
                        "left in this call, the server's call timeout): use at most %lld",
                        r->timeout_ms, (long long)left, (long long)(left - 500));
    adbc_ui_opts uo;
    adbc_ui_opts_init(&uo);
    uo.timeout_ms = r->dump_ms > 0 ? r->dump_ms : ops_remaining(c);
    adbc_ui_snap *snap = NULL;
    const char *what = r->text ? "wait_for_text" : r->elem ? "wait_state" : "wait_stable";
    int rc = r->text   ? adbc_ui_wait_text(&snap, c->conn, r->text, r->flags, r->timeout_ms, &uo)
             : r->elem ? adbc_ui_wait_state(&snap, c->conn, r->elem, r->cond, r->timeout_ms, &uo)
                       : adbc_ui_wait_stable(&snap, c->conn, r->timeout_ms, &uo);
    if (rc < 0) {
        adbc_ui_snap_free(snap);
        return ops_fail_adbc(&c->err, rc, what);
    }
    adbc_ui_snap_free(*c->last);
    *c->last = snap;
    int gone = (r->flags & ADBC_UI_WAIT_GONE) != 0;
    snprintf(c->done, sizeof c->done, "%s",
             r->text   ? (gone ? "the text is gone" : "the text is on screen")
             : r->elem ? "the element reached the state"
                       : "the screen is stable");
    return 0;
}
