/* SPDX-License-Identifier: Apache-2.0 */
/* Reading tool arguments. Every check fails the call with a message naming
 * the argument and what it must be, so an agent can correct itself. The
 * schemas in tools/list say the same; these checks are what is enforced. */
#include "mcp.h"

#include <math.h>
#include <string.h>

static const cJSON *get(const cJSON *args, const char *name)
{
    return args ? cJSON_GetObjectItemCaseSensitive(args, name) : NULL;
}

int arg_str(mcp_call *c, const cJSON *args, const char *name, int required, size_t maxlen,
            const char **out)
{
    const cJSON *v = get(args, name);
    *out = NULL;
    if (!v || cJSON_IsNull(v)) {
        if (required)
            return call_fail(c, "missing argument '%s' (a string)", name);
        return 0;
    }
    if (!cJSON_IsString(v) || !v->valuestring)
        return call_fail(c, "argument '%s' must be a string", name);
    size_t n = strlen(v->valuestring);
    if (n > maxlen)
        return call_fail(c, "argument '%s' is %zu bytes long; at most %zu are accepted", name, n,
                         maxlen);
    *out = v->valuestring;
    return 0;
}

int arg_int(mcp_call *c, const cJSON *args, const char *name, int required, int lo, int hi,
            int *out)
{
    const cJSON *v = get(args, name);
    if (!v || cJSON_IsNull(v)) {
        if (required)
            return call_fail(c, "missing argument '%s' (an integer %d..%d)", name, lo, hi);
        return 0;
    }
    double d = v->valuedouble;
    if (!cJSON_IsNumber(v) || !isfinite(d) || d != floor(d))
        return call_fail(c, "argument '%s' must be an integer %d..%d", name, lo, hi);
    if (d < lo || d > hi)
        return call_fail(c, "argument '%s' = %.0f is out of range %d..%d", name, d, lo, hi);
    *out = (int)d;
    return 0;
}

int arg_bool(mcp_call *c, const cJSON *args, const char *name, int *out)
{
    const cJSON *v = get(args, name);
    if (!v || cJSON_IsNull(v))
        return 0;
    if (!cJSON_IsBool(v))
        return call_fail(c, "argument '%s' must be true or false", name);
    *out = cJSON_IsTrue(v);
    return 0;
}

int arg_name(mcp_call *c, const cJSON *args, const char *name, int required, const char **out)
{
    if (arg_str(c, args, name, required, 255, out) != 0)
        return -1;
    const char *s = *out;
    if (!s)
        return 0;
    int ok = (s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z');
    for (const char *p = s; ok && *p; p++)
        ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
             *p == '_' || *p == '.';
    if (!ok)
        return call_fail(c, "argument '%s' must be an Android name such as com.example.app or "
                            "android.permission.CAMERA (letters, digits, '_' and '.')", name);
    return 0;
}
