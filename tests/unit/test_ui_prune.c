/* SPDX-License-Identifier: Apache-2.0 */
/* Refs and pruning: one test per rule of SNAPSHOT.md, and one per place
 * where adbc deliberately differs from baremobile 0.10. */
#include "t.h"
#include "ui_test_util.h"

#define H "<hierarchy rotation=\"0\">"
#define EH "</hierarchy>"
#define TV "android.widget.TextView"
#define LL "android.widget.LinearLayout"
#define FL "android.widget.FrameLayout"

TEST(refs_preorder_including_disabled)
{
    const char *x = H "<node class=\"" LL "\" clickable=\"true\" bounds=\"[0,0][100,100]\">"
                    "<node class=\"" TV "\" text=\"a\" clickable=\"true\" enabled=\"false\" bounds=\"[0,0][10,10]\"/>"
                    "<node class=\"android.widget.EditText\" bounds=\"[10,10][21,31]\"/>"
                    "</node>"
                    "<node class=\"android.widget.ScrollView\" scrollable=\"true\" bounds=\"[-10,-10][-3,0]\"/>" EH;
    adbc_ui_snap *s = parse_str(x);
    CHECK(s);
    CHECK_STR(adbc_ui_snap_text(s, NULL),
              "- Group [ref=1]\n  - Text [ref=2] \"a\" [disabled]\n  - TextInput [ref=3]\n"
              "- ScrollView [ref=4]");
    const adbc_ui_reftab *t = adbc_ui_snap_refs(s);
    CHECK_EQ_INT(adbc_ui_reftab_count(t), 4);
    const adbc_ui_ref *r = adbc_ui_reftab_get(t, 3);
    CHECK(r);
    CHECK_EQ_INT(r->x, 15);
    CHECK_EQ_INT(r->y, 20);
    CHECK(r->states & ADBC_UI_EDITABLE);
    CHECK(!(r->states & ADBC_UI_CLICKABLE));
    CHECK(!(adbc_ui_reftab_get(t, 2)->states & ADBC_UI_ENABLED));
    /* Negative bounds; the centre rounds down: (-10 + -3) / 2 = -6.5 -> -7. */
    r = adbc_ui_reftab_get(t, 4);
    CHECK_EQ_INT(r->x, -7);
    CHECK_EQ_INT(r->y, -5);
    CHECK_EQ_INT(r->window, 1);
    CHECK(adbc_ui_reftab_get(t, 0) == NULL);
    CHECK(adbc_ui_reftab_get(t, 5) == NULL);
    adbc_ui_snap_free(s);
}

TEST(flags_true_only_when_exactly_true)
{
    /* "True", "1" are not true; enabled is false only for exactly "false". */
    CHECK_TEXT(H "<node class=\"" LL "\">"
                 "<node class=\"B\" clickable=\"True\" checked=\"1\" text=\"x\" enabled=\"FALSE\"/>"
                 "<node class=\"B\" focused=\"true\" selected=\"true\" checked=\"true\" enabled=\"false\"/>"
                 "</node>" EH,
               "- Group\n  - B \"x\"\n  - B [checked, selected, focused, disabled]");
}

TEST(dedup_same_class_and_text_only)
{
    /* Desc and states do not count; a different class is not a repeat. */
    CHECK_TEXT(H "<node class=\"" LL "\">"
                 "<node class=\"" TV "\" text=\"Row\"/>"
                 "<node class=\"" TV "\" text=\"Row\" content-desc=\"other\"/>"
                 "<node class=\"" TV "\" text=\"Row\" checked=\"true\"/>"
                 "<node class=\"android.widget.Button\" text=\"Row\"/>"
                 "<node class=\"" TV "\" text=\"Other\"/>"
                 "<node class=\"" TV "\" text=\"Row\"/>"
                 "</node>" EH,
               "- Group\n  - Text \"Row\"\n  - Button \"Row\"\n  - Text \"Other\"");
}

