/* SPDX-License-Identifier: Apache-2.0 */
/* Language models over HTTP, for the agent: one question (a conversation
 * and a tool table) in, one answer (the model's text and at most one tool
 * call) out, over either wire format:
 *
 *   openai     the chat completions API with function calling
 *              (POST BASE/chat/completions): OpenAI, and every server that
 *              speaks it (Gemini's and DeepSeek's compatible endpoints,
 *              llama.cpp's llama-server, Ollama, vLLM);
 *   anthropic  the Messages API with tool use (POST BASE/v1/messages).
 *
 * The conversation is neutral (ops_llm_conv); each format's request is
 * built from it and its answer read back into ops_llm_reply, so the loop
 * never sees a provider's JSON. Built with cJSON and libcurl only
 * (ADBC_WITH_CURL; the library adbc_ops_llm exists only when both are
 * there, and the agent with it).
 *
 * The key: kept in the config and sent only in the request's auth header
 * (Authorization: Bearer for openai, x-api-key for anthropic) to the
 * configured endpoint. Never logged, traced, echoed or put in an error
 * message; redirects are not followed (a 3xx is an error naming the status);
 * plain http is refused except to a loopback host (127.0.0.0/8, ::1,
 * localhost) or with allow_http set, so the key never crosses a network in
 * clear without the user saying so.
 *
 * Threads: one ops_llm is used by one thread at a time; the cancel flag may
 * be set from any thread (or a signal handler). */
#ifndef ADBC_OPS_LLM_H
#define ADBC_OPS_LLM_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "ops_core.h"

/* ---- configuration (ops_llm_cfg.c) ---- */

typedef enum ops_llm_provider {
    OPS_LLM_AUTO = 0,   /* not chosen: ops_llm_cfg_resolve picks one */
    OPS_LLM_OPENAI,
    OPS_LLM_ANTHROPIC
} ops_llm_provider;

/* "openai", "anthropic" ("auto" for OPS_LLM_AUTO). */
const char *ops_llm_provider_name(ops_llm_provider p);

typedef struct ops_llm_cfg {
    ops_llm_provider provider;
    char base_url[512];     /* "": the provider's variable, else its default:
                               https://api.openai.com/v1, https://api.anthropic.com */
    char model[256];        /* required: no default model */
    char key[1024];         /* the API key; "" for a server that needs none */
    int timeout_ms;         /* one request, whole (connect to last byte); default 120000,
                               1000..900000 */
    int connect_ms;         /* the connection (TCP + TLS); default 10000, 100..120000 */
    int retries;            /* more attempts after a 429, 408, 5xx or a connection
                               failure; default 3, 0..10 */
    int retry_max_ms;       /* the longest wait before a retry, Retry-After included
                               (a longer Retry-After is an error saying so); default
                               60000, 0..600000 */
    int max_tokens;         /* the limit of one reply (max_tokens / max_completion_tokens);
                               default 1024, 1..200000 */
    double temperature;     /* < 0: not sent (the server's default); default -1 */
    int64_t budget_tokens;  /* tokens in + out over the ops_llm's life; 0: no limit */
    double budget_usd;      /* cost over the ops_llm's life; 0: no limit (needs prices) */
    double price_in;        /* USD per million input tokens; default 0 (cost unknown) */
    double price_out;       /* USD per million output tokens; default 0 */
    int allow_http;         /* 1: plain http allowed to any host (default: loopback only) */
    /* Where each of provider, base_url and key came from ("default",
     * "environment", "the model's name" for the provider, or
     * ops_llm_cfg_set's from: "config", "command line"), for messages;
     * NULL: not set yet.
     * key_from never holds the key itself. */
    const char *provider_from, *base_url_from, *key_from;
} ops_llm_cfg;

/* The defaults above; provider OPS_LLM_AUTO, everything else empty. */
void ops_llm_cfg_init(ops_llm_cfg *c);

/* Set one key from a config file's [model] table (from = "config") or the
 * command line (from = "command line"); a later call wins, so set the file
 * first, then the command line. from must outlive c (a string literal).
 * The keys:
 *   provider      "openai" | "anthropic"
 *   base_url      "https://HOST[:PORT][/PATH]" (or http:// as above); the
 *                 endpoint path is appended (/chat/completions, /v1/messages)
 *   model         the model name the server expects
 *   api_key_env   the name of an environment variable holding the key
 *   api_key_file  a file holding the key (first line); refused when group
 *                 or others may read it
 *   timeout_ms connect_ms retries retry_max_ms max_tokens budget_tokens
 *                 decimal integers in the ranges above
 *   temperature budget_usd price_in price_out   decimal numbers >= 0
 *   allow_http    "true" | "false"
 * (the key itself is never a config value: a file of settings is shown and
 * copied around; keys live in the environment or in a 0600 file). An
 * unknown key or a bad value is OPS_EARG naming the key (never the value of
 * api_key_*). */
