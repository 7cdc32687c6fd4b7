/* SPDX-License-Identifier: Apache-2.0 */
/* The agent's tools: a subset of the operation layer's one tool table
 * (ops_tools.h), the same tools adbc-mcp and adbc-serve serve, plus done,
 * which is the agent's own (it ends the task and touches no device). */
#include "ops_agent_int.h"

#include <stdlib.h>
#include <string.h>

#include "ops_json.h"
#include "ops_tools.h"

/* The table's tools the agent may call, in the order the model sees them. */
static const char *const subset[] = {"tap",         "type",  "press",  "swipe",
                                     "scroll",      "long_press", "back", "home",
                                     "launch",      "intent", "wait", "wait_for_text",
                                     "wait_stable", NULL};

static const char done_schema[] =
    "{\"type\":\"object\",\"properties\":{\"answer\":{\"type\":\"string\",\"description\":"
    "\"for the user: what was found or done, or why the goal cannot be reached\"}},"
    "\"required\":[\"answer\"],\"additionalProperties\":false}";

static int in_subset(const char *name, int allow_shell)
{
    if (allow_shell && strcmp(name, "shell") == 0)
        return 1;
    for (int i = 0; subset[i]; i++)
        if (strcmp(subset[i], name) == 0)
            return 1;
    return 0;
}

unsigned agent_tools_allow(int allow_shell)
{
    return allow_shell ? OPS_TOOL_SHELL : 0;
}

cJSON *agent_tools_list(int allow_shell, int call_ms)
{
    cJSON *all = ops_tools_list(agent_tools_allow(allow_shell), call_ms);
    cJSON *out = cJSON_CreateArray();
    if (!all || !out) {
        cJSON_Delete(all);
        cJSON_Delete(out);
        return NULL;
    }
    cJSON *t;
    cJSON_ArrayForEach(t, all)
    {
        const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(t, "name"));
        if (!name || !in_subset(name, allow_shell))
            continue;
        cJSON *o = cJSON_CreateObject();
        cJSON *d = cJSON_GetObjectItemCaseSensitive(t, "description");
        cJSON *s = cJSON_GetObjectItemCaseSensitive(t, "inputSchema");
        if (!o || !cJSON_AddStringToObject(o, "name", name) ||
            !cJSON_AddItemToObject(o, "description", cJSON_Duplicate(d, 1)) ||
            !cJSON_AddItemToObject(o, "inputSchema", cJSON_Duplicate(s, 1))) {
            cJSON_Delete(o);
            cJSON_Delete(out);
            cJSON_Delete(all);
            return NULL;
        }
        cJSON_AddItemToArray(out, o);
    }
    cJSON_Delete(all);
    cJSON *done = cJSON_CreateObject();
    if (!done || !cJSON_AddStringToObject(done, "name", "done") ||
        !cJSON_AddStringToObject(done, "description",
                                 "End the task: the goal is reached, or it cannot be (say "
                                 "why). The answer is shown to the user.") ||
        !cJSON_AddItemToObject(done, "inputSchema", cJSON_Parse(done_schema))) {
        cJSON_Delete(done);
        cJSON_Delete(out);
        return NULL;
    }
    cJSON_AddItemToArray(out, done);
    return out;
}

int agent_tool_known(const char *name, int allow_shell)
{
    return name && (strcmp(name, "done") == 0 || in_subset(name, allow_shell));
}

/* The refs the call names: "ref" (an integer), and a selector is resolved
 * by the act itself in a fresh dump. */
int agent_tool_check(const char *name, const cJSON *args, const adbc_ui_snap *snap,
                     int allow_shell, ops_err *e)
{
    if (!name || !*name)
        return ops_fail(e, OPS_EARG, "the answer called no tool: call exactly one of the tools "
                                     "given");
    if (!agent_tool_known(name, allow_shell))
        return ops_fail(e, OPS_EARG, "there is no tool '%.64s' for this task: call one of the "
                                     "tools given", name);
    if (args && !cJSON_IsObject(args))
        return ops_fail(e, OPS_EARG, "the arguments of %s must be a JSON object", name);
    if (strcmp(name, "done") == 0) {
        static const char *const only[] = {"answer", NULL};
        const char *a;
        return ops_arg_only(e, args, only) || ops_arg_str(e, args, "answer", 1, 4000, &a) ? -1
                                                                                      : 0;
    }
    const cJSON *ref = cJSON_GetObjectItemCaseSensitive(args, "ref");
    if (ref && !cJSON_IsNull(ref)) {
        const adbc_ui_reftab *t = snap ? adbc_ui_snap_refs(snap) : NULL;
        size_t n = t ? adbc_ui_reftab_count(t) : 0;
        double v = cJSON_IsNumber(ref) ? ref->valuedouble : -1;
        if (!cJSON_IsNumber(ref) || v != (double)(int)v || v < 1 || (size_t)v > n) {
            char *shown = cJSON_PrintUnformatted(ref);
            int rc = ops_fail(e, OPS_ENOREF, "ref %.32s is not on the current screen (%s%zu): "
                              "use a ref from the snapshot just given", shown ? shown : "?",
                              n ? "its refs are 1.." : "it has no refs, ", n);
            free(shown);
            return rc;
        }
    }
    return 0;
}
