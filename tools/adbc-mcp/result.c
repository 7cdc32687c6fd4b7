/* SPDX-License-Identifier: Apache-2.0 */
/* A tool's result: content blocks, and isError when the tool failed. A
 * failure is a result the agent reads, not a protocol error, so every
 * message says what to do next. */
#include "mcp.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "ops_json.h"

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

int call_fail_adbc(mcp_call *c, int rc, const char *what)
{
    ops_err e;
    ops_fail_adbc(&e, rc, what);
    return call_fail(c, "%s", e.msg);
}

int call_remaining(const mcp_call *c)
{
    int64_t left = c->deadline - ops_now_ms();
    return left < 1 ? 1 : left > 600000 ? 600000 : (int)left;
}
