/* SPDX-License-Identifier: Apache-2.0 */
/* Selectors (find by id/text/desc/class), text counting and locating an
 * element of an earlier snapshot in a later one. */
#include "t.h"
#include "ui_test_util.h"

static adbc_ui_snap *fixture(const char *name)
{
    const char *src = getenv("ADBC_SOURCE_DIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/fixtures/snapshot/%s.xml", src ? src : ".", name);
    adbc_ui_snap *s = NULL;
    if (adbc_ui_snap_load(&s, path) != 0)
        fprintf(stderr, "  load %s: %s\n", path, adbc_last_error());
    return s;
}

/* Run sel on s; the refs as "1,2,3" (or "ERR <code>"). */
static char *find_str(adbc_ui_snap *s, adbc_ui_selector sel)
{
    int *refs;
    size_t n;
    int rc = adbc_ui_find(&refs, &n, s, &sel);
    char *out = malloc(4096);
    if (rc != 0) {
        snprintf(out, 4096, "ERR %d", rc);
        return out;
    }
    size_t o = 0;
    out[0] = '\0';
    for (size_t i = 0; i < n; i++)
        o += (size_t)snprintf(out + o, 4096 - o, "%s%d", i ? "," : "", refs[i]);
    adbc_free(refs);
    return out;
}

#define CHECK_FIND(s, want, ...)                                               \
    do {                                                                       \
        char *t_got = find_str(s, (adbc_ui_selector){.size = sizeof(adbc_ui_selector), __VA_ARGS__});            \
        int t_ok = strcmp(t_got, want) == 0;                                   \
        if (!t_ok)                                                             \
            fprintf(stderr, "  %s:%d: find got \"%s\" want \"%s\" (%s)\n", __FILE__, __LINE__, \
                    t_got, want, adbc_last_error());                           \
        free(t_got);                                                           \
        if (!t_ok) {                                                           \
            t_cur_failed = 1;                                                  \
            return;                                                            \
        }                                                                      \
    } while (0)

static const char *screen =
    "<hierarchy>"
    "<node class=\"android.widget.FrameLayout\" package=\"com.app\">"
    /* ref 1: a row holding a label and a switch (ref 2) */
    "<node class=\"android.widget.LinearLayout\" clickable=\"true\" resource-id=\"com.app:id/row\" bounds=\"[0,0][100,50]\">"
    "<node class=\"android.widget.TextView\" text=\"Wi-Fi\" resource-id=\"com.app:id/title\" bounds=\"[0,0][50,50]\"/>"
    "<node class=\"android.widget.Switch\" text=\"ON\" clickable=\"true\" checked=\"true\" resource-id=\"com.app:id/switch_widget\" bounds=\"[60,0][100,50]\"/>"
    "</node>"
    /* ref 3: another row, label "Bluetooth" */
    "<node class=\"android.widget.LinearLayout\" clickable=\"true\" resource-id=\"com.app:id/row\" bounds=\"[0,50][100,100]\">"
    "<node class=\"android.widget.TextView\" text=\"Bluetooth\" resource-id=\"com.app:id/title\" bounds=\"[0,50][50,100]\"/>"
    "</node>"
    /* not actionable at all */
    "<node class=\"android.widget.TextView\" text=\"Settings header\" content-desc=\"Header\"/>"
    /* ref 4: a button with a desc, ref 5: an edit field */
    "<node class=\"android.widget.ImageButton\" content-desc=\"Search settings\" clickable=\"true\" resource-id=\"com.app:id/search\"/>"
    "<node class=\"android.widget.EditText\" text=\"type here\" resource-id=\"other.pkg:id/title\"/>"
    "</node></hierarchy>";

TEST(find_by_each_field)
{
    adbc_ui_snap *s = parse_str(screen);
    CHECK(s);
    CHECK_FIND(s, "1,3", .resource_id = "com.app:id/row");
    CHECK_FIND(s, "1,3,5", .resource_id = "title");               /* short: any package */
    CHECK_FIND(s, "1,3", .resource_id = "com.app:id/title");      /* labels bubble up */
    CHECK_FIND(s, "ERR -10", .resource_id = "app:id/title");       /* full form is whole */
    CHECK_FIND(s, "ERR -10", .resource_id = "itle");
    CHECK_FIND(s, "1", .text = "Wi-Fi");
    CHECK_FIND(s, "ERR -10", .text = "wi-fi");
    CHECK_FIND(s, "1", .text = "wi-fi", .flags = ADBC_UI_MATCH_NOCASE);
    CHECK_FIND(s, "3,5", .text = "t", .flags = ADBC_UI_MATCH_CONTAINS);   /* Bluetooth, type here */
    CHECK_FIND(s, "2,3", .text = "o", .flags = ADBC_UI_MATCH_CONTAINS | ADBC_UI_MATCH_NOCASE);
    CHECK_FIND(s, "4", .desc = "Search settings");
    CHECK_FIND(s, "4", .desc = "SEARCH", .flags = ADBC_UI_MATCH_CONTAINS | ADBC_UI_MATCH_NOCASE);
    CHECK_FIND(s, "2", .cls = "Switch");
    CHECK_FIND(s, "2", .cls = "android.widget.Switch");
    CHECK_FIND(s, "ERR -10", .cls = "widget.Switch");
    CHECK_FIND(s, "1,3", .cls = "LinearLayout");
    CHECK_FIND(s, "5", .cls = "EditText");
    adbc_ui_snap_free(s);
}

