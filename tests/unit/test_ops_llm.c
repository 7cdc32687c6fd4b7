/* SPDX-License-Identifier: Apache-2.0 */
/* ops_llm (tools/ops/ops_llm.h) against the scripted model server
 * (tests/model_server.py) on loopback, in both wire formats: round trips,
 * retries and Retry-After, malformed answers, a silent model, cancel, the
 * budget, and the key kept out of everything but its header. Nothing here
 * measures wall time against an upper bound: delays are asserted from the
 * server's own record (a retry came at least Retry-After later). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <time.h>
#include <unistd.h>

#include "ops_config.h"
#include "ops_llm.h"
#include "t.h"

#define KEY "sk-test-7f3a9c1e5b2d4068-SECRET"

/* ---- the server ---- */

typedef struct srv {
    pid_t pid;
    int port;
    char dir[256];
    char record[300];
} srv;

static srv S;

static void srv_stop(void)
{
    if (S.pid > 0) {
        kill(S.pid, SIGTERM);
        waitpid(S.pid, NULL, 0);
    }
    if (S.dir[0]) {
        char cmd[400];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", S.dir);
        if (system(cmd) != 0)
            fprintf(stderr, "  cannot remove %s\n", S.dir);
    }
    memset(&S, 0, sizeof(S));
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    char *b = malloc(cap);
    size_t r;
    while (b && (r = fread(b + n, 1, cap - n - 1, f)) > 0) {
        n += r;
        if (n + 1 >= cap) {
            char *g = realloc(b, cap *= 2);
            if (!g) {
                free(b);
                b = NULL;
            }
            b = g;
        }
    }
    fclose(f);
    if (b)
        b[n] = 0;
    if (len)
        *len = n;
    return b;
}

/* Start a server answering from script (JSON text); 0 or -1. */
static int srv_start(const char *script)
{
    srv_stop();
    snprintf(S.dir, sizeof(S.dir), "/tmp/adbc-llm-XXXXXX");
    if (!mkdtemp(S.dir))
        return -1;
    char spath[300], port_file[300];
    snprintf(spath, sizeof(spath), "%s/script.json", S.dir);
    snprintf(port_file, sizeof(port_file), "%s/port", S.dir);
    snprintf(S.record, sizeof(S.record), "%s/record.jsonl", S.dir);
    FILE *f = fopen(spath, "w");
    if (!f)
        return -1;
    fputs(script, f);
    fclose(f);
    const char *src = getenv("ADBC_SOURCE_DIR");
    char server[600];
    snprintf(server, sizeof(server), "%s/tests/model_server.py", src ? src : ".");
    S.pid = fork();
    if (S.pid < 0)
        return -1;
    if (S.pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGTERM); /* never outlives a crashed test */
        setenv("MODEL_SERVER_KEY", KEY, 1);
        execlp("python3", "python3", server, "--script", spath, "--record", S.record,
               "--port-file", port_file, (char *)NULL);
        _exit(127);
    }
    for (int i = 0; i < 3000; i++) { /* up to 30 s on a busy machine */
        char *p = slurp(port_file, NULL);
        if (p) {
            S.port = atoi(p);
            free(p);
            return S.port > 0 ? 0 : -1;
        }
        int st;
        if (waitpid(S.pid, &st, WNOHANG) == S.pid) {
            S.pid = 0;
            return -1;
        }
        usleep(10000);
    }
    return -1;
}

/* The record's requests, a JSON array. */
static cJSON *srv_record(void)
{
    size_t n;
    char *text = slurp(S.record, &n);
    cJSON *arr = cJSON_CreateArray();
    if (!text)
        return arr;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        cJSON *j = cJSON_Parse(line);
        if (j)
            cJSON_AddItemToArray(arr, j);
    }
    free(text);
    return arr;
}

static int srv_count(void)
{
    cJSON *r = srv_record();
    int n = cJSON_GetArraySize(r);
    cJSON_Delete(r);
    return n;
}

/* The key never in the record (its auth header is recorded as "<key>"). */
static int srv_key_clean(void)
{
    char *text = slurp(S.record, NULL);
    int clean = text && !strstr(text, KEY) && !strstr(text, "7f3a9c1e5b2d4068");
    free(text);
    return clean;
}

static const char *rec_str(const cJSON *rec, const char *a, const char *b)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(rec, a);
    if (b)
        x = cJSON_GetObjectItemCaseSensitive(x, b);
    return cJSON_IsString(x) ? x->valuestring : NULL;
}

static double rec_num(const cJSON *rec, const char *a)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(rec, a);
    return cJSON_IsNumber(x) ? x->valuedouble : -1;
}

/* ---- the model ---- */

static ops_llm *model(const char *provider, int retries, int timeout_ms, const char *extra_key,
                      const char *extra_val)
{
    ops_llm_cfg c;
    ops_err e;
    ops_llm_cfg_init(&c);
    char url[100];
    int anth = strcmp(provider, "anthropic") == 0;
    snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", S.port, anth ? "" : "/v1");
    char r[16], t[16];
    snprintf(r, sizeof(r), "%d", retries);
    snprintf(t, sizeof(t), "%d", timeout_ms);
    setenv("ADBC_TEST_LLM_KEY", KEY, 1);
    if (ops_llm_cfg_set(&c, "provider", provider, "test", &e) ||
        ops_llm_cfg_set(&c, "base_url", url, "test", &e) ||
        ops_llm_cfg_set(&c, "model", "scripted-1", "test", &e) ||
        ops_llm_cfg_set(&c, "api_key_env", "ADBC_TEST_LLM_KEY", "test", &e) ||
        ops_llm_cfg_set(&c, "retries", r, "test", &e) ||
        ops_llm_cfg_set(&c, "timeout_ms", t, "test", &e) ||
        (extra_key && ops_llm_cfg_set(&c, extra_key, extra_val, "test", &e)) ||
        ops_llm_cfg_resolve(&c, &e)) {
        fprintf(stderr, "  config: %s\n", e.msg);
        return NULL;
    }
    ops_llm *m = NULL;
    if (ops_llm_new(&m, &c, &e) != 0)
        fprintf(stderr, "  ops_llm_new: %s\n", e.msg);
    ops_llm_cfg_wipe(&c);
    return m;
}

