/* SPDX-License-Identifier: Apache-2.0 */
/* Verified acts against a changing screen: a snapshot is taken from the
 * test device's uiautomator stand-in, the stand-in is switched to another
 * dump, and the act must find the element again (same place, or moved) or
 * refuse with ADBC_ESTALE and send nothing.
 *
 * The same rule with the frame check (adbc_act_opts.refs), on a second
 * device playing a phone (--phone-profile): an unchanged screen gets its
 * input with no fresh dump, and any change (the stand-in's page-flip count
 * follows the screen it serves) falls back to the dump, so a moved element
 * is tapped where it is now and a vanished one refused with nothing sent. */
#include "t.h"

#include "adbc/act.h"
#include "ui/ui_internal.h"
#include "test_act_td.h"

static td dev;
static adbc_act_opts vopts;

#define HEAD                                                                                   \
    "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">"        \
    "<node class=\"android.widget.FrameLayout\" package=\"com.chat\" bounds=\"[0,0][1080,2400]\">"
#define TAIL "</node></hierarchy>"
#define FIELD(b)                                                                               \
    "<node class=\"android.widget.EditText\" text=\"draft\" resource-id=\"com.chat:id/msg\" "   \
    "package=\"com.chat\" clickable=\"true\" enabled=\"true\" bounds=\"" b "\"/>"
#define SEND(b)                                                                                \
    "<node class=\"android.widget.Button\" text=\"Send\" resource-id=\"com.chat:id/send\" "     \
    "package=\"com.chat\" clickable=\"true\" enabled=\"true\" bounds=\"" b "\"/>"
#define LIST(b)                                                                                \
    "<node class=\"android.widget.ListView\" resource-id=\"com.chat:id/list\" "                \
    "package=\"com.chat\" scrollable=\"true\" enabled=\"true\" bounds=\"" b "\"/>"

/* The screen when the snapshot was taken. */
static const char *screen_a = HEAD LIST("[0,200][1080,1900]") FIELD("[40,2000][840,2200]")
    SEND("[860,2000][1040,2200]") TAIL;
/* The keyboard came up: everything moved up 800 px. */
static const char *screen_moved = HEAD LIST("[0,200][1080,1100]") FIELD("[40,1200][840,1400]")
    SEND("[860,1200][1040,1400]") TAIL;
/* Another screen: no Send button. */
static const char *screen_gone = HEAD LIST("[0,200][1080,1900]") FIELD("[40,2000][840,2200]")
    TAIL;
/* The field has focus (its dump says focused="true"); or the list has it. */
static const char *screen_focused = HEAD LIST("[0,200][1080,1900]")
    "<node class=\"android.widget.EditText\" text=\"draft\" resource-id=\"com.chat:id/msg\" "
    "package=\"com.chat\" clickable=\"true\" enabled=\"true\" focused=\"true\" "
    "bounds=\"[40,2000][840,2200]\"/>" SEND("[860,2000][1040,2200]") TAIL;
static const char *screen_list_focused = HEAD
    "<node class=\"android.widget.ListView\" resource-id=\"com.chat:id/list\" "
    "package=\"com.chat\" scrollable=\"true\" enabled=\"true\" focused=\"true\" "
    "bounds=\"[0,200][1080,1900]\"/>" FIELD("[40,2000][840,2200]") SEND("[860,2000][1040,2200]")
    TAIL;
/* Moved, and a second Send appeared: which one is meant cannot be told. */
static const char *screen_twice = HEAD SEND("[860,300][1040,500]") FIELD("[40,1200][840,1400]")
    SEND("[860,1200][1040,1400]") TAIL;

static adbc_ui_snap *snap;

static void serve(const char *xml)
{
    td_puts(&dev, "screen.xml", xml);
    td_puts(&dev, "uiautomator.conf", "dump=screen.xml\n");
}

