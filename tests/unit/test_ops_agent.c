/* SPDX-License-Identifier: Apache-2.0 */
/* The agent's parts that need no device or model: the safety patterns
 * (whole words, phrases, regular expressions, case), the settings and the
 * checks ops_agent_run makes before it starts, the check of a call before
 * anything is sent, and the JSON forms. tests/sh/agent.sh runs the loop. */
#include "t.h"

#include "ops_agent_int.h"
#include "ops_config.h"

static int stops(const char *const *pats, size_t n, const char *text)
{
    agent_safety *s = NULL;
    ops_err e;
    if (agent_safety_init(&s, pats, n, &e) != 0)
        return -1;
    char why[512];
    int r = agent_safety_check(s, text, why, sizeof why);
    agent_safety_free(s);
    return r;
}

TEST(safety_defaults_whole_words)
{
    CHECK_EQ_INT(stops(NULL, 0, "- Button [ref=1] \"Pay now\""), 1);
    CHECK_EQ_INT(stops(NULL, 0, "- Button [ref=1] \"PAY\""), 1);
    CHECK_EQ_INT(stops(NULL, 0, "- Text \"Display\"\n- Text \"payload\""), 0);
    CHECK_EQ_INT(stops(NULL, 0, "- Button [ref=2] \"Place  order\""), 1);
    CHECK_EQ_INT(stops(NULL, 0, "- Button \"Factory reset\" (Erase all data)"), 1);
    CHECK_EQ_INT(stops(NULL, 0, "- Switch [ref=1] \"Bluetooth\" [checked]"), 0);
    CHECK_EQ_INT(stops(NULL, 0, ""), 0);
}

TEST(safety_own_list)
{
    static const char *const pats[] = {"re:^- Button .*\"Delete\"", "send it"};
    CHECK_EQ_INT(stops(pats, 2, "- Button [ref=1] \"Delete\""), 1);
    CHECK_EQ_INT(stops(pats, 2, "- Text \"Delete\""), 0);
    CHECK_EQ_INT(stops(pats, 2, "- Text \"Pay now\""), 0); /* the defaults are replaced */
    CHECK_EQ_INT(stops(pats, 2, "- Text \"please SEND\tIT now\""), 1);
    /* a bad expression is refused, naming the pattern */
    static const char *const bad[] = {"re:(unclosed"};
    agent_safety *s = NULL;
    ops_err e;
    CHECK(agent_safety_init(&s, bad, 1, &e) != 0);
    CHECK(e.code == OPS_EARG && strstr(e.msg, "(unclosed"));
    static const char *const empty[] = {""};
    CHECK(agent_safety_init(&s, empty, 1, &e) != 0);
    char why[512];
    agent_safety *d = NULL;
    CHECK(agent_safety_init(&d, NULL, 0, &e) == 0);
    CHECK_EQ_INT(agent_safety_check(d, "  - Button [ref=3] \"Buy now\"", why, sizeof why), 1);
    agent_safety_free(d);
    CHECK(strstr(why, "\"buy\"") && strstr(why, "Buy now"));
}

TEST(settings)
{
    ops_agent_config c;
    ops_agent_config_init(&c);
    CHECK_EQ_INT(c.max_steps, 15);
    CHECK_EQ_INT(c.hint_after, 3);
    CHECK_EQ_INT(c.back_after, 5);
    ops_err e;
    CHECK(ops_agent_set(&c, "max_steps", "50", &e) == 0 && c.max_steps == 50);
    CHECK(ops_agent_set(&c, "max_steps", "51", &e) != 0 && c.max_steps == 50);
    CHECK(strstr(e.msg, "1..50"));
    CHECK(ops_agent_set(&c, "max_steps", "0", &e) != 0);
    CHECK(ops_agent_set(&c, "max_steps", "7x", &e) != 0);
    CHECK(ops_agent_set(&c, "vision", "on", &e) == 0 && c.vision == 1);
    CHECK(ops_agent_set(&c, "vision", "maybe", &e) != 0);
    CHECK(ops_agent_set(&c, "nope", "1", &e) != 0 && strstr(e.msg, "max_steps"));
    CHECK(ops_agent_set(NULL, "max_steps", "1", &e) != 0 && e.code == OPS_EARG);
    CHECK(ops_agent_set(&c, NULL, "1", &e) != 0);
}

TEST(config_table)
{
    ops_agent_config c;
    ops_agent_config_init(&c);
    char err[256];
    ops_cfg_val v = {.type = OPS_CFG_INT, .i = 9};
    CHECK(ops_agent_cfg_value(&c, "back_after", &v, err, sizeof err) == 0 && c.back_after == 9);
    char **arr = calloc(2, sizeof *arr);
    CHECK(arr);
    arr[0] = strdup("pay");
    arr[1] = strdup("re:x+");
    ops_cfg_val a = {.type = OPS_CFG_ARR, .arr = arr, .n = 2};
    CHECK(ops_agent_cfg_value(&c, "patterns", &a, err, sizeof err) == 0);
    CHECK(a.arr == NULL && c.npatterns == 2 && strcmp(c.patterns[1], "re:x+") == 0);
    ops_cfg_val none = {.type = OPS_CFG_ARR};
    CHECK(ops_agent_cfg_value(&c, "patterns", &none, err, sizeof err) == 0);
    CHECK(c.patterns != NULL && c.npatterns == 0); /* [] : no stop at all */
    ops_cfg_val str = {.type = OPS_CFG_STR, .s = "R58"};
    CHECK(ops_agent_cfg_value(&c, "allowlist", &str, err, sizeof err) != 0);
    CHECK(ops_agent_cfg_value(&c, "max_stepz", &v, err, sizeof err) != 0);
    CHECK(strstr(err, "max_stepz"));
    ops_agent_config_free(&c);
}