TEST(dedup_compares_collapsed_children_and_only_siblings)
{
    /* A wrapper around one text collapses first, then counts as that text;
     * equal texts under different parents are not repeats. */
    CHECK_TEXT(H "<node class=\"" LL "\">"
                 "<node class=\"" TV "\" text=\"Row\"/>"
                 "<node class=\"" FL "\"><node class=\"" TV "\" text=\"Row\"/></node>"
                 "<node class=\"android.widget.ScrollView\"><node class=\"" TV "\" text=\"Row\"/></node>"
                 "</node>" EH,
               "- Group\n  - Text \"Row\"\n  - ScrollView\n    - Text \"Row\"");
}

TEST(dedup_never_removes_refs)
{
    /* Differs from baremobile, whose dedup looks only at the child's own
     * ref and so dropped the second row together with ref 4. */
    CHECK_TEXT(H "<node class=\"" LL "\">"
                 "<node class=\"" TV "\" text=\"Buy\" clickable=\"true\"/>"
                 "<node class=\"" TV "\" text=\"Buy\" clickable=\"true\"/>"
                 "<node class=\"" FL "\" text=\"Item\"><node class=\"Button\" clickable=\"true\"/></node>"
                 "<node class=\"" FL "\" text=\"Item\"><node class=\"Button\" clickable=\"true\"/></node>"
                 "<node class=\"" FL "\" text=\"Item\"/>"
                 "</node>" EH,
               "- Group\n  - Text [ref=1] \"Buy\"\n  - Text [ref=2] \"Buy\"\n"
               "  - Group \"Item\"\n    - Button [ref=3]\n  - Group \"Item\"\n    - Button [ref=4]\n"
               "  - Group \"Item\"");
}

TEST(keep_rule)
{
    /* Kept: ref, text, desc, checked, selected, focused. Not: disabled alone,
     * a resource-id, a non-wrapper class. */
    CHECK_TEXT(H "<node class=\"" LL "\">"
                 "<node class=\"V\" content-desc=\"d\"/>"
                 "<node class=\"V\" checked=\"true\"/>"
                 "<node class=\"V\" selected=\"true\"/>"
                 "<node class=\"V\" focused=\"true\"/>"
                 "<node class=\"V\" enabled=\"false\"/>"
                 "<node class=\"V\" resource-id=\"a:id/b\"/>"
                 "<node class=\"android.widget.ImageView\"/>"
                 "</node>" EH,
               "- Group\n  - V (d)\n  - V [checked]\n  - V [selected]\n  - V [focused]");
}

TEST(collapse_rule)
{
    /* Every wrapper class, and the empty class, collapse into a lone child. */
    static const char *wrappers[] = {"", "a.Group", "android.view.View", FL, LL,
                                     "android.widget.RelativeLayout",
                                     "androidx.constraintlayout.widget.ConstraintLayout",
                                     "androidx.coordinatorlayout.widget.CoordinatorLayout",
                                     "android.view.ViewGroup", "View"};
    for (size_t i = 0; i < sizeof wrappers / sizeof wrappers[0]; i++) {
        char x[512];
        snprintf(x, sizeof x, H "<node class=\"%s\"><node class=\"%s\">"
                              "<node class=\"" TV "\" text=\"only\"/></node></node>" EH,
                 wrappers[i], wrappers[i]);
        CHECK_TEXT(x, "- Text \"only\"");
    }
    /* Not a wrapper: a ScrollView with one child stays, bare. */
    CHECK_TEXT(H "<node class=\"android.widget.ScrollView\"><node class=\"" TV "\" text=\"t\"/></node>" EH,
               "- ScrollView\n  - Text \"t\"");
    /* A kept wrapper (it has a desc) does not collapse. */
    CHECK_TEXT(H "<node class=\"" FL "\" content-desc=\"card\"><node class=\"" TV "\" text=\"t\"/></node>" EH,
               "- Group (card)\n  - Text \"t\"");
    /* A class merely ending in "View" is not a wrapper. */
    CHECK_TEXT(H "<node class=\"a.MyView\"><node class=\"" TV "\" text=\"t\"/></node>" EH,
               "- MyView\n  - Text \"t\"");
}