static const adbc_ui_ref *ref_in(const adbc_ui_snap *s, const char *rid)
{
    const adbc_ui_reftab *t = adbc_ui_snap_refs(s);
    for (size_t i = 1; i <= adbc_ui_reftab_count(t); i++) {
        const adbc_ui_ref *r = adbc_ui_reftab_get(t, (int)i);
        if (strcmp(r->resource_id, rid) == 0)
            return r;
    }
    return NULL;
}

static const adbc_ui_ref *ref_of(const char *rid)
{
    return ref_in(snap, rid);
}

TEST(setup)
{
    CHECK_EQ_INT(td_start(&dev, NULL), 0);
    adbc_act_opts_init(&vopts);
    vopts.verify = 1;
    vopts.timeout_ms = 20000;
    vopts.settle_ms = 10;
    serve(screen_a);
    CHECK_EQ_INT(adbc_ui_snapshot(&snap, dev.conn, NULL), 0);
    CHECK(ref_of("com.chat:id/send") && ref_of("com.chat:id/msg") && ref_of("com.chat:id/list"));
}

TEST(unchanged_screen_acts_in_place)
{
    serve(screen_a);
    td_reset(&dev);
    adbc_act_where w = {0};
    CHECK_EQ_INT(adbc_act_tap(&w, dev.conn, ref_of("com.chat:id/send"), &vopts), 0);
    CHECK(w.how == ADBC_ACT_SAME && w.x == 950 && w.y == 2100);
    CHECK(td_calls_are(&dev, "cmd input tap 950 2100\n"));
}

TEST(moved_element_acts_at_new_place)
{
    serve(screen_moved);
    td_reset(&dev);
    adbc_act_where w = {0};
    const adbc_ui_ref *send = ref_of("com.chat:id/send");
    CHECK_EQ_INT(adbc_act_tap(&w, dev.conn, send, &vopts), 0);
    CHECK(w.how == ADBC_ACT_MOVED && w.x == 950 && w.y == 1300 && w.ref == send->ref);
    CHECK_EQ_INT(adbc_act_long_press(&w, dev.conn, send, &vopts), 0);
    CHECK_EQ_INT(adbc_act_type(&w, dev.conn, ref_of("com.chat:id/msg"), "hi there", 1, &vopts),
                 0);
    CHECK(w.x == 440 && w.y == 1300);
    /* the list shrank with the keyboard: a different size is a different
     * identity, so scrolling it is refused rather than done in a guessed box */
    CHECK_EQ_INT(adbc_act_scroll(&w, dev.conn, ref_of("com.chat:id/list"), ADBC_DIR_DOWN,
                                 &vopts),
                 ADBC_ESTALE);
    /* not verified: the recorded point, whatever is there now */
    adbc_act_opts plain = vopts;
    plain.verify = 0;
    CHECK_EQ_INT(adbc_act_tap(&w, dev.conn, send, &plain), 0);
    CHECK(w.how == ADBC_ACT_UNVERIFIED && w.x == 950 && w.y == 2100);
    CHECK(td_calls_are(&dev, "cmd input tap 950 1300\n"
                             "cmd input swipe 950 1300 950 1300 1000\n"
                             "cmd input tap 440 1300\n"
                             "cmd input keyevent 123 67 67 67 67 67\n"
                             "cmd input text hi%sthere\n"
                             "cmd input tap 950 2100\n"));
}

TEST(vanished_element_refuses)
{
    serve(screen_gone);
    td_reset(&dev);
    adbc_act_where w = {0};
    CHECK_EQ_INT(adbc_act_tap(&w, dev.conn, ref_of("com.chat:id/send"), &vopts), ADBC_ESTALE);
    CHECK(strstr(adbc_last_error(), "stale ref"));
    CHECK(strstr(adbc_last_error(), "\"Send\""));
    CHECK(strstr(adbc_last_error(), "nothing was sent"));
    CHECK_EQ_INT(adbc_act_type(NULL, dev.conn, ref_of("com.chat:id/send"), "x", 0, &vopts),
                 ADBC_ESTALE);
    CHECK_EQ_INT(adbc_act_long_press(NULL, dev.conn, ref_of("com.chat:id/send"), &vopts),
                 ADBC_ESTALE);
    CHECK(td_calls_are(&dev, ""));
}

