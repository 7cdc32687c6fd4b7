/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers for the UI snapshot tests: parse a literal dump and look at it. */
#ifndef ADBC_UI_TEST_UTIL_H
#define ADBC_UI_TEST_UTIL_H

#include <stdlib.h>
#include <string.h>

#include "adbc/error.h"
#include "adbc/ui.h"

/* Parse xml (a C string) or NULL on failure (message in adbc_last_error). */
static inline adbc_ui_snap *parse_str(const char *xml)
{
    adbc_ui_snap *s = NULL;
    if (adbc_ui_snap_parse(&s, xml, strlen(xml)) != 0)
        return NULL;
    return s;
}

/* The snapshot text of xml, malloc'd; "<error N: msg>" when parsing fails. */
static inline char *text_of(const char *xml)
{
    adbc_ui_snap *s = parse_str(xml);
    if (!s) {
        char buf[1200];
        snprintf(buf, sizeof buf, "<error: %s>", adbc_last_error());
        return strdup(buf);
    }
    char *t = strdup(adbc_ui_snap_text(s, NULL));
    adbc_ui_snap_free(s);
    return t;
}

/* CHECK_STR on the text of xml, freeing it either way. */
#define CHECK_TEXT(xml, want)                                                  \
    do {                                                                       \
        char *t_got = text_of(xml);                                            \
        int t_ok = t_got && strcmp(t_got, (want)) == 0;                        \
        if (!t_ok)                                                             \
            fprintf(stderr, "  %s:%d: text mismatch\n    got:\n%s\n    want:\n%s\n", \
                    __FILE__, __LINE__, t_got ? t_got : "(null)", (want));     \
        free(t_got);                                                           \
        if (!t_ok) {                                                           \
            t_cur_failed = 1;                                                  \
            return;                                                            \
        }                                                                      \
    } while (0)

#endif