static cJSON *tools(void)
{
    return cJSON_Parse(
        "[{\"name\":\"tap\",\"description\":\"Tap an element\",\"inputSchema\":{\"type\":"
        "\"object\",\"properties\":{\"ref\":{\"type\":\"integer\"}},\"required\":[\"ref\"]}},"
        "{\"name\":\"done\",\"description\":\"Finish\",\"inputSchema\":{\"type\":\"object\","
        "\"properties\":{\"answer\":{\"type\":\"string\"}}}},"
        "{\"name\":\"back\",\"description\":\"Press BACK\"}]");
}

static const unsigned char PNG[] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 0};

/* One user message "SNAP-1 ..." with an image. */
static ops_llm_conv conv1(ops_llm_msg *msgs)
{
    memset(msgs, 0, sizeof(*msgs));
    msgs[0].role = OPS_LLM_USER;
    msgs[0].text = "Goal: open settings.\nScreen SNAP-1: [ref=3] Button \"Settings\"";
    msgs[0].png = PNG;
    msgs[0].png_len = sizeof(PNG);
    ops_llm_conv c = {.system = "You drive a phone. SYSTEM-RULES", .msgs = msgs, .n = 1};
    return c;
}

static char *script_of(const char *turns)
{
    static char buf[8192];
    snprintf(buf, sizeof(buf), "{\"turns\":[%s]}", turns);
    return buf;
}

/* ---- round trips ---- */

static void round_trip(const char *provider)
{
    const char *fmt_expect = strcmp(provider, "anthropic") == 0 ? "anthropic" : "openai";
    char turns[3000];
    snprintf(turns, sizeof(turns),
             "{\"expect\":{\"format\":\"%s\",\"model\":\"scripted-1\",\"tools\":[\"tap\",\"done\","
             "\"back\"],\"tool_choice\":true,\"contains\":[\"SYSTEM-RULES\",\"SNAP-1\"],"
             "\"image\":true},"
             "\"answer\":{\"tool\":\"tap\",\"args\":{\"ref\":3},\"text\":\"Settings is ref 3\","
             "\"id\":\"call-A\",\"usage\":[120,15]}},"
             "{\"expect\":{\"last_contains\":[\"SNAP-2\"],\"contains\":[\"tapped ref 3\"],"
             "\"image\":false,\"messages\":%d},"
             "\"answer\":{\"tool\":\"done\",\"args\":{\"answer\":\"opened\"}}}",
             fmt_expect, strcmp(provider, "anthropic") == 0 ? 3 : 5);
    CHECK(srv_start(script_of(turns)) == 0);
    ops_llm *m = model(provider, 0, 10000, NULL, NULL);
    CHECK(m);
    cJSON *tt = tools();
    ops_llm_msg msgs[4];
    ops_llm_conv c = conv1(msgs);
    ops_llm_reply r;
    ops_err e;
    int rc = ops_llm_ask(m, &c, tt, &r, &e);
    if (rc)
        fprintf(stderr, "  ask: %s\n", e.msg);
    CHECK(rc == 0);
    CHECK_EQ_INT(r.fail, OPS_LLM_OK);
    CHECK_STR(r.call_name, "tap");
    CHECK_STR(r.call_id, "call-A");
    CHECK_STR(r.text, "Settings is ref 3");
    CHECK_EQ_INT(cJSON_GetObjectItem(r.call_args, "ref")->valueint, 3);
    CHECK_EQ_INT(r.ncalls, 1);
    CHECK_EQ_INT(r.turn.tokens_in, 120);
    CHECK_EQ_INT(r.turn.tokens_out, 15);
    CHECK_EQ_INT(r.attempts, 1);
    CHECK(r.raw && strstr(r.raw, "Settings is ref 3"));

    /* The next turn: the call, its result, the new screen. */
    msgs[1] = (ops_llm_msg){.role = OPS_LLM_ASSISTANT, .text = r.text, .call_id = r.call_id,
                            .call_name = r.call_name, .call_args = r.call_args};
    msgs[2] = (ops_llm_msg){.role = OPS_LLM_TOOL, .call_id = r.call_id, .text = "tapped ref 3"};
    msgs[3] = (ops_llm_msg){.role = OPS_LLM_USER, .text = "Screen SNAP-2: [ref=1] Switch"};
    c.n = 4;
    ops_llm_reply r2;
    rc = ops_llm_ask(m, &c, tt, &r2, &e);
    if (rc)
        fprintf(stderr, "  ask 2: %s\n", e.msg);
    CHECK(rc == 0);
    CHECK_STR(r2.call_name, "done");
    CHECK_STR(cJSON_GetObjectItem(r2.call_args, "answer")->valuestring, "opened");
    CHECK_EQ_INT(r2.total.tokens_in, 220);
    CHECK_EQ_INT(r2.total.requests, 2);

    /* What was sent, as the server recorded it. */
    cJSON *rec = srv_record();
    CHECK_EQ_INT(cJSON_GetArraySize(rec), 2);
    const cJSON *q1 = cJSON_GetArrayItem(rec, 1);
    CHECK_STR(rec_str(cJSON_GetArrayItem(rec, 0), "check", NULL), "ok");
    CHECK_STR(rec_str(q1, "check", NULL), "ok");
    const cJSON *body = cJSON_GetObjectItem(q1, "body");
    if (strcmp(provider, "anthropic") == 0) {
        CHECK_STR(rec_str(q1, "headers", "x-api-key"), "<key>");
        CHECK_STR(rec_str(q1, "headers", "anthropic-version"), "2023-06-01");
        CHECK(!rec_str(q1, "headers", "authorization"));
        CHECK_STR(rec_str(q1, "path", NULL), "/v1/messages");
        CHECK_STR(rec_str(body, "system", NULL), "You drive a phone. SYSTEM-RULES");
        /* user, assistant [text, tool_use], user [tool_result, text] */
        const cJSON *a = cJSON_GetArrayItem(cJSON_GetObjectItem(body, "messages"), 1);
        const cJSON *use = cJSON_GetArrayItem(cJSON_GetObjectItem(a, "content"), 1);
        CHECK_STR(rec_str(use, "type", NULL), "tool_use");
        CHECK_STR(rec_str(use, "id", NULL), "call-A");
        CHECK_EQ_INT(cJSON_GetObjectItem(cJSON_GetObjectItem(use, "input"), "ref")->valueint, 3);
        const cJSON *u = cJSON_GetArrayItem(cJSON_GetObjectItem(body, "messages"), 2);
        const cJSON *res = cJSON_GetArrayItem(cJSON_GetObjectItem(u, "content"), 0);
        CHECK_STR(rec_str(res, "type", NULL), "tool_result");
        CHECK_STR(rec_str(res, "tool_use_id", NULL), "call-A");
        CHECK_STR(rec_str(cJSON_GetObjectItem(body, "tool_choice"), "type", NULL), "any");
        CHECK(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(body, "tool_choice"),
                                               "disable_parallel_tool_use")));
    } else {
        CHECK_STR(rec_str(q1, "headers", "authorization"), "<key>");
        CHECK(!rec_str(q1, "headers", "x-api-key"));
        CHECK_STR(rec_str(q1, "path", NULL), "/v1/chat/completions");
        const cJSON *msgs_sent = cJSON_GetObjectItem(body, "messages");
        CHECK_STR(rec_str(cJSON_GetArrayItem(msgs_sent, 0), "role", NULL), "system");
        const cJSON *a = cJSON_GetArrayItem(msgs_sent, 2);
        const cJSON *call = cJSON_GetArrayItem(cJSON_GetObjectItem(a, "tool_calls"), 0);
        CHECK_STR(rec_str(call, "id", NULL), "call-A");
        const char *args = rec_str(call, "function", "arguments");
        CHECK(args);
        cJSON *pa = cJSON_Parse(args);
        CHECK(pa);
        int ref = cJSON_GetObjectItem(pa, "ref") ? cJSON_GetObjectItem(pa, "ref")->valueint : -1;
        cJSON_Delete(pa);
        CHECK_EQ_INT(ref, 3);
        const cJSON *tr = cJSON_GetArrayItem(msgs_sent, 3);
        CHECK_STR(rec_str(tr, "role", NULL), "tool");
        CHECK_STR(rec_str(tr, "tool_call_id", NULL), "call-A");
        CHECK_STR(rec_str(body, "tool_choice", NULL), "required");
        CHECK(cJSON_IsFalse(cJSON_GetObjectItem(body, "parallel_tool_calls")));
        CHECK(cJSON_GetObjectItem(body, "max_tokens")); /* not api.openai.com */
    }
    cJSON_Delete(rec);
    CHECK(srv_key_clean());
    ops_llm_reply_free(&r);
    ops_llm_reply_free(&r2);
    cJSON_Delete(tt);
    ops_llm_free(m);
}

