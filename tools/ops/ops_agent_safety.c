/* SPDX-License-Identifier: Apache-2.0 */
/* The agent's safety patterns: a stop before payment, purchase and
 * destructive confirmation screens, decided from the screen itself and not
 * from what the model says about it. Each pattern becomes one POSIX
 * extended regular expression, matched case-insensitively: a word or
 * phrase must stand as whole words ("pay" finds "Pay now" and "PAY", not
 * "Display" or "payload"), spaces in a phrase match any run of blanks, and
 * "re:RE" is taken as the expression RE itself. */
#include "ops_agent_int.h"

#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const ops_agent_safety_default[] = {
    "pay",           "buy",            "purchase",       "place order",   "confirm payment",
    "confirm purchase", "checkout",    "send money",     "transfer money", "delete account",
    "factory reset", "erase",          "wipe",           NULL};

struct agent_safety {
    size_t n;
    char **src;   /* the patterns as given */
    regex_t *re;
};

/* A word or phrase as an expression: regex metacharacters escaped, blanks
 * as [[:space:]]+, bounded by non-word characters or the ends. */
static char *word_re(const char *w)
{
    size_t n = strlen(w);
    char *out = malloc(n * 12 + 64), *o = out;
    if (!out)
        return NULL;
    o += sprintf(o, "(^|[^[:alnum:]_])(");
    for (const char *p = w; *p; p++) {
        if (*p == ' ' || *p == '\t') {
            while (p[1] == ' ' || p[1] == '\t')
                p++;
            o += sprintf(o, "[[:space:]]+");
        } else if (strchr(".[]()*+?{}|^$\\", *p)) {
            *o++ = '\\';
            *o++ = *p;
        } else {
            *o++ = *p;
        }
    }
    o += sprintf(o, ")([^[:alnum:]_]|$)");
    *o = 0;
    return out;
}

void agent_safety_free(agent_safety *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++) {
        regfree(&s->re[i]);
        free(s->src[i]);
    }
    free(s->re);
    free(s->src);
    free(s);
}

int agent_safety_init(agent_safety **out, const char *const *patterns, size_t n, ops_err *e)
{
    *out = NULL;
    if (!patterns) {
        patterns = ops_agent_safety_default;
        for (n = 0; patterns[n]; n++)
            ;
    }
    agent_safety *s = calloc(1, sizeof *s);
    if (!s || !(s->re = calloc(n ? n : 1, sizeof *s->re)) ||
        !(s->src = calloc(n ? n : 1, sizeof *s->src))) {
        agent_safety_free(s);
        return ops_fail(e, OPS_EFAIL, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        const char *p = patterns[i];
        if (!p || !*p || strlen(p) > 512 || ops_utf8_bad(p, strlen(p)) != strlen(p)) {
            agent_safety_free(s);
            return ops_fail(e, OPS_EARG, "safety pattern %zu is empty, longer than 512 bytes or "
                                         "not UTF-8", i + 1);
        }
        int is_re = strncmp(p, "re:", 3) == 0;
        char *re = is_re ? strdup(p + 3) : word_re(p);
        s->src[i] = strdup(p);
        if (!re || !s->src[i]) {
            free(re);
            s->n = i + (s->src[i] != NULL); /* frees what was made */
            agent_safety_free(s);
            return ops_fail(e, OPS_EFAIL, "out of memory");
        }
        int rc = regcomp(&s->re[i], re, REG_EXTENDED | REG_ICASE | REG_NEWLINE);
        free(re);
        if (rc != 0) {
            char why[256];
            regerror(rc, &s->re[i], why, sizeof why);
            free(s->src[i]);
            s->n = i;
            agent_safety_free(s);
            return ops_fail(e, OPS_EARG, "safety pattern %zu (\"%.200s\") is not a valid "
                                         "extended regular expression: %s", i + 1, p, why);
        }
        s->n = i + 1;
    }
    *out = s;
    return 0;
}

/* The line of text around [so, eo), at most cap - 1 bytes, cut at
 * character boundaries. */
static void context(char *buf, size_t cap, const char *text, size_t so, size_t eo)
{
    size_t a = so, b = eo;
    while (a > 0 && text[a - 1] != '\n' && so - a < 60)
        a--;
    while (text[b] && text[b] != '\n' && b - eo < 60)
        b++;
    while (a < so && ((unsigned char)text[a] & 0xC0) == 0x80)
        a++;
    while (b > eo && text[b] && ((unsigned char)text[b] & 0xC0) == 0x80)
        b--;
    size_t len = b - a < cap - 1 ? b - a : cap - 1;
    memcpy(buf, text + a, len);
    buf[len] = 0;
    ops_utf8_fix(buf);
    /* leading blanks and "- " of the snapshot's line */
    char *p = buf;
    while (*p == ' ')
        p++;
    if (p != buf)
        memmove(buf, p, strlen(p) + 1);
}

int agent_safety_check(const agent_safety *s, const char *text, char *why, size_t cap)
{
    if (!s || !text)
        return 0;
    for (size_t i = 0; i < s->n; i++) {
        regmatch_t m[1];
        if (regexec(&s->re[i], text, 1, m, 0) == 0) {
            char line[256];
            context(line, sizeof line, text, (size_t)m[0].rm_so, (size_t)m[0].rm_eo);
            snprintf(why, cap, "the screen matches safety pattern \"%s\" in: %s", s->src[i],
                     line);
            return 1;
        }
    }
    return 0;
}
