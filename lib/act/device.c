/* SPDX-License-Identifier: Apache-2.0 */
/* Device queries: system properties and a bounded logcat.
 *
 * logcat is only ever read in bounded form: a dump of the last lines
 * (`-d -t N` ends by itself), or following the log for a fixed time after
 * which adbc closes the stream. An open-ended follow would tie up a caller
 * that only wanted "what just happened". */
#include "act/act_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adbc/banner.h"
#include "conn/conn_facts.h"
#include "core/internal.h"

#define LOGCAT_MAX (16u << 20)

int adbc_getprop(char **value, adbc_conn *c, const char *name, int timeout_ms)
{
    if (!value || !c)
        return core_fail(ADBC_EINVAL, "adbc_getprop: value and c must not be NULL");
    *value = NULL;
    if (name && (!*name || strlen(name) > 256))
        return core_fail(ADBC_EINVAL, "a property name is 1 to 256 characters");
    core_buf b = {0};
    core_buf_add(&b, "getprop", 7);
    if (name) {
        core_buf_add(&b, " ", 1);
        act_buf_quote(&b, name);
    }
    char *cmd;
    int rc = act_buf_take(&b, &cmd);
    if (rc < 0)
        return rc;
    act_out o;
    rc = act_run(&o, c, cmd, 0, timeout_ms);
    core_free(cmd);
    if (rc < 0)
        return rc;
    if (o.status != 0) {
        rc = core_fail(ADBC_EREMOTE, "getprop failed on the device (status %d): %.200s", o.status,
                       o.text);
        act_out_free(&o);
        return rc;
    }
    if (name) { /* one value: drop the line end */
        while (o.len && (o.text[o.len - 1] == '\n' || o.text[o.len - 1] == '\r'))
            o.text[--o.len] = '\0';
    }
    *value = o.text;
    return 0;
}

/* An API level as a property gives it; 0 when it is not one. */
static int sdk_of(const char *v)
{
    if (!v)
        return 0;
    char *end;
    long n = strtol(v, &end, 10);
    return end != v && *end == '\0' && n > 0 && n < 1000 ? (int)n : 0;
}

int act_sdk(adbc_conn *c, int timeout_ms)
{
    int sdk = conn_fact(c, CONN_FACT_SDK);
    if (sdk > 0)
        return sdk;
    /* adbc's session server (adbc-serve's control socket) says it in the
     * banner it answers with, so a command run through it does not ask the
     * device again (no adbd's banner carries it). */
    sdk = sdk_of(adbc_banner_prop(adbc_conn_banner(c), "ro.build.version.sdk"));
    if (sdk <= 0) {
        char *v = NULL;
        if (adbc_getprop(&v, c, "ro.build.version.sdk", timeout_ms) < 0)
            return 0; /* not remembered: a later call asks again */
        sdk = sdk_of(v);
        core_free(v);
        if (sdk <= 0)
            return 0;
    }
    conn_fact_set(c, CONN_FACT_SDK, sdk);
    return sdk;
}

int adbc_device_sdk(adbc_conn *c, int timeout_ms)
{
    if (!c)
        return core_fail(ADBC_EINVAL, "adbc_device_sdk: c must not be NULL");
    if (timeout_ms <= 0)
        return core_fail(ADBC_EINVAL, "adbc_device_sdk: timeout_ms must be above 0");
    int sdk = conn_fact(c, CONN_FACT_SDK);
    if (sdk > 0)
        return sdk;
    if (conn_fact(c, CONN_FACT_NO_SDK))
        return core_fail(ADBC_EREMOTE, "the device did not give its API level "
                         "(ro.build.version.sdk) when asked on this connection");
    sdk = act_sdk(c, timeout_ms);
    if (sdk > 0)
        return sdk;
    conn_fact_set(c, CONN_FACT_NO_SDK, 1);
    return core_fail(ADBC_EREMOTE, "the device did not give its API level (ro.build.version.sdk) "
                     "within %d ms: check that `getprop ro.build.version.sdk` works on it",
                     timeout_ms);
}

