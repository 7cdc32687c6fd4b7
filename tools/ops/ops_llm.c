/* SPDX-License-Identifier: Apache-2.0 */
/* Asking a model: the checks before anything is sent (the conversation,
 * the tool table, the budget), the request with its retries and waits,
 * and the answer checked against the tool table, in the same way for both
 * wire formats (ops_llm_openai.c, ops_llm_anthropic.c build and read the
 * bodies). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/rand.h>

#include "ops_llm_int.h"

#define LLM_MAX_PNG (20u << 20)
#define LLM_MAX_MSGS 10000

struct ops_llm {
    ops_llm_cfg cfg;
    ops_llm_http *http;
    atomic_int *cancel;
    ops_llm_usage total;
    char url[600];
    char desc[900];
};

const char *ops_llm_fail_name(ops_llm_fail f)
{
    switch (f) {
    case OPS_LLM_OK: return "ok";
    case OPS_LLM_EREPLY: return "bad_reply";
    case OPS_LLM_EHTTP: return "http";
    case OPS_LLM_ENET: return "network";
    case OPS_LLM_ETIMEOUT: return "timeout";
    case OPS_LLM_ECANCEL: return "cancelled";
    case OPS_LLM_EBUDGET: return "budget";
    case OPS_LLM_EARG: return "bad_request";
    }
    return "unknown";
}

cJSON *ops_llm_reply_json(const char *body, size_t len, int status, ops_err *e)
{
    if (!body || !len) {
        ops_fail(e, OPS_EFAIL, "the model's answer is empty (HTTP %d with no body)", status);
        return NULL;
    }
    cJSON *j = cJSON_ParseWithLength(body, len);
    if (!j) {
        char head[120];
        ops_llm_error_text(body, len < 100 ? len : 100, head, sizeof(head));
        ops_fail(e, OPS_EFAIL, "the model's answer is not JSON: \"%s\"", head);
    }
    return j;
}

int64_t ops_llm_count(const cJSON *usage, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(usage, name);
    return cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble < 1e12
               ? (int64_t)v->valuedouble : 0;
}

char *ops_llm_strdup(const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

void ops_llm_reply_free(ops_llm_reply *r)
{
    if (!r)
        return;
    free(r->text);
    free(r->call_id);
    free(r->call_name);
    cJSON_Delete(r->call_args);
    free(r->stop);
    free(r->raw);
    memset(r, 0, sizeof(*r));
}

void ops_llm_scrub(char *s, const char *key)
{
    if (!s || !key || !*key)
        return;
    size_t kl = strlen(key);
    char *p;
    while ((p = strstr(s, key)) != NULL) {
        /* "[key]" is 5 bytes; a key is at least 1: shift the rest over */
        const char *mark = "[key]";
        size_t ml = strlen(mark);
        if (kl >= ml) {
            memcpy(p, mark, ml);
            memmove(p + ml, p + kl, strlen(p + kl) + 1);
        } else {
            memset(p, '*', kl);
        }
    }
}

/* One printable line: controls become spaces, at most cap-1 bytes, cut on
 * a UTF-8 boundary. */
static void one_line(char *dst, size_t cap, const char *s, size_t n)
{
    size_t o = 0;
    for (size_t i = 0; i < n && o + 1 < cap; i++) {
        unsigned char c = (unsigned char)s[i];
        dst[o++] = c < 0x20 || c == 0x7F ? ' ' : (char)c;
    }
    while (o > 0 && ((unsigned char)dst[o - 1] & 0xC0) == 0x80 && o + 1 >= cap)
        o--; /* do not end inside a sequence */
    if (o > 0 && (unsigned char)dst[o - 1] >= 0xC0 && o + 1 >= cap)
        o--;
    dst[o] = 0;
    ops_utf8_fix(dst);
}