TEST(duplicated_element_refuses)
{
    serve(screen_twice);
    td_reset(&dev);
    CHECK_EQ_INT(adbc_act_tap(NULL, dev.conn, ref_of("com.chat:id/send"), &vopts), ADBC_ESTALE);
    CHECK(strstr(adbc_last_error(), "2 elements"));
    CHECK(td_calls_are(&dev, ""));
    /* locate gives the fresh snapshot for a caller to show */
    adbc_ui_snap *fresh = NULL;
    const adbc_ui_ref *found = NULL;
    CHECK_EQ_INT(adbc_act_locate(&fresh, &found, NULL, dev.conn, ref_of("com.chat:id/send"),
                                 &vopts),
                 ADBC_ESTALE);
    CHECK(fresh != NULL && found == NULL);
    adbc_ui_snap_free(fresh);
    /* the field is still unique: acting on it works */
    td_reset(&dev);
    CHECK_EQ_INT(adbc_act_tap(NULL, dev.conn, ref_of("com.chat:id/msg"), &vopts), 0);
    CHECK(td_calls_are(&dev, "cmd input tap 440 1300\n"));
}

TEST(dump_failure_is_not_an_act)
{
    td_puts(&dev, "uiautomator.conf", "dump=screen.xml\nmode=null-root\n");
    td_reset(&dev);
    adbc_act_opts o = vopts;
    o.timeout_ms = 5000;
    int rc = adbc_act_tap(NULL, dev.conn, ref_of("com.chat:id/send"), &o);
    CHECK(rc < 0 && rc != ADBC_ESTALE);
    CHECK(td_calls_are(&dev, ""));
}

/* ---- with the frame check, on a device with a phone's costs ---- */

static td phone;
static adbc_ui_snap *psnap;

static int dumps(const td *t)
{
    char *s = td_get(t, "uiautomator.count", NULL);
    int n = s ? atoi(s) : 0;
    free(s);
    return n;
}

/* Observe screen xml on the phone (its refs, with their frame mark, in
 * psnap), then serve next; *o the verified options with the table. */
static int phone_observe(const char *xml, const char *next, adbc_act_opts *o)
{
    td_puts(&phone, "screen.xml", xml);
    td_puts(&phone, "uiautomator.conf", "dump=screen.xml\n");
    adbc_ui_snap_free(psnap);
    psnap = NULL;
    if (adbc_ui_snapshot(&psnap, phone.conn, NULL) != 0)
        return -1;
    if (next)
        td_puts(&phone, "screen.xml", next);
    td_reset(&phone);
    td_drop(&phone, "commands");
    *o = vopts;
    o->refs = adbc_ui_snap_refs(psnap);
    return 0;
}

static const adbc_ui_ref *pref(const char *rid)
{
    return ref_in(psnap, rid);
}

TEST(phone_setup)
{
    static const char *const args[] = {"--phone-profile", NULL};
    CHECK_EQ_INT(td_start(&phone, args), 0);
}

