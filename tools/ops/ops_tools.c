/* SPDX-License-Identifier: Apache-2.0 */
/* The tool table (ops_tools.h): names, descriptions, argument schemas, and
 * the dispatch that checks arguments against the schema's property names
 * (an unknown argument is refused rather than ignored, so a misspelt
 * "clear" does not silently type into a full field). */
#include "ops_tool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const ops_tool *const sets[] = {ops_tools_device, ops_tools_ui, ops_tools_input,
                                       ops_tools_app, ops_tools_shot, ops_tools_more,
                                       ops_tools_termux, ops_tools_shell};
#define NSETS (sizeof(sets) / sizeof(sets[0]))
#define MAX_TOOLS 96

static cJSON *schemas[MAX_TOOLS];
static const ops_tool *all[MAX_TOOLS];
static size_t ntools;

int ops_tools_init(void)
{
    if (ntools)
        return 0;
    for (size_t k = 0; k < NSETS; k++) {
        for (const ops_tool *t = sets[k]; t->name; t++) {
            cJSON *sch = ntools < MAX_TOOLS ? cJSON_Parse(t->schema) : NULL;
            if (!cJSON_IsObject(sch)) {
                fprintf(stderr, "adbc: internal: the schema of tool %s is not valid JSON (or "
                                "the table is full)\n", t->name);
                cJSON_Delete(sch);
                ops_tools_free();
                return -1;
            }
            schemas[ntools] = sch;
            all[ntools++] = t;
        }
    }
    return 0;
}

void ops_tools_free(void)
{
    for (size_t i = 0; i < ntools; i++)
        cJSON_Delete(schemas[i]);
    ntools = 0;
}

unsigned ops_tools_optin(const char *name)
{
    if (!name)
        return 0;
    return strcmp(name, "termux_sms_send") == 0 ? OPS_TOOL_SMS
           : strcmp(name, "termux_call") == 0   ? OPS_TOOL_CALL
           : strcmp(name, "system_keys") == 0   ? OPS_TOOL_KEYS
           : strcmp(name, "intent_call") == 0   ? OPS_ALLOW_INTENT_CALL
           : strcmp(name, "intent_sms") == 0    ? OPS_ALLOW_INTENT_SMS
           : strcmp(name, "intent_any") == 0    ? OPS_ALLOW_INTENT_ANY
                                                : 0;
}

int ops_key_plain(int code)
{
    /* Android's KeyEvent codes (lib/act/keys.c has the names). */
    static const short plain[][2] = {
        {3, 4},     /* HOME, BACK */
        {7, 25},    /* 0-9, STAR, POUND, DPAD_*, DPAD_CENTER, VOLUME_UP/DOWN */
        {28, 63},   /* CLEAR, A-Z, COMMA, PERIOD, ALT/SHIFT, TAB, SPACE, SYM */
        {66, 78},   /* ENTER, DEL, GRAVE .. AT, NUM */
        {81, 93},   /* PLUS, MENU, NOTIFICATION, SEARCH, MEDIA_*, MUTE, PAGE_UP/DOWN */
        {111, 119}, /* ESCAPE, FORWARD_DEL, CTRL, CAPS/SCROLL_LOCK, META, FUNCTION */
        {121, 129}, /* BREAK, MOVE_HOME/END, INSERT, FORWARD, MEDIA_PLAY .. EJECT */
        {143, 164}, /* NUM_LOCK, NUMPAD_*, VOLUME_MUTE */
        {187, 187}, /* APP_SWITCH */
        {222, 222}, /* MEDIA_AUDIO_TRACK */
        {260, 263}, /* NAVIGATE_* */
        {268, 275}, /* DPAD diagonals, MEDIA_SKIP/STEP */
        {277, 284}, /* CUT, COPY, PASTE, SYSTEM_NAVIGATION_*, ALL_APPS */
    };
    for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++)
        if (code >= plain[i][0] && code <= plain[i][1])
            return 1;
    return 0;
}

static int visible(unsigned allow, const ops_tool *t)
{
    return (t->flags & OPS_TOOL_GATES & ~allow) == 0;
}

cJSON *ops_tools_list(unsigned allow, int call_ms)
{
    cJSON *arr = cJSON_CreateArray();
    for (size_t i = 0; arr && i < ntools; i++) {
        const ops_tool *t = all[i];
        if (!visible(allow, t))
            continue;
        cJSON *o = cJSON_CreateObject();
        if (!o) {
            cJSON_Delete(arr);
            return NULL;
        }
        cJSON_AddItemToArray(arr, o);
        cJSON_AddStringToObject(o, "name", t->name);
        cJSON_AddStringToObject(o, "title", t->title);
        cJSON_AddStringToObject(o, "description", t->description);
        cJSON *sch = cJSON_Duplicate(schemas[i], 1);
        cJSON_AddItemToObject(o, "inputSchema", sch);
        cJSON *tm = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(sch, "properties"), "timeout_ms");
        if ((t->flags & OPS_TOOL_CALLBOUND) && tm && call_ms > OPS_TOOL_ANSWER_MS)
            cJSON_AddNumberToObject(tm, "maximum", call_ms - OPS_TOOL_ANSWER_MS);
        cJSON *ann = cJSON_AddObjectToObject(o, "annotations");
        cJSON_AddBoolToObject(ann, "readOnlyHint", (t->flags & OPS_TOOL_READONLY) != 0);
        if (!(t->flags & OPS_TOOL_READONLY))
            cJSON_AddBoolToObject(ann, "destructiveHint",
                                  (t->flags & (OPS_TOOL_DESTRUCTIVE | OPS_TOOL_SHELL)) != 0);
        cJSON_AddBoolToObject(ann, "openWorldHint", (t->flags & OPS_TOOL_OPENWORLD) != 0);
    }
    return arr;
}