TEST(find_combines_fields_with_and)
{
    adbc_ui_snap *s = parse_str(screen);
    CHECK(s);
    CHECK_FIND(s, "3", .resource_id = "title", .text = "Bluetooth");
    CHECK_FIND(s, "5", .resource_id = "title", .cls = "EditText");
    CHECK_FIND(s, "2", .cls = "Switch", .text = "ON", .resource_id = "switch_widget");
    CHECK_FIND(s, "ERR -10", .cls = "Switch", .text = "Wi-Fi");
    adbc_ui_snap_free(s);
}

TEST(find_errors_say_what_happened)
{
    adbc_ui_snap *s = parse_str(screen);
    CHECK(s);
    CHECK_FIND(s, "ERR -1");
    CHECK(strstr(adbc_last_error(), "empty selector") != NULL);
    CHECK_FIND(s, "ERR -10", .text = "Settings header");
    CHECK(strstr(adbc_last_error(), "1 element(s) match text \"Settings header\"") != NULL);
    CHECK(strstr(adbc_last_error(), "tapped") != NULL);
    CHECK_FIND(s, "ERR -10", .text = "nothing", .desc = "x");
    CHECK(strstr(adbc_last_error(), "no element matches text \"nothing\" and desc \"x\"") != NULL);
    int *refs = (int *)1;
    size_t n = 7;
    adbc_ui_selector sel = {.size = sizeof(adbc_ui_selector), .text = "nothing"};
    CHECK_EQ_INT(adbc_ui_find(&refs, &n, s, &sel), ADBC_ENOTFOUND);
    CHECK(refs == NULL && n == 0);
    CHECK_EQ_INT(adbc_ui_find(&refs, &n, NULL, &sel), ADBC_EINVAL);
    adbc_ui_snap_free(s);
}

TEST(find_on_a_real_dump)
{
    /* Ground truth from 001's expected text: each folder Group [ref=N]
     * holds its name as a Text child without a ref. */
    adbc_ui_snap *s = fixture("001-nexuslauncher-home");
    CHECK(s);
    CHECK_FIND(s, "12", .text = "Social Media");
    CHECK_FIND(s, "20", .text = "Files");
    CHECK_FIND(s, "20", .desc = "Files");
    CHECK_FIND(s, "33,34,35", .cls = "ImageView", .desc = "o", .flags = ADBC_UI_MATCH_CONTAINS);
    CHECK_FIND(s, "12,13,14,15,17,18,19,22,23,24,25",
               .resource_id = "com.google.android.apps.nexuslauncher:id/folder_icon_name");
    CHECK_FIND(s, "12,13,14,15,17,18,19,22,23,24,25", .resource_id = "folder_icon_name");
    /* Matches under the same ref are reported once, in document order. */
    CHECK_FIND(s, "5", .resource_id = "org.breezyweather:id/widget_week_week_1");
    adbc_ui_snap_free(s);
}

TEST(count_text)
{
    adbc_ui_snap *s = parse_str(screen);
    CHECK(s);
    size_t n = 99;
    CHECK_EQ_INT(adbc_ui_snap_count_text(&n, s, "Wi-Fi", 0), 0);
    CHECK_EQ_INT(n, 1);
    CHECK_EQ_INT(adbc_ui_snap_count_text(&n, s, "Header", 0), 0);
    CHECK_EQ_INT(n, 1); /* desc counts */
    CHECK_EQ_INT(adbc_ui_snap_count_text(&n, s, "settings", ADBC_UI_MATCH_CONTAINS), 0);
    CHECK_EQ_INT(n, 1); /* "Search settings"; "Settings header" differs in case */
    CHECK_EQ_INT(adbc_ui_snap_count_text(&n, s, "settings", ADBC_UI_MATCH_CONTAINS | ADBC_UI_MATCH_NOCASE), 0);
    CHECK_EQ_INT(n, 2);
    CHECK_EQ_INT(adbc_ui_snap_count_text(&n, s, "absent", 0), 0);
    CHECK_EQ_INT(n, 0);
    adbc_ui_snap_free(s);
}

/* The screen with the switch flipped to OFF and everything moved down by dy. */
static char *variant(const char *state, const char *text, int dy)
{
    char *x = malloc(4096);
    snprintf(x, 4096,
             "<hierarchy><node class=\"F\">"
             "<node class=\"T\" text=\"Title\" clickable=\"true\" bounds=\"[0,%d][100,%d]\"/>"
             "<node class=\"android.widget.Switch\" text=\"%s\" clickable=\"true\" checked=\"%s\" "
             "resource-id=\"a:id/sw\" bounds=\"[100,%d][200,%d]\"/>"
             "<node class=\"T\" text=\"Row\" clickable=\"true\" bounds=\"[0,%d][100,%d]\"/>"
             "<node class=\"T\" text=\"Row\" clickable=\"true\" bounds=\"[0,%d][100,%d]\"/>"
             "</node></hierarchy>",
             dy, 40 + dy, text, state, dy, 40 + dy, 100 + dy, 140 + dy, 200 + dy, 240 + dy);
    return x;
}

