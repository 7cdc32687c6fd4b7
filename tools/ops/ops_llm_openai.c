/* SPDX-License-Identifier: Apache-2.0 */
/* The OpenAI-compatible chat completions format (POST .../chat/completions)
 * with function calling, as OpenAI documents it and as llama.cpp's
 * llama-server, Ollama, vLLM and the Gemini and DeepSeek compatible
 * endpoints accept it:
 *
 *   {"model", "messages": [{"role":"system","content"}, {"role":"user",
 *    "content": "text" | [{"type":"text"},{"type":"image_url","image_url":
 *    {"url":"data:image/png;base64,..."}}]}, {"role":"assistant","content",
 *    "tool_calls":[{"id","type":"function","function":{"name","arguments":
 *    "JSON text"}}]}, {"role":"tool","tool_call_id","content"}],
 *    "tools":[{"type":"function","function":{"name","description",
 *    "parameters"}}], "tool_choice":"required", "parallel_tool_calls":false,
 *    "max_tokens" (max_completion_tokens for api.openai.com, which
 *    deprecated the other and refuses it for its reasoning models)}
 *
 * A user message without an image is sent as a plain string: servers that
 * take no content parts (older local ones) still read it. Ollama ignores
 * tool_choice (it is not in its compatibility list) and so may answer in
 * text: that answer is then OPS_LLM_EREPLY, which the loop retries. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ops_json.h"
#include "ops_llm_int.h"

static cJSON *user_content(const ops_llm_msg *g)
{
    if (!g->png)
        return cJSON_CreateString(g->text);
    cJSON *parts = cJSON_CreateArray();
    cJSON *t = cJSON_CreateObject();
    cJSON *img = cJSON_CreateObject();
    cJSON *iu = cJSON_CreateObject();
    char *b64 = ops_base64(g->png, g->png_len);
    char *url = b64 ? malloc(strlen(b64) + 32) : NULL;
    if (!parts || !t || !img || !iu || !url) {
        cJSON_Delete(parts);
        cJSON_Delete(t);
        cJSON_Delete(img);
        cJSON_Delete(iu);
        free(b64);
        free(url);
        return NULL;
    }
    sprintf(url, "data:image/png;base64,%s", b64);
    free(b64);
    cJSON_AddStringToObject(t, "type", "text");
    cJSON_AddStringToObject(t, "text", g->text);
    cJSON_AddItemToArray(parts, t);
    cJSON_AddStringToObject(img, "type", "image_url");
    cJSON_AddStringToObject(iu, "url", url);
    free(url);
    cJSON_AddItemToObject(img, "image_url", iu);
    cJSON_AddItemToArray(parts, img);
    return parts;
}

char *ops_llm_openai_request(const ops_llm_cfg *cfg, const ops_llm_conv *conv,
                             const cJSON *tools, ops_err *e)
{
    cJSON *root = cJSON_CreateObject();
    cJSON *msgs = cJSON_AddArrayToObject(root, "messages");
    if (!root || !msgs)
        goto oom;
    cJSON_AddStringToObject(root, "model", cfg->model);
    if (conv->system && *conv->system) {
        cJSON *s = cJSON_CreateObject();
        if (!s)
            goto oom;
        cJSON_AddItemToArray(msgs, s);
        cJSON_AddStringToObject(s, "role", "system");
        cJSON_AddStringToObject(s, "content", conv->system);
    }
    for (size_t i = 0; i < conv->n; i++) {
        const ops_llm_msg *g = &conv->msgs[i];
        cJSON *o = cJSON_CreateObject();
        if (!o)
            goto oom;
        cJSON_AddItemToArray(msgs, o);
        if (g->role == OPS_LLM_USER) {
            cJSON_AddStringToObject(o, "role", "user");
            cJSON *content = user_content(g);
            if (!content)
                goto oom;
            cJSON_AddItemToObject(o, "content", content);
        } else if (g->role == OPS_LLM_ASSISTANT) {
            cJSON_AddStringToObject(o, "role", "assistant");
            if (g->text && *g->text)
                cJSON_AddStringToObject(o, "content", g->text);
            else
                cJSON_AddNullToObject(o, "content");
            if (g->call_name) {
                cJSON *calls = cJSON_AddArrayToObject(o, "tool_calls");
                cJSON *call = cJSON_CreateObject();
                cJSON *fn = cJSON_CreateObject();
                char *args = g->call_args ? cJSON_PrintUnformatted(g->call_args)
                                          : ops_llm_strdup("{}");
                if (!calls || !call || !fn || !args) {
                    cJSON_Delete(call);
                    cJSON_Delete(fn);
                    free(args);
                    goto oom;
                }
                cJSON_AddItemToArray(calls, call);
                cJSON_AddStringToObject(call, "id", g->call_id);
                cJSON_AddStringToObject(call, "type", "function");
                cJSON_AddItemToObject(call, "function", fn);
                cJSON_AddStringToObject(fn, "name", g->call_name);
                cJSON_AddStringToObject(fn, "arguments", args);
                free(args);
            }
        } else {
            cJSON_AddStringToObject(o, "role", "tool");
            cJSON_AddStringToObject(o, "tool_call_id", g->call_id);
            cJSON_AddStringToObject(o, "content", g->text);
        }
    }
    if (tools) {
        cJSON *arr = cJSON_AddArrayToObject(root, "tools");
        if (!arr)
            goto oom;
        const cJSON *t;
        cJSON_ArrayForEach(t, tools)
        {
            cJSON *o = cJSON_CreateObject();
            cJSON *fn = ops_llm_tool_entry(t, "parameters");
            if (!o || !fn) {
                cJSON_Delete(o);
                cJSON_Delete(fn);
                goto oom;
            }
            cJSON_AddItemToArray(arr, o);
            cJSON_AddStringToObject(o, "type", "function");
            cJSON_AddItemToObject(o, "function", fn);
        }
        cJSON_AddStringToObject(root, "tool_choice", "required");
        cJSON_AddBoolToObject(root, "parallel_tool_calls", 0);
    }
    ops_llm_url u;
    ops_err ue;
    int official = ops_llm_url_check(cfg->base_url, 1, &u, &ue) == 0 &&
                   strcasecmp(u.host, "api.openai.com") == 0;
    cJSON_AddNumberToObject(root, official ? "max_completion_tokens" : "max_tokens",
                            cfg->max_tokens);
    if (cfg->temperature >= 0)
        cJSON_AddNumberToObject(root, "temperature", cfg->temperature);
    char *out = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    if (!out)
        ops_fail(e, OPS_EFAIL, "out of memory building the request");
    return out;
oom:
    cJSON_Delete(root);
    ops_fail(e, OPS_EFAIL, "out of memory building the request");
    return NULL;
}

/* Text from "content": a string, or a list of {"type":"text","text"}
 * parts (some servers answer so). NULL when there is none. */
