/* SPDX-License-Identifier: Apache-2.0 */
/* tools/ops without a device: the five selector tiers on parsed screens,
 * ambiguity refused with the candidates, and the act argument checks with
 * the error codes the front ends map to HTTP statuses. */
#include "t.h"

#include <stdlib.h>
#include <string.h>

#include "adbc/error.h"
#include "ops_json.h"

#define P " package=\"com.s\" enabled=\"true\" "
static const char *screen =
    "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">"
    "<node class=\"android.widget.FrameLayout\"" P "bounds=\"[0,0][1080,2400]\">"
    "<node class=\"android.widget.ImageButton\" content-desc=\"Search\" clickable=\"true\"" P
    "bounds=\"[900,100][1040,200]\"/>"
    "<node class=\"android.widget.LinearLayout\" clickable=\"true\"" P "bounds=\"[0,300][1080,450]\">"
    "<node class=\"android.widget.TextView\" text=\"Wi-Fi\"" P "bounds=\"[40,320][400,430]\"/></node>"
    "<node class=\"android.widget.Button\" text=\"OK\" clickable=\"true\"" P "bounds=\"[0,600][500,700]\"/>"
    "<node class=\"android.widget.Button\" text=\"OK\" clickable=\"true\"" P "bounds=\"[540,600][1080,700]\"/>"
    "<node class=\"android.widget.EditText\" text=\"Email address\" clickable=\"true\"" P
    "bounds=\"[40,800][1040,900]\"/>"
    "<node class=\"android.widget.Button\" text=\"Send\" resource-id=\"com.s:id/send\" clickable=\"true\"" P
    "bounds=\"[860,2000][1040,2200]\"/></node></hierarchy>";

static adbc_ui_snap *snap;

static int pick(const char *id, const char *text, const char *desc, int *tier, ops_err *e)
{
    ops_sel sel = {id, text, desc};
    int ref = 0;
    memset(e, 0, sizeof *e);
    if (ops_select(&ref, tier, snap, &sel, e) != 0)
        return -1;
    return ref;
}

TEST(tiers)
{
    ops_err e;
    int tier = 0;
    CHECK_EQ_INT(pick("send", NULL, NULL, &tier, &e), 6);
    CHECK_EQ_INT(tier, 1);
    CHECK_EQ_INT(pick("com.s:id/send", NULL, NULL, &tier, &e), 6);
    CHECK_EQ_INT(pick(NULL, "Send", NULL, &tier, &e), 6);
    CHECK_EQ_INT(tier, 2);
    CHECK_EQ_INT(pick(NULL, "Wi-Fi", NULL, &tier, &e), 2); /* the clickable row */
    CHECK_EQ_INT(tier, 3);
    CHECK_EQ_INT(pick(NULL, NULL, "Search", &tier, &e), 1);
    CHECK_EQ_INT(tier, 4);
    CHECK_EQ_INT(pick(NULL, "Search", NULL, &tier, &e), 1);
    CHECK_EQ_INT(tier, 4);
    CHECK_EQ_INT(pick(NULL, "EMAIL", NULL, &tier, &e), 5);
    CHECK_EQ_INT(tier, 5);
    /* An id that matches wins over text that would match elsewhere. */
    CHECK_EQ_INT(pick("send", "Wi-Fi", NULL, &tier, &e), 6);
}

TEST(ambiguity_and_absence)
{
    ops_err e;
    int tier = 0;
    CHECK_EQ_INT(pick(NULL, "OK", NULL, &tier, &e), -1);
    CHECK_EQ_INT(e.code, OPS_EAMBIGUOUS);
    CHECK(strstr(e.msg, "[ref=3] Button \"OK\"") && strstr(e.msg, "[ref=4] Button \"OK\""));
    CHECK_EQ_INT(ops_code_http(e.code), 409);
    CHECK_EQ_INT(pick(NULL, "Nowhere", NULL, &tier, &e), -1);
    CHECK_EQ_INT(e.code, OPS_ENOMATCH);
    CHECK_EQ_INT(ops_code_http(e.code), 404);
    CHECK_STR(ops_code_name(OPS_ESTALE), "stale");
}

static int parse(ops_action a, const char *json, ops_err *e)
{
    cJSON *j = cJSON_Parse(json);
    ops_act act;
    int rc = ops_act_parse(&act, a, j, e);
    cJSON_Delete(j);
    return rc;
}

TEST(act_arguments)
{
    ops_err e;
    CHECK_EQ_INT(parse(OPS_TAP, "{\"ref\":3}", &e), 0);
    CHECK_EQ_INT(parse(OPS_TAP, "{}", &e), -1);
    CHECK(strstr(e.msg, "missing argument 'ref'") != NULL);
    CHECK_EQ_INT(e.code, OPS_EARG);
    CHECK_EQ_INT(parse(OPS_TAP, "{\"ref\":\"3\"}", &e), -1);
    CHECK(strstr(e.msg, "must be an integer") != NULL);
    CHECK_EQ_INT(parse(OPS_TAP, "{\"ref\":3,\"selector\":{\"text\":\"a\"}}", &e), -1);
    CHECK_EQ_INT(parse(OPS_TAP, "{\"selector\":{}}", &e), -1);
    CHECK_EQ_INT(parse(OPS_TAP, "{\"selector\":{\"label\":\"a\"}}", &e), -1);
    CHECK(strstr(e.msg, "unknown argument 'label'") != NULL);
    CHECK_EQ_INT(parse(OPS_TYPE, "{\"text\":\"x\",\"clear\":true}", &e), -1);
    CHECK(strstr(e.msg, "clear needs") != NULL);
    CHECK_EQ_INT(parse(OPS_SCROLL, "{\"direction\":\"sideways\"}", &e), -1);
    CHECK_EQ_INT(parse(OPS_PRESS, "{\"key\":\"nosuchkey\"}", &e), -1);
    CHECK_EQ_INT(parse(OPS_SWIPE, "{\"x1\":1,\"y1\":2,\"x2\":3,\"y2\":70000}", &e), -1);
    CHECK(strstr(e.msg, "out of range") != NULL);
    ops_action a;
    CHECK_EQ_INT(ops_action_parse(&a, "long_press"), 0);
    CHECK_EQ_INT(a, OPS_LONG_PRESS);
    CHECK_EQ_INT(ops_action_parse(&a, "dance"), -1);
}

TEST(refs_json)
{
    cJSON *r = ops_refs_json(snap);
    CHECK_EQ_INT(cJSON_GetArraySize(r), 6);
    cJSON *six = cJSON_GetArrayItem(r, 5);
    CHECK_STR(cJSON_GetObjectItem(six, "text")->valuestring, "Send");
    cJSON *tap = cJSON_GetObjectItem(six, "tap");
    CHECK_EQ_INT(cJSON_GetArrayItem(tap, 0)->valueint, 950);
    CHECK_EQ_INT(cJSON_GetArrayItem(tap, 1)->valueint, 2100);
    cJSON_Delete(r);
    char *t = ops_snapshot_text(snap);
    CHECK(t && t[strlen(t) - 1] == '\n');
    free(t);
}

int main(void)
{
    if (adbc_ui_snap_parse(&snap, screen, strlen(screen)) < 0) {
        printf("parse failed: %s\n", adbc_last_error());
        return 1;
    }
    RUN(tiers);
    RUN(ambiguity_and_absence);
    RUN(act_arguments);
    RUN(refs_json);
    adbc_ui_snap_free(snap);
    return T_DONE();
}
