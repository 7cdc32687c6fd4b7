/* SPDX-License-Identifier: Apache-2.0 */
/* The UI layer on a uiautomator dump: XML parser, pruner, ref table, the
 * text and JSON formatters and the selector code, on any bytes. The JSON must
 * stay one line and the ref table must agree with the text. */
#include <stdlib.h>
#include <string.h>

#include "adbc/ui.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    adbc_ui_snap *s = NULL;
    if (adbc_ui_snap_parse(&s, data, size) != 0) {
        FUZZ_ASSERT(s == NULL);
        return 0;
    }
    size_t tlen = 0;
    const char *text = adbc_ui_snap_text(s, &tlen);
    FUZZ_ASSERT(text && strlen(text) == tlen);
    char *json = NULL;
    size_t jlen = 0;
    if (adbc_ui_snap_json(&json, &jlen, s) == 0) {
        FUZZ_ASSERT(strlen(json) == jlen);
        FUZZ_ASSERT(memchr(json, '\n', jlen) == NULL);
        FUZZ_ASSERT(jlen >= 2 && json[0] == '{' && json[jlen - 1] == '}');
        adbc_free(json);
    }
    const adbc_ui_reftab *t = adbc_ui_snap_refs(s);
    size_t nrefs = adbc_ui_reftab_count(t);
    for (size_t i = 1; i <= nrefs; i++) {
        const adbc_ui_ref *r = adbc_ui_reftab_get(t, (int)i);
        FUZZ_ASSERT(r && r->ref == (int)i && r->cls && r->text && r->desc);
        int found = 0;
        adbc_ui_snap_locate(&found, s, r);
    }
    FUZZ_ASSERT(adbc_ui_reftab_get(t, (int)nrefs + 1) == NULL);
    char *tsv = NULL;
    size_t tsvlen = 0;
    if (adbc_ui_reftab_tsv(&tsv, &tsvlen, t) == 0)
        adbc_free(tsv);
    for (size_t w = 0; w < adbc_ui_snap_windows(s); w++)
        FUZZ_ASSERT(adbc_ui_snap_window_package(s, w) != NULL);
    adbc_ui_snap_id(s);
    adbc_ui_snap_damage(s);
    adbc_ui_selector sel = {.size = sizeof(adbc_ui_selector), .text = "OK", .flags = ADBC_UI_MATCH_NOCASE | ADBC_UI_MATCH_CONTAINS};
    int *refs = NULL;
    size_t count = 0;
    if (adbc_ui_find(&refs, &count, s, &sel) == 0)
        adbc_free(refs);
    adbc_ui_snap_count_text(&count, s, "a", ADBC_UI_MATCH_CONTAINS);
    adbc_ui_snap_free(s);
    return 0;
}
