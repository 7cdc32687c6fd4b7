/* SPDX-License-Identifier: Apache-2.0 */
/* Where the agent's model comes from: defaults, the providers' environment
 * variables (as their own SDKs read them), a config file's [model] table
 * and the command line, checked once so a request never starts with a
 * setting that cannot work. The key is checked for what would break or
 * inject into a header (control characters, spaces) and never quoted. */
#include "ops_llm.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ops_config.h"
#include "ops_llm_int.h"

const char *ops_llm_provider_name(ops_llm_provider p)
{
    switch (p) {
    case OPS_LLM_OPENAI: return "openai";
    case OPS_LLM_ANTHROPIC: return "anthropic";
    default: return "auto";
    }
}

void ops_llm_cfg_init(ops_llm_cfg *c)
{
    if (!c)
        return;
    memset(c, 0, sizeof(*c));
    c->timeout_ms = 120000;
    c->connect_ms = 10000;
    c->retries = 3;
    c->retry_max_ms = 60000;
    c->max_tokens = 1024;
    c->temperature = -1;
}

void ops_llm_cfg_wipe(ops_llm_cfg *c)
{
    if (!c)
        return;
    volatile char *k = c->key;
    for (size_t i = 0; i < sizeof(c->key); i++)
        k[i] = 0;
    c->key_from = NULL;
}

/* A key goes into a header line: printable ASCII without spaces only. */
static int key_ok(const char *k)
{
    if (!*k)
        return 0;
    for (const unsigned char *p = (const unsigned char *)k; *p; p++)
        if (*p <= 0x20 || *p >= 0x7F)
            return 0;
    return 1;
}

static int set_key(ops_llm_cfg *c, const char *k, size_t n, const char *what, const char *from,
                   ops_err *e)
{
    while (n && (k[n - 1] == '\n' || k[n - 1] == '\r' || k[n - 1] == ' ' || k[n - 1] == '\t'))
        n--;
    while (n && (*k == ' ' || *k == '\t')) {
        k++;
        n--;
    }
    if (n == 0)
        return ops_fail(e, OPS_EARG, "the API key in %s is empty", what);
    if (n >= sizeof(c->key))
        return ops_fail(e, OPS_EARG, "the API key in %s is longer than %zu bytes", what,
                        sizeof(c->key) - 1);
    ops_llm_cfg_wipe(c);
    memcpy(c->key, k, n);
    c->key[n] = 0;
    if (!key_ok(c->key)) {
        ops_llm_cfg_wipe(c);
        return ops_fail(e, OPS_EARG,
                        "the API key in %s has a space or a control character: it must be "
                        "one line of printable ASCII", what);
    }
    c->key_from = from;
    return 0;
}

static int key_file(ops_llm_cfg *c, const char *path, const char *from, ops_err *e)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return ops_fail(e, OPS_EARG, "api_key_file %s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return ops_fail(e, OPS_EARG, "api_key_file %s: not a regular file", path);
    }
    if (st.st_mode & 077) {
        close(fd);
        return ops_fail(e, OPS_EARG,
                        "api_key_file %s may be read by others (mode %03o): chmod 600 it",
                        path, (unsigned)(st.st_mode & 0777));
    }
    char buf[sizeof(c->key) + 2];
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n < 0)
        return ops_fail(e, OPS_EARG, "api_key_file %s: %s", path, strerror(errno));
    buf[n] = 0;
    size_t len = strcspn(buf, "\n");
    char what[600];
    snprintf(what, sizeof(what), "api_key_file %s", path);
    int rc = set_key(c, buf, len, what, from, e);
    volatile char *v = buf;
    for (size_t i = 0; i < sizeof(buf); i++)
        v[i] = 0;
    return rc;
}

static int parse_long(const char *v, long lo, long hi, long *out)
{
    if (!*v)
        return -1;
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (errno || *end || x < lo || x > hi)
        return -1;
    *out = x;
    return 0;
}

static int parse_num(const char *v, double hi, double *out)
{
    if (!*v)
        return -1;
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (errno || *end || !isfinite(x) || x < 0 || x > hi)
        return -1;
    *out = x;
    return 0;
}

