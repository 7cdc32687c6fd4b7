/* SPDX-License-Identifier: Apache-2.0 */
/* The tool table: names, descriptions, argument schemas, and the dispatch
 * that checks arguments against the schema's property names (an unknown
 * argument is refused rather than ignored, so a misspelt "clear" does not
 * silently type into a full field). */
#include "mcp.h"

#include <stdlib.h>
#include <string.h>

static const mcp_tool *const sets[] = {mcp_tools_device, mcp_tools_ui, mcp_tools_input,
                                       mcp_tools_app, mcp_tools_shot, mcp_tools_shell};
#define NSETS (sizeof(sets) / sizeof(sets[0]))
#define MAX_TOOLS 64

static cJSON *schemas[MAX_TOOLS];
static const mcp_tool *all[MAX_TOOLS];
static size_t ntools;

int tools_init(void)
{
    for (size_t k = 0; k < NSETS; k++) {
        for (const mcp_tool *t = sets[k]; t->name; t++) {
            if (ntools == MAX_TOOLS) {
                mcp_log("internal: too many tools");
                return -1;
            }
            cJSON *sch = cJSON_Parse(t->schema);
            if (!cJSON_IsObject(sch)) {
                mcp_log("internal: the schema of tool %s is not valid JSON", t->name);
                cJSON_Delete(sch);
                return -1;
            }
            schemas[ntools] = sch;
            all[ntools++] = t;
        }
    }
    return 0;
}

void tools_free(void)
{
    for (size_t i = 0; i < ntools; i++)
        cJSON_Delete(schemas[i]);
    ntools = 0;
}

static int visible(const mcp_server *s, const mcp_tool *t)
{
    return !(t->flags & TOOL_SHELL) || s->allow_shell;
}

cJSON *tools_list(const mcp_server *s)
{
    cJSON *r = cJSON_CreateObject();
    cJSON *arr = cJSON_AddArrayToObject(r, "tools");
    for (size_t i = 0; i < ntools; i++) {
        const mcp_tool *t = all[i];
        if (!visible(s, t))
            continue;
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", t->name);
        cJSON_AddStringToObject(o, "title", t->title);
        cJSON_AddStringToObject(o, "description", t->description);
        cJSON_AddItemToObject(o, "inputSchema", cJSON_Duplicate(schemas[i], 1));
        cJSON *ann = cJSON_AddObjectToObject(o, "annotations");
        cJSON_AddBoolToObject(ann, "readOnlyHint", (t->flags & TOOL_READONLY) != 0);
        if (!(t->flags & TOOL_READONLY))
            cJSON_AddBoolToObject(ann, "destructiveHint", (t->flags & TOOL_SHELL) != 0 ||
                                                              strcmp(t->name, "clear_app_data") == 0);
        cJSON_AddBoolToObject(ann, "openWorldHint", 0);
        cJSON_AddItemToArray(arr, o);
    }
    return r;
}

/* Arguments not in the schema's properties, and properties listed as
 * required but missing, are refused before the tool runs. */
static int check_args(mcp_call *c, const cJSON *schema, const cJSON *args)
{
    const cJSON *props = cJSON_GetObjectItemCaseSensitive(schema, "properties");
    const cJSON *a;
    cJSON_ArrayForEach(a, args)
    {
        if (!cJSON_GetObjectItemCaseSensitive(props, a->string)) {
            char names[512] = "";
            const cJSON *p;
            cJSON_ArrayForEach(p, props)
            {
                if (strlen(names) + strlen(p->string) + 3 < sizeof(names)) {
                    strcat(names, names[0] ? ", " : "");
                    strcat(names, p->string);
                }
            }
            return call_fail(c, "unknown argument '%.64s' (this tool takes: %s)", a->string,
                             names[0] ? names : "no arguments");
        }
    }
    const cJSON *req = cJSON_GetObjectItemCaseSensitive(schema, "required");
    cJSON_ArrayForEach(a, req)
    {
        if (cJSON_IsString(a) && !cJSON_GetObjectItemCaseSensitive(args, a->valuestring))
            return call_fail(c, "missing argument '%s'", a->valuestring);
    }
    return 0;
}

cJSON *tools_call(mcp_server *s, const char *name, const cJSON *args, int *unknown)
{
    const mcp_tool *t = NULL;
    size_t idx = 0;
    for (size_t i = 0; i < ntools && !t; i++)
        if (strcmp(all[i]->name, name) == 0 && visible(s, all[i])) {
            t = all[i];
            idx = i;
        }
    *unknown = !t;
    if (!t)
        return NULL;
    mcp_call c;
    memset(&c, 0, sizeof(c));
    c.srv = s;
    c.content = cJSON_CreateArray();
    c.deadline = ops_now_ms() + s->cfg.call_ms;
    if (check_args(&c, schemas[idx], args) == 0)
        t->fn(&c, args);
    call_device_done(&c); /* in case a tool returned with its device held */
    if (cJSON_GetArraySize(c.content) == 0)
        call_text_raw(&c, c.is_error ? "failed" : "done");
    cJSON *r = cJSON_CreateObject();
    cJSON_AddItemToObject(r, "content", c.content);
    if (c.is_error)
        cJSON_AddTrueToObject(r, "isError");
    return r;
}