const char *act_input_prefix(adbc_conn *c, int timeout_ms)
{
    /* Android 12 moved input's commands into InputManagerService
     * (InputShellCommand: the same tap, swipe, keyevent, text grammar), so
     * `cmd input` reaches them with one binder call where `input` starts a
     * JVM (app_process) first on older versions. A device that cannot say
     * its version gets `input`, which every version has. */
    return act_sdk(c, timeout_ms) >= 31 ? "input() { cmd input \"$@\"; }; " : "";
}

/* Follow the log for ms milliseconds over its own stream, then close it. */
static int follow(char **out, size_t *len, adbc_conn *c, const char *cmd, int ms,
                  int timeout_ms)
{
    char *svc = NULL;
    core_buf b = {0};
    core_buf_printf(&b, "exec:%s", cmd);
    int rc = act_buf_take(&b, &svc);
    if (rc < 0)
        return rc;
    adbc_stream *st;
    rc = adbc_stream_open(&st, c, svc, timeout_ms);
    core_free(svc);
    if (rc < 0)
        return rc;
    core_buf acc = {0};
    core_buf_add(&acc, "", 0);
    int64_t end = core_deadline(ms);
    char chunk[16384];
    for (;;) {
        int left = core_remaining(end);
        if (left == 0)
            break; /* the time asked for is up: a normal end */
        ssize_t n = adbc_stream_read(st, chunk, sizeof chunk, left);
        if (n == ADBC_ETIMEDOUT)
            break;
        if (n < 0) {
            rc = (int)n;
            break;
        }
        if (n == 0)
            break; /* logcat ended by itself */
        if (acc.len + (size_t)n > LOGCAT_MAX) {
            rc = core_fail(ADBC_EIO, "logcat printed more than %u bytes in %d ms: ask for fewer "
                           "lines or a shorter time", LOGCAT_MAX, ms);
            break;
        }
        core_buf_add(&acc, chunk, (size_t)n);
    }
    adbc_stream_close(st);
    if (rc < 0) {
        core_buf_free(&acc);
        return rc;
    }
    size_t n = acc.len;
    rc = act_buf_take(&acc, out);
    if (rc == 0 && len)
        *len = n;
    return rc;
}

int adbc_logcat(char **out, size_t *len, adbc_conn *c, int lines, int seconds_ms,
                int timeout_ms)
{
    if (!out || !c)
        return core_fail(ADBC_EINVAL, "adbc_logcat: out and c must not be NULL");
    *out = NULL;
    if (len)
        *len = 0;
    if (lines < 0 || seconds_ms < 0 || (lines == 0 && seconds_ms == 0))
        return core_fail(ADBC_EINVAL, "logcat needs a bound: a number of lines, a time, or both "
                         "(adbc never follows the log open-ended)");
    if (lines > 1000000 || seconds_ms > 3600000)
        return core_fail(ADBC_EINVAL, "logcat bounds are at most 1000000 lines and one hour");
    char cmd[64];
    if (seconds_ms > 0) {
        if (lines > 0)
            snprintf(cmd, sizeof cmd, "logcat -T %d", lines);
        else
            snprintf(cmd, sizeof cmd, "logcat");
        return follow(out, len, c, cmd, seconds_ms, timeout_ms);
    }
    snprintf(cmd, sizeof cmd, "logcat -d -t %d", lines);
    act_out o;
    int rc = act_run(&o, c, cmd, LOGCAT_MAX, timeout_ms);
    if (rc < 0)
        return rc;
    if (o.status != 0) {
        rc = core_fail(ADBC_EREMOTE, "logcat failed on the device (status %d): %.200s", o.status,
                       o.text);
        act_out_free(&o);
        return rc;
    }
    *out = o.text;
    if (len)
        *len = o.len;
    return 0;
}