TEST(openai_round_trip) { round_trip("openai"); }
TEST(anthropic_round_trip) { round_trip("anthropic"); }

/* Ask once with the one-message conversation; rc, reply and error out. */
static int ask1(ops_llm *m, ops_llm_reply *r, ops_err *e)
{
    ops_llm_msg msgs[1];
    ops_llm_conv c = conv1(msgs);
    cJSON *tt = tools();
    int rc = ops_llm_ask(m, &c, tt, r, e);
    cJSON_Delete(tt);
    return rc;
}

/* ---- retries ---- */

static void retry_after_429(const char *provider)
{
    CHECK(srv_start(script_of(
              "{\"answer\":{\"status\":429,\"retry_after\":\"1\",\"error\":\"slow down\"}},"
              "{\"answer\":{\"tool\":\"back\"}}")) == 0);
    ops_llm *m = model(provider, 2, 10000, NULL, NULL);
    CHECK(m);
    ops_llm_reply r;
    ops_err e;
    int rc = ask1(m, &r, &e);
    if (rc)
        fprintf(stderr, "  ask: %s\n", e.msg);
    CHECK(rc == 0);
    CHECK_STR(r.call_name, "back");
    CHECK_EQ_INT(r.attempts, 2);
    cJSON *rec = srv_record();
    CHECK_EQ_INT(cJSON_GetArraySize(rec), 2);
    double sent0 = rec_num(cJSON_GetArrayItem(rec, 0), "t_sent");
    double recv1 = rec_num(cJSON_GetArrayItem(rec, 1), "t_recv");
    cJSON_Delete(rec);
    /* The retry came no sooner than the server asked. */
    CHECK(sent0 > 0 && recv1 - sent0 >= 1.0);
    CHECK(srv_key_clean());
    ops_llm_reply_free(&r);
    ops_llm_free(m);
}

TEST(openai_retry_after_429) { retry_after_429("openai"); }
TEST(anthropic_retry_after_429) { retry_after_429("anthropic"); }

TEST(retry_after_ms_and_date)
{
    /* OpenAI's retry-after-ms (700 ms: more than the first backoff, at
     * most 500 ms, so only honouring it passes), then an HTTP date in the
     * past (retry at once). */
    CHECK(srv_start(script_of(
              "{\"answer\":{\"status\":429,\"retry_after_ms\":\"700\"}},"
              "{\"answer\":{\"status\":503,\"retry_after\":\"Wed, 21 Oct 2015 07:28:00 GMT\"}},"
              "{\"answer\":{\"tool\":\"back\"}}")) == 0);
    ops_llm *m = model("openai", 3, 10000, NULL, NULL);
    CHECK(m);
    ops_llm_reply r;
    ops_err e;
    CHECK(ask1(m, &r, &e) == 0);
    CHECK_EQ_INT(r.attempts, 3);
    cJSON *rec = srv_record();
    double sent0 = rec_num(cJSON_GetArrayItem(rec, 0), "t_sent");
    double recv1 = rec_num(cJSON_GetArrayItem(rec, 1), "t_recv");
    cJSON_Delete(rec);
    CHECK(sent0 > 0 && recv1 - sent0 >= 0.7);
    ops_llm_reply_free(&r);
    ops_llm_free(m);
}

