/* SPDX-License-Identifier: Apache-2.0 */
/* Ref tables: the records, the TSV listing, and ref files (save, load,
 * and refusal of every damaged file). */
#include <sys/stat.h>
#include <unistd.h>

#include "t.h"
#include "ui_test_util.h"

static char tmpdir[256];

static const char *xml =
    "<hierarchy><node class=\"android.widget.FrameLayout\" package=\"com.app\">"
    "<node class=\"android.widget.Button\" text=\"tab&#9;and&#10;newline \\ back\" "
    "content-desc=\"d\xe4\xb8\xad\" resource-id=\"com.app:id/b\" clickable=\"true\" "
    "bounds=\"[10,20][30,41]\"/>"
    "<node class=\"android.widget.EditText\" focused=\"true\" bounds=\"[-5,-5][0,0]\"/>"
    "</node><node class=\"S\" package=\"com.kbd\" scrollable=\"true\" checked=\"true\" "
    "selected=\"true\" enabled=\"false\" bounds=\"[0,0][2147483647,-2147483647]\"/></hierarchy>";

static int same_ref(const adbc_ui_ref *a, const adbc_ui_ref *b)
{
    return a->ref == b->ref && a->x1 == b->x1 && a->y1 == b->y1 && a->x2 == b->x2 &&
           a->y2 == b->y2 && a->x == b->x && a->y == b->y && a->states == b->states &&
           a->window == b->window && strcmp(a->cls, b->cls) == 0 &&
           strcmp(a->resource_id, b->resource_id) == 0 && strcmp(a->text, b->text) == 0 &&
           strcmp(a->desc, b->desc) == 0 && strcmp(a->package, b->package) == 0 &&
           a->exact_token == b->exact_token && a->identity_token == b->identity_token;
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *b = malloc(1 << 20);
    *len = fread(b, 1, 1 << 20, f);
    fclose(f);
    return b;
}

static void spit(const char *path, const char *b, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (f) {
        fwrite(b, 1, n, f);
        fclose(f);
    }
}

TEST(records)
{
    adbc_ui_snap *s = parse_str(xml);
    CHECK(s);
    const adbc_ui_reftab *t = adbc_ui_snap_refs(s);
    CHECK_EQ_INT(adbc_ui_reftab_count(t), 3);
    const adbc_ui_ref *r = adbc_ui_reftab_get(t, 1);
    CHECK_STR(r->cls, "android.widget.Button");
    CHECK_STR(r->text, "tab\tand\nnewline \\ back");
    CHECK_STR(r->desc, "d\xe4\xb8\xad");
    CHECK_STR(r->resource_id, "com.app:id/b");
    CHECK_STR(r->package, "com.app");
    CHECK_EQ_INT(r->x, 20);
    CHECK_EQ_INT(r->y, 30);
    CHECK_EQ_INT(r->states, ADBC_UI_CLICKABLE | ADBC_UI_ENABLED);
    r = adbc_ui_reftab_get(t, 2);
    CHECK_STR(r->text, "");
    CHECK_EQ_INT(r->states, ADBC_UI_EDITABLE | ADBC_UI_FOCUSED | ADBC_UI_ENABLED);
    CHECK_EQ_INT(r->x, -3);
    r = adbc_ui_reftab_get(t, 3);
    CHECK_EQ_INT(r->window, 1);
    CHECK_STR(r->package, "com.kbd");
    CHECK_EQ_INT(r->states, ADBC_UI_SCROLLABLE | ADBC_UI_CHECKED | ADBC_UI_SELECTED);
    CHECK_EQ_INT(r->x, 1073741823);
    CHECK_EQ_INT(r->y, -1073741824);
    char *tsv;
    size_t n;
    CHECK_EQ_INT(adbc_ui_reftab_tsv(&tsv, &n, t), 0);
    CHECK_STR(tsv, "1\t20\t30\n2\t-3\t-3\n3\t1073741823\t-1073741824\n");
    CHECK_EQ_INT(n, strlen(tsv));
    adbc_free(tsv);
    adbc_ui_snap_free(s);
}

TEST(save_and_load_round_trip)
{
    adbc_ui_snap *s = parse_str(xml);
    CHECK(s);
    char path[512];
    snprintf(path, sizeof path, "%s/refs", tmpdir);
    CHECK_EQ_INT(adbc_ui_reftab_save(adbc_ui_snap_refs(s), path), 0);
    adbc_ui_reftab *t = NULL;
    int rc = adbc_ui_reftab_load(&t, path);
    if (rc)
        fprintf(stderr, "  %s\n", adbc_last_error());
    CHECK_EQ_INT(rc, 0);
    const adbc_ui_reftab *o = adbc_ui_snap_refs(s);
    CHECK_EQ_INT(adbc_ui_reftab_count(t), 3);
    for (int i = 1; i <= 3; i++)
        CHECK(same_ref(adbc_ui_reftab_get(t, i), adbc_ui_reftab_get(o, i)));
    CHECK_STR(adbc_ui_reftab_snapshot_id(t), adbc_ui_snap_id(s));
    CHECK_EQ_INT(adbc_ui_reftab_timestamp(t), adbc_ui_snap_timestamp(s));
    /* A loaded table outlives the snapshot, and the snapshot locates its refs. */
    adbc_ui_snap *again = parse_str(xml);
    adbc_ui_snap_free(s);
    int r;
    CHECK_EQ_INT(adbc_ui_snap_locate(&r, again, adbc_ui_reftab_get(t, 2)), 0);
    CHECK_EQ_INT(r, 2);
    adbc_ui_snap_free(again);
    /* The snapshot's own table is not freed by adbc_ui_reftab_free. */
    adbc_ui_reftab_free(t);
    adbc_ui_reftab_free(NULL);
    /* Overwrite in place; no temporary files are left behind. */
    s = parse_str("<node class=\"B\" clickable=\"true\"/>");
    CHECK_EQ_INT(adbc_ui_reftab_save(adbc_ui_snap_refs(s), path), 0);
    adbc_ui_snap_free(s);
    CHECK_EQ_INT(adbc_ui_reftab_load(&t, path), 0);
    CHECK_EQ_INT(adbc_ui_reftab_count(t), 1);
    adbc_ui_reftab_free(t);
    /* Zero refs is a valid table. */
    s = parse_str("<node class=\"B\" text=\"plain\"/>");
    CHECK_EQ_INT(adbc_ui_reftab_save(adbc_ui_snap_refs(s), path), 0);
    adbc_ui_snap_free(s);
    CHECK_EQ_INT(adbc_ui_reftab_load(&t, path), 0);
    CHECK_EQ_INT(adbc_ui_reftab_count(t), 0);
    CHECK(adbc_ui_reftab_get(t, 1) == NULL);
    adbc_ui_reftab_free(t);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "test $(ls %s | wc -l) -eq 1", tmpdir);
    CHECK(system(cmd) == 0);
}

