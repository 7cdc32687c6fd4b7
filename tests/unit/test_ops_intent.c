/* SPDX-License-Identifier: Apache-2.0 */
/* The intent policy (ops_intent_check, docs/mcp.md "Intents"): every row of
 * the table refused with nothing sent unless its name is allowed, the ways
 * around it a model could try (case, blanks, control bytes, an explicit
 * component with a harmless action, an intent: URI as data), and what stays
 * allowed. Refusals go through ops_app_run with no connection: an intent
 * the policy let through would crash here instead of failing. */
#include "t.h"

#include <stdio.h>
#include <string.h>

#include "ops_core.h"
#include "ops_tools.h"

#define CALL OPS_ALLOW_INTENT_CALL
#define SMS OPS_ALLOW_INTENT_SMS
#define ANY OPS_ALLOW_INTENT_ANY

/* Refused without allow (through ops_app_run: nothing can be sent, the
 * context has no connection), with the message naming `name`; and let
 * through by exactly the bit `need` (and by intent_any). */
static void refused_unless(const char *action, const char *data, const char *component,
                           unsigned need, const char *name)
{
    adbc_intent in = {.size = sizeof in, .action = action, .data = data, .component = component};
    ops_ctx c;
    ops_ctx_init(&c, NULL, NULL, ops_now_ms() + 5000);
    c.allow = (CALL | SMS | ANY) & ~need & ~ANY; /* every other name allowed */
    ops_app_req r = {.op = OPS_APP_INTENT, .intent = in};
    int rc = ops_app_run(&c, &r, NULL, NULL);
    if (rc != -1 || c.err.code != OPS_EARG || !strstr(c.err.msg, "refused, nothing sent") ||
        !strstr(c.err.msg, name)) {
        printf("  not refused as it should be: action %s data %s component %s: %s\n",
               action ? action : "-", data ? data : "-", component ? component : "-", c.err.msg);
        CHECK(0);
    }
    ops_err e;
    CHECK_EQ_INT(ops_intent_check(&e, &in, need), 0);
    CHECK_EQ_INT(ops_intent_check(&e, &in, ANY), 0);
}

static void allowed(const char *action, const char *data, const char *component)
{
    adbc_intent in = {.size = sizeof in, .action = action, .data = data, .component = component};
    ops_err e = {0};
    int rc = ops_intent_check(&e, &in, 0);
    if (rc != 0)
        printf("  refused but safe: action %s data %s component %s: %s\n", action ? action : "-",
               data ? data : "-", component ? component : "-", e.msg);
    CHECK_EQ_INT(rc, 0);
}

static void bad(const char *action, const char *data, const char *component, const char *why)
{
    adbc_intent in = {.size = sizeof in, .action = action, .data = data, .component = component};
    ops_err e = {0};
    CHECK_EQ_INT(ops_intent_check(&e, &in, ANY), -1); /* even intent_any does not take these */
    CHECK_EQ_INT(e.code, OPS_EARG);
    if (!strstr(e.msg, why))
        printf("  message: %s (wanted %s)\n", e.msg, why);
    CHECK(strstr(e.msg, why) != NULL);
}

TEST(every_action_of_the_table)
{
    const char *tel = "tel:5551234";
    refused_unless("android.intent.action.CALL", tel, NULL, CALL, "intent_call");
    refused_unless("android.intent.action.CALL_PRIVILEGED", tel, NULL, CALL, "intent_call");
    refused_unless("android.intent.action.CALL_EMERGENCY", "tel:112", NULL, CALL, "intent_call");
    refused_unless("android.intent.action.NEW_OUTGOING_CALL", NULL, NULL, CALL, "intent_call");
    refused_unless("android.intent.action.RESPOND_VIA_MESSAGE", NULL, NULL, SMS, "intent_sms");
    refused_unless("android.intent.action.REBOOT", NULL, NULL, ANY, "intent_any");
    refused_unless("android.intent.action.ACTION_REQUEST_SHUTDOWN", NULL, NULL, ANY, "intent_any");
    refused_unless("com.android.internal.intent.action.REQUEST_SHUTDOWN", NULL, NULL, ANY,
                   "intent_any");
    refused_unless("android.intent.action.ACTION_SHUTDOWN", NULL, NULL, ANY, "intent_any");
    refused_unless("android.intent.action.FACTORY_RESET", NULL, NULL, ANY, "intent_any");
    refused_unless("android.intent.action.MASTER_CLEAR", NULL, NULL, ANY, "intent_any");
    refused_unless("android.intent.action.DELETE", NULL, NULL, ANY, "intent_any");
    refused_unless("android.intent.action.UNINSTALL_PACKAGE", NULL, NULL, ANY, "intent_any");
    refused_unless("android.intent.action.INSTALL_PACKAGE", NULL, NULL, ANY, "intent_any");
}