void ops_llm_error_text(const char *body, size_t len, char *buf, size_t cap)
{
    buf[0] = 0;
    if (!body || !len)
        return;
    cJSON *j = cJSON_ParseWithLength(body, len);
    const char *msg = NULL, *type = NULL;
    if (j) {
        const cJSON *err = cJSON_GetObjectItemCaseSensitive(j, "error");
        if (cJSON_IsObject(err)) {
            const cJSON *m = cJSON_GetObjectItemCaseSensitive(err, "message");
            const cJSON *t = cJSON_GetObjectItemCaseSensitive(err, "type");
            msg = cJSON_IsString(m) ? m->valuestring : NULL;
            type = cJSON_IsString(t) ? t->valuestring : NULL;
        } else if (cJSON_IsString(err)) {
            msg = err->valuestring;
        }
        if (!msg) {
            const cJSON *m = cJSON_GetObjectItemCaseSensitive(j, "message");
            msg = cJSON_IsString(m) ? m->valuestring : NULL;
        }
        if (!msg && cJSON_IsArray(j)) { /* Gemini wraps its error in a list */
            const cJSON *e0 = cJSON_GetArrayItem(j, 0);
            const cJSON *err0 = cJSON_GetObjectItemCaseSensitive(e0, "error");
            const cJSON *m = cJSON_GetObjectItemCaseSensitive(err0, "message");
            msg = cJSON_IsString(m) ? m->valuestring : NULL;
        }
    }
    if (msg) {
        char tmp[600];
        snprintf(tmp, sizeof(tmp), "%s%s%s", type ? type : "", type ? ": " : "", msg);
        one_line(buf, cap, tmp, strlen(tmp));
    } else {
        one_line(buf, cap, body, len < 300 ? len : 300);
    }
    cJSON_Delete(j);
}

const char *ops_llm_describe(const ops_llm *m)
{
    return m ? m->desc : "";
}

ops_llm_usage ops_llm_usage_get(const ops_llm *m)
{
    ops_llm_usage z = {0};
    return m ? m->total : z;
}

void ops_llm_usage_reset(ops_llm *m)
{
    if (m)
        memset(&m->total, 0, sizeof(m->total));
}

void ops_llm_set_cancel(ops_llm *m, atomic_int *flag)
{
    if (m)
        m->cancel = flag;
}

int ops_llm_new(ops_llm **out, const ops_llm_cfg *cfg, ops_err *e)
{
    ops_err spare;
    if (!e)
        e = &spare;
    if (!out || !cfg)
        return ops_fail(e, OPS_EARG, "ops_llm_new: NULL argument");
    *out = NULL;
    if (cfg->provider != OPS_LLM_OPENAI && cfg->provider != OPS_LLM_ANTHROPIC)
        return ops_fail(e, OPS_EARG, "no provider chosen: resolve the config first "
                                     "(ops_llm_cfg_resolve)");
    if (!cfg->model[0] || !memchr(cfg->model, 0, sizeof(cfg->model)) ||
        !memchr(cfg->base_url, 0, sizeof(cfg->base_url)) ||
        !memchr(cfg->key, 0, sizeof(cfg->key)))
        return ops_fail(e, OPS_EARG, "the model config is not resolved (no model)");
    if (cfg->timeout_ms < 1000 || cfg->timeout_ms > 900000 || cfg->connect_ms < 100 ||
        cfg->connect_ms > 120000 || cfg->retries < 0 || cfg->retries > 10 ||
        cfg->retry_max_ms < 0 || cfg->retry_max_ms > 600000 || cfg->max_tokens < 1 ||
        cfg->max_tokens > 200000 || cfg->budget_tokens < 0 || cfg->budget_usd < 0 ||
        cfg->price_in < 0 || cfg->price_out < 0)
        return ops_fail(e, OPS_EARG, "a model setting is out of range (see ops_llm_cfg)");
    ops_llm_url u;
    if (ops_llm_url_check(cfg->base_url, cfg->allow_http, &u, e) != 0)
        return -1;
    ops_llm *m = calloc(1, sizeof(*m));
    if (!m)
        return ops_fail(e, OPS_EFAIL, "out of memory");
    m->cfg = *cfg;
    if (ops_llm_http_new(&m->http, e) != 0) {
        ops_llm_free(m);
        return -1;
    }
    int anth = cfg->provider == OPS_LLM_ANTHROPIC;
    snprintf(m->url, sizeof(m->url), "%s%s", cfg->base_url,
             anth ? "/v1/messages" : "/chat/completions");
    snprintf(m->desc, sizeof(m->desc), "%s %s at %s", ops_llm_provider_name(cfg->provider),
             cfg->model, cfg->base_url);
    *out = m;
    return 0;
}

