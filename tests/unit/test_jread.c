/* SPDX-License-Identifier: Apache-2.0 */
/* The JSON reader (lib/core/jread.c) on DevTools-shaped messages and on
 * broken text: tokens, lookups, iteration, string decoding, and an error
 * (never a crash or a partial result) for everything malformed. */
#include "core/jread.h"
#include "t.h"

#include <stdlib.h>
#include <string.h>

#include "adbc/error.h"

static int parse(jread *j, const char *s)
{
    return jread_parse(j, s, strlen(s));
}

TEST(reply_fields)
{
    jread j;
    const char *s = "{\"id\":7,\"result\":{\"model\":{\"content\":[4,62.5,304,-1e2],"
                    "\"width\":308}},\"ok\":true,\"no\":false,\"n\":null}";
    CHECK_EQ_INT(parse(&j, s), 0);
    CHECK(jread_num(&j, jread_get(&j, 0, "id"), 0) == 7);
    int res = jread_get(&j, 0, "result");
    int model = jread_get(&j, res, "model");
    CHECK(jread_num(&j, jread_get(&j, model, "width"), 0) == 308);
    int q = jread_get(&j, model, "content");
    double want[] = {4, 62.5, 304, -100};
    int k = 0;
    for (int e = jread_first(&j, q); e >= 0; e = jread_next(&j, q, e), k++)
        CHECK(jread_num(&j, e, 0) == want[k]);
    CHECK_EQ_INT(k, 4);
    CHECK_EQ_INT(jread_bool(&j, jread_get(&j, 0, "ok"), -1), 1);
    CHECK_EQ_INT(jread_bool(&j, jread_get(&j, 0, "no"), -1), 0);
    CHECK(jread_is(&j, jread_get(&j, 0, "n"), JR_NULL));
    CHECK_EQ_INT(jread_get(&j, 0, "absent"), -1);
    CHECK_EQ_INT(jread_get(&j, q, "x"), -1); /* not an object */
    CHECK(jread_num(&j, -1, 3.5) == 3.5);
    /* The result object's text, as adbc_cdp_wait hands it over. */
    CHECK(memcmp(s + j.t[res].start, "{\"model\"", 8) == 0);
    CHECK_EQ_INT(s[j.t[res].start + j.t[res].len - 1], '}');
    jread_free(&j);
}

TEST(strings)
{
    jread j;
    CHECK_EQ_INT(parse(&j, "[\"a\\\"b\\\\c\\n\", \"\\u00e9\\u20ac\", \"\\ud83d\\ude00\", "
                           "\"\\ud800x\", \"\\u0000\", \"\"]"),
                 0);
    const char *want[] = {"a\"b\\c\n", "\xc3\xa9\xe2\x82\xac", "\xf0\x9f\x98\x80",
                          "\xef\xbf\xbdx", "\xef\xbf\xbd", ""};
    int k = 0;
    for (int e = jread_first(&j, 0); e >= 0; e = jread_next(&j, 0, e), k++) {
        char *s;
        CHECK_EQ_INT(jread_str(&j, e, &s), 0);
        CHECK_STR(s, want[k]);
        free(s);
        CHECK(jread_streq(&j, e, want[k]));
    }
    CHECK_EQ_INT(k, 6);
    char *s;
    CHECK_EQ_INT(jread_str(&j, 0, &s), ADBC_EPROTO); /* the array is no string */
    CHECK(s == NULL);
    jread_free(&j);
}

TEST(members_repeat_and_nest)
{
    jread j;
    CHECK_EQ_INT(parse(&j, "{\"a\":{\"a\":1},\"b\":[[],{}],\"a\":2}"), 0);
    CHECK(jread_num(&j, jread_get(&j, 0, "a"), 0) == 2); /* the last one counts */
    int b = jread_get(&j, 0, "b");
    int e0 = jread_first(&j, b), e1 = jread_next(&j, b, e0);
    CHECK(jread_is(&j, e0, JR_ARR) && jread_is(&j, e1, JR_OBJ));
    CHECK_EQ_INT(jread_first(&j, e0), -1);
    CHECK_EQ_INT(jread_next(&j, b, e1), -1);
    jread_free(&j);
}

TEST(malformed)
{
    const char *bad[] = {"", " ", "{", "[1,", "[1 2]", "{\"a\"}", "{\"a\":}", "{a:1}",
                         "[1]]", "\"abc", "\"\\x\"", "\"\\u12\"", "tru", "[-]", "{\"a\":1,}",
                         "[}", "{]", "\"a\x01\"", "1 2", "nul", "[\"\\"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        jread j;
        int rc = parse(&j, bad[i]);
        if (rc != ADBC_EPROTO)
            fprintf(stderr, "accepted: '%s'\n", bad[i]);
        CHECK_EQ_INT(rc, ADBC_EPROTO);
        CHECK(j.t == NULL && j.n == 0);
    }
    /* Nesting is bounded, not recursive. */
    size_t n = 100000;
    char *deep = malloc(2 * n + 1);
    memset(deep, '[', n);
    memset(deep + n, ']', n);
    jread j;
    CHECK_EQ_INT(jread_parse(&j, deep, 2 * n), ADBC_EPROTO);
    free(deep);
}

int main(void)
{
    RUN(reply_fields);
    RUN(strings);
    RUN(members_repeat_and_nest);
    RUN(malformed);
    return T_DONE();
}