TEST(tokens_and_locate)
{
    char *x0 = variant("true", "ON", 0), *x1 = variant("true", "ON", 1),
         *x2 = variant("false", "OFF", 0), *x3 = variant("true", "ON", 300);
    adbc_ui_snap *a = parse_str(x0), *jitter = parse_str(x1), *flipped = parse_str(x2),
                 *scrolled = parse_str(x3);
    CHECK(a && jitter && flipped && scrolled);
    const adbc_ui_reftab *ta = adbc_ui_snap_refs(a);
    const adbc_ui_ref *title = adbc_ui_reftab_get(ta, 1), *sw = adbc_ui_reftab_get(ta, 2),
                      *row1 = adbc_ui_reftab_get(ta, 3), *row2 = adbc_ui_reftab_get(ta, 4);
    CHECK(title && sw && row1 && row2);
    /* Two equal rows: same identity, told apart by place. */
    CHECK(row1->identity_token == row2->identity_token);
    CHECK(row1->exact_token != row2->exact_token);
    /* A pixel of jitter keeps the exact token; scrolling keeps identity only. */
    const adbc_ui_reftab *tj = adbc_ui_snap_refs(jitter), *ts = adbc_ui_snap_refs(scrolled);
    CHECK(adbc_ui_reftab_get(tj, 1)->exact_token == title->exact_token);
    CHECK(adbc_ui_reftab_get(ts, 1)->exact_token != title->exact_token);
    CHECK(adbc_ui_reftab_get(ts, 1)->identity_token == title->identity_token);
    /* The switch's own state is in neither token; its text is. */
    const adbc_ui_ref *swf = adbc_ui_reftab_get(adbc_ui_snap_refs(flipped), 2);
    CHECK(swf->exact_token != sw->exact_token);
    int r = 0;
    CHECK_EQ_INT(adbc_ui_snap_locate(&r, jitter, title), 0);
    CHECK_EQ_INT(r, 1);
    CHECK_EQ_INT(adbc_ui_snap_locate(&r, scrolled, title), 0); /* unique identity */
    CHECK_EQ_INT(r, 1);
    CHECK_EQ_INT(adbc_ui_snap_locate(&r, flipped, sw), 0);     /* class + id at its place */
    CHECK_EQ_INT(r, 2);
    CHECK_EQ_INT(adbc_ui_snap_locate(&r, a, row2), 0);
    CHECK_EQ_INT(r, 4);
    /* Scrolled rows all look alike: refuse to guess. */
    CHECK_EQ_INT(adbc_ui_snap_locate(&r, scrolled, row2), ADBC_ESTALE);
    CHECK(strstr(adbc_last_error(), "several elements look like it") != NULL);
    /* Gone altogether. */
    adbc_ui_snap *other = parse_str("<node class=\"X\" clickable=\"true\" bounds=\"[0,0][5,5]\"/>");
    CHECK_EQ_INT(adbc_ui_snap_locate(&r, other, title), ADBC_ESTALE);
    CHECK(strstr(adbc_last_error(), "ref 1 (T \"Title\")") != NULL);
    adbc_ui_snap_free(other);
    adbc_ui_snap_free(a);
    adbc_ui_snap_free(jitter);
    adbc_ui_snap_free(flipped);
    adbc_ui_snap_free(scrolled);
    free(x0), free(x1), free(x2), free(x3);
}

TEST(snapshot_id_follows_content)
{
    char *x0 = variant("true", "ON", 0), *x2 = variant("false", "OFF", 0);
    adbc_ui_snap *a = parse_str(x0), *b = parse_str(x0), *c = parse_str(x2);
    CHECK(a && b && c);
    CHECK_EQ_INT(strlen(adbc_ui_snap_id(a)), 16);
    CHECK_STR(adbc_ui_snap_id(a), adbc_ui_snap_id(b));
    CHECK(strcmp(adbc_ui_snap_id(a), adbc_ui_snap_id(c)) != 0);
    CHECK_STR(adbc_ui_reftab_snapshot_id(adbc_ui_snap_refs(a)), adbc_ui_snap_id(a));
    CHECK(adbc_ui_snap_timestamp(a) > 1600000000000LL);
    adbc_ui_snap_free(a);
    adbc_ui_snap_free(b);
    adbc_ui_snap_free(c);
    free(x0), free(x2);
}

int main(void)
{
    RUN(find_by_each_field);
    RUN(find_combines_fields_with_and);
    RUN(find_errors_say_what_happened);
    RUN(find_on_a_real_dump);
    RUN(count_text);
    RUN(tokens_and_locate);
    RUN(snapshot_id_follows_content);
    return T_DONE();
}