TEST(every_component_of_the_table_whatever_the_action)
{
    const char *view = "android.intent.action.VIEW";
    refused_unless(view, NULL, "com.android.phone/.OutgoingCallBroadcaster", CALL, "intent_call");
    refused_unless(NULL, NULL, "com.android.phone/com.android.phone.OutgoingCallBroadcaster", CALL,
                   "intent_call");
    refused_unless(view, NULL, "com.android.phone/.PrivilegedOutgoingCallBroadcaster", CALL,
                   "intent_call");
    refused_unless(view, NULL, "com.android.phone/.EmergencyOutgoingCallBroadcaster", CALL,
                   "intent_call");
    refused_unless(NULL, NULL, "com.android.server.telecom/.CallActivity", CALL, "intent_call");
    refused_unless(NULL, NULL, "com.android.server.telecom/.components.UserCallActivity", CALL,
                   "intent_call");
    refused_unless(NULL, NULL, "com.android.server.telecom/.PrivilegedCallActivity", CALL,
                   "intent_call");
    refused_unless(NULL, NULL, "com.android.server.telecom/.EmergencyCallActivity", CALL,
                   "intent_call");
    /* no action at all: ShutdownActivity shuts down */
    refused_unless(NULL, NULL, "android/com.android.internal.app.ShutdownActivity", ANY,
                   "intent_any");
    refused_unless(view, NULL, "com.android.packageinstaller/.UninstallerActivity", ANY,
                   "intent_any");
    /* a vendor's copy under another package, in another case */
    refused_unless(NULL, NULL, "com.vendor.dialer/com.vendor.OUTGOINGCALLBROADCASTER", CALL,
                   "intent_call");
}

TEST(every_scheme_of_the_table)
{
    const char *view = "android.intent.action.VIEW";
    refused_unless(view, "tel:5551234", NULL, CALL, "intent_call");
    refused_unless("android.intent.action.DIAL", "tel:5551234", NULL, CALL, "intent_call");
    refused_unless(view, "sip:bob@example.com", NULL, CALL, "intent_call");
    refused_unless(view, "voicemail:", NULL, CALL, "intent_call");
    refused_unless("android.intent.action.SENDTO", "sms:5551234", NULL, SMS, "intent_sms");
    refused_unless("android.intent.action.SENDTO", "smsto:5551234", NULL, SMS, "intent_sms");
    refused_unless("android.intent.action.SENDTO", "mms:5551234", NULL, SMS, "intent_sms");
    refused_unless("android.intent.action.SENDTO", "mmsto:5551234", NULL, SMS, "intent_sms");
    /* beyond the safe list */
    refused_unless(view, "file:///sdcard/a.apk", NULL, ANY, "intent_any");
    refused_unless(view, "content://media/external/1", NULL, ANY, "intent_any");
    refused_unless(view, "javascript:alert(1)", NULL, ANY, "intent_any");
    refused_unless(view, "package:com.x", NULL, ANY, "intent_any");
    refused_unless(view, "android-app://com.x/https/x.com", NULL, ANY, "intent_any");
    refused_unless(view, "x:y", NULL, ANY, "intent_any");
    /* an intent URI carrying the CALL action as data */
    refused_unless(NULL, "intent:#Intent;action=android.intent.action.CALL;end", NULL, ANY,
                   "intent_any");
    refused_unless(NULL, "intent://5551234#Intent;scheme=tel;action=android.intent.action.CALL;end",
                   NULL, ANY, "intent_any");
}

TEST(spelling_does_not_get_past_it)
{
    /* the device compares exactly; the policy refuses every spelling */
    refused_unless("android.intent.action.call", "tel:1", NULL, CALL, "intent_call");
    refused_unless("ANDROID.INTENT.ACTION.CALL", "https://x.com", NULL, CALL, "intent_call");
    refused_unless("android.intent.action.VIEW", "TEL:5551234", NULL, CALL, "intent_call");
    refused_unless("android.intent.action.VIEW", "Tel:5551234", NULL, CALL, "intent_call");
    refused_unless("android.intent.action.VIEW", "SmsTo:1", NULL, SMS, "intent_sms");
}