int ops_llm_cfg_set(ops_llm_cfg *c, const char *key, const char *value, const char *from,
                    ops_err *e);

/* One key = value of a config file's [model] table, for a schema callback
 * of the tools' configuration reader (ops_config.h): the keys and values of
 * ops_llm_cfg_set, from = "config"; strings, integers and booleans as TOML
 * writes them (timeout_ms = 30000, allow_http = true, price_in = "0.15":
 * the reader has no decimal numbers, so they are strings). 0, or -1 with
 * "[model] ..." in err. */
struct ops_cfg_val;
int ops_llm_cfg_value(ops_llm_cfg *c, const char *key, const struct ops_cfg_val *v, char *err,
                      size_t errlen);

/* Fill in what was not set, as the providers' SDKs do, then check it all:
 * the provider, when not given: anthropic when the model name starts with
 * "claude", else the one whose environment is set (ANTHROPIC_API_KEY or
 * ANTHROPIC_BASE_URL, OPENAI_API_KEY or OPENAI_BASE_URL); both or neither
 * set is openai when a base_url was given, else an error (asking for
 * --provider when both are set, for a server when neither is). Then base_url from OPENAI_BASE_URL / ANTHROPIC_BASE_URL or the
 * default, the key from OPENAI_API_KEY / ANTHROPIC_API_KEY (when no
 * api_key_* was set). A missing model, a base_url that is not http(s), plain
 * http to a non-loopback host without allow_http, no key for the providers'
 * own hosts, a cost budget without prices: OPS_EARG saying what to set. */
int ops_llm_cfg_resolve(ops_llm_cfg *c, ops_err *e);

/* Wipe the key (the memory, not just the first byte). */
void ops_llm_cfg_wipe(ops_llm_cfg *c);

/* ---- the conversation ---- */

typedef enum ops_llm_role {
    OPS_LLM_USER = 0,    /* text, and optionally a PNG image */
    OPS_LLM_ASSISTANT,   /* the model's text (may be NULL) and its one tool call */
    OPS_LLM_TOOL         /* the result of the assistant's call: call_id and text */
} ops_llm_role;

/* One message. Every pointer is borrowed: the caller keeps it alive across
 * ops_llm_ask. */
typedef struct ops_llm_msg {
    ops_llm_role role;
    const char *text;           /* UTF-8; user, tool: required; assistant: may be NULL */
    const unsigned char *png;   /* user: an image (a marked screenshot), or NULL */
    size_t png_len;
    const char *call_id;        /* assistant: its call's id; tool: the id it answers */
    const char *call_name;      /* assistant: the tool called (NULL: no call) */
    const cJSON *call_args;     /* assistant: the call's arguments, an object */
} ops_llm_msg;

typedef struct ops_llm_conv {
    const char *system;         /* the system prompt (may be NULL) */
    const ops_llm_msg *msgs;    /* in order; the first is a user message */
    size_t n;
} ops_llm_conv;

/* ---- usage and replies ---- */

typedef struct ops_llm_usage {
    int64_t tokens_in;          /* prompt tokens, as the server counted them */
    int64_t tokens_out;         /* completion tokens */
    double cost_usd;            /* from the configured prices; 0 without them */
    int requests;               /* HTTP requests sent, retries included */
} ops_llm_usage;

/* Why ops_llm_ask failed, for the loop to decide what to do next. */
typedef enum ops_llm_fail {
    OPS_LLM_OK = 0,
    OPS_LLM_EREPLY,     /* the answer was unusable (not JSON, no choices, tool args not a
                           JSON object, an unknown tool, no tool call when one was
                           required): a failed step; asking again may work */
    OPS_LLM_EHTTP,      /* the server refused (4xx, or 5xx/429 after the retries): the
                           status and the provider's own message are in e */
    OPS_LLM_ENET,       /* no connection, TLS failure, a reset, after the retries */
    OPS_LLM_ETIMEOUT,   /* no whole answer within timeout_ms (after the retries) */
    OPS_LLM_ECANCEL,    /* the cancel flag was set */
    OPS_LLM_EBUDGET,    /* the token or cost budget is spent: nothing sent; or this answer
                           went over it (the reply is still filled in) */
    OPS_LLM_EARG        /* a bad call: NULL, an empty conversation, a bad tool table */
} ops_llm_fail;

