/* SPDX-License-Identifier: Apache-2.0 */
/* Inside ops_llm: the parts each wire format and the HTTP side share. Not
 * for front ends (they use ops_llm.h). */
#ifndef ADBC_OPS_LLM_INT_H
#define ADBC_OPS_LLM_INT_H

#include <stdatomic.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "ops_llm.h"

/* ---- base URLs (ops_llm_cfg.c) ---- */
typedef struct ops_llm_url {
    int https;
    int loopback;      /* localhost, 127.0.0.0/8, ::1 */
    char host[256];
} ops_llm_url;

/* Check a base URL: http(s), a host, no user:password@, no query or
 * fragment, printable ASCII; plain http only to loopback or with
 * allow_http. */
int ops_llm_url_check(const char *url, int allow_http, ops_llm_url *u, ops_err *e);

/* ---- one HTTP exchange (ops_llm_http.c) ---- */
typedef struct ops_llm_http ops_llm_http;

typedef struct ops_llm_http_res {
    int status;             /* 0: no HTTP answer */
    int curl_rc;            /* CURLcode of the transfer (0: it completed) */
    int timed_out;          /* the whole-request or connect timeout struck */
    int cancelled;          /* the cancel flag stopped it */
    int retryable_net;      /* a connection failure worth another attempt */
    char *body;             /* NUL-terminated, malloc'd; NULL when none */
    size_t len;
    int64_t retry_after_ms; /* Retry-After / retry-after-ms asked for; -1: none */
    char request_id[96];    /* request-id / x-request-id, for error messages */
    char location[256];     /* a redirect's Location (shown, never followed) */
    char err[256];          /* curl's description of a failed transfer */
} ops_llm_http_res;

int ops_llm_http_new(ops_llm_http **out, ops_err *e);
void ops_llm_http_free(ops_llm_http *h);
/* POST body (JSON) to url with the extra header lines (NULL-terminated;
 * they hold the key, so they are never shown). Waits at most timeout_ms
 * (connect_ms to connect), polling *cancel every 50 ms. The answer's body
 * is bounded (8 MiB). Returns 0 when an HTTP answer came (any status), -1
 * otherwise; res says which. */
int ops_llm_http_post(ops_llm_http *h, const char *url, const char *const *headers,
                      const char *body, size_t len, int connect_ms, int timeout_ms,
                      atomic_int *cancel, ops_llm_http_res *res);
void ops_llm_http_res_free(ops_llm_http_res *r);

/* ---- the wire formats (ops_llm_openai.c, ops_llm_anthropic.c) ---- */
/* Build the request body for cfg's model from conv and tools (already
 * checked by ops_llm_conv_check / ops_llm_tools_check). NULL with e filled
 * when out of memory. */
char *ops_llm_openai_request(const ops_llm_cfg *cfg, const ops_llm_conv *conv,
                             const cJSON *tools, ops_err *e);
char *ops_llm_anthropic_request(const ops_llm_cfg *cfg, const ops_llm_conv *conv,
                                const cJSON *tools, ops_err *e);
/* Read a 2xx answer into out (text, the first call, ncalls, stop, usage
 * tokens). -1 with e filled (OPS_LLM_EREPLY) when it is not one. */
int ops_llm_openai_reply(const char *body, size_t len, ops_llm_reply *out, ops_err *e);
int ops_llm_anthropic_reply(const char *body, size_t len, ops_llm_reply *out, ops_err *e);

/* ---- shared helpers (ops_llm.c) ---- */
/* The provider's own message from an error body ({"error":{"message"}},
 * {"error":"..."}, {"message":...}), or the start of the body, as one
 * printable line in buf. */
void ops_llm_error_text(const char *body, size_t len, char *buf, size_t cap);
/* Replace every occurrence of key in s with "[key]" (in place). */
void ops_llm_scrub(char *s, const char *key);
/* One entry of the tool table (checked: a name, maybe a description, an
 * object inputSchema) as {"name","description",SCHEMA_KEY: the schema}:
 * schema_key "parameters" for openai's function, "input_schema" for
 * anthropic. A tool without a schema takes no arguments ({"type":"object"}).
 * NULL when out of memory. */
cJSON *ops_llm_tool_entry(const cJSON *tool, const char *schema_key);
/* The answer's body parsed, or NULL with e filled when it is empty or not
 * JSON (both formats say so alike). status is the HTTP status, for the
 * message. */
cJSON *ops_llm_reply_json(const char *body, size_t len, int status, ops_err *e);
/* A token count of the answer's usage object: the number under name, 0
 * when absent or out of range. */
int64_t ops_llm_count(const cJSON *usage, const char *name);
/* Duplicate s (NULL -> NULL), malloc'd. */
char *ops_llm_strdup(const char *s);

#endif
