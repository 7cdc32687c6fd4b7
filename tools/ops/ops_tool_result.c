/* SPDX-License-Identifier: Apache-2.0 */
/* A tool's result: content blocks, and isError when the tool failed. A
 * failure is a result the agent reads, not a protocol error, so every
 * message says what to do next. Arguments are read with ops_args.c's
 * checks; a failed one fails the call with its message, which names the
 * argument and what it must be. */
#include "ops_tool.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every text of a result passes here, error or not: what a device printed
 * (logcat, the crash log, pm's answers) may hold bytes that are not UTF-8,
 * and a result must be UTF-8 (JSON's text, MCP's content): each bad byte
 * becomes '?' (ops_utf8_fix), as in errors. */
void ops_call_text_raw(ops_call *c, const char *text)
{
    cJSON *item = cJSON_CreateObject();
    if (!item)
        return;
    size_t n = strlen(text);
    char *fixed = NULL;
    if (ops_utf8_bad(text, n) != n && (fixed = malloc(n + 1))) {
        memcpy(fixed, text, n + 1);
        ops_utf8_fix(fixed);
    }
    cJSON_AddStringToObject(item, "type", "text");
    cJSON_AddStringToObject(item, "text", fixed ? fixed : ops_utf8_bad(text, n) == n ? text : "");
    free(fixed);
    cJSON_AddItemToArray(c->content, item);
}

void ops_call_text(ops_call *c, const char *fmt, ...)
{
    char *s = NULL;
    va_list ap;
    va_start(ap, fmt);
    int n = vasprintf(&s, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    ops_call_text_raw(c, s);
    free(s);
}

int ops_call_image(ops_call *c, const void *data, size_t n, const char *mime)
{
    char *b64 = ops_base64(data, n);
    cJSON *item = b64 ? cJSON_CreateObject() : NULL;
    if (!item || !cJSON_AddStringToObject(item, "type", "image") ||
        !cJSON_AddStringToObject(item, "data", b64) ||
        !cJSON_AddStringToObject(item, "mimeType", mime)) {
        cJSON_Delete(item);
        free(b64);
        return ops_call_fail(c, OPS_EFAIL, "out of memory encoding the image");
    }
    cJSON_AddItemToArray(c->content, item);
    free(b64);
    return 0;
}

int ops_call_err(ops_call *c, const ops_err *e)
{
    if (&c->err != e)
        c->err = *e;
    ops_utf8_fix(c->err.msg); /* it may quote the device */
    if (c->err.code == OPS_OK)
        c->err.code = OPS_EFAIL;
    ops_call_text_raw(c, c->err.msg);
    c->is_error = 1;
    return -1;
}

int ops_call_fail(ops_call *c, ops_code code, const char *fmt, ...)
{
    ops_err e;
    e.code = code;
    e.rc = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e.msg, sizeof e.msg, fmt, ap);
    va_end(ap);
    return ops_call_err(c, &e);
}

int ops_call_adbc(ops_call *c, int rc, const char *what)
{
    ops_err e;
    ops_fail_adbc(&e, rc, what);
    return ops_call_err(c, &e);
}

int ops_call_remaining(const ops_call *c)
{
    int64_t left = c->deadline - ops_now_ms();
    return left < 1 ? 1 : left > 600000 ? 600000 : (int)left;
}

int ops_call_device(ops_call *c)
{
    if (c->dev)
        return 0;
    if (c->fe->device(c) != 0)
        return -1;
    if (ops_cancel_hold(c) != 0)
        return ops_call_fail(c, OPS_EFAIL, "cancelled by the client before it started");
    return 0;
}

void ops_call_log(ops_call *c, const char *fmt, ...)
{
    if (!c->fe->log)
        return;
    char line[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    c->fe->log(c->fe->user, line);
}

void ops_call_ctx(ops_call *c, ops_ctx *oc)
{
    ops_ctx_init(oc, c->dev->conn, &c->dev->last, c->deadline);
    oc->check = c->fe->check;
    oc->check_user = c->fe->user;
    oc->allow = c->fe->allow; /* what a person allowed by name (ops_intent_check) */
}

int ops_call_str(ops_call *c, const cJSON *args, const char *name, int required, size_t maxlen,
                 const char **out)
{
    ops_err e;
    return ops_arg_str(&e, args, name, required, maxlen, out) ? ops_call_err(c, &e) : 0;
}

int ops_call_int(ops_call *c, const cJSON *args, const char *name, int required, int lo, int hi,
                 int *out)
{
    ops_err e;
    return ops_arg_int(&e, args, name, required, lo, hi, out) ? ops_call_err(c, &e) : 0;
}

int ops_call_bool(ops_call *c, const cJSON *args, const char *name, int *out)
{
    ops_err e;
    return ops_arg_bool(&e, args, name, out) ? ops_call_err(c, &e) : 0;
}

int ops_call_name(ops_call *c, const cJSON *args, const char *name, int required,
                  const char **out)
{
    ops_err e;
    return ops_arg_name(&e, args, name, required, out) ? ops_call_err(c, &e) : 0;
}
