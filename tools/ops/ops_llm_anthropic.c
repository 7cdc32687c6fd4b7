/* SPDX-License-Identifier: Apache-2.0 */
/* Anthropic's Messages API (POST .../v1/messages, headers x-api-key and
 * anthropic-version: 2023-06-01) with tool use:
 *
 *   {"model", "max_tokens", "system", "messages": [{"role":"user"|"assistant",
 *    "content": [{"type":"text","text"}, {"type":"image","source":{"type":
 *    "base64","media_type":"image/png","data"}}, {"type":"tool_use","id",
 *    "name","input"}, {"type":"tool_result","tool_use_id","content"}]}],
 *    "tools":[{"name","description","input_schema"}],
 *    "tool_choice":{"type":"any","disable_parallel_tool_use":true}}
 *
 * The answer: {"content":[{"type":"text"},{"type":"tool_use","id","name",
 * "input"}], "stop_reason", "usage":{"input_tokens","output_tokens",
 * "cache_creation_input_tokens","cache_read_input_tokens"}}.
 *
 * Roles must alternate: a tool result is a user turn, and a user message
 * right after it joins that turn (the tool_result block first, as the API
 * asks). Empty text blocks are refused by the API, so none is sent. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops_llm_int.h"

static cJSON *text_block(const char *text)
{
    cJSON *b = cJSON_CreateObject();
    if (!b)
        return NULL;
    cJSON_AddStringToObject(b, "type", "text");
    cJSON_AddStringToObject(b, "text", text);
    return b;
}

static cJSON *image_block(const unsigned char *png, size_t n)
{
    cJSON *b = cJSON_CreateObject(), *src = cJSON_CreateObject();
    char *b64 = ops_base64(png, n);
    if (!b || !src || !b64) {
        cJSON_Delete(b);
        cJSON_Delete(src);
        free(b64);
        return NULL;
    }
    cJSON_AddStringToObject(b, "type", "image");
    cJSON_AddStringToObject(src, "type", "base64");
    cJSON_AddStringToObject(src, "media_type", "image/png");
    cJSON_AddStringToObject(src, "data", b64);
    free(b64);
    cJSON_AddItemToObject(b, "source", src);
    return b;
}

/* The content list of the turn for role: the last one when it has that
 * role, else a new turn. */
static cJSON *turn(cJSON *msgs, const char *role)
{
    cJSON *last = cJSON_GetArrayItem(msgs, cJSON_GetArraySize(msgs) - 1);
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(last, "role");
    if (last && cJSON_IsString(r) && strcmp(r->valuestring, role) == 0)
        return cJSON_GetObjectItemCaseSensitive(last, "content");
    cJSON *m = cJSON_CreateObject();
    if (!m)
        return NULL;
    cJSON_AddItemToArray(msgs, m);
    cJSON_AddStringToObject(m, "role", role);
    return cJSON_AddArrayToObject(m, "content");
}

static int add(cJSON *list, cJSON *item)
{
    if (!list || !item) {
        cJSON_Delete(item);
        return -1;
    }
    cJSON_AddItemToArray(list, item);
    return 0;
}