TEST(phone_unchanged_screen_needs_no_dump)
{
    adbc_act_opts o;
    CHECK_EQ_INT(phone_observe(screen_a, NULL, &o), 0);
    CHECK(strlen(adbc_ui_reftab_frame(o.refs)) > 9); /* the count, ':', the boot id */
    int before = dumps(&phone);
    adbc_act_where w = {0};
    CHECK_EQ_INT(adbc_act_tap(&w, phone.conn, pref("com.chat:id/send"), &o), 0);
    CHECK(w.how == ADBC_ACT_UNCHANGED && w.x == 950 && w.y == 2100);
    CHECK(td_calls_are(&phone, "cmd input tap 950 2100\n"));
    CHECK_EQ_INT(dumps(&phone), before);
    /* what the device ran for the act: the frame check, then the input */
    char *cmds = td_get(&phone, "commands", NULL);
    CHECK(cmds && strcmp(cmds, "service\ncmd_input\n") == 0);
    free(cmds);
    /* the tap drew a frame: the same refs now go through a fresh dump */
    CHECK_EQ_INT(adbc_act_tap(&w, phone.conn, pref("com.chat:id/send"), &o), 0);
    CHECK(w.how == ADBC_ACT_SAME && w.x == 950 && w.y == 2100);
    CHECK_EQ_INT(dumps(&phone), before + 1);
    /* a ref file keeps the mark: a later process acts on it the same way */
    CHECK_EQ_INT(phone_observe(screen_a, NULL, &o), 0);
    char path[400];
    snprintf(path, sizeof path, "%s/refs", phone.dir);
    CHECK_EQ_INT(adbc_ui_reftab_save(o.refs, path), 0);
    adbc_ui_reftab *loaded = NULL;
    CHECK_EQ_INT(adbc_ui_reftab_load(&loaded, path), 0);
    CHECK(loaded && strcmp(adbc_ui_reftab_frame(loaded), adbc_ui_reftab_frame(o.refs)) == 0);
    o.refs = loaded;
    before = dumps(&phone);
    CHECK_EQ_INT(adbc_act_tap(&w, phone.conn, adbc_ui_reftab_get(loaded, pref("com.chat:id/send")->ref), &o), 0);
    CHECK(w.how == ADBC_ACT_UNCHANGED);
    CHECK_EQ_INT(dumps(&phone), before);
    adbc_ui_reftab_free(loaded);
    /* The same count under another boot id (the device restarted since)
     * proves nothing: the act finds the element again in a fresh dump. */
    CHECK_EQ_INT(phone_observe(screen_a, NULL, &o), 0);
    CHECK_EQ_INT(adbc_ui_reftab_save(o.refs, path), 0);
    char text[65536];
    FILE *f = fopen(path, "rb");
    CHECK(f != NULL);
    size_t tn = f ? fread(text, 1, sizeof text - 1, f) : 0;
    if (f)
        fclose(f);
    text[tn] = '\0';
    const char *mark = adbc_ui_reftab_frame(o.refs);
    char *at = strstr(text, mark);
    CHECK(at != NULL && strlen(mark) > 9);
    char *check = strstr(text, "\ncheck ");
    CHECK(check != NULL);
    if (at && check) {
        char *last = at + strlen(mark) - 1; /* the boot id's last digit */
        *last = *last == '0' ? '1' : '0';
        /* the file's check line, computed again over the edit */
        size_t body = (size_t)(check + 1 - text);
        tn = body + (size_t)snprintf(check + 1, sizeof text - body, "check %016" PRIx64 "\n",
                                     ui_hash(0xc4ec, text, body));
    }
    f = fopen(path, "wb");
    CHECK(f != NULL && fwrite(text, 1, tn, f) == tn);
    if (f)
        fclose(f);
    loaded = NULL;
    CHECK_EQ_INT(adbc_ui_reftab_load(&loaded, path), 0);
    CHECK(loaded && strncmp(adbc_ui_reftab_frame(loaded), mark, 8) == 0 &&
          strcmp(adbc_ui_reftab_frame(loaded), mark) != 0);
    o.refs = loaded;
    before = dumps(&phone);
    CHECK_EQ_INT(adbc_act_tap(&w, phone.conn, adbc_ui_reftab_get(loaded, pref("com.chat:id/send")->ref), &o), 0);
    CHECK(w.how == ADBC_ACT_SAME);
    CHECK_EQ_INT(dumps(&phone), before + 1);
    adbc_ui_reftab_free(loaded);
}

