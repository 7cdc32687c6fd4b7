/* SPDX-License-Identifier: Apache-2.0 */
/* A tool's result: content blocks, and isError when the tool failed. A
 * failure is a result the agent reads, not a protocol error, so every
 * message says what to do next. */
#include "mcp.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "adbc/error.h"

void call_text_raw(mcp_call *c, const char *text)
{
    cJSON *item = cJSON_CreateObject();
    if (!item)
        return;
    cJSON_AddStringToObject(item, "type", "text");
    cJSON_AddStringToObject(item, "text", text);
    cJSON_AddItemToArray(c->content, item);
}

static void vtext(mcp_call *c, const char *fmt, va_list ap)
{
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0)
        return;
    call_text_raw(c, s);
    free(s);
}

void call_text(mcp_call *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vtext(c, fmt, ap);
    va_end(ap);
}

int call_fail(mcp_call *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vtext(c, fmt, ap);
    va_end(ap);
    c->is_error = 1;
    return -1;
}

static const char *next_step(int rc)
{
    switch (rc) {
    case ADBC_ESTALE: return "call snapshot and use a ref from it";
    case ADBC_ETIMEDOUT: return "the device did not answer in time; check it is awake and "
                                "responsive, then retry (list_devices shows its state)";
    case ADBC_ECLOSED:
    case ADBC_EIO: return "the connection to the device was lost; check it is still "
                          "connected (list_devices), then retry";
    case ADBC_ENOTFOUND: return "check the name, or take a new snapshot";
    case ADBC_EUNSUPPORTED: return "this device cannot do that";
    default: return NULL;
    }
}

int call_fail_adbc(mcp_call *c, int rc, const char *what)
{
    const char *msg = adbc_last_error();
    const char *step = next_step(rc);
    return call_fail(c, "%s failed: %s%s%s%s", what, msg && *msg ? msg : adbc_strerror(rc),
                     step ? " (" : "", step ? step : "", step ? ")" : "");
}

int call_remaining(const mcp_call *c)
{
    int64_t left = c->deadline - mcp_now_ms();
    return left < 1 ? 1 : left > 600000 ? 600000 : (int)left;
}