TEST(blanks_and_control_bytes)
{
    bad(" android.intent.action.CALL", "tel:1", NULL, "blank");
    bad("android.intent.action.CALL ", NULL, NULL, "blank");
    bad("android.intent.action.CALL\t", NULL, NULL, "control byte");
    bad("android.intent.action.VIEW\nandroid.intent.action.CALL", NULL, NULL, "control byte");
    bad("android.intent. action.CALL", NULL, NULL, "blank");
    bad(NULL, " tel:1", NULL, "blank");
    bad(NULL, "tel:1\r", NULL, "control byte");
    bad(NULL, NULL, "com.android.phone/ .OutgoingCallBroadcaster", "blank");
    bad("", NULL, NULL, "empty");
    adbc_intent_extra x = {'s', "a key", "v"};
    adbc_intent in = {.size = sizeof in, .action = "android.intent.action.VIEW",
                      .extras = &x, .nextras = 1};
    ops_err e;
    CHECK_EQ_INT(ops_intent_check(&e, &in, ANY), -1);
    CHECK(strstr(e.msg, "key") != NULL);
}

TEST(what_stays_allowed)
{
    allowed("android.intent.action.VIEW", "https://example.com/?q=1", NULL);
    allowed("android.intent.action.VIEW", "http://example.com", NULL);
    allowed("android.intent.action.VIEW", "HTTPS://example.com", NULL);
    allowed("android.intent.action.VIEW", "geo:0,0?q=coffee near me", NULL);
    allowed("android.intent.action.SENDTO", "mailto:a@example.com", NULL);
    allowed("android.intent.action.VIEW", "market://details?id=com.x", NULL);
    allowed("android.intent.action.DIAL", NULL, NULL);
    allowed("android.intent.action.SEND", NULL, NULL);
    allowed("android.settings.WIFI_SETTINGS", NULL, NULL);
    allowed("android.intent.action.MAIN", NULL, "com.chat/.Main");
    allowed(NULL, NULL, "com.chat/com.chat.CallLogActivity"); /* not a call entry */
    allowed("com.chat.action.OPEN", "https://chat.example/1", "com.chat/.Main");
}

TEST(names_map_to_their_bits)
{
    /* the names a person writes, and each lets through only its rows */
    adbc_intent call = {.size = sizeof call, .action = "android.intent.action.CALL",
                        .data = "tel:1"};
    adbc_intent sms = {.size = sizeof sms, .action = "android.intent.action.SENDTO",
                       .data = "smsto:1"};
    ops_err e;
    CHECK_EQ_INT(ops_intent_check(&e, &call, SMS), -1);
    CHECK_EQ_INT(ops_intent_check(&e, &sms, CALL), -1);
    CHECK_EQ_INT(ops_intent_check(&e, &call, CALL), 0);
    CHECK_EQ_INT(ops_intent_check(&e, &sms, SMS), 0);
    CHECK_EQ_INT(ops_tools_optin("intent_call"), CALL);
    CHECK_EQ_INT(ops_tools_optin("intent_sms"), SMS);
    CHECK_EQ_INT(ops_tools_optin("intent_any"), ANY);
    CHECK_EQ_INT(ops_tools_optin("intent_CALL"), 0);
    /* above the tool gates: allowing a name offers no tool and hides none */
    CHECK_EQ_INT((CALL | SMS | ANY) & (OPS_TOOL_GATES | OPS_TOOL_READONLY | OPS_TOOL_DESTRUCTIVE |
                                       OPS_TOOL_CALLBOUND | OPS_TOOL_KEYS), 0);
    CHECK_EQ_INT(ops_tools_optin("system_keys") & (CALL | SMS | ANY), 0);
}

int main(void)
{
    RUN(every_action_of_the_table);
    RUN(every_component_of_the_table_whatever_the_action);
    RUN(every_scheme_of_the_table);
    RUN(spelling_does_not_get_past_it);
    RUN(blanks_and_control_bytes);
    RUN(what_stays_allowed);
    RUN(names_map_to_their_bits);
    return T_DONE();
}