static int copy_str(char *dst, size_t cap, const char *v, const char *key, ops_err *e)
{
    size_t n = strlen(v);
    if (n == 0)
        return ops_fail(e, OPS_EARG, "model setting %s must not be empty", key);
    if (n >= cap)
        return ops_fail(e, OPS_EARG, "model setting %s is longer than %zu bytes", key, cap - 1);
    for (const unsigned char *p = (const unsigned char *)v; *p; p++)
        if (*p < 0x20 || *p == 0x7F)
            return ops_fail(e, OPS_EARG, "model setting %s has a control character", key);
    memcpy(dst, v, n + 1);
    return 0;
}

int ops_llm_cfg_set(ops_llm_cfg *c, const char *key, const char *value, const char *from,
                    ops_err *e)
{
    ops_err spare;
    if (!e)
        e = &spare;
    if (!c || !key || !value || !from)
        return ops_fail(e, OPS_EARG, "ops_llm_cfg_set: NULL argument");
    struct ilim {
        const char *name;
        int *dst;
        long lo, hi;
    } ints[] = {
        {"timeout_ms", &c->timeout_ms, 1000, 900000},
        {"connect_ms", &c->connect_ms, 100, 120000},
        {"retries", &c->retries, 0, 10},
        {"retry_max_ms", &c->retry_max_ms, 0, 600000},
        {"max_tokens", &c->max_tokens, 1, 200000},
    };
    for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++) {
        if (strcmp(key, ints[i].name) != 0)
            continue;
        long x;
        if (parse_long(value, ints[i].lo, ints[i].hi, &x) != 0)
            return ops_fail(e, OPS_EARG, "model setting %s = '%.40s': want an integer in %ld..%ld",
                            key, value, ints[i].lo, ints[i].hi);
        *ints[i].dst = (int)x;
        return 0;
    }
    struct dlim {
        const char *name;
        double *dst;
        double hi;
    } nums[] = {
        {"temperature", &c->temperature, 2},
        {"budget_usd", &c->budget_usd, 1e6},
        {"price_in", &c->price_in, 1e6},
        {"price_out", &c->price_out, 1e6},
    };
    for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++) {
        if (strcmp(key, nums[i].name) != 0)
            continue;
        if (parse_num(value, nums[i].hi, nums[i].dst) != 0)
            return ops_fail(e, OPS_EARG, "model setting %s = '%.40s': want a number in 0..%g",
                            key, value, nums[i].hi);
        return 0;
    }
    if (strcmp(key, "budget_tokens") == 0) {
        long x;
        if (parse_long(value, 0, 2000000000L, &x) != 0)
            return ops_fail(e, OPS_EARG,
                            "model setting budget_tokens = '%.40s': want an integer in "
                            "0..2000000000 (0: no limit)", value);
        c->budget_tokens = x;
        return 0;
    }
    if (strcmp(key, "allow_http") == 0) {
        if (strcmp(value, "true") == 0 || strcmp(value, "1") == 0)
            c->allow_http = 1;
        else if (strcmp(value, "false") == 0 || strcmp(value, "0") == 0)
            c->allow_http = 0;
        else
            return ops_fail(e, OPS_EARG, "model setting allow_http = '%.40s': want true or false",
                            value);
        return 0;
    }
    if (strcmp(key, "provider") == 0) {
        if (strcmp(value, "openai") == 0)
            c->provider = OPS_LLM_OPENAI;
        else if (strcmp(value, "anthropic") == 0)
            c->provider = OPS_LLM_ANTHROPIC;
        else
            return ops_fail(e, OPS_EARG,
                            "model setting provider = '%.40s': want openai (chat completions, "
                            "also for llama.cpp, Ollama, vLLM, Gemini, DeepSeek) or anthropic",
                            value);
        c->provider_from = from;
        return 0;
    }
    if (strcmp(key, "base_url") == 0) {
        if (copy_str(c->base_url, sizeof(c->base_url), value, key, e) != 0)
            return -1;
        c->base_url_from = from;
        return 0;
    }
    if (strcmp(key, "model") == 0)
        return copy_str(c->model, sizeof(c->model), value, key, e);
    if (strcmp(key, "api_key_env") == 0) {
        const char *k = getenv(value);
        if (!k || !*k)
            return ops_fail(e, OPS_EARG,
                            "model setting api_key_env: the variable %.100s is not set", value);
        char what[160];
        snprintf(what, sizeof(what), "the variable %.100s", value);
        return set_key(c, k, strlen(k), what, from, e);
    }
    if (strcmp(key, "api_key_file") == 0)
        return key_file(c, value, from, e);
    if (strcmp(key, "api_key") == 0)
        return ops_fail(e, OPS_EARG,
                        "model setting api_key: the key is not a setting (settings are shown "
                        "and copied); put it in OPENAI_API_KEY / ANTHROPIC_API_KEY, or name "
                        "a variable with api_key_env or a 0600 file with api_key_file");
    return ops_fail(e, OPS_EARG,
                    "unknown model setting '%.60s' (provider, base_url, model, api_key_env, "
                    "api_key_file, timeout_ms, connect_ms, retries, retry_max_ms, max_tokens, "
                    "temperature, budget_tokens, budget_usd, price_in, price_out, allow_http)",
                    key);
}