void ops_llm_free(ops_llm *m)
{
    if (!m)
        return;
    ops_llm_http_free(m->http);
    ops_llm_cfg_wipe(&m->cfg);
    free(m);
}

/* ---- checks before sending ---- */

static int conv_check(const ops_llm_conv *conv, ops_err *e)
{
    if (!conv->msgs || conv->n == 0)
        return ops_fail(e, OPS_EARG, "the conversation has no messages");
    if (conv->n > LLM_MAX_MSGS)
        return ops_fail(e, OPS_EARG, "the conversation has %zu messages (at most %d)", conv->n,
                        LLM_MAX_MSGS);
    if (conv->msgs[0].role != OPS_LLM_USER)
        return ops_fail(e, OPS_EARG, "the conversation must start with a user message");
    for (size_t i = 0; i < conv->n; i++) {
        const ops_llm_msg *g = &conv->msgs[i];
        switch (g->role) {
        case OPS_LLM_USER:
            if (!g->text)
                return ops_fail(e, OPS_EARG, "message %zu: a user message needs text", i);
            if (g->png && (g->png_len < 8 || g->png_len > LLM_MAX_PNG ||
                           memcmp(g->png, "\x89PNG\r\n\x1a\n", 8) != 0))
                return ops_fail(e, OPS_EARG,
                                "message %zu: the image is not a PNG of at most %u MiB", i,
                                LLM_MAX_PNG >> 20);
            break;
        case OPS_LLM_ASSISTANT:
            if (g->call_name && (!g->call_id || !*g->call_id || !*g->call_name))
                return ops_fail(e, OPS_EARG, "message %zu: a tool call needs an id and a name",
                                i);
            if (g->call_args && !cJSON_IsObject(g->call_args))
                return ops_fail(e, OPS_EARG,
                                "message %zu: a tool call's arguments must be an object", i);
            if (!g->call_name && (!g->text || !*g->text))
                return ops_fail(e, OPS_EARG,
                                "message %zu: an assistant message needs text or a call", i);
            break;
        case OPS_LLM_TOOL:
            if (!g->text || !g->call_id || !*g->call_id)
                return ops_fail(e, OPS_EARG,
                                "message %zu: a tool result needs the call's id and text", i);
            if (i == 0 || conv->msgs[i - 1].role == OPS_LLM_USER)
                return ops_fail(e, OPS_EARG,
                                "message %zu: a tool result must follow the assistant's call",
                                i);
            break;
        default:
            return ops_fail(e, OPS_EARG, "message %zu: unknown role %d", i, (int)g->role);
        }
        const char *t = g->text;
        if (t && ops_utf8_bad(t, strlen(t)) != strlen(t))
            return ops_fail(e, OPS_EARG, "message %zu: the text is not UTF-8", i);
    }
    if (conv->system && ops_utf8_bad(conv->system, strlen(conv->system)) != strlen(conv->system))
        return ops_fail(e, OPS_EARG, "the system prompt is not UTF-8");
    return 0;
}

static int tools_check(const cJSON *tools, ops_err *e)
{
    if (!tools)
        return 0;
    if (!cJSON_IsArray(tools))
        return ops_fail(e, OPS_EARG, "the tool table must be a JSON array");
    int i = 0;
    const cJSON *t;
    cJSON_ArrayForEach(t, tools)
    {
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(t, "name");
        const cJSON *s = cJSON_GetObjectItemCaseSensitive(t, "inputSchema");
        const cJSON *d = cJSON_GetObjectItemCaseSensitive(t, "description");
        if (!cJSON_IsObject(t) || !cJSON_IsString(n) || !n->valuestring[0])
            return ops_fail(e, OPS_EARG, "tool %d: needs a name", i);
        if (s && !cJSON_IsObject(s))
            return ops_fail(e, OPS_EARG, "tool %s: inputSchema must be an object",
                            n->valuestring);
        if (d && !cJSON_IsString(d))
            return ops_fail(e, OPS_EARG, "tool %s: description must be a string",
                            n->valuestring);
        i++;
    }
    return 0;
}

