/* SPDX-License-Identifier: Apache-2.0 */
/* What a page's DevTools session sends: the JSON reader (lib/core/jread.c)
 * over any bytes, then every token walked the way the web snapshot walks
 * replies: children of each container, lookups of the names it asks for,
 * strings decoded, numbers and booleans read. */
#include <stdlib.h>
#include <string.h>

#include "core/jread.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    jread j;
    if (jread_parse(&j, (const char *)data, size) < 0) {
        FUZZ_ASSERT(j.t == NULL && j.n == 0);
        return 0;
    }
    FUZZ_ASSERT(j.n >= 1);
    static const char *const names[] = {"id", "result", "nodes", "nodeId", "parentId",
                                        "childIds", "role", "value", "name", "model"};
    for (uint32_t i = 0; i < j.n; i++) {
        const jr_tok *t = &j.t[i];
        FUZZ_ASSERT(t->end > i && t->end <= j.n);
        FUZZ_ASSERT((size_t)t->start + t->len <= size);
        int k = 0;
        for (int c = jread_first(&j, (int)i); c >= 0; c = jread_next(&j, (int)i, c), k++)
            FUZZ_ASSERT(c > (int)i && (uint32_t)c < t->end);
        if (t->type == JR_ARR || t->type == JR_OBJ)
            FUZZ_ASSERT((uint32_t)k == t->n);
        for (size_t n = 0; n < sizeof names / sizeof names[0]; n++) {
            int v = jread_get(&j, (int)i, names[n]);
            FUZZ_ASSERT(v < 0 || (t->type == JR_OBJ && (uint32_t)v < t->end));
        }
        if (t->type == JR_STR) {
            char *s;
            FUZZ_ASSERT(jread_str(&j, (int)i, &s) == 0);
            FUZZ_ASSERT(strlen(s) <= t->len);
            FUZZ_ASSERT(jread_streq(&j, (int)i, s));
            free(s);
        }
        (void)jread_num(&j, (int)i, 0);
        (void)jread_bool(&j, (int)i, 0);
    }
    jread_free(&j);
    return 0;
}
