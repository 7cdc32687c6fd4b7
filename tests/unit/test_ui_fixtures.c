/* SPDX-License-Identifier: Apache-2.0 */
/* Every recorded dump in fixtures/snapshot/ must give exactly its .txt
 * (byte for byte) and its .refs.tsv, whichever entry point reads it. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "adbc/ui.h"
#include "adbc/error.h"
#include "t.h"

static char dir[4096];

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *b = malloc(cap);
    size_t r;
    while (b && (r = fread(b + n, 1, cap - n, f)) > 0) {
        n += r;
        if (n == cap) {
            char *nb = realloc(b, cap *= 2);
            if (!nb) {
                free(b);
                b = NULL;
            }
            b = nb;
        }
    }
    fclose(f);
    if (b)
        *len = n;
    return b;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Names of the dumps ("001-nexuslauncher-home"), sorted. */
static size_t list_dumps(char names[][128], size_t max)
{
    DIR *dd = opendir(dir);
    if (!dd)
        return 0;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(dd)) && n < max) {
        size_t l = strlen(e->d_name);
        if (l > 4 && l < 120 && strcmp(e->d_name + l - 4, ".xml") == 0) {
            memcpy(names[n], e->d_name, l - 4);
            names[n][l - 4] = '\0';
            n++;
        }
    }
    closedir(dd);
    char *ptrs[256];
    for (size_t i = 0; i < n; i++)
        ptrs[i] = strdup(names[i]);
    qsort(ptrs, n, sizeof ptrs[0], cmp_names);
    for (size_t i = 0; i < n; i++) {
        strcpy(names[i], ptrs[i]);
        free(ptrs[i]);
    }
    return n;
}

/* First differing line, for a readable failure. */
static void show_diff(const char *name, const char *got, size_t gn, const char *want, size_t wn)
{
    size_t i = 0, line = 1, bol = 0;
    while (i < gn && i < wn && got[i] == want[i]) {
        if (got[i] == '\n')
            line++, bol = i + 1;
        i++;
    }
    fprintf(stderr, "  %s: differs at line %zu (byte %zu; got %zu bytes, want %zu)\n", name, line,
            i, gn, wn);
    const char *ge = memchr(got + bol, '\n', gn - bol);
    const char *we = memchr(want + bol, '\n', wn > bol ? wn - bol : 0);
    fprintf(stderr, "    got:  %.*s\n    want: %.*s\n",
            (int)((ge ? ge : got + gn) - (got + bol)), got + bol,
            (int)(wn > bol ? (we ? we : want + wn) - (want + bol) : 0), want + bol);
}

static int check_one(const char *name, adbc_ui_snap *s)
{
    char path[4400];
    size_t wn, tn, gn;
    snprintf(path, sizeof path, "%s/%s.txt", dir, name);
    char *want = slurp(path, &wn);
    snprintf(path, sizeof path, "%s/%s.refs.tsv", dir, name);
    char *tsv = slurp(path, &tn);
    int ok = want && tsv;
    if (!ok)
        fprintf(stderr, "  %s: expected files missing\n", name);
    const char *got = adbc_ui_snap_text(s, &gn);
    if (ok && (gn != wn || memcmp(got, want, wn) != 0)) {
        show_diff(name, got, gn, want, wn);
        ok = 0;
    }
    char *gt = NULL;
    size_t gtn = 0;
    if (ok && adbc_ui_reftab_tsv(&gt, &gtn, adbc_ui_snap_refs(s)) != 0)
        ok = 0;
    if (ok && (gtn != tn || memcmp(gt, tsv, tn) != 0)) {
        show_diff(name, gt, gtn, tsv, tn);
        ok = 0;
    }
    adbc_free(gt);
    free(want);
    free(tsv);
    return ok;
}

TEST(all_dumps_match_expected_text_and_refs)
{
    static char names[256][128];
    size_t n = list_dumps(names, 256);
    CHECK_EQ_INT(n, 20); /* the recorded set; a missing fixture must fail */
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        char path[4400];
        CHECK(snprintf(path, sizeof path, "%.4096s/%.127s.xml", dir, names[i]) < (int)sizeof path);
        adbc_ui_snap *s = NULL;
        int rc = adbc_ui_snap_load(&s, path);
        if (rc != 0) {
            fprintf(stderr, "  %s: load failed: %s\n", names[i], adbc_last_error());
            bad++;
            continue;
        }
        if (!check_one(names[i], s))
            bad++;
        if (!adbc_ui_snap_complete(s)) {
            fprintf(stderr, "  %s: marked damaged: %s\n", names[i], adbc_ui_snap_damage(s));
            bad++;
        }
        adbc_ui_snap_free(s);
    }
    CHECK_EQ_INT(bad, 0);
}

TEST(memory_and_owned_buffers_give_the_same_result)
{
    static char names[256][128];
    size_t n = list_dumps(names, 256);
    CHECK(n > 0);
    for (size_t i = 0; i < n; i++) {
        char path[4400];
        size_t len;
        snprintf(path, sizeof path, "%s/%s.xml", dir, names[i]);
        char *xml = slurp(path, &len);
        CHECK(xml);
        adbc_ui_snap *a = NULL, *b = NULL;
        CHECK_EQ_INT(adbc_ui_snap_parse(&a, xml, len), 0);
        CHECK(check_one(names[i], a));
        /* The copying entry point must leave the caller's bytes alone. */
        char *again = slurp(path, &len);
        CHECK(again && memcmp(again, xml, len) == 0);
        free(again);
        CHECK_EQ_INT(adbc_ui_snap_parse_owned(&b, xml, len), 0);
        CHECK(check_one(names[i], b));
        CHECK_STR(adbc_ui_snap_id(a), adbc_ui_snap_id(b));
        adbc_ui_snap_free(a);
        adbc_ui_snap_free(b);
    }
}

int main(void)
{
    const char *src = getenv("ADBC_SOURCE_DIR");
    snprintf(dir, sizeof dir, "%s/fixtures/snapshot", src ? src : ".");
    RUN(all_dumps_match_expected_text_and_refs);
    RUN(memory_and_owned_buffers_give_the_same_result);
    return T_DONE();
}