TEST(server_errors_then_success)
{
    CHECK(srv_start(script_of("{\"answer\":{\"status\":500}},{\"answer\":{\"status\":502}},"
                              "{\"answer\":{\"tool\":\"tap\",\"args\":{\"ref\":1}}}")) == 0);
    ops_llm *m = model("anthropic", 3, 10000, "retry_max_ms", "1000");
    CHECK(m);
    ops_llm_reply r;
    ops_err e;
    CHECK(ask1(m, &r, &e) == 0);
    CHECK_EQ_INT(r.attempts, 3);
    CHECK_EQ_INT(r.total.requests, 3);
    CHECK_STR(r.call_name, "tap");
    ops_llm_reply_free(&r);
    ops_llm_free(m);
}

TEST(server_errors_exhaust_retries)
{
    CHECK(srv_start(script_of("{\"answer\":{\"status\":500,\"error\":\"boom-1\"}},"
                              "{\"answer\":{\"status\":500,\"error\":\"boom-2\"}},"
                              "{\"answer\":{\"status\":503,\"error\":\"boom-3\"}},"
                              "{\"answer\":{\"tool\":\"back\"}}")) == 0);
    ops_llm *m = model("openai", 2, 10000, "retry_max_ms", "1000");
    CHECK(m);
    ops_llm_reply r;
    ops_err e;
    CHECK(ask1(m, &r, &e) == -1);
    CHECK_EQ_INT(r.fail, OPS_LLM_EHTTP);
    CHECK_EQ_INT(r.attempts, 3);
    CHECK_EQ_INT(r.status, 503);
    CHECK(strstr(e.msg, "HTTP 503") && strstr(e.msg, "boom-3") && strstr(e.msg, "req_2"));
    CHECK_EQ_INT(srv_count(), 3);
    ops_llm_reply_free(&r);
    ops_llm_free(m);
}

TEST(client_errors_not_retried)
{
    CHECK(srv_start(script_of("{\"answer\":{\"status\":401,\"error\":\"invalid x-api-key\"}},"
                              "{\"answer\":{\"tool\":\"back\"}}")) == 0);
    ops_llm *m = model("anthropic", 3, 10000, NULL, NULL);
    CHECK(m);
    ops_llm_reply r;
    ops_err e;
    CHECK(ask1(m, &r, &e) == -1);
    CHECK_EQ_INT(r.fail, OPS_LLM_EHTTP);
    CHECK_EQ_INT(r.attempts, 1);
    CHECK(strstr(e.msg, "HTTP 401") && strstr(e.msg, "invalid x-api-key") &&
          strstr(e.msg, "check the API key"));
    CHECK_EQ_INT(srv_count(), 1);
    ops_llm_reply_free(&r);
    ops_llm_free(m);
}

TEST(retry_after_longer_than_allowed)
{
    CHECK(srv_start(script_of("{\"answer\":{\"status\":429,\"retry_after\":\"120\"}}")) == 0);
    ops_llm *m = model("openai", 3, 10000, "retry_max_ms", "5000");
    CHECK(m);
    ops_llm_reply r;
    ops_err e;
    CHECK(ask1(m, &r, &e) == -1);
    CHECK_EQ_INT(r.fail, OPS_LLM_EHTTP);
    CHECK(strstr(e.msg, "asks to wait 120 s"));
    CHECK_EQ_INT(srv_count(), 1);
    ops_llm_reply_free(&r);
    ops_llm_free(m);
}

TEST(redirect_not_followed)
{
    CHECK(srv_start(script_of("{\"answer\":{\"status\":307,\"location\":"
                              "\"http://elsewhere.example/v1/chat/completions\"}}")) == 0);
    ops_llm *m = model("openai", 3, 10000, NULL, NULL);
    CHECK(m);
    ops_llm_reply r;
    ops_err e;
    CHECK(ask1(m, &r, &e) == -1);
    CHECK_EQ_INT(r.fail, OPS_LLM_EHTTP);
    CHECK(strstr(e.msg, "not followed") && strstr(e.msg, "elsewhere.example"));
    CHECK_EQ_INT(srv_count(), 1);
    ops_llm_reply_free(&r);
    ops_llm_free(m);
}