cJSON *ops_llm_tool_entry(const cJSON *tool, const char *schema_key)
{
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(tool, "name");
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(tool, "description");
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(tool, "inputSchema");
    cJSON *o = cJSON_CreateObject();
    cJSON *schema = s ? cJSON_Duplicate(s, 1) : cJSON_Parse("{\"type\":\"object\"}");
    if (!o || !schema || !cJSON_AddStringToObject(o, "name", n->valuestring) ||
        (d && !cJSON_AddStringToObject(o, "description", d->valuestring))) {
        cJSON_Delete(o);
        cJSON_Delete(schema);
        return NULL;
    }
    cJSON_AddItemToObject(o, schema_key, schema);
    return o;
}

static int tool_known(const cJSON *tools, const char *name)
{
    const cJSON *t;
    cJSON_ArrayForEach(t, tools)
    {
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(t, "name");
        if (cJSON_IsString(n) && strcmp(n->valuestring, name) == 0)
            return 1;
    }
    return 0;
}

static int budget_spent(const ops_llm *m)
{
    const ops_llm_cfg *c = &m->cfg;
    if (c->budget_tokens > 0 && m->total.tokens_in + m->total.tokens_out >= c->budget_tokens)
        return 1;
    if (c->budget_usd > 0 && m->total.cost_usd >= c->budget_usd)
        return 1;
    return 0;
}