TEST(phone_moved_element_acts_at_new_place)
{
    adbc_act_opts o;
    CHECK_EQ_INT(phone_observe(screen_a, screen_moved, &o), 0);
    int before = dumps(&phone);
    adbc_act_where w = {0};
    const adbc_ui_ref *send = pref("com.chat:id/send");
    CHECK_EQ_INT(adbc_act_tap(&w, phone.conn, send, &o), 0);
    CHECK(w.how == ADBC_ACT_MOVED && w.x == 950 && w.y == 1300 && w.ref == send->ref);
    CHECK_EQ_INT(dumps(&phone), before + 1);
    CHECK(td_calls_are(&phone, "cmd input tap 950 1300\n"));
    /* typing: the field moved too; its clear count comes from the fresh dump */
    CHECK_EQ_INT(phone_observe(screen_a, screen_moved, &o), 0);
    CHECK_EQ_INT(adbc_act_type(&w, phone.conn, pref("com.chat:id/msg"), "hi", 1, &o), 0);
    CHECK(w.how == ADBC_ACT_MOVED && w.x == 440 && w.y == 1300);
    CHECK(td_calls_are(&phone, "cmd input tap 440 1300\n"
                               "cmd input keyevent 123 67 67 67 67 67\n"
                               "cmd input text hi\n"));
}

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The lines of the control file name without those equal to skip: want
 * exactly, and skip at least once (before the line starting with last,
 * unless NULL). */
static int lines_are(const char *name, const char *skip, const char *want, const char *last)
{
    char *got = td_get(&phone, name, NULL);
    char *kept = calloc(1, got ? strlen(got) + 1 : 1);
    int skipped = 0, ok = got && kept;
    for (char *p = got, *e; ok && *p; p = e + 1) {
        e = strchr(p, '\n');
        if (!e)
            break;
        size_t n = (size_t)(e - p);
        if (strlen(skip) == n && memcmp(p, skip, n) == 0) {
            skipped++;
            continue;
        }
        if (last && strncmp(p, last, strlen(last)) == 0 && !skipped)
            ok = 0;
        strncat(kept, p, n + 1);
    }
    ok = ok && skipped > 0 && strcmp(kept, want) == 0;
    if (!ok)
        printf("  %s: [%s], want [%s] with %s before %s\n", name, got ? got : "(none)", want,
               skip, last ? last : "the end");
    free(got);
    free(kept);
    return ok;
}

