/* SPDX-License-Identifier: Apache-2.0 */
/* Reading tool arguments: the checks are tools/ops' (shared with
 * adbc-serve); a failed one fails the call with its message, which names
 * the argument and what it must be. The schemas in tools/list say the same;
 * these checks are what is enforced. */
#include "mcp.h"

#include "ops_json.h"

static int fail(mcp_call *c, const ops_err *e)
{
    return call_fail(c, "%s", e->msg);
}

int arg_str(mcp_call *c, const cJSON *args, const char *name, int required, size_t maxlen,
            const char **out)
{
    ops_err e;
    return ops_arg_str(&e, args, name, required, maxlen, out) ? fail(c, &e) : 0;
}

int arg_int(mcp_call *c, const cJSON *args, const char *name, int required, int lo, int hi,
            int *out)
{
    ops_err e;
    return ops_arg_int(&e, args, name, required, lo, hi, out) ? fail(c, &e) : 0;
}

int arg_bool(mcp_call *c, const cJSON *args, const char *name, int *out)
{
    ops_err e;
    return ops_arg_bool(&e, args, name, out) ? fail(c, &e) : 0;
}

int arg_name(mcp_call *c, const cJSON *args, const char *name, int required, const char **out)
{
    ops_err e;
    return ops_arg_name(&e, args, name, required, out) ? fail(c, &e) : 0;
}