TEST(drop_rule_and_empty_screen)
{
    /* Everything pruned away: empty text, zero refs, not an error. */
    adbc_ui_snap *s = parse_str(H "<node class=\"" FL "\"><node class=\"" LL "\">"
                                  "<node class=\"android.widget.ImageView\" enabled=\"false\"/>"
                                  "</node><node/></node>" EH);
    CHECK(s);
    size_t n = 99;
    CHECK_STR(adbc_ui_snap_text(s, &n), "");
    CHECK_EQ_INT(n, 0);
    CHECK_EQ_INT(adbc_ui_reftab_count(adbc_ui_snap_refs(s)), 0);
    CHECK(adbc_ui_snap_complete(s));
    adbc_ui_snap_free(s);
}

TEST(bare_group_with_several_children_stays)
{
    CHECK_TEXT(H "<node class=\"" FL "\"><node class=\"" TV "\" text=\"a\"/>"
                 "<node class=\"" TV "\" text=\"b\"/></node>" EH,
               "- Group\n  - Text \"a\"\n  - Text \"b\"");
}

TEST(roles_map)
{
    static const char *pairs[][2] = {
        {"android.widget.TextView", "Text"}, {"x.AppCompatTextView", "Text"},
        {"android.widget.EditText", "TextInput [ref=1]"}, /* editable: a ref */
        {"x.AppCompatEditText", "TextInput [ref=1]"},
        {"android.widget.Button", "Button"}, {"x.AppCompatButton", "Button"},
        {"x.MaterialButton", "Button"}, {"android.widget.ImageView", "Image"},
        {"android.widget.ImageButton", "ImageButton"}, {"android.widget.CheckBox", "CheckBox"},
        {"android.widget.Switch", "Switch"}, {"android.widget.RadioButton", "Radio"},
        {"android.widget.ToggleButton", "Toggle"}, {"android.widget.SeekBar", "Slider"},
        {"android.widget.ProgressBar", "Progress"}, {"android.widget.Spinner", "Select"},
        {"x.RecyclerView", "List"}, {"android.widget.ListView", "List"},
        {"android.widget.ScrollView", "ScrollView"}, {LL, "Group"},
        {"android.widget.RelativeLayout", "Group"}, {FL, "Group"}, {"x.ConstraintLayout", "Group"},
        {"x.CoordinatorLayout", "Group"}, {"android.view.ViewGroup", "Group"},
        {"x.TabLayout", "TabList"}, {"x.TabItem", "Tab"}, {"", "View"},
        {"android.webkit.WebView", "WebView"}, {"android.view.View", "View"},
        {"NoDots", "NoDots"},
        /* Differs from baremobile, which printed JavaScript's Object source. */
        {"constructor", "constructor"}, {"a.b.toString", "toString"},
        {"__proto__", "__proto__"},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        char x[256], want[128];
        snprintf(x, sizeof x, H "<node class=\"%s\" text=\"t\"/>" EH, pairs[i][0]);
        snprintf(want, sizeof want, "- %s \"t\"", pairs[i][1]);
        CHECK_TEXT(x, want);
    }
}