int ops_llm_cfg_value(ops_llm_cfg *c, const char *key, const struct ops_cfg_val *v, char *err,
                      size_t errlen)
{
    char text[1200];
    ops_err e;
    if (!c || !key || !v || !err || !errlen)
        return -1;
    if (ops_cfg_text(v, text, sizeof(text)) != 0) {
        snprintf(err, errlen, "[model] %s must be %s", key,
                 v->type == OPS_CFG_ARR ? "a string, a number or true/false, not an array"
                                        : "shorter");
        return -1;
    }
    if (ops_llm_cfg_set(c, key, text, "config", &e) != 0) {
        snprintf(err, errlen, "[model] %s", e.msg);
        return -1;
    }
    return 0;
}

static const char *env(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

int ops_llm_url_check(const char *url, int allow_http, ops_llm_url *u, ops_err *e)
{
    memset(u, 0, sizeof(*u));
    const char *rest;
    if (strncasecmp(url, "https://", 8) == 0) {
        u->https = 1;
        rest = url + 8;
    } else if (strncasecmp(url, "http://", 7) == 0) {
        rest = url + 7;
    } else {
        return ops_fail(e, OPS_EARG,
                        "base_url '%.200s' is not an http(s) URL: write https://HOST[:PORT][/PATH]",
                        url);
    }
    size_t alen = strcspn(rest, "/?#");
    if (alen == 0 || alen >= sizeof(u->host))
        return ops_fail(e, OPS_EARG, "base_url '%.200s' has no host", url);
    if (memchr(rest, '@', alen))
        return ops_fail(e, OPS_EARG,
                        "base_url must not hold a user or password (user@host): give the key "
                        "by OPENAI_API_KEY / ANTHROPIC_API_KEY or api_key_env instead");
    if (strpbrk(rest + alen, "?#"))
        return ops_fail(e, OPS_EARG, "base_url '%.200s' must not have a query or fragment", url);
    for (const char *p = url; *p; p++)
        if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7F)
            return ops_fail(e, OPS_EARG,
                            "base_url has a space or a non-ASCII character: percent-encode it");
    /* The host without the port: [v6]:port, v6 alone is not allowed bare. */
    const char *h = rest;
    size_t hlen = alen;
    if (*h == '[') {
        const char *close = memchr(h, ']', alen);
        if (!close)
            return ops_fail(e, OPS_EARG, "base_url '%.200s': unclosed [ in the host", url);
        h++;
        hlen = (size_t)(close - h);
    } else {
        const char *colon = memchr(h, ':', alen);
        if (colon)
            hlen = (size_t)(colon - h);
    }
    memcpy(u->host, h, hlen);
    u->host[hlen] = 0;
    u->loopback = strcasecmp(u->host, "localhost") == 0 || strcmp(u->host, "::1") == 0 ||
                  strncmp(u->host, "127.", 4) == 0;
    if (!u->https && !u->loopback && !allow_http)
        return ops_fail(e, OPS_EARG,
                        "base_url '%.200s' is plain http to a host that is not this machine: "
                        "the key and the screen would cross the network in clear. Use https, "
                        "or set allow_http = true when the network is yours",
                        url);
    return 0;
}