TEST(run_refuses_before_starting)
{
    ops_agent_config c;
    ops_agent_config_init(&c);
    ops_agent_result r;
    ops_err e;
    ops_agent_device d = {0};
    CHECK(ops_agent_run(NULL, &c, &d, &e) != 0 && e.code == OPS_EARG);
    CHECK(ops_agent_run(&r, NULL, &d, &e) != 0 && e.code == OPS_EARG);
    CHECK(ops_agent_run(&r, &c, &d, NULL) != 0);
    CHECK(ops_agent_run(&r, &c, &d, &e) != 0 && strstr(e.msg, "goal"));
    c.goal = "x";
    CHECK(ops_agent_run(&r, &c, &d, &e) != 0 && strstr(e.msg, "model"));
    c.model = (struct ops_llm *)&c; /* never used: the device check fails first */
    CHECK(ops_agent_run(&r, &c, &d, &e) != 0 && strstr(e.msg, "one device"));
    c.max_steps = 51;
    CHECK(ops_agent_run(&r, &c, &d, &e) != 0 && strstr(e.msg, "max_steps"));
    c.max_steps = 5;
    c.back_after = 2; /* below hint_after */
    CHECK(ops_agent_run(&r, &c, &d, &e) != 0 && strstr(e.msg, "back_after"));
    c.back_after = 5;
    c.goal = "\xff\xfe";
    CHECK(ops_agent_run(&r, &c, &d, &e) != 0 && strstr(e.msg, "UTF-8"));
}

TEST(call_checked_before_the_device)
{
    adbc_ui_snap *snap = NULL;
    static const char xml[] = "<hierarchy><node class=\"android.widget.Button\" text=\"A\" "
                              "clickable=\"true\" bounds=\"[0,0][10,10]\"/></hierarchy>";
    CHECK(adbc_ui_snap_parse(&snap, xml, sizeof xml - 1) == 0);
    ops_err e;
    cJSON *ok = cJSON_Parse("{\"ref\":1}"), *far = cJSON_Parse("{\"ref\":2}"),
          *frac = cJSON_Parse("{\"ref\":1.5}"), *done = cJSON_Parse("{\"answer\":\"a\"}"),
          *done_bad = cJSON_Parse("{\"answer\":\"a\",\"x\":1}");
    int r1 = agent_tool_check("tap", ok, snap, 0, &e);
    int r2 = agent_tool_check("tap", far, snap, 0, &e);
    int code2 = e.code;
    int r3 = agent_tool_check("tap", frac, snap, 0, &e);
    int r4 = agent_tool_check("shell", ok, snap, 0, &e);
    int r5 = agent_tool_check("done", done, snap, 0, &e);
    int r6 = agent_tool_check("done", done_bad, snap, 0, &e);
    int r7 = agent_tool_check(NULL, ok, snap, 0, &e);
    int r8 = agent_tool_check("install_apk", ok, snap, 1, &e);
    cJSON_Delete(ok);
    cJSON_Delete(far);
    cJSON_Delete(frac);
    cJSON_Delete(done);
    cJSON_Delete(done_bad);
    adbc_ui_snap_free(snap);
    CHECK(r1 == 0);
    CHECK(r2 != 0 && code2 == OPS_ENOREF);
    CHECK(r3 != 0);
    CHECK(r4 != 0); /* no shell unless allowed */
    CHECK(r5 == 0);
    CHECK(r6 != 0);
    CHECK(r7 != 0);
    CHECK(r8 != 0); /* not in the agent's subset, shell allowed or not */
}

TEST(json_forms)
{
    ops_agent_step s = {.index = 2, .observation = "o", .hint = "", .reasoning = "r",
                        .action = "tap", .args = "{\"ref\":1}", .ok = 1, .result = "done",
                        .screen_changed = -1, .total_ms = 5};
    cJSON *j = ops_agent_step_json(&s);
    CHECK(j);
    char *t = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    CHECK(t);
    int good = strstr(t, "\"args\":{\"ref\":1}") && !strstr(t, "screen_changed") &&
               strstr(t, "\"total\":5");
    free(t);
    CHECK(good);
    ops_agent_result r = {.end = OPS_AGENT_SAFETY_STOP, .steps = 1};
    snprintf(r.reason, sizeof r.reason, "why");
    j = ops_agent_result_json(&r);
    CHECK(j);
    t = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    good = t && strstr(t, "\"end\":\"safety_stop\"") && strstr(t, "\"reason\":\"why\"") &&
           !strstr(t, "answer");
    free(t);
    CHECK(good);
    CHECK(ops_agent_step_json(NULL) == NULL && ops_agent_result_json(NULL) == NULL);
    CHECK_STR(ops_agent_end_name(OPS_AGENT_MAX_STEPS), "max_steps");
}

int main(void)
{
    RUN(safety_defaults_whole_words);
    RUN(safety_own_list);
    RUN(settings);
    RUN(config_table);
    RUN(run_refuses_before_starting);
    RUN(call_checked_before_the_device);
    RUN(json_forms);
    return T_DONE();
}