TEST(phone_type_waits_for_focus_not_for_a_clock)
{
    adbc_act_opts o;
    adbc_act_where w = {0};
    /* Nothing had focus at the dump: with the tap the device polls the
     * input method's client until a focused view is served (a poll that
     * read the state before the tap took effect polls again), then clears
     * and types, all in the frame check's round trip. */
    td_drop(&phone, "focus");
    CHECK_EQ_INT(phone_observe(screen_a, NULL, &o), 0);
    o.settle_ms = 5000;
    int before = dumps(&phone);
    CHECK_EQ_INT(adbc_act_type(&w, phone.conn, pref("com.chat:id/msg"), "hi there", 1, &o), 0);
    CHECK(w.how == ADBC_ACT_UNCHANGED && w.x == 440 && w.y == 2100);
    CHECK(lines_are("calls", "dumpsys input_method",
                    "cmd input tap 440 2100\n"
                    "cmd input keyevent 123 67 67 67 67 67\n"
                    "cmd input text hi%sthere\n", "cmd input keyevent"));
    CHECK(lines_are("commands", "dumpsys", "service\ncmd_input\ncmd_input\ncmd_input\n",
                    NULL));
    CHECK_EQ_INT(dumps(&phone), before);
    char *focus = td_get(&phone, "focus", NULL);
    CHECK(focus && strstr(focus, "android.widget.EditText{") && strstr(focus, "app:id/msg}"));
    free(focus);

    /* A device whose dump never shows focus (the tap focused nothing, or
     * its input method prints no client): the text still goes, once the
     * full settle time has passed, as with the fixed wait. */
    td_drop(&phone, "focus");
    td_puts(&phone, "focus.off", "");
    CHECK_EQ_INT(phone_observe(screen_a, NULL, &o), 0);
    o.settle_ms = 600;
    int64_t t0 = mono_ms();
    CHECK_EQ_INT(adbc_act_type(&w, phone.conn, pref("com.chat:id/msg"), "hi", 0, &o), 0);
    CHECK(mono_ms() - t0 >= 600);
    CHECK(lines_are("calls", "dumpsys input_method", "cmd input tap 440 2100\ncmd input text hi\n",
                    NULL));
    td_drop(&phone, "focus.off");

    /* The field had focus already: nothing to wait for. */
    CHECK_EQ_INT(phone_observe(screen_focused, NULL, &o), 0);
    o.settle_ms = 5000;
    CHECK(pref("com.chat:id/msg")->states & ADBC_UI_FOCUSED);
    CHECK_EQ_INT(adbc_act_type(&w, phone.conn, pref("com.chat:id/msg"), "hi", 1, &o), 0);
    CHECK(w.how == ADBC_ACT_UNCHANGED);
    CHECK(td_calls_are(&phone, "cmd input tap 440 2100\n"
                               "cmd input keyevent 123 67 67 67 67 67\n"
                               "cmd input text hi\n"));

    /* Another element had focus: a served focused view would not say the
     * tap moved it, so the device waits the full settle time, no polling. */
    td_drop(&phone, "focus");
    CHECK_EQ_INT(phone_observe(screen_list_focused, NULL, &o), 0);
    o.settle_ms = 600;
    t0 = mono_ms();
    CHECK_EQ_INT(adbc_act_type(&w, phone.conn, pref("com.chat:id/msg"), "hi", 0, &o), 0);
    CHECK(mono_ms() - t0 >= 600);
    CHECK(td_calls_are(&phone, "cmd input tap 440 2100\ncmd input text hi\n"));

    /* The screen drew since the dump: the field is found again in a fresh
     * one, and the wait is the full settle time. */
    td_drop(&phone, "focus");
    CHECK_EQ_INT(phone_observe(screen_a, screen_moved, &o), 0);
    o.settle_ms = 600;
    t0 = mono_ms();
    CHECK_EQ_INT(adbc_act_type(&w, phone.conn, pref("com.chat:id/msg"), "hi", 0, &o), 0);
    CHECK(mono_ms() - t0 >= 600);
    CHECK(w.how == ADBC_ACT_MOVED);
    CHECK(td_calls_are(&phone, "cmd input tap 440 1300\ncmd input text hi\n"));
}

TEST(phone_vanished_element_refuses)
{
    adbc_act_opts o;
    CHECK_EQ_INT(phone_observe(screen_a, screen_gone, &o), 0);
    adbc_act_where w = {0};
    CHECK_EQ_INT(adbc_act_tap(&w, phone.conn, pref("com.chat:id/send"), &o), ADBC_ESTALE);
    CHECK(strstr(adbc_last_error(), "nothing was sent"));
    CHECK_EQ_INT(adbc_act_scroll(&w, phone.conn, pref("com.chat:id/send"), ADBC_DIR_DOWN, &o),
                 ADBC_ESTALE);
    CHECK(td_calls_are(&phone, ""));
}