TEST(damaged_files_are_refused)
{
    adbc_ui_snap *s = parse_str(xml);
    CHECK(s);
    char path[512], bad[512];
    snprintf(path, sizeof path, "%s/refs", tmpdir);
    snprintf(bad, sizeof bad, "%s/bad", tmpdir);
    CHECK_EQ_INT(adbc_ui_reftab_save(adbc_ui_snap_refs(s), path), 0);
    adbc_ui_snap_free(s);
    size_t n;
    char *good = slurp(path, &n);
    CHECK(good && n > 100);
    adbc_ui_reftab *t = NULL;
    /* Every truncation. */
    for (size_t cut = 0; cut < n; cut++) {
        spit(bad, good, cut);
        CHECK_EQ_INT(adbc_ui_reftab_load(&t, bad), ADBC_EFORMAT);
        CHECK(t == NULL);
        CHECK(strstr(adbc_last_error(), "take a new snapshot") != NULL);
    }
    /* Every single-byte change, and a flipped bit at every byte. */
    char *m = malloc(n);
    for (size_t i = 0; i < n; i++) {
        static const char repl[] = {'0', '\t', '\n', '\\', 'x', '\0', '\xff'};
        for (size_t k = 0; k <= sizeof repl; k++) {
            memcpy(m, good, n);
            /* The bit flip at every byte, the other bytes at a stride (each
             * file write costs milliseconds on some file systems). */
            if (k < sizeof repl && (i + k) % 11 != 0)
                continue;
            char c = k < sizeof repl ? repl[k] : (char)(good[i] ^ 0x01);
            if (c == good[i])
                continue;
            m[i] = c;
            spit(bad, m, n);
            int rc = adbc_ui_reftab_load(&t, bad);
            if (rc != ADBC_EFORMAT)
                fprintf(stderr, "  byte %zu -> 0x%02x accepted\n", i, (unsigned char)c);
            CHECK_EQ_INT(rc, ADBC_EFORMAT);
        }
    }
    free(m);
    /* Extra bytes after the check line. */
    char *longer = malloc(n + 2);
    memcpy(longer, good, n);
    memcpy(longer + n, "x\n", 2);
    spit(bad, longer, n + 2);
    CHECK_EQ_INT(adbc_ui_reftab_load(&t, bad), ADBC_EFORMAT);
    free(longer);
    /* Another format version: named in the message. */
    char *v2 = malloc(n); /* good is n bytes, not NUL-terminated */
    memcpy(v2, good, n);
    v2[12] = '7';
    spit(bad, v2, n);
    CHECK_EQ_INT(adbc_ui_reftab_load(&t, bad), ADBC_EFORMAT);
    free(v2);
    /* Not a file, or none at all. */
    CHECK_EQ_INT(adbc_ui_reftab_load(&t, tmpdir), ADBC_EFORMAT);
    snprintf(bad, sizeof bad, "%s/none", tmpdir);
    CHECK_EQ_INT(adbc_ui_reftab_load(&t, bad), ADBC_ENOTFOUND);
    CHECK(strstr(adbc_last_error(), "take a snapshot first") != NULL);
    unlink(path);
    snprintf(bad, sizeof bad, "%s/bad", tmpdir);
    unlink(bad);
    free(good);
}

TEST(save_failures)
{
    adbc_ui_snap *s = parse_str(xml);
    CHECK(s);
    char path[512];
    snprintf(path, sizeof path, "%s/no/such/dir/refs", tmpdir);
    CHECK(adbc_ui_reftab_save(adbc_ui_snap_refs(s), path) < 0);
    CHECK(strstr(adbc_last_error(), "/no/such/dir/refs") != NULL);
    CHECK_EQ_INT(adbc_ui_reftab_save(NULL, path), ADBC_EINVAL);
    /* Replacing a directory fails and leaves no temporary file. */
    snprintf(path, sizeof path, "%s/adir", tmpdir);
    CHECK(mkdir(path, 0700) == 0);
    CHECK(adbc_ui_reftab_save(adbc_ui_snap_refs(s), path) < 0);
    rmdir(path);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "test -z \"$(ls -A %s)\"", tmpdir);
    CHECK(system(cmd) == 0);
    adbc_ui_snap_free(s);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/adbc-reftab-XXXXXX");
    if (!mkdtemp(tmpdir))
        return 1;
    RUN(records);
    RUN(save_and_load_round_trip);
    RUN(damaged_files_are_refused);
    RUN(save_failures);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    if (system(cmd) != 0)
        return 1;
    return T_DONE();
}