char *ops_llm_anthropic_request(const ops_llm_cfg *cfg, const ops_llm_conv *conv,
                                const cJSON *tools, ops_err *e)
{
    cJSON *root = cJSON_CreateObject();
    cJSON *msgs = cJSON_AddArrayToObject(root, "messages");
    if (!root || !msgs)
        goto oom;
    cJSON_AddStringToObject(root, "model", cfg->model);
    cJSON_AddNumberToObject(root, "max_tokens", cfg->max_tokens);
    if (conv->system && *conv->system)
        cJSON_AddStringToObject(root, "system", conv->system);
    for (size_t i = 0; i < conv->n; i++) {
        const ops_llm_msg *g = &conv->msgs[i];
        if (g->role == OPS_LLM_USER) {
            cJSON *c = turn(msgs, "user");
            if (g->png && add(c, image_block(g->png, g->png_len)) != 0)
                goto oom;
            if (*g->text && add(c, text_block(g->text)) != 0)
                goto oom;
            if (!*g->text && !g->png && add(c, text_block("(empty)")) != 0)
                goto oom;
        } else if (g->role == OPS_LLM_ASSISTANT) {
            cJSON *c = turn(msgs, "assistant");
            if (g->text && *g->text && add(c, text_block(g->text)) != 0)
                goto oom;
            if (g->call_name) {
                cJSON *b = cJSON_CreateObject();
                cJSON *in = g->call_args ? cJSON_Duplicate(g->call_args, 1) : cJSON_CreateObject();
                if (!b || !in) {
                    cJSON_Delete(b);
                    cJSON_Delete(in);
                    goto oom;
                }
                cJSON_AddStringToObject(b, "type", "tool_use");
                cJSON_AddStringToObject(b, "id", g->call_id);
                cJSON_AddStringToObject(b, "name", g->call_name);
                cJSON_AddItemToObject(b, "input", in);
                if (add(c, b) != 0)
                    goto oom;
            }
        } else {
            cJSON *c = turn(msgs, "user");
            cJSON *b = cJSON_CreateObject();
            if (!b)
                goto oom;
            cJSON_AddStringToObject(b, "type", "tool_result");
            cJSON_AddStringToObject(b, "tool_use_id", g->call_id);
            cJSON_AddStringToObject(b, "content", *g->text ? g->text : "(no output)");
            if (add(c, b) != 0)
                goto oom;
        }
    }
    if (tools) {
        cJSON *arr = cJSON_AddArrayToObject(root, "tools");
        cJSON *choice = cJSON_AddObjectToObject(root, "tool_choice");
        if (!arr || !choice)
            goto oom;
        const cJSON *t;
        cJSON_ArrayForEach(t, tools)
        {
            if (add(arr, ops_llm_tool_entry(t, "input_schema")) != 0)
                goto oom;
        }
        cJSON_AddStringToObject(choice, "type", "any");
        cJSON_AddBoolToObject(choice, "disable_parallel_tool_use", 1);
    }
    if (cfg->temperature >= 0)
        cJSON_AddNumberToObject(root, "temperature", cfg->temperature > 1 ? 1 : cfg->temperature);
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

int ops_llm_anthropic_reply(const char *body, size_t len, ops_llm_reply *out, ops_err *e)
{
    cJSON *j = ops_llm_reply_json(body, len, out->status, e);
    if (!j)
        return -1;
    const cJSON *usage = cJSON_GetObjectItemCaseSensitive(j, "usage");
    out->turn.tokens_in = ops_llm_count(usage, "input_tokens") + ops_llm_count(usage, "cache_creation_input_tokens") +
                          ops_llm_count(usage, "cache_read_input_tokens");
    out->turn.tokens_out = ops_llm_count(usage, "output_tokens");
    const cJSON *content = cJSON_GetObjectItemCaseSensitive(j, "content");
    if (!cJSON_IsArray(content)) {
        char m[300];
        ops_llm_error_text(body, len, m, sizeof(m));
        cJSON_Delete(j);
        return ops_fail(e, OPS_EFAIL, "the model's answer has no content list: %s", m);
    }
    const cJSON *sr = cJSON_GetObjectItemCaseSensitive(j, "stop_reason");
    if (cJSON_IsString(sr))
        out->stop = ops_llm_strdup(sr->valuestring);
    size_t tl = 0;
    const cJSON *b;
    cJSON_ArrayForEach(b, content)
    {
        const cJSON *type = cJSON_GetObjectItemCaseSensitive(b, "type");
        const cJSON *text = cJSON_GetObjectItemCaseSensitive(b, "text");
        if (cJSON_IsString(type) && strcmp(type->valuestring, "text") == 0 && cJSON_IsString(text))
            tl += strlen(text->valuestring) + 1;
    }
    out->text = malloc(tl + 1);
    if (!out->text) {
        cJSON_Delete(j);
        return ops_fail(e, OPS_EFAIL, "out of memory reading the answer");
    }
    char *w = out->text;
    cJSON_ArrayForEach(b, content)
    {
        const cJSON *type = cJSON_GetObjectItemCaseSensitive(b, "type");
        if (!cJSON_IsString(type))
            continue;
        if (strcmp(type->valuestring, "text") == 0) {
            const cJSON *text = cJSON_GetObjectItemCaseSensitive(b, "text");
            if (!cJSON_IsString(text))
                continue;
            if (w != out->text)
                *w++ = '\n';
            size_t l = strlen(text->valuestring);
            memcpy(w, text->valuestring, l);
            w += l;
        } else if (strcmp(type->valuestring, "tool_use") == 0) {
            if (out->ncalls++ > 0)
                continue;
            const cJSON *id = cJSON_GetObjectItemCaseSensitive(b, "id");
            const cJSON *name = cJSON_GetObjectItemCaseSensitive(b, "name");
            const cJSON *input = cJSON_GetObjectItemCaseSensitive(b, "input");
            if (!cJSON_IsString(name) || !name->valuestring[0]) {
                cJSON_Delete(j);
                return ops_fail(e, OPS_EFAIL, "the model's tool_use block has no name");
            }
            if (!cJSON_IsObject(input)) {
                ops_fail(e, OPS_EFAIL, "the model's input for %.60s is not a JSON object",
                         name->valuestring);
                cJSON_Delete(j);
                return -1;
            }
            out->call_name = ops_llm_strdup(name->valuestring);
            out->call_args = cJSON_Duplicate(input, 1);
            char made[32];
            snprintf(made, sizeof(made), "toolu_%lld", (long long)ops_now_ms());
            out->call_id = ops_llm_strdup(cJSON_IsString(id) && id->valuestring[0] ? id->valuestring
                                                                                    : made);
            if (!out->call_name || !out->call_args || !out->call_id) {
                cJSON_Delete(j);
                return ops_fail(e, OPS_EFAIL, "out of memory reading the answer");
            }
        }
    }
    *w = 0;
    cJSON_Delete(j);
    return 0;
}
