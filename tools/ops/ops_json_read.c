/* SPDX-License-Identifier: Apache-2.0 */
/* The one way a front end reads a JSON request. cJSON alone takes bytes
 * that are not UTF-8 (and a server would quote them back raw, making its
 * own answer invalid JSON), cuts a string at "\u0000" (dropping what a
 * `type` text held after it) and keeps the first of two equal keys (so two
 * readers of one body could see two different requests). Each is refused
 * here with what was wrong and where. */
#include "ops_json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The offset of the first "\u0000" inside a string, or len. */
static size_t nul_escape(const char *s, size_t len)
{
    int in_string = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '"') {
            in_string = !in_string;
        } else if (in_string && s[i] == '\\' && i + 1 < len) {
            if (len - i >= 6 && memcmp(s + i + 1, "u0000", 5) == 0)
                return i;
            i++; /* the escaped character, a quote among them */
        }
    }
    return len;
}

static int cmp_key(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The first key that appears twice in one object, anywhere in v, or NULL
 * (also *oom when out of memory). */
static const char *dup_key(const cJSON *v, int *oom)
{
    size_t n = 0;
    for (const cJSON *c = v->child; c; c = c->next) {
        const char *d = dup_key(c, oom);
        if (d || *oom)
            return d;
        n++;
    }
    if (!cJSON_IsObject(v) || n < 2)
        return NULL;
    const char **keys = malloc(n * sizeof *keys);
    if (!keys) {
        *oom = 1;
        return NULL;
    }
    size_t k = 0;
    for (const cJSON *c = v->child; c; c = c->next)
        keys[k++] = c->string ? c->string : "";
    qsort(keys, n, sizeof *keys, cmp_key);
    const char *d = NULL;
    for (size_t i = 1; i < n && !d; i++)
        if (strcmp(keys[i - 1], keys[i]) == 0)
            d = keys[i];
    free(keys);
    return d;
}

int ops_json_parse(ops_err *e, const char *text, size_t len, cJSON **out)
{
    *out = NULL;
    if (!text)
        text = "", len = 0;
    size_t at = ops_utf8_bad(text, len);
    if (at < len)
        return ops_fail(e, OPS_EARG, "the JSON text is not valid UTF-8 (byte %zu)", at);
    if (memchr(text, '\0', len))
        return ops_fail(e, OPS_EARG, "the JSON text holds a NUL byte");
    at = nul_escape(text, len);
    if (at < len)
        return ops_fail(e, OPS_EARG, "a JSON string holds \\u0000 (byte %zu): it cannot be "
                                     "passed on whole, so it is refused", at);
    const char *end = NULL;
    cJSON *v = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    if (v && end) /* one value, then blanks only */
        while (end < text + len && (*end == ' ' || *end == '\t' || *end == '\r' || *end == '\n'))
            end++;
    if (!v || end != text + len) {
        const char *where = v ? end : cJSON_GetErrorPtr();
        cJSON_Delete(v);
        if (where && where >= text && where <= text + len)
            return ops_fail(e, OPS_EARG, "malformed JSON at byte %zu", (size_t)(where - text));
        return ops_fail(e, OPS_EARG, "malformed JSON");
    }
    int oom = 0;
    const char *d = dup_key(v, &oom);
    if (d || oom) {
        char name[80];
        snprintf(name, sizeof name, "%s", d ? d : "");
        ops_utf8_fix(name); /* the cut may have split a character */
        cJSON_Delete(v);
        if (oom)
            return ops_fail(e, OPS_EFAIL, "out of memory reading the JSON text");
        return ops_fail(e, OPS_EARG, "the key \"%s\" appears twice in one object", name);
    }
    *out = v;
    return 0;
}

/* ---- a member's own text ---- */

static size_t skip_blank(const char *s, size_t i, size_t len)
{
    while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n'))
        i++;
    return i;
}

/* The end of the value starting at s[i] (text already checked as JSON). */
static size_t skip_value(const char *s, size_t i, size_t len)
{
    int depth = 0, in_string = 0;
    for (; i < len; i++) {
        char ch = s[i];
        if (in_string) {
            if (ch == '\\')
                i++;
            else if (ch == '"' && (in_string = 0, depth == 0))
                return i + 1;
        } else if (ch == '"') {
            in_string = 1;
        } else if (ch == '{' || ch == '[') {
            depth++;
        } else if (ch == '}' || ch == ']') {
            if (depth == 0)
                return i; /* the end of the enclosing object */
            if (--depth == 0)
                return i + 1;
        } else if (depth == 0 && (ch == ',' || ch == ' ' || ch == '\t' || ch == '\r' ||
                                  ch == '\n')) {
            return i;
        }
    }
    return len;
}

cJSON *ops_json_member_raw(const char *text, size_t len, const char *key)
{
    if (!text || !key)
        return NULL;
    size_t i = skip_blank(text, 0, len);
    if (i >= len || text[i] != '{')
        return NULL;
    i++;
    while ((i = skip_blank(text, i, len)) < len && text[i] == '"') {
        size_t k = i, kend = skip_value(text, i, len);
        i = skip_blank(text, kend, len);
        if (i >= len || text[i] != ':')
            return NULL;
        size_t v = skip_blank(text, i + 1, len), vend = skip_value(text, v, len);
        /* The key as decoded (it may be written with escapes). */
        cJSON *name = cJSON_ParseWithLength(text + k, kend - k);
        int match = cJSON_IsString(name) && strcmp(name->valuestring, key) == 0;
        cJSON_Delete(name);
        if (match) {
            char *raw = malloc(vend - v + 1);
            if (!raw)
                return NULL;
            memcpy(raw, text + v, vend - v);
            raw[vend - v] = 0;
            cJSON *r = cJSON_CreateRaw(raw);
            free(raw);
            return r;
        }
        i = skip_blank(text, vend, len);
        if (i < len && text[i] == ',')
            i++;
    }
    return NULL;
}
