/* SPDX-License-Identifier: Apache-2.0 */
/* Reading an operation's arguments from a JSON object. Every check fails
 * with a message naming the argument and what it must be, so the caller
 * can correct itself; nothing reaches a device before all have passed. */
#include "ops_json.h"

#include <math.h>
#include <string.h>

static const cJSON *get(const cJSON *args, const char *name)
{
    return args ? cJSON_GetObjectItemCaseSensitive(args, name) : NULL;
}

int ops_arg_str(ops_err *e, const cJSON *args, const char *name, int required, size_t maxlen,
                const char **out)
{
    const cJSON *v = get(args, name);
    *out = NULL;
    if (!v || cJSON_IsNull(v)) {
        if (required)
            return ops_fail(e, OPS_EARG, "missing argument '%s' (a string)", name);
        return 0;
    }
    if (!cJSON_IsString(v) || !v->valuestring)
        return ops_fail(e, OPS_EARG, "argument '%s' must be a string", name);
    size_t n = strlen(v->valuestring);
    if (n > maxlen)
        return ops_fail(e, OPS_EARG, "argument '%s' is %zu bytes long; at most %zu are accepted",
                        name, n, maxlen);
    *out = v->valuestring;
    return 0;
}

int ops_arg_int(ops_err *e, const cJSON *args, const char *name, int required, int lo, int hi,
                int *out)
{
    const cJSON *v = get(args, name);
    if (!v || cJSON_IsNull(v)) {
        if (required)
            return ops_fail(e, OPS_EARG, "missing argument '%s' (an integer %d..%d)", name, lo,
                            hi);
        return 0;
    }
    double d = v->valuedouble;
    if (!cJSON_IsNumber(v) || !isfinite(d) || d != floor(d))
        return ops_fail(e, OPS_EARG, "argument '%s' must be an integer %d..%d", name, lo, hi);
    if (d < lo || d > hi)
        return ops_fail(e, OPS_EARG, "argument '%s' = %.0f is out of range %d..%d", name, d, lo,
                        hi);
    *out = (int)d;
    return 0;
}

int ops_arg_bool(ops_err *e, const cJSON *args, const char *name, int *out)
{
    const cJSON *v = get(args, name);
    if (!v || cJSON_IsNull(v))
        return 0;
    if (!cJSON_IsBool(v))
        return ops_fail(e, OPS_EARG, "argument '%s' must be true or false", name);
    *out = cJSON_IsTrue(v);
    return 0;
}

int ops_arg_name(ops_err *e, const cJSON *args, const char *name, int required, const char **out)
{
    if (ops_arg_str(e, args, name, required, 255, out) != 0)
        return -1;
    if (*out && !ops_android_name(*out))
        return ops_fail(e, OPS_EARG, "argument '%s' must be an Android name such as "
                                     "com.example.app or android.permission.CAMERA (letters, "
                                     "digits, '_' and '.')", name);
    return 0;
}

int ops_arg_only(ops_err *e, const cJSON *args, const char *const *names)
{
    const cJSON *m;
    cJSON_ArrayForEach(m, args)
    {
        int known = 0;
        for (const char *const *n = names; *n && !known; n++)
            known = m->string && strcmp(m->string, *n) == 0;
        if (!known)
            return ops_fail(e, OPS_EARG, "unknown argument '%s'", m->string ? m->string : "?");
    }
    return 0;
}