TEST(phone_unknown_mark_verifies)
{
    /* A device that refuses the page-flip call: no mark, so every act
     * verifies by a dump, as without the check. */
    td_puts(&phone, "service.out", "Result: Parcel(Error: 0xffffffb5 \"Permission denied\")\n");
    adbc_act_opts o;
    CHECK_EQ_INT(phone_observe(screen_a, screen_moved, &o), 0);
    CHECK_STR(adbc_ui_reftab_frame(o.refs), "");
    int before = dumps(&phone);
    adbc_act_where w = {0};
    CHECK_EQ_INT(adbc_act_tap(&w, phone.conn, pref("com.chat:id/send"), &o), 0);
    CHECK(w.how == ADBC_ACT_MOVED && w.y == 1300);
    CHECK_EQ_INT(dumps(&phone), before + 1);
    td_drop(&phone, "service.out");
    /* A record that is not the table's own (a copy): no shortcut either. */
    CHECK_EQ_INT(phone_observe(screen_a, NULL, &o), 0);
    adbc_ui_ref copy = *pref("com.chat:id/send");
    before = dumps(&phone);
    CHECK_EQ_INT(adbc_act_tap(&w, phone.conn, &copy, &o), 0);
    CHECK(w.how == ADBC_ACT_SAME);
    CHECK_EQ_INT(dumps(&phone), before + 1);
}

TEST(phone_observe_one_round_trip)
{
    td_puts(&phone, "dumpsys-activity-activities",
            "  topResumedActivity=ActivityRecord{5d1b2c0 u0 com.chat/.MainActivity t42}\n");
    td_puts(&phone, "uiautomator.conf", "dump=screen.xml\n");
    td_drop(&phone, "commands");
    adbc_ui_snap *s = NULL;
    char *act = NULL, *pkg = NULL;
    CHECK_EQ_INT(adbc_act_observe(&s, &act, &pkg, phone.conn, NULL), 0);
    CHECK(s && act && pkg);
    CHECK_STR(act, "com.chat/.MainActivity");
    CHECK_STR(pkg, "com.chat");
    CHECK(strlen(adbc_ui_reftab_frame(adbc_ui_snap_refs(s))) > 9);
    /* one dump, one dumpsys beside it, the frame mark after it */
    char *cmds = td_get(&phone, "commands", NULL);
    CHECK(cmds && strstr(cmds, "uiautomator_dump") && strstr(cmds, "dumpsys") &&
          strstr(cmds, "service"));
    CHECK(cmds && !strstr(strstr(cmds, "dumpsys") + 1, "dumpsys"));
    free(cmds);
    free(act);
    free(pkg);
    adbc_ui_snap_free(s);
    /* A dump that fails: the error quotes uiautomator, not the activity
     * the side printed into the same output. */
    td_puts(&phone, "uiautomator.conf", "dump=screen.xml\nmode=null-root\n");
    adbc_ui_opts uo;
    adbc_ui_opts_init(&uo);
    uo.attempts = 1;
    s = (adbc_ui_snap *)1;
    act = pkg = NULL;
    CHECK_EQ_INT(adbc_act_observe(&s, &act, &pkg, phone.conn, &uo), ADBC_EREMOTE);
    CHECK(s == NULL && act == NULL && pkg == NULL);
    CHECK(strstr(adbc_last_error(), "ERROR: null root node") != NULL);
    CHECK(strstr(adbc_last_error(), "topResumedActivity") == NULL);
    td_puts(&phone, "uiautomator.conf", "dump=screen.xml\n");
}

TEST(teardown)
{
    adbc_ui_snap_free(snap);
    adbc_ui_snap_free(psnap);
    td_stop(&dev);
    td_stop(&phone);
}

int main(void)
{
    RUN(setup);
    if (!snap) {
        printf("no snapshot from the test device\n");
        td_stop(&dev);
        return 1;
    }
    RUN(unchanged_screen_acts_in_place);
    RUN(moved_element_acts_at_new_place);
    RUN(vanished_element_refuses);
    RUN(duplicated_element_refuses);
    RUN(dump_failure_is_not_an_act);
    RUN(phone_setup);
    if (phone.conn) {
        RUN(phone_unchanged_screen_needs_no_dump);
        RUN(phone_moved_element_acts_at_new_place);
        RUN(phone_type_waits_for_focus_not_for_a_clock);
        RUN(phone_vanished_element_refuses);
        RUN(phone_unknown_mark_verifies);
        RUN(phone_observe_one_round_trip);
    }
    RUN(teardown);
    return T_DONE();
}