static int fail_as(ops_llm_reply *out, ops_llm_fail f, ops_err *e, ops_code code,
                   const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static int fail_as(ops_llm_reply *out, ops_llm_fail f, ops_err *e, ops_code code,
                   const char *fmt, ...)
{
    char msg[sizeof(e->msg)];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    out->fail = f;
    return ops_fail(e, code, "%s", msg);
}

/* ---- waits between attempts ---- */

static unsigned rand_below(unsigned n)
{
    unsigned r = 0;
    if (n == 0)
        return 0;
    if (RAND_bytes((unsigned char *)&r, sizeof(r)) != 1)
        r = (unsigned)ops_now_ms() * 2654435761u;
    return r % n;
}

/* The wait before attempt number `next` (1, 2, ...): the server's
 * Retry-After when it gave one (and a little jitter above it, never
 * below), else 500 ms doubling, half of it random ("equal jitter"), so
 * clients that failed together do not come back together. */
static int64_t backoff_ms(const ops_llm_cfg *c, int next, int64_t retry_after)
{
    int64_t cap = c->retry_max_ms;
    if (retry_after >= 0) {
        int64_t j = retry_after / 10 < 1000 ? retry_after / 10 : 1000;
        int64_t w = retry_after + rand_below((unsigned)j + 1);
        return w;
    }
    int64_t base = 500;
    for (int i = 1; i < next && base < cap; i++)
        base *= 2;
    if (base > cap)
        base = cap;
    return base / 2 + rand_below((unsigned)(base / 2) + 1);
}

/* Sleep ms, waking every 20 ms to look at the cancel flag. 1 when
 * cancelled. */
static int wait_ms(const ops_llm *m, int64_t ms)
{
    int64_t end = ops_now_ms() + ms;
    for (;;) {
        if (m->cancel && atomic_load(m->cancel))
            return 1;
        int64_t left = end - ops_now_ms();
        if (left <= 0)
            return 0;
        struct timespec ts = {0, (long)((left < 20 ? left : 20) * 1000000L)};
        nanosleep(&ts, NULL);
    }
}

/* ---- asking ---- */

static void add_usage(ops_llm *m, ops_llm_reply *out, int64_t in, int64_t outt)
{
    const ops_llm_cfg *c = &m->cfg;
    out->turn.tokens_in = in;
    out->turn.tokens_out = outt;
    out->turn.cost_usd = (double)in * c->price_in / 1e6 + (double)outt * c->price_out / 1e6;
    m->total.tokens_in += in;
    m->total.tokens_out += outt;
    m->total.cost_usd += out->turn.cost_usd;
}

static const char *retry_note(int attempts)
{
    return attempts > 1 ? " (after retries)" : "";
}

int ops_llm_ask(ops_llm *m, const ops_llm_conv *conv, const cJSON *tools, ops_llm_reply *out,
                ops_err *e)
{
    ops_err spare;
    if (!e)
        e = &spare;
    if (!out)
        return ops_fail(e, OPS_EARG, "ops_llm_ask: NULL reply");
    memset(out, 0, sizeof(*out));
    if (!m || !conv) {
        out->fail = OPS_LLM_EARG;
        return ops_fail(e, OPS_EARG, "ops_llm_ask: NULL argument");
    }
    int64_t t0 = ops_now_ms();
    out->total = m->total;
    if (conv_check(conv, e) != 0 || tools_check(tools, e) != 0) {
        out->fail = OPS_LLM_EARG;
        return -1;
    }
    const ops_llm_cfg *c = &m->cfg;
    const char *who = ops_llm_provider_name(c->provider);
    if (budget_spent(m))
        return fail_as(out, OPS_LLM_EBUDGET, e, OPS_EARG,
                       "the model budget is spent (%lld of %lld tokens, $%.4f of $%.4f): "
                       "nothing sent; raise budget_tokens / budget_usd for a longer task",
                       (long long)(m->total.tokens_in + m->total.tokens_out),
                       (long long)c->budget_tokens, m->total.cost_usd, c->budget_usd);
    int anth = c->provider == OPS_LLM_ANTHROPIC;
    int ntools = tools ? cJSON_GetArraySize(tools) : 0;
    char *body = anth ? ops_llm_anthropic_request(c, conv, ntools ? tools : NULL, e)
                      : ops_llm_openai_request(c, conv, ntools ? tools : NULL, e);
    if (!body) {
        out->fail = OPS_LLM_EARG;
        return -1;
    }
    /* The header lines: the key's is wiped after the request. */
    char auth[sizeof(c->key) + 32] = "";
    const char *hdrs[5];
    int nh = 0;
    hdrs[nh++] = "Content-Type: application/json";
    hdrs[nh++] = "Expect:"; /* no 100-continue round trip for a large prompt */
    if (anth) {
        hdrs[nh++] = "anthropic-version: 2023-06-01";
        if (c->key[0]) {
            snprintf(auth, sizeof(auth), "x-api-key: %s", c->key);
            hdrs[nh++] = auth;
        }
    } else if (c->key[0]) {
        snprintf(auth, sizeof(auth), "Authorization: Bearer %s", c->key);
        hdrs[nh++] = auth;
    }
    hdrs[nh] = NULL;

    int rc = -1;
    ops_llm_http_res res = {0};
    for (int attempt = 0;; attempt++) {
        ops_llm_http_res_free(&res);
        if (m->cancel && atomic_load(m->cancel)) {
            rc = fail_as(out, OPS_LLM_ECANCEL, e, OPS_EFAIL, "cancelled before asking %s", who);
            break;
        }
        out->attempts++;
        m->total.requests++;
        out->turn.requests++;
        int got = ops_llm_http_post(m->http, m->url, hdrs, body, strlen(body), c->connect_ms,
                                    c->timeout_ms, m->cancel, &res);
        out->status = res.status;
        int retry = 0;
        char why[700] = "";
        if (got != 0) {
            if (res.cancelled) {
                rc = fail_as(out, OPS_LLM_ECANCEL, e, OPS_EFAIL,
                             "cancelled while waiting for %s", who);
                break;
            }
            if (res.timed_out) {
                /* Not retried: the server may still be at work on it, and
                 * another full wait would double the time and the cost. */
                rc = fail_as(out, OPS_LLM_ETIMEOUT, e, OPS_ETIMEOUT,
                             "%s did not answer within %d ms (%s at %s): raise timeout_ms for a "
                             "slow model, or check the server", who, c->timeout_ms, c->model,
                             c->base_url);
                break;
            }
            if (!res.retryable_net || attempt >= c->retries) {
                rc = fail_as(out, OPS_LLM_ENET, e, OPS_EFAIL,
                             "cannot reach %s at %s%s: %s", who, c->base_url,
                             retry_note(out->attempts), res.err);
                break;
            }
            retry = 1;
            snprintf(why, sizeof(why), "%s", res.err);
        } else if (res.status >= 200 && res.status < 300) {
            break; /* an answer to read */
        } else {
            char msg[400];
            ops_llm_error_text(res.body, res.len, msg, sizeof(msg));
            ops_llm_scrub(msg, c->key);
            char rid[128] = "";
            if (res.request_id[0])
                snprintf(rid, sizeof(rid), " [request id %s]", res.request_id);
            int st = res.status;
            if (st == 429 || st == 408 || st >= 500) {
                if (res.retry_after_ms > c->retry_max_ms) {
                    rc = fail_as(out, OPS_LLM_EHTTP, e, OPS_EFAIL,
                                 "%s answered HTTP %d and asks to wait %lld s, more than "
                                 "retry_max_ms (%d ms): %s%s", who, st,
                                 (long long)(res.retry_after_ms / 1000), c->retry_max_ms, msg,
                                 rid);
                    break;
                }
                if (attempt < c->retries) {
                    retry = 1;
                    snprintf(why, sizeof(why), "HTTP %d", st);
                } else {
                    rc = fail_as(out, OPS_LLM_EHTTP, e, OPS_EFAIL,
                                 "%s answered HTTP %d%s: %s%s%s", who, st,
                                 retry_note(out->attempts), msg, rid,
                                 st == 429 ? " (rate limit or quota: wait, or raise the "
                                             "account's limits)" : "");
                    break;
                }
            } else if (st >= 300 && st < 400) {
                rc = fail_as(out, OPS_LLM_EHTTP, e, OPS_EFAIL,
                             "%s answered HTTP %d, a redirect to %s: it is not followed (the key "
                             "goes only to base_url); set base_url to the final address",
                             who, st, res.location[0] ? res.location : "(no Location)");
                break;
            } else {
                const char *hint = st == 401 || st == 403
                                       ? " (check the API key for this endpoint)"
                                   : st == 404 ? " (check base_url and the model's name)"
                                   : st == 400 ? " (the server refused the request)"
                                               : "";
                rc = fail_as(out, OPS_LLM_EHTTP, e, OPS_EFAIL,
                             "%s answered HTTP %d: %s%s%s", who, st, msg, rid, hint);
                break;
            }
        }
        if (retry) {
            int64_t w = backoff_ms(c, attempt + 1, got == 0 ? res.retry_after_ms : -1);
            (void)why;
            if (wait_ms(m, w)) {
                rc = fail_as(out, OPS_LLM_ECANCEL, e, OPS_EFAIL,
                             "cancelled while waiting to ask %s again", who);
                break;
            }
        }
    }
    volatile char *a = auth;
    for (size_t i = 0; i < sizeof(auth); i++)
        a[i] = 0;
    free(body);

    if (out->fail == OPS_LLM_OK && res.status >= 200 && res.status < 300) {
        if (res.body) {
            ops_llm_scrub(res.body, c->key);
            out->raw = ops_llm_strdup(res.body);
        }
        int64_t tin = 0, tout = 0;
        int prc = anth ? ops_llm_anthropic_reply(res.body, res.len, out, e)
                       : ops_llm_openai_reply(res.body, res.len, out, e);
        tin = out->turn.tokens_in;
        tout = out->turn.tokens_out;
        add_usage(m, out, tin, tout);
        if (prc != 0) {
            out->fail = OPS_LLM_EREPLY;
            rc = -1;
        } else if (ntools && !out->call_name) {
            char t[200];
            one_line(t, sizeof(t), out->text ? out->text : "", out->text ? strlen(out->text) : 0);
            rc = fail_as(out, OPS_LLM_EREPLY, e, OPS_EFAIL,
                         "%s answered without a tool call (stop reason %s): \"%s\"", who,
                         out->stop ? out->stop : "none", t);
        } else if (out->call_name && !tool_known(tools, out->call_name)) {
            char n[100];
            one_line(n, sizeof(n), out->call_name, strlen(out->call_name));
            rc = fail_as(out, OPS_LLM_EREPLY, e, OPS_EFAIL,
                         "%s called \"%s\", which is not one of the tools offered", who, n);
        } else if (budget_spent(m)) {
            rc = fail_as(out, OPS_LLM_EBUDGET, e, OPS_EARG,
                         "this answer spent the model budget (%lld of %lld tokens, $%.4f of "
                         "$%.4f): the task stops here",
                         (long long)(m->total.tokens_in + m->total.tokens_out),
                         (long long)c->budget_tokens, m->total.cost_usd, c->budget_usd);
        } else {
            rc = 0;
        }
        if (!out->text)
            out->text = ops_llm_strdup("");
        if (!out->text && rc == 0)
            rc = fail_as(out, OPS_LLM_EREPLY, e, OPS_EFAIL, "out of memory");
    }
    if (rc != 0)
        ops_llm_scrub(e->msg, c->key);
    ops_llm_http_res_free(&res);
    out->total = m->total;
    out->ms = ops_now_ms() - t0;
    return rc;
}