static char *content_text(const cJSON *c)
{
    if (cJSON_IsString(c))
        return ops_llm_strdup(c->valuestring);
    if (!cJSON_IsArray(c))
        return NULL;
    size_t n = 0;
    const cJSON *p;
    cJSON_ArrayForEach(p, c)
    {
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(p, "text");
        if (cJSON_IsString(t))
            n += strlen(t->valuestring) + 1;
    }
    char *s = malloc(n + 1), *w = s;
    if (!s)
        return NULL;
    cJSON_ArrayForEach(p, c)
    {
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(p, "text");
        if (!cJSON_IsString(t))
            continue;
        if (w != s)
            *w++ = '\n';
        size_t l = strlen(t->valuestring);
        memcpy(w, t->valuestring, l);
        w += l;
    }
    *w = 0;
    return s;
}

int ops_llm_openai_reply(const char *body, size_t len, ops_llm_reply *out, ops_err *e)
{
    cJSON *j = ops_llm_reply_json(body, len, out->status, e);
    if (!j)
        return -1;
    const cJSON *usage = cJSON_GetObjectItemCaseSensitive(j, "usage");
    out->turn.tokens_in = ops_llm_count(usage, "prompt_tokens");
    out->turn.tokens_out = ops_llm_count(usage, "completion_tokens");
    const cJSON *choices = cJSON_GetObjectItemCaseSensitive(j, "choices");
    const cJSON *ch = cJSON_GetArrayItem(choices, 0);
    const cJSON *msg = cJSON_GetObjectItemCaseSensitive(ch, "message");
    if (!cJSON_IsArray(choices) || !cJSON_IsObject(ch) || !cJSON_IsObject(msg)) {
        char m[300];
        ops_llm_error_text(body, len, m, sizeof(m));
        cJSON_Delete(j);
        return ops_fail(e, OPS_EFAIL, "the model's answer has no choices[0].message: %s", m);
    }
    const cJSON *fr = cJSON_GetObjectItemCaseSensitive(ch, "finish_reason");
    if (cJSON_IsString(fr))
        out->stop = ops_llm_strdup(fr->valuestring);
    out->text = content_text(cJSON_GetObjectItemCaseSensitive(msg, "content"));
    if (!out->text || !*out->text) {
        /* DeepSeek's and llama.cpp's reasoning models put their thinking here */
        const cJSON *rc = cJSON_GetObjectItemCaseSensitive(msg, "reasoning_content");
        if (cJSON_IsString(rc)) {
            free(out->text);
            out->text = ops_llm_strdup(rc->valuestring);
        }
    }
    const cJSON *calls = cJSON_GetObjectItemCaseSensitive(msg, "tool_calls");
    if (calls && !cJSON_IsArray(calls) && !cJSON_IsNull(calls)) {
        cJSON_Delete(j);
        return ops_fail(e, OPS_EFAIL, "the model's answer has tool_calls that is not a list");
    }
    out->ncalls = cJSON_IsArray(calls) ? cJSON_GetArraySize(calls) : 0;
    if (out->ncalls > 0) {
        const cJSON *c0 = cJSON_GetArrayItem(calls, 0);
        const cJSON *fn = cJSON_GetObjectItemCaseSensitive(c0, "function");
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(fn, "name");
        const cJSON *args = cJSON_GetObjectItemCaseSensitive(fn, "arguments");
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(c0, "id");
        if (!cJSON_IsString(name) || !name->valuestring[0]) {
            cJSON_Delete(j);
            return ops_fail(e, OPS_EFAIL, "the model's tool call has no function name");
        }
        cJSON *a = NULL;
        if (cJSON_IsString(args)) {
            const char *s = args->valuestring;
            size_t sl = strlen(s);
            while (sl && (s[sl - 1] == ' ' || s[sl - 1] == '\n'))
                sl--;
            if (sl == 0) {
                a = cJSON_CreateObject(); /* "" for a call without arguments */
            } else {
                ops_err pe;
                if (ops_json_parse(&pe, s, sl, &a) != 0) {
                    char head[120];
                    ops_llm_error_text(s, sl < 100 ? sl : 100, head, sizeof(head));
                    ops_fail(e, OPS_EFAIL,
                             "the model's arguments for %.60s are not JSON (%s): \"%s\"",
                             name->valuestring, pe.msg, head);
                    cJSON_Delete(j);
                    return -1;
                }
            }
        } else if (cJSON_IsObject(args)) {
            a = cJSON_Duplicate(args, 1); /* some servers send the object itself */
        } else if (!args || cJSON_IsNull(args)) {
            a = cJSON_CreateObject();
        }
        if (!cJSON_IsObject(a)) {
            ops_fail(e, OPS_EFAIL, "the model's arguments for %.60s are not a JSON object",
                     name->valuestring);
            cJSON_Delete(a);
            cJSON_Delete(j);
            return -1;
        }
        out->call_name = ops_llm_strdup(name->valuestring);
        out->call_args = a;
        if (cJSON_IsString(id) && id->valuestring[0]) {
            out->call_id = ops_llm_strdup(id->valuestring);
        } else {
            char made[32];
            snprintf(made, sizeof(made), "call_%lld", (long long)ops_now_ms());
            out->call_id = ops_llm_strdup(made);
        }
        if (!out->call_name || !out->call_id) {
            cJSON_Delete(j);
            return ops_fail(e, OPS_EFAIL, "out of memory reading the answer");
        }
    }
    cJSON_Delete(j);
    return 0;
}