int ops_llm_cfg_resolve(ops_llm_cfg *c, ops_err *e)
{
    ops_err spare;
    if (!e)
        e = &spare;
    if (!c)
        return ops_fail(e, OPS_EARG, "ops_llm_cfg_resolve: NULL config");
    const char *oa_key = env("OPENAI_API_KEY"), *oa_url = env("OPENAI_BASE_URL");
    const char *an_key = env("ANTHROPIC_API_KEY"), *an_url = env("ANTHROPIC_BASE_URL");
    int oa = oa_key || oa_url, an = an_key || an_url;
    if (c->provider == OPS_LLM_AUTO) {
        if (strncasecmp(c->model, "claude", 6) == 0) {
            c->provider = OPS_LLM_ANTHROPIC;
            c->provider_from = "the model's name";
        } else if (an && !oa) {
            c->provider = OPS_LLM_ANTHROPIC;
            c->provider_from = "environment";
        } else if (oa && !an) {
            c->provider = OPS_LLM_OPENAI;
            c->provider_from = "environment";
        } else if (c->base_url[0]) {
            c->provider = OPS_LLM_OPENAI;
            c->provider_from = "default";
        } else if (oa && an) {
            return ops_fail(e, OPS_EARG,
                            "both OPENAI_* and ANTHROPIC_* are set: choose one with --provider "
                            "openai|anthropic (or provider in the config's [model] table)");
        } else {
            return ops_fail(e, OPS_EARG,
                            "no model server configured: set OPENAI_API_KEY (and OPENAI_BASE_URL "
                            "for another server, e.g. http://127.0.0.1:8080/v1 for llama.cpp), "
                            "or ANTHROPIC_API_KEY, or give --base-url");
        }
    }
    int anth = c->provider == OPS_LLM_ANTHROPIC;
    if (!c->base_url[0]) {
        const char *u = anth ? an_url : oa_url;
        const char *d = anth ? "https://api.anthropic.com" : "https://api.openai.com/v1";
        if (copy_str(c->base_url, sizeof(c->base_url), u ? u : d,
                     anth ? "ANTHROPIC_BASE_URL" : "OPENAI_BASE_URL", e) != 0)
            return -1;
        c->base_url_from = u ? "environment" : "default";
    }
    size_t n = strlen(c->base_url);
    while (n > 0 && c->base_url[n - 1] == '/')
        c->base_url[--n] = 0;
    ops_llm_url u;
    if (ops_llm_url_check(c->base_url, c->allow_http, &u, e) != 0)
        return -1;
    if (!c->key[0]) {
        const char *k = anth ? an_key : oa_key;
        if (k && set_key(c, k, strlen(k), anth ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY",
                         "environment", e) != 0)
            return -1;
    }
    if (!c->key[0] && (strcasecmp(u.host, "api.openai.com") == 0 ||
                       strcasecmp(u.host, "api.anthropic.com") == 0))
        return ops_fail(e, OPS_EARG, "no API key for %s: set %s (or api_key_env / api_key_file)",
                        u.host, anth ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY");
    if (!c->model[0])
        return ops_fail(e, OPS_EARG,
                        "no model: give --model NAME (or model in the config's [model] table), "
                        "the name the server at %s expects", c->base_url);
    if (c->budget_usd > 0 && c->price_in <= 0 && c->price_out <= 0)
        return ops_fail(e, OPS_EARG,
                        "budget_usd needs the model's prices: set price_in and price_out (USD per "
                        "million tokens)");
    if (!c->provider_from)
        c->provider_from = "default";
    return 0;
}