/* Arguments not in the schema's properties, and properties listed as
 * required but missing, are refused before the tool runs. */
static int check_args(ops_call *c, const cJSON *schema, const cJSON *args)
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
            return ops_call_fail(c, OPS_EARG, "unknown argument '%.64s' (this tool takes: %s)",
                                 a->string, names[0] ? names : "no arguments");
        }
    }
    const cJSON *req = cJSON_GetObjectItemCaseSensitive(schema, "required");
    cJSON_ArrayForEach(a, req)
    {
        if (cJSON_IsString(a) && !cJSON_GetObjectItemCaseSensitive(args, a->valuestring))
            return ops_call_fail(c, OPS_EARG, "missing argument '%s'", a->valuestring);
    }
    return 0;
}

void ops_cancel_init(ops_cancel *k)
{
    memset(k, 0, sizeof *k);
    pthread_mutex_init(&k->lock, NULL);
}

void ops_cancel_destroy(ops_cancel *k)
{
    pthread_mutex_destroy(&k->lock);
}

void ops_cancel_fire(ops_cancel *k)
{
    pthread_mutex_lock(&k->lock);
    k->fired = 1;
    if (k->conn)
        adbc_conn_interrupt(k->conn);
    pthread_mutex_unlock(&k->lock);
}

int ops_cancel_fired(ops_cancel *k)
{
    pthread_mutex_lock(&k->lock);
    int f = k->fired;
    pthread_mutex_unlock(&k->lock);
    return f;
}

/* The call has its device: from now on a cancel interrupts its connection
 * (at once when it came while the device was being taken). 0, or -1 when
 * the call was cancelled already. */
int ops_cancel_hold(ops_call *c)
{
    ops_cancel *k = c->cancel;
    if (!k || !c->dev)
        return 0;
    pthread_mutex_lock(&k->lock);
    k->conn = c->dev->conn;
    int fired = k->fired;
    pthread_mutex_unlock(&k->lock);
    return fired ? -1 : 0;
}

/* Before the device is released: no more interrupts, and none left on it. */
static void cancel_release(ops_call *c)
{
    ops_cancel *k = c->cancel;
    if (!k)
        return;
    pthread_mutex_lock(&k->lock);
    if (k->conn && k->fired && c->dev && c->dev->conn == k->conn)
        adbc_conn_clear_interrupt(k->conn);
    k->conn = NULL;
    pthread_mutex_unlock(&k->lock);
}

int ops_tools_call(const ops_front *fe, const char *name, const cJSON *args, cJSON **result,
                   ops_err *e)
{
    return ops_tools_call_cancel(fe, name, args, NULL, result, e);
}

int ops_tools_call_cancel(const ops_front *fe, const char *name, const cJSON *args,
                          ops_cancel *cancel, cJSON **result, ops_err *e)
{
    if (!result || !e)
        return -1;
    *result = NULL;
    if (!fe || !name || !fe->device || !fe->device_done)
        return ops_fail(e, OPS_EARG, "internal: ops_tools_call needs a front end with its "
                                     "device hooks and a tool name");
    if (args && !cJSON_IsObject(args))
        return ops_fail(e, OPS_EARG, "a tool's arguments must be a JSON object");
    const ops_tool *t = NULL;
    size_t idx = 0;
    for (size_t i = 0; i < ntools && !t; i++)
        if (strcmp(all[i]->name, name) == 0 && visible(fe->allow, all[i])) {
            t = all[i];
            idx = i;
        }
    if (!t)
        return ops_fail(e, OPS_ENOMATCH, "unknown tool '%.100s': the tool list names the tools",
                        name);
    if ((t->flags & OPS_TOOL_DEVICES) && (!fe->list_devices || !fe->select_device))
        return ops_fail(e, OPS_EARG, "internal: tool %s needs the front end's device hooks",
                        name);
    ops_call c;
    memset(&c, 0, sizeof(c));
    c.fe = fe;
    c.cancel = cancel;
    c.content = cJSON_CreateArray();
    if (!c.content)
        return ops_fail(e, OPS_EFAIL, "out of memory");
    c.deadline = ops_now_ms() + (fe->call_ms > 0 ? fe->call_ms : 30000);
    if (check_args(&c, schemas[idx], args) == 0)
        t->fn(&c, args);
    cancel_release(&c);
    if (c.dev)
        fe->device_done(&c); /* in case a tool returned with its device held */
    if (cJSON_GetArraySize(c.content) == 0)
        ops_call_text_raw(&c, c.is_error ? "failed" : "done");
    cJSON *r = cJSON_CreateObject();
    if (!r) {
        cJSON_Delete(c.content);
        return ops_fail(e, OPS_EFAIL, "out of memory");
    }
    cJSON_AddItemToObject(r, "content", c.content);
    if (c.is_error) {
        cJSON_AddTrueToObject(r, "isError");
        if (c.err.code == OPS_OK)
            ops_fail(&c.err, OPS_EFAIL, "failed");
    }
    *e = c.err;
    *result = r;
    return 0;
}

char *ops_tools_text(const cJSON *result)
{
    size_t n = 1;
    const cJSON *p;
    cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(result, "content"))
    {
        const char *t = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(p, "text"));
        if (t)
            n += strlen(t) + 1;
    }
    char *out = malloc(n), *w = out;
    if (!out)
        return NULL;
    cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(result, "content"))
    {
        const char *t = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(p, "text"));
        if (!t)
            continue;
        if (w != out)
            *w++ = '\n';
        size_t k = strlen(t);
        memcpy(w, t, k);
        w += k;
    }
    *w = 0;
    return out;
}