TEST(connection_refused)
{
    /* A port nobody listens on: bound, then closed. */
    int s = socket(AF_INET, SOCK_STREAM, 0);
    CHECK(s >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof(a);
    CHECK(bind(s, (struct sockaddr *)&a, sizeof(a)) == 0);
    CHECK(getsockname(s, (struct sockaddr *)&a, &al) == 0);
    close(s);
    srv_stop();
    S.port = ntohs(a.sin_port);
    ops_llm *m = model("openai", 1, 10000, "retry_max_ms", "200");
    S.port = 0;
    CHECK(m);
    ops_llm_reply r;
    ops_err e;
    CHECK(ask1(m, &r, &e) == -1);
    CHECK_EQ_INT(r.fail, OPS_LLM_ENET);
    CHECK_EQ_INT(r.attempts, 2);
    CHECK(strstr(e.msg, "cannot reach openai"));
    ops_llm_reply_free(&r);
    ops_llm_free(m);
}

/* ---- malformed answers ---- */

static void bad_answer(const char *provider, const char *answer, const char *want)
{
    char turns[1000];
    snprintf(turns, sizeof(turns), "{\"answer\":%s}", answer);
    CHECK(srv_start(script_of(turns)) == 0);
    ops_llm *m = model(provider, 3, 10000, NULL, NULL);
    CHECK(m);
    ops_llm_reply r;
    ops_err e;
    int rc = ask1(m, &r, &e);
    if (rc == 0 || !strstr(e.msg, want))
        fprintf(stderr, "  %s %s: rc %d, \"%s\" (want \"%s\")\n", provider, answer, rc, e.msg,
                want);
    CHECK(rc == -1);
    CHECK_EQ_INT(r.fail, OPS_LLM_EREPLY);
    CHECK(strstr(e.msg, want));
    CHECK_EQ_INT(r.attempts, 1); /* the loop decides whether to ask again */
    ops_llm_reply_free(&r);
    ops_llm_free(m);
}

TEST(malformed_answers)
{
    const char *both[][2] = {
        {"{\"body_raw\":\"<html>oops</html>\"}", "not JSON"},
        {"{\"no_choices\":true}", "no "},
        {"{\"text\":\"I think I should tap\"}", "without a tool call"},
        {"{\"tool\":\"format_disk\",\"args\":{}}", "not one of the tools"},
    };
    for (int p = 0; p < 2; p++)
        for (size_t i = 0; i < sizeof(both) / sizeof(both[0]); i++) {
            bad_answer(p ? "anthropic" : "openai", both[i][0], both[i][1]);
            if (t_cur_failed)
                return;
        }
    bad_answer("openai", "{\"tool\":\"tap\",\"args_raw\":\"{ref: 3\"}", "not JSON");
    if (t_cur_failed)
        return;
    bad_answer("openai", "{\"tool\":\"tap\",\"args_raw\":\"[3]\"}", "not a JSON object");
    if (t_cur_failed)
        return;
    bad_answer("anthropic", "{\"tool\":\"tap\",\"args_raw\":\"\\\"ref 3\\\"\"}",
               "not a JSON object");
}

TEST(several_calls_keep_the_first)
{
    for (int p = 0; p < 2; p++) {
        CHECK(srv_start(script_of("{\"answer\":{\"calls\":[{\"tool\":\"tap\",\"args\":{\"ref\":"
                                  "2}},{\"tool\":\"back\"}]}}")) == 0);
        ops_llm *m = model(p ? "anthropic" : "openai", 0, 10000, NULL, NULL);
        CHECK(m);
        ops_llm_reply r;
        ops_err e;
        CHECK(ask1(m, &r, &e) == 0);
        CHECK_EQ_INT(r.ncalls, 2);
        CHECK_STR(r.call_name, "tap");
        CHECK_EQ_INT(cJSON_GetObjectItem(r.call_args, "ref")->valueint, 2);
        ops_llm_reply_free(&r);
        ops_llm_free(m);
    }
}

TEST(no_arguments_is_an_empty_object)
{
    CHECK(srv_start(script_of("{\"answer\":{\"tool\":\"back\",\"args_raw\":\"\"}}")) == 0);
    ops_llm *m = model("openai", 0, 10000, NULL, NULL);
    CHECK(m);
    ops_llm_reply r;
    ops_err e;
    CHECK(ask1(m, &r, &e) == 0);
    CHECK(cJSON_IsObject(r.call_args) && cJSON_GetArraySize(r.call_args) == 0);
    ops_llm_reply_free(&r);
    ops_llm_free(m);
}

/* ---- a silent model, cancel ---- */

TEST(silent_model_times_out)
{
    CHECK(srv_start(script_of("{\"answer\":{\"hang\":60}},{\"answer\":{\"tool\":\"back\"}}")) == 0);
    ops_llm *m = model("openai", 3, 1000, NULL, NULL);
    CHECK(m);
    ops_llm_reply r;
    ops_err e;
    CHECK(ask1(m, &r, &e) == -1);
    CHECK_EQ_INT(r.fail, OPS_LLM_ETIMEOUT);
    CHECK_EQ_INT(e.code, OPS_ETIMEOUT);
    CHECK_EQ_INT(r.attempts, 1); /* a timeout is not retried */
    CHECK(strstr(e.msg, "did not answer within 1000 ms"));
    ops_llm_reply_free(&r);
    ops_llm_free(m);
}

typedef struct canceller {
    atomic_int *flag;
    int want;   /* set the flag once the record has this many lines */
} canceller;

static void *cancel_later(void *arg)
{
    canceller *c = arg;
    for (int i = 0; i < 6000 && srv_count() < c->want; i++) /* up to 60 s */
        usleep(10000);
    atomic_store(c->flag, 1);
    return NULL;
}

static void cancel_case(const char *script)
{
    CHECK(srv_start(script) == 0);
    ops_llm *m = model("anthropic", 3, 120000, "retry_max_ms", "120000");
    CHECK(m);
    atomic_int flag = 0;
    ops_llm_set_cancel(m, &flag);
    canceller c = {.flag = &flag, .want = 1};
    pthread_t th;
    CHECK(pthread_create(&th, NULL, cancel_later, &c) == 0);
    ops_llm_reply r;
    ops_err e;
    int rc = ask1(m, &r, &e);
    pthread_join(th, NULL);
    CHECK(rc == -1);
    CHECK_EQ_INT(r.fail, OPS_LLM_ECANCEL);
    CHECK(strstr(e.msg, "cancelled"));
    CHECK_EQ_INT(srv_count(), 1); /* nothing more was sent */
    /* While the flag stays set, nothing is sent at all. */
    ops_llm_reply r2;
    CHECK(ask1(m, &r2, &e) == -1);
    CHECK_EQ_INT(r2.fail, OPS_LLM_ECANCEL);
    CHECK_EQ_INT(srv_count(), 1);
    ops_llm_reply_free(&r);
    ops_llm_reply_free(&r2);
    ops_llm_free(m);
}

/* In flight: the server holds the request (and records it first). */
TEST(cancel_in_flight) { cancel_case(script_of("{\"answer\":{\"hang\":60}}")); }
/* Waiting for a Retry-After of a minute. */
TEST(cancel_while_waiting_to_retry)
{
    cancel_case(script_of("{\"answer\":{\"status\":429,\"retry_after\":\"60\"}},"
                          "{\"answer\":{\"tool\":\"back\"}}"));
}

/* ---- the budget ---- */

TEST(token_budget)
{
    CHECK(srv_start(script_of("{\"answer\":{\"tool\":\"back\",\"usage\":[100,10]}},"
                              "{\"answer\":{\"tool\":\"back\",\"usage\":[100,10]}},"
                              "{\"answer\":{\"tool\":\"back\"}}")) == 0);
    ops_llm *m = model("openai", 0, 10000, "budget_tokens", "150");
    CHECK(m);
    ops_llm_reply r;
    ops_err e;
    CHECK(ask1(m, &r, &e) == 0);
    CHECK_EQ_INT(r.total.tokens_in + r.total.tokens_out, 110);
    ops_llm_reply_free(&r);
    /* The second answer goes over: an error, with the answer kept. */
    CHECK(ask1(m, &r, &e) == -1);
    CHECK_EQ_INT(r.fail, OPS_LLM_EBUDGET);
    CHECK_STR(r.call_name, "back");
    CHECK(strstr(e.msg, "220 of 150 tokens"));
    ops_llm_reply_free(&r);
    /* Spent: nothing is sent. */
    CHECK(ask1(m, &r, &e) == -1);
    CHECK_EQ_INT(r.fail, OPS_LLM_EBUDGET);
    CHECK(strstr(e.msg, "nothing sent"));
    CHECK_EQ_INT(srv_count(), 2);
    ops_llm_reply_free(&r);
    ops_llm_usage u = ops_llm_usage_get(m);
    CHECK_EQ_INT(u.requests, 2);
    ops_llm_usage_reset(m);
    CHECK(ask1(m, &r, &e) == 0);
    ops_llm_reply_free(&r);
    ops_llm_free(m);
}

TEST(cost_budget)
{
    CHECK(srv_start(script_of("{\"answer\":{\"tool\":\"back\",\"usage\":[1000000,100000]}},"
                              "{\"answer\":{\"tool\":\"back\"}}")) == 0);
    ops_llm_cfg c;
    ops_err e;
    ops_llm_cfg_init(&c);
    char url[100];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/v1", S.port);
    CHECK(ops_llm_cfg_set(&c, "base_url", url, "test", &e) == 0);
    CHECK(ops_llm_cfg_set(&c, "provider", "openai", "test", &e) == 0);
    CHECK(ops_llm_cfg_set(&c, "model", "m", "test", &e) == 0);
    CHECK(ops_llm_cfg_set(&c, "budget_usd", "1.5", "test", &e) == 0);
    CHECK(ops_llm_cfg_resolve(&c, &e) == -1); /* a cost budget needs prices */
    CHECK(strstr(e.msg, "price_in"));
    CHECK(ops_llm_cfg_set(&c, "price_in", "0.5", "test", &e) == 0);
    CHECK(ops_llm_cfg_set(&c, "price_out", "2", "test", &e) == 0);
    CHECK(ops_llm_cfg_resolve(&c, &e) == 0);
    ops_llm *m;
    CHECK(ops_llm_new(&m, &c, &e) == 0);
    ops_llm_reply r;
    CHECK(ask1(m, &r, &e) == 0); /* $0.50 + $0.20 */
    CHECK(r.turn.cost_usd > 0.6999 && r.turn.cost_usd < 0.7001);
    ops_llm_reply_free(&r);
    CHECK(ask1(m, &r, &e) == 0); /* $0.70 + 100 in, 10 out: still under */
    ops_llm_reply_free(&r);
    ops_llm_free(m);
}

/* ---- the key ---- */

TEST(key_never_in_errors)
{
    /* A provider that quotes the key back in its error message. */
    CHECK(srv_start(script_of("{\"answer\":{\"status\":401,\"error\":\"Incorrect API key "
                              "provided: " KEY ". Find yours at example.com\"}}")) == 0);
    ops_llm *m = model("openai", 0, 10000, NULL, NULL);
    CHECK(m);
    ops_llm_reply r;
    ops_err e;
    CHECK(ask1(m, &r, &e) == -1);
    CHECK(strstr(e.msg, "Incorrect API key provided: [key]"));
    CHECK(!strstr(e.msg, KEY));
    CHECK(!strstr(ops_llm_describe(m), KEY));
    ops_llm_reply_free(&r);
    ops_llm_free(m);
    CHECK(srv_key_clean());
}

TEST(key_only_in_its_header)
{
    /* Every test's record is checked too; here the whole exchange of a
     * failing and a succeeding request for both formats. */
    for (int p = 0; p < 2; p++) {
        CHECK(srv_start(script_of("{\"answer\":{\"status\":500}},{\"answer\":{\"tool\":"
                                  "\"back\"}}")) == 0);
        ops_llm *m = model(p ? "anthropic" : "openai", 1, 10000, "retry_max_ms", "100");
        CHECK(m);
        ops_llm_reply r;
        ops_err e;
        CHECK(ask1(m, &r, &e) == 0);
        CHECK(!strstr(r.raw, KEY));
        cJSON *rec = srv_record();
        CHECK_EQ_INT(cJSON_GetArraySize(rec), 2);
        for (int i = 0; i < 2; i++)
            CHECK_STR(rec_str(cJSON_GetArrayItem(rec, i), "headers",
                              p ? "x-api-key" : "authorization"), "<key>");
        cJSON_Delete(rec);
        CHECK(srv_key_clean());
        ops_llm_reply_free(&r);
        ops_llm_free(m);
    }
}

/* ---- configuration ---- */

static void clear_env(void)
{
    unsetenv("OPENAI_API_KEY");
    unsetenv("OPENAI_BASE_URL");
    unsetenv("ANTHROPIC_API_KEY");
    unsetenv("ANTHROPIC_BASE_URL");
}

TEST(config_from_environment)
{
    ops_llm_cfg c;
    ops_err e;
    clear_env();
    ops_llm_cfg_init(&c);
    CHECK(ops_llm_cfg_set(&c, "model", "gpt-x", "command line", &e) == 0);
    CHECK(ops_llm_cfg_resolve(&c, &e) == -1);
    CHECK(strstr(e.msg, "no model server configured"));

    setenv("OPENAI_API_KEY", "sk-env-1", 1);
    ops_llm_cfg_init(&c);
    CHECK(ops_llm_cfg_set(&c, "model", "gpt-x", "command line", &e) == 0);
    CHECK(ops_llm_cfg_resolve(&c, &e) == 0);
    CHECK_EQ_INT(c.provider, OPS_LLM_OPENAI);
    CHECK_STR(c.base_url, "https://api.openai.com/v1");
    CHECK_STR(c.key, "sk-env-1");
    CHECK_STR(c.key_from, "environment");
    CHECK_STR(c.base_url_from, "default");

    /* Both configured: the model's name decides, else --provider. */
    setenv("ANTHROPIC_API_KEY", "sk-ant-2", 1);
    setenv("ANTHROPIC_BASE_URL", "http://localhost:9000/", 1);
    ops_llm_cfg_init(&c);
    CHECK(ops_llm_cfg_set(&c, "model", "claude-sonnet-4-5", "config", &e) == 0);
    CHECK(ops_llm_cfg_resolve(&c, &e) == 0);
    CHECK_EQ_INT(c.provider, OPS_LLM_ANTHROPIC);
    CHECK_STR(c.base_url, "http://localhost:9000");
    CHECK_STR(c.key, "sk-ant-2");
    ops_llm_cfg_init(&c);
    CHECK(ops_llm_cfg_set(&c, "model", "gpt-x", "config", &e) == 0);
    CHECK(ops_llm_cfg_resolve(&c, &e) == -1);
    CHECK(strstr(e.msg, "--provider"));

    /* A later setting wins; the command line over the file. */
    ops_llm_cfg_init(&c);
    CHECK(ops_llm_cfg_set(&c, "provider", "anthropic", "config", &e) == 0);
    CHECK(ops_llm_cfg_set(&c, "provider", "openai", "command line", &e) == 0);
    CHECK(ops_llm_cfg_set(&c, "model", "gpt-x", "config", &e) == 0);
    CHECK(ops_llm_cfg_resolve(&c, &e) == 0);
    CHECK_EQ_INT(c.provider, OPS_LLM_OPENAI);
    CHECK_STR(c.provider_from, "command line");
    CHECK_STR(c.key, "sk-env-1");

    /* No key for the providers' own hosts. */
    clear_env();
    ops_llm_cfg_init(&c);
    CHECK(ops_llm_cfg_set(&c, "provider", "anthropic", "config", &e) == 0);
    CHECK(ops_llm_cfg_set(&c, "model", "claude-x", "config", &e) == 0);
    CHECK(ops_llm_cfg_resolve(&c, &e) == -1);
    CHECK(strstr(e.msg, "ANTHROPIC_API_KEY"));
    /* A local server needs none. */
    ops_llm_cfg_init(&c);
    CHECK(ops_llm_cfg_set(&c, "base_url", "http://127.0.0.1:8080/v1", "config", &e) == 0);
    CHECK(ops_llm_cfg_set(&c, "model", "qwen", "config", &e) == 0);
    CHECK(ops_llm_cfg_resolve(&c, &e) == 0);
    CHECK_EQ_INT(c.provider, OPS_LLM_OPENAI);
    CHECK_STR(c.key, "");
    ops_llm_cfg_init(&c);
    CHECK(ops_llm_cfg_set(&c, "base_url", "http://127.0.0.1:8080/v1", "config", &e) == 0);
    CHECK(ops_llm_cfg_resolve(&c, &e) == -1);
    CHECK(strstr(e.msg, "--model"));
}

TEST(config_refusals)
{
    ops_llm_cfg c;
    ops_err e;
    clear_env();
    ops_llm_cfg_init(&c);
    CHECK(ops_llm_cfg_set(&c, "api_key", "sk-1", "config", &e) == -1);
    CHECK(!strstr(e.msg, "sk-1"));
    CHECK(ops_llm_cfg_set(&c, "modle", "x", "config", &e) == -1);
    CHECK(strstr(e.msg, "unknown model setting 'modle'"));
    CHECK(ops_llm_cfg_set(&c, "retries", "11", "config", &e) == -1);
    CHECK(ops_llm_cfg_set(&c, "timeout_ms", "12x", "config", &e) == -1);
    CHECK(ops_llm_cfg_set(&c, "temperature", "nan", "config", &e) == -1);
    CHECK(ops_llm_cfg_set(&c, "provider", "gemini", "config", &e) == -1);
    CHECK(ops_llm_cfg_set(&c, "api_key_env", "ADBC_TEST_UNSET_VAR", "config", &e) == -1);
    setenv("ADBC_TEST_BAD_KEY", "sk-a\r\nX-Evil: 1", 1);
    CHECK(ops_llm_cfg_set(&c, "api_key_env", "ADBC_TEST_BAD_KEY", "config", &e) == -1);
    CHECK(strstr(e.msg, "control character") && !strstr(e.msg, "sk-a"));
    CHECK_STR(c.key, "");
    CHECK(ops_llm_cfg_set(&c, "model", "m", "config", &e) == 0);

    const char *urls[][2] = {
        {"http://10.0.0.5:8080/v1", "plain http"},
        {"ftp://host/v1", "not an http(s) URL"},
        {"https://user:pw@host/v1", "user or password"},
        {"https://host/v1?x=1", "query"},
        {"https:///v1", "no host"},
    };
    for (size_t i = 0; i < sizeof(urls) / sizeof(urls[0]); i++) {
        CHECK(ops_llm_cfg_set(&c, "base_url", urls[i][0], "config", &e) == 0);
        CHECK(ops_llm_cfg_resolve(&c, &e) == -1);
        if (!strstr(e.msg, urls[i][1]))
            fprintf(stderr, "  %s: %s\n", urls[i][0], e.msg);
        CHECK(strstr(e.msg, urls[i][1]));
    }
    CHECK(!strstr(e.msg, "pw@"));
    CHECK(ops_llm_cfg_set(&c, "base_url", "http://10.0.0.5:8080/v1", "config", &e) == 0);
    CHECK(ops_llm_cfg_set(&c, "allow_http", "true", "config", &e) == 0);
    CHECK(ops_llm_cfg_resolve(&c, &e) == 0);
    CHECK(ops_llm_cfg_set(&c, "base_url", "http://[::1]:8080/v1", "config", &e) == 0);
    CHECK(ops_llm_cfg_set(&c, "allow_http", "false", "config", &e) == 0);
    CHECK(ops_llm_cfg_resolve(&c, &e) == 0);

    /* A key file others may read is refused; a 0600 one is read. */
    char path[] = "/tmp/adbc-llm-key-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    CHECK(write(fd, "sk-file-3\n", 10) == 10);
    close(fd);
    chmod(path, 0644);
    CHECK(ops_llm_cfg_set(&c, "api_key_file", path, "config", &e) == -1);
    CHECK(strstr(e.msg, "chmod 600"));
    chmod(path, 0600);
    CHECK(ops_llm_cfg_set(&c, "api_key_file", path, "config", &e) == 0);
    unlink(path);
    CHECK_STR(c.key, "sk-file-3");
    ops_llm_cfg_wipe(&c);
    CHECK_STR(c.key, "");
}

static int model_key(void *ud, const char *table, const char *key, ops_cfg_val *v, char *err,
                     size_t errlen)
{
    (void)table;
    return ops_llm_cfg_value(ud, key, v, err, errlen);
}

/* The [model] table of a config file, read by the tools' one reader. */
TEST(config_file_table)
{
    static const char *const tables[] = {"model", NULL};
    ops_llm_cfg c;
    ops_llm_cfg_init(&c);
    ops_cfg_schema schema = {.tables = tables, .key = model_key, .ud = &c};
    char err[600];
    const char *text = "[model]\nprovider = \"anthropic\"\nmodel = \"claude-x\"  # the model\n"
                       "base_url = 'http://127.0.0.1:9/'\ntimeout_ms = 30_000\n"
                       "allow_http = true\nprice_in = \"0.25\"\n";
    int rc = ops_cfg_parse(text, strlen(text), "agent.toml", &schema, err, sizeof(err));
    if (rc)
        fprintf(stderr, "  %s\n", err);
    CHECK(rc == 0);
    CHECK_EQ_INT(c.provider, OPS_LLM_ANTHROPIC);
    CHECK_STR(c.provider_from, "config");
    CHECK_STR(c.model, "claude-x");
    CHECK_EQ_INT(c.timeout_ms, 30000);
    CHECK_EQ_INT(c.allow_http, 1);
    CHECK(c.price_in == 0.25);
    const char *bad[][2] = {
        {"[model]\nmodle = \"x\"\n", "agent.toml:2: [model] unknown model setting 'modle'"},
        {"[model]\n\napi_key = \"sk-in-file\"\n", "agent.toml:3: [model] model setting api_key"},
        {"[model]\nretries = 99\n", "agent.toml:2: [model] model setting retries"},
        {"[model]\nmodel = [\"a\"]\n", "agent.toml:2: [model] model must be a string"},
        {"[modle]\n", "agent.toml:1: unknown table [modle] (known: [model])"},
        {"[model]\nmodel = \"a\"\nmodel = \"b\"\n", "agent.toml:3: key 'model' set twice"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err[0] = 0;
        rc = ops_cfg_parse(bad[i][0], strlen(bad[i][0]), "agent.toml", &schema, err, sizeof(err));
        if (rc != -1 || strncmp(err, bad[i][1], strlen(bad[i][1])) != 0)
            fprintf(stderr, "  got \"%s\", want \"%s...\"\n", err, bad[i][1]);
        CHECK(rc == -1 && strncmp(err, bad[i][1], strlen(bad[i][1])) == 0);
        CHECK(!strstr(err, "sk-in-file"));
    }
}

TEST(bad_calls)
{
    ops_err e;
    ops_llm_reply r;
    CHECK(ops_llm_ask(NULL, NULL, NULL, &r, &e) == -1);
    CHECK_EQ_INT(r.fail, OPS_LLM_EARG);
    CHECK_EQ_INT(e.code, OPS_EARG);
    CHECK(ops_llm_ask(NULL, NULL, NULL, NULL, NULL) == -1);
    CHECK(ops_llm_new(NULL, NULL, NULL) == -1);
    ops_llm *m = NULL;
    ops_llm_cfg c;
    ops_llm_cfg_init(&c);
    CHECK(ops_llm_new(&m, &c, &e) == -1); /* not resolved */
    CHECK(!m);
    CHECK(ops_llm_cfg_set(NULL, "model", "x", "t", &e) == -1);
    CHECK(ops_llm_cfg_resolve(NULL, &e) == -1);
    ops_llm_free(NULL);
    ops_llm_reply_free(NULL);

    /* Conversations and tool tables checked before anything is sent. */
    CHECK(srv_start(script_of("{\"answer\":{\"tool\":\"back\"}}")) == 0);
    m = model("openai", 0, 10000, NULL, NULL);
    CHECK(m);
    ops_llm_msg msgs[2];
    ops_llm_conv cv = conv1(msgs);
    cv.n = 0;
    CHECK(ops_llm_ask(m, &cv, NULL, &r, &e) == -1);
    CHECK_EQ_INT(r.fail, OPS_LLM_EARG);
    cv.n = 1;
    msgs[0].png_len = 4;
    CHECK(ops_llm_ask(m, &cv, NULL, &r, &e) == -1);
    CHECK(strstr(e.msg, "PNG"));
    msgs[0].png_len = sizeof(PNG);
    msgs[1] = (ops_llm_msg){.role = OPS_LLM_TOOL, .text = "x"};
    cv.n = 2;
    CHECK(ops_llm_ask(m, &cv, NULL, &r, &e) == -1);
    cv.n = 1;
    cJSON *bad = cJSON_Parse("[{\"description\":\"no name\"}]");
    CHECK(ops_llm_ask(m, &cv, bad, &r, &e) == -1);
    CHECK(strstr(e.msg, "needs a name"));
    cJSON_Delete(bad);
    CHECK_EQ_INT(srv_count(), 0);
    ops_llm_free(m);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    RUN(openai_round_trip);
    RUN(anthropic_round_trip);
    RUN(openai_retry_after_429);
    RUN(anthropic_retry_after_429);
    RUN(retry_after_ms_and_date);
    RUN(server_errors_then_success);
    RUN(server_errors_exhaust_retries);
    RUN(client_errors_not_retried);
    RUN(retry_after_longer_than_allowed);
    RUN(redirect_not_followed);
    RUN(connection_refused);
    RUN(malformed_answers);
    RUN(several_calls_keep_the_first);
    RUN(no_arguments_is_an_empty_object);
    RUN(silent_model_times_out);
    RUN(cancel_in_flight);
    RUN(cancel_while_waiting_to_retry);
    RUN(token_budget);
    RUN(cost_budget);
    RUN(key_never_in_errors);
    RUN(key_only_in_its_header);
    RUN(config_from_environment);
    RUN(config_refusals);
    RUN(config_file_table);
    RUN(bad_calls);
    srv_stop();
    return T_DONE();
}