TEST(every_window_is_shown)
{
    /* Differs from baremobile, which kept only the first window. Refs run
     * on across windows. */
    CHECK_TEXT(H "<node class=\"" FL "\" package=\"com.android.systemui\">"
                 "<node class=\"" TV "\" text=\"12:30\"/></node>"
                 "<node class=\"" FL "\" package=\"com.app\"><node class=\"" LL "\">"
                 "<node class=\"android.widget.Button\" text=\"OK\" clickable=\"true\"/>"
                 "<node class=\"android.widget.Button\" text=\"Cancel\" clickable=\"true\"/></node></node>"
                 "<node class=\"" FL "\" package=\"com.android.systemui\">"
                 "<node class=\"android.widget.ImageView\" content-desc=\"Back\" clickable=\"true\"/></node>" EH,
               "- Text \"12:30\"\n- Group\n  - Button [ref=1] \"OK\"\n  - Button [ref=2] \"Cancel\"\n"
               "- Image [ref=3] (Back)");
    adbc_ui_snap *s = parse_str(H "<node package=\"a\"/><node package=\"b\"/>" EH);
    CHECK(s);
    CHECK_EQ_INT(adbc_ui_snap_windows(s), 2);
    CHECK_STR(adbc_ui_snap_window_package(s, 1), "b");
    CHECK_STR(adbc_ui_snap_window_package(s, 2), "");
    adbc_ui_snap_free(s);
}

TEST(numeric_references_decoded_and_escaped)
{
    /* Differs from baremobile, which left &#10; and &#128293; as written. */
    CHECK_TEXT(H "<node class=\"" TV "\" text=\"line1&#10;line2&#13;&#9;end\" "
                 "content-desc=\"&#128293; &#x1F525; &#X1f525;\"/>" EH,
               "- Text \"line1\\nline2\\r\\tend\" (\xf0\x9f\x94\xa5 \xf0\x9f\x94\xa5 \xf0\x9f\x94\xa5)");
    CHECK_TEXT(H "<node class=\"" TV "\" text=\"&amp;&lt;&gt;&quot;&apos; &amp;lt; \\ &#1;&#127;&#x85;\"/>" EH,
               "- Text \"&<>\\\"' &lt; \\\\ \\u0001\\u007f\\u0085\"");
}

TEST(internal_looking_text_is_kept)
{
    /* Differs from baremobile, which hid all-caps words and anything with '_'. */
    CHECK_TEXT(H "<node class=\"" LL "\"><node class=\"" TV "\" text=\"DCIM\"/>"
                 "<node class=\"" TV "\" text=\"AMC\"/><node class=\"" TV "\" text=\"BUY\"/>"
                 "<node class=\"" TV "\" text=\"IMG_0001.jpg\" content-desc=\"snake_case\"/></node>" EH,
               "- Group\n  - Text \"DCIM\"\n  - Text \"AMC\"\n  - Text \"BUY\"\n"
               "  - Text \"IMG_0001.jpg\" (snake_case)");
}

TEST(no_xml_header_and_desc_equal_to_text)
{
    /* Differs from baremobile, which threw without <?xml. */
    CHECK_TEXT("<hierarchy><node class=\"" TV "\" text=\"Files\" content-desc=\"Files\" "
               "clickable=\"true\"/></hierarchy>",
               "- Text [ref=1] \"Files\" (Files)");
    CHECK_TEXT("<node class=\"" TV "\" text=\"bare\"/>", "- Text \"bare\"");
}

TEST(single_quoted_values_are_ignored)
{
    /* Format v1 reads double-quoted values; a re-serialized dump's
     * single-quoted value is stepped over whole, quotes inside and all. */
    CHECK_TEXT(H "<node class=\"" TV "\" text='say \"hi\" now' content-desc=\"d\"/>" EH,
               "- Text (d)");
}

int main(void)
{
    RUN(refs_preorder_including_disabled);
    RUN(flags_true_only_when_exactly_true);
    RUN(dedup_same_class_and_text_only);
    RUN(dedup_compares_collapsed_children_and_only_siblings);
    RUN(dedup_never_removes_refs);
    RUN(keep_rule);
    RUN(collapse_rule);
    RUN(drop_rule_and_empty_screen);
    RUN(bare_group_with_several_children_stays);
    RUN(roles_map);
    RUN(every_window_is_shown);
    RUN(numeric_references_decoded_and_escaped);
    RUN(internal_looking_text_is_kept);
    RUN(no_xml_header_and_desc_equal_to_text);
    RUN(single_quoted_values_are_ignored);
    return T_DONE();
}