/* "ok", "bad_reply", "http", "network", "timeout", "cancelled", "budget", "bad_request". */
const char *ops_llm_fail_name(ops_llm_fail f);

typedef struct ops_llm_reply {
    ops_llm_fail fail;          /* OPS_LLM_OK on success */
    char *text;                 /* the model's text (its reasoning); "" when none; malloc'd */
    char *call_id;              /* the tool call's id (made up when the server gave none); NULL:
                                   no call */
    char *call_name;            /* a name in the tool table */
    cJSON *call_args;           /* the arguments, a JSON object (owned) */
    int ncalls;                 /* tool calls in the answer; only the first is kept (the
                                   agent asks for one action per step; the rest are
                                   dropped, and the loop may say so) */
    char *stop;                 /* the server's stop reason ("tool_calls", "stop",
                                   "tool_use", "end_turn", "length", ...), or NULL */
    char *raw;                  /* the answer's body as received (for the trace); NULL when
                                   none came */
    int status;                 /* the last HTTP status, 0 when no answer came */
    int attempts;               /* HTTP requests this ask made (1 + retries) */
    int64_t ms;                 /* the ask's time, retries and waits included */
    ops_llm_usage turn;         /* this ask (the tokens of its last answer) */
    ops_llm_usage total;        /* everything the ops_llm spent so far */
} ops_llm_reply;

/* Free what the reply holds and zero it (a zeroed reply is fine to free). */
void ops_llm_reply_free(ops_llm_reply *r);

/* ---- the model (ops_llm.c, ops_llm_openai.c, ops_llm_anthropic.c) ---- */

typedef struct ops_llm ops_llm;

/* A model from a resolved config (ops_llm_cfg_resolve; checked again here),
 * copied: the caller may wipe its own. OPS_EARG on a bad config. */
int ops_llm_new(ops_llm **out, const ops_llm_cfg *cfg, ops_err *e);
/* Wipes the key. NULL is fine. */
void ops_llm_free(ops_llm *m);

/* While *flag is non-zero every ask fails with OPS_LLM_ECANCEL: one that
 * is waiting to retry stops waiting, one whose request is in flight aborts
 * it within about 100 ms. NULL: no flag. The flag outlives the model's use. */
void ops_llm_set_cancel(ops_llm *m, atomic_int *flag);

/* What the model has spent since ops_llm_new (or the last reset). */
ops_llm_usage ops_llm_usage_get(const ops_llm *m);
void ops_llm_usage_reset(ops_llm *m);

/* The provider, model and base URL in use (never the key), e.g.
 * "openai gpt-4o-mini at https://api.openai.com/v1". */
const char *ops_llm_describe(const ops_llm *m);

/* Ask the model for its next step: conv and tools (a cJSON array of
 * {name, description, inputSchema} as ops_tools_list gives it; may be NULL
 * or empty for a text-only answer) in; *out filled (free it with
 * ops_llm_reply_free, also after a failure). When tools are given the
 * model is told to call one (tool_choice "required" / {"type":"any"}) and
 * an answer without a call is OPS_LLM_EREPLY; a call of a name not in the
 * table, or with arguments that are not a JSON object, too.
 *
 * Before sending: the budget is checked (spent: OPS_LLM_EBUDGET, nothing
 * sent). A 429, 408, 5xx or a connection failure (refused, reset, DNS, TLS
 * handshake) is retried up to retries times, waiting 0.5 s, 1 s, 2 s ...
 * (doubling, capped at retry_max_ms; the upper half random), or at least
 * the Retry-After the server asked for (seconds, an HTTP date, or
 * retry-after-ms); a Retry-After beyond retry_max_ms fails at once saying
 * so. A 3xx (never followed) and any other 4xx fail at once. A timeout is
 * not retried: the server may still be at work, and another full wait
 * would double the time and the cost. After the answer: its usage is
 * added (also for an unusable answer: its tokens were spent); over the
 * budget is OPS_LLM_EBUDGET with the reply filled in.
 *
 * Returns 0, or -1 with e filled (code: OPS_EARG for bad calls and budget,
 * OPS_ETIMEOUT for timeouts, OPS_EFAIL otherwise; the message names the
 * provider, the HTTP status and the provider's own error message, never the
 * key) and out->fail saying which failure it was. */
int ops_llm_ask(ops_llm *m, const ops_llm_conv *conv, const cJSON *tools, ops_llm_reply *out,
                ops_err *e);

#endif
