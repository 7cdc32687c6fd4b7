/* SPDX-License-Identifier: Apache-2.0 */
/* tools/ops' core without JSON and without a device: requests as C structs
 * are checked before anything is sent (no connection is given, so a check
 * that let a request through would crash here), failures carry the code
 * and, for the library's errors, the adbc error behind them. */
#include "t.h"

#include <string.h>

#include "adbc/error.h"
#include "ops_core.h"

TEST(android_names)
{
    CHECK_EQ_INT(ops_android_name("com.example.app"), 1);
    CHECK_EQ_INT(ops_android_name("android.permission.CAMERA"), 1);
    CHECK_EQ_INT(ops_android_name("a_b.c9"), 1);
    CHECK_EQ_INT(ops_android_name(NULL), 0);
    CHECK_EQ_INT(ops_android_name(""), 0);
    CHECK_EQ_INT(ops_android_name("9lives"), 0);
    CHECK_EQ_INT(ops_android_name("com.x;reboot"), 0);
    CHECK_EQ_INT(ops_android_name("com x"), 0);
}

TEST(app_checked_before_sending)
{
    ops_ctx c;
    ops_ctx_init(&c, NULL, NULL, ops_now_ms() + 5000);
    ops_app_req r = {.op = OPS_APP_LAUNCH, .package = "com.x; reboot"};
    CHECK_EQ_INT(ops_app_run(&c, &r, NULL, NULL), -1);
    CHECK_EQ_INT(c.err.code, OPS_EARG);
    CHECK_EQ_INT(c.err.rc, 0);
    CHECK(strstr(c.err.msg, "Android name") != NULL);
    ops_app_req in = {.op = OPS_APP_INTENT};
    CHECK_EQ_INT(ops_app_run(&c, &in, NULL, NULL), -1);
    CHECK_EQ_INT(c.err.code, OPS_EARG);
    CHECK(strstr(c.err.msg, "at least one of action, data, component") != NULL);
}

TEST(wait_within_the_call)
{
    ops_ctx c;
    ops_ctx_init(&c, NULL, NULL, ops_now_ms() + 3000);
    ops_wait_req r = {.text = "OK", .timeout_ms = 10000};
    CHECK_EQ_INT(ops_wait_run(&c, &r), -1);
    CHECK_EQ_INT(c.err.code, OPS_EARG);
    CHECK(strstr(c.err.msg, "beyond the call limit") != NULL);
    r.timeout_ms = 0;
    CHECK_EQ_INT(ops_wait_run(&c, &r), -1);
    CHECK_EQ_INT(c.err.code, OPS_EARG);
}

TEST(act_on_a_ref_needs_a_snapshot)
{
    adbc_ui_snap *none = NULL;
    ops_ctx c;
    ops_ctx_init(&c, NULL, &none, ops_now_ms() + 3000);
    ops_act a = {.action = OPS_TAP, .ref = 3};
    CHECK_EQ_INT(ops_act_run(&c, &a), -1);
    CHECK_EQ_INT(c.err.code, OPS_ENOREF);
    CHECK(strstr(c.err.msg, "snapshot") != NULL);
}

TEST(adbc_errors_keep_their_code)
{
    ops_err e;
    CHECK_EQ_INT(ops_fail_adbc(&e, ADBC_ESTALE, "tap"), -1);
    CHECK_EQ_INT(e.code, OPS_ESTALE);
    CHECK_EQ_INT(e.rc, ADBC_ESTALE);
    CHECK_EQ_INT(ops_fail(&e, OPS_EBUSY, "busy"), -1);
    CHECK_EQ_INT(e.rc, 0);
}

int main(void)
{
    RUN(android_names);
    RUN(app_checked_before_sending);
    RUN(wait_within_the_call);
    RUN(act_on_a_ref_needs_a_snapshot);
    RUN(adbc_errors_keep_their_code);
    return T_DONE();
}
