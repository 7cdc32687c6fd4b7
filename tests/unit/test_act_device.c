/* SPDX-License-Identifier: Apache-2.0 */
/* Every act call against the test device: the stand-ins record exactly
 * what they were asked, and each test compares that record with the
 * command lines the call must send. Refs here come from an offline
 * snapshot and are acted on unverified (test_act_stale.c does the verified
 * acts against a changing screen). */
#include "t.h"

#include "adbc/act.h"
#include "core/internal.h"
#include "test_act_png.h"
#include "test_act_td.h"
#include "act/act_internal.h"

static td dev;

#define SCREEN                                                                                 \
    "<hierarchy rotation=\"0\"><node class=\"android.widget.FrameLayout\" package=\"com.x\" "   \
    "bounds=\"[0,0][1080,2400]\">"                                                              \
    "<node class=\"android.widget.EditText\" text=\"old\" resource-id=\"com.x:id/msg\" "        \
    "package=\"com.x\" clickable=\"true\" enabled=\"true\" bounds=\"[40,2000][840,2200]\"/>"   \
    "<node class=\"android.widget.Button\" text=\"Send\" resource-id=\"com.x:id/send\" "        \
    "package=\"com.x\" clickable=\"true\" enabled=\"true\" bounds=\"[860,2000][1040,2200]\"/>" \
    "<node class=\"androidx.recyclerview.widget.RecyclerView\" resource-id=\"com.x:id/list\" "  \
    "package=\"com.x\" scrollable=\"true\" enabled=\"true\" bounds=\"[0,300][1080,1900]\"/>"   \
    "</node></hierarchy>"

static adbc_ui_snap *screen;
static const adbc_ui_ref *field, *send, *list;
static adbc_act_opts opts;

static const adbc_ui_ref *ref_named(const char *rid)
{
    const adbc_ui_reftab *t = adbc_ui_snap_refs(screen);
    for (size_t i = 1; i <= adbc_ui_reftab_count(t); i++) {
        const adbc_ui_ref *r = adbc_ui_reftab_get(t, (int)i);
        if (strcmp(r->resource_id, rid) == 0)
            return r;
    }
    return NULL;
}

TEST(setup)
{
    CHECK_EQ_INT(adbc_ui_snap_parse(&screen, SCREEN, strlen(SCREEN)), 0);
    field = ref_named("com.x:id/msg");
    send = ref_named("com.x:id/send");
    list = ref_named("com.x:id/list");
    CHECK(field && send && list);
    CHECK(send->x == 950 && send->y == 2100);
    adbc_act_opts_init(&opts);
    opts.timeout_ms = 15000;
    opts.settle_ms = 10;
    CHECK_EQ_INT(td_start(&dev, NULL), 0);
}

/* ---- input -------------------------------------------------------------------- */

TEST(taps_swipes_keys)
{
    td_reset(&dev);
    CHECK_EQ_INT(adbc_act_tap_xy(dev.conn, 540, 1200, &opts), 0);
    CHECK_EQ_INT(adbc_act_swipe(dev.conn, 100, 2000, 100, 400, 250, &opts), 0);
    CHECK_EQ_INT(adbc_act_press(dev.conn, 66, &opts), 0);
    CHECK_EQ_INT(adbc_act_back(dev.conn, &opts), 0);
    CHECK_EQ_INT(adbc_act_home(dev.conn, NULL), 0);
    int code;
    CHECK_EQ_INT(adbc_keycode_parse(&code, "recent"), 0);
    CHECK_EQ_INT(adbc_act_press(dev.conn, code, &opts), 0);
    CHECK(td_calls_are(&dev, "cmd input tap 540 1200\n"
                             "cmd input swipe 100 2000 100 400 250\n"
                             "cmd input keyevent 66\n"
                             "cmd input keyevent 4\n"
                             "cmd input keyevent 3\n"
                             "cmd input keyevent 187\n"));
    /* refused before anything is sent */
    td_reset(&dev);
    CHECK_EQ_INT(adbc_act_tap_xy(dev.conn, -1, 5, &opts), ADBC_EINVAL);
    CHECK_EQ_INT(adbc_act_swipe(dev.conn, 0, 0, 1, 1, 0, &opts), ADBC_EINVAL);
    CHECK_EQ_INT(adbc_act_press(dev.conn, 10000, &opts), ADBC_EINVAL);
    CHECK(td_calls_are(&dev, ""));
}

TEST(acts_on_refs_unverified)
{
    td_reset(&dev);
    adbc_act_where w = {0};
    CHECK_EQ_INT(adbc_act_tap(&w, dev.conn, send, &opts), 0);
    CHECK(w.x == 950 && w.y == 2100 && w.ref == send->ref && w.how == ADBC_ACT_UNVERIFIED);
    CHECK_EQ_INT(adbc_act_long_press(NULL, dev.conn, send, &opts), 0);
    CHECK_EQ_INT(adbc_act_scroll(&w, dev.conn, list, ADBC_DIR_DOWN, &opts), 0);
    CHECK(w.x == 540 && w.y == 1100);
    CHECK_EQ_INT(adbc_act_scroll(NULL, dev.conn, list, ADBC_DIR_UP, &opts), 0);
    CHECK_EQ_INT(adbc_act_scroll(NULL, dev.conn, list, ADBC_DIR_RIGHT, &opts), 0);
    CHECK_EQ_INT(adbc_act_scroll(NULL, dev.conn, list, ADBC_DIR_LEFT, &opts), 0);
    /* list [0,300][1080,1900]: centre (540,1100), 800/3 = 266 to the edges */
    CHECK(td_calls_are(&dev, "cmd input tap 950 2100\n"
                             "cmd input swipe 950 2100 950 2100 1000\n"
                             "cmd input swipe 540 1100 540 834 300\n"
                             "cmd input swipe 540 1100 540 1366 300\n"
                             "cmd input swipe 540 1100 360 1100 300\n"
                             "cmd input swipe 540 1100 720 1100 300\n"));
    td_reset(&dev);
    adbc_act_opts o = opts;
    o.long_press_ms = 2500;
    o.scroll_ms = 120;
    CHECK_EQ_INT(adbc_act_long_press(NULL, dev.conn, field, &o), 0);
    CHECK_EQ_INT(adbc_act_scroll(NULL, dev.conn, list, ADBC_DIR_DOWN, &o), 0);
    CHECK(td_calls_are(&dev, "cmd input swipe 440 2100 440 2100 2500\n"
                             "cmd input swipe 540 1100 540 834 120\n"));
}

TEST(input_failure_is_reported)
{
    td_reset(&dev);
    CHECK_EQ_INT(td_puts(&dev, "input.fail", "java.lang.SecurityException: Injecting to another "
                                             "application requires INJECT_EVENTS permission\n"),
                 0);
    CHECK_EQ_INT(adbc_act_tap_xy(dev.conn, 1, 2, &opts), ADBC_EREMOTE);
    CHECK(strstr(adbc_last_error(), "INJECT_EVENTS"));
    td_drop(&dev, "input.fail");
    CHECK(td_calls_are(&dev, "cmd input tap 1 2\n"));
}

/* ---- grid ---------------------------------------------------------------------- */

TEST(grid_from_wm_size)
{
    td_reset(&dev);
    adbc_grid g;
    CHECK_EQ_INT(adbc_act_grid(&g, dev.conn, &opts), 0);
    CHECK(g.width == 1080 && g.height == 2400 && g.rows == 22);
    adbc_act_where w;
    CHECK_EQ_INT(adbc_act_tap_grid(&w, dev.conn, "C5", &opts), 0);
    CHECK(w.x == 269 && w.y == 490);
    CHECK(td_calls_are(&dev, "wm size\nwm size\ncmd input tap 269 490\n"));
    /* an override size is what the screen is now */
    td_reset(&dev);
    CHECK_EQ_INT(td_puts(&dev, "wm-size", "Physical size: 1080x2400\nOverride size: 720x1600\n"),
                 0);
    CHECK_EQ_INT(adbc_act_grid(&g, dev.conn, &opts), 0);
    CHECK(g.width == 720 && g.height == 1600 && g.rows == 22);
    CHECK_EQ_INT(adbc_act_tap_grid(NULL, dev.conn, "j22", &opts), 0);
    CHECK(td_calls_are(&dev, "wm size\nwm size\ncmd input tap 683 1563\n"));
    /* a cell outside the grid: nothing tapped */
    td_reset(&dev);
    CHECK_EQ_INT(adbc_act_tap_grid(NULL, dev.conn, "K1", &opts), ADBC_EINVAL);
    CHECK_EQ_INT(adbc_act_tap_grid(NULL, dev.conn, "A23", &opts), ADBC_EINVAL);
    CHECK(td_calls_are(&dev, "wm size\nwm size\n"));
    CHECK_EQ_INT(td_puts(&dev, "wm-size", "Error: no display 0\n"), 0);
    CHECK_EQ_INT(adbc_act_grid(&g, dev.conn, &opts), ADBC_EFORMAT);
    td_drop(&dev, "wm-size");
}

/* ---- typing --------------------------------------------------------------------- */

static void set_sdk(int sdk)
{
    /* the getprop stand-in takes the last line for a name */
    char *props = td_get(&dev, "props", NULL);
    char line[64];
    snprintf(line, sizeof line, "ro.build.version.sdk=%d\n", sdk);
    size_t n = strlen(props);
    props = realloc(props, n + sizeof line);
    strcat(props, line);
    td_puts(&dev, "props", props);
    free(props);
}

TEST(type_into_field)
{
    set_sdk(34);
    td_reset(&dev);
    adbc_act_where w;
    CHECK_EQ_INT(adbc_act_type(&w, dev.conn, field, "hello world", 1, &opts), 0);
    CHECK(w.x == 440 && w.y == 2100);
    /* tap to focus, then clear the 3 characters of "old", then type */
    CHECK(td_calls_are(&dev, "cmd input tap 440 2100\n"
                             "cmd input keyevent 123 67 67 67\n"
                             "cmd input text hello%sworld\n"));
    td_reset(&dev);
    CHECK_EQ_INT(adbc_act_type(NULL, dev.conn, field, "x", 0, &opts), 0);
    CHECK(td_calls_are(&dev, "cmd input tap 440 2100\ncmd input text x\n"));
    /* API 35: word by word with KEYCODE_SPACE. The connection asked for
     * the API level once (a device keeps its version while connected), so
     * a newer device is given by opts.sdk here. */
    adbc_act_opts o35 = opts;
    o35.sdk = 35;
    td_reset(&dev);
    CHECK_EQ_INT(adbc_act_type(NULL, dev.conn, field, "a b  c", 0, &o35), 0);
    CHECK(td_calls_are(&dev, "cmd input tap 440 2100\n"
                             "cmd input text a\n"
                             "cmd input keyevent 62\n"
                             "cmd input text b\n"
                             "cmd input keyevent 62 62\n"
                             "cmd input text c\n"));
    /* a command too long for a service name goes to sh on stdin */
    set_sdk(34);
    char *longtext = malloc(1500 * 4 + 1), *want = malloc(1500 * 5 + 32);
    longtext[0] = '\0';
    strcpy(want, "cmd input text ");
    for (int i = 0; i < 1500; i++) {
        strcat(longtext, i ? " abc" : "abc");
        strcat(want, i ? "%sabc" : "abc");
    }
    strcat(want, "\n");
    td_reset(&dev);
    CHECK_EQ_INT(adbc_act_type_text(dev.conn, longtext, &opts), 0);
    int same = td_calls_are(&dev, want);
    free(longtext);
    free(want);
    CHECK(same);
    /* the sdk from the options, no getprop */
    td_reset(&dev);
    adbc_act_opts o = opts;
    o.sdk = 30;
    CHECK_EQ_INT(adbc_act_type_text(dev.conn, "a b", &o), 0);
    CHECK(td_calls_are(&dev, "cmd input text a%sb\n"));
}

TEST(type_hostile_text)
{
    set_sdk(34);
    static const struct {
        const char *text, *want;
    } cases[] = {
        {"; touch /data/local/tmp/canary", "cmd input text ';%stouch%s/data/local/tmp/canary'\n"},
        {"a && touch /data/local/tmp/canary", "cmd input text 'a%s&&%stouch%s/data/local/tmp/canary'\n"},
        {"$(touch /data/local/tmp/canary)", "cmd input text '$(touch%s/data/local/tmp/canary)'\n"},
        {"`touch /data/local/tmp/canary`", "cmd input text '`touch%s/data/local/tmp/canary`'\n"},
        {"'\"; touch /data/local/tmp/canary; \"'",
         "cmd input text ''\\''\";%stouch%s/data/local/tmp/canary;%s\"'\\'''\n"},
        {"back\\slash\\n", "cmd input text 'back\\slash\\n'\n"},
        {"100%s sure", "cmd input text 100%\ncmd input text s%ssure\n"},
        {"x\ntouch /data/local/tmp/canary", "cmd input text x\ncmd input keyevent 66\n"
                                             "cmd input text touch%s/data/local/tmp/canary\n"},
        {"a|b>c<d", "cmd input text 'a|b>c<d'\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        td_reset(&dev);
        CHECK_EQ_INT(adbc_act_type_text(dev.conn, cases[i].text, &opts), 0);
        if (!td_calls_are(&dev, cases[i].want)) {
            fprintf(stderr, "  case %zu\n", i);
            CHECK(0);
        }
        CHECK(!td_exists(&dev, "data/local/tmp/canary"));
    }
}

TEST(type_non_ascii)
{
    /* no ADB Keyboard: refused before the tap, and says what to install */
    td_reset(&dev);
    CHECK_EQ_INT(adbc_act_type(NULL, dev.conn, field, "caf\xc3\xa9", 0, &opts),
                 ADBC_EUNSUPPORTED);
    CHECK(strstr(adbc_last_error(), "install the ADB Keyboard IME (com.android.adbkeyboard)"));
    CHECK(td_calls_are(&dev, "dumpsys input_method\npm path com.android.adbkeyboard\n"));
    /* installed but not the current IME */
    CHECK_EQ_INT(td_puts(&dev, "packages", "com.android.adbkeyboard\n"), 0);
    td_reset(&dev);
    CHECK_EQ_INT(adbc_act_type_text(dev.conn, "\xe4\xbd\xa0\xe5\xa5\xbd", &opts),
                 ADBC_EUNSUPPORTED);
    CHECK(strstr(adbc_last_error(), "not the current input method"));
    /* current IME: the base64 broadcast, after the tap */
    CHECK_EQ_INT(td_puts(&dev, "dumpsys-input_method",
                         "  mCurMethodId=com.android.adbkeyboard/.AdbIME\n"),
                 0);
    td_reset(&dev);
    CHECK_EQ_INT(adbc_act_type(NULL, dev.conn, field, "caf\xc3\xa9 $(x)", 1, &opts), 0);
    CHECK(td_calls_are(&dev, "dumpsys input_method\n"
                             "cmd input tap 440 2100\n"
                             "cmd input keyevent 123 67 67 67\n"
                             "am broadcast -a ADB_INPUT_B64 --es msg Y2Fmw6kgJCh4KQ==\n"));
    td_drop(&dev, "packages");
    td_drop(&dev, "dumpsys-input_method");
}

/* ---- screenshots ------------------------------------------------------------------ */

static uint8_t *frame(size_t *len, uint32_t w, uint32_t h, uint32_t fmt, size_t header)
{
    size_t bpp = fmt == 3 ? 3 : fmt == 4 ? 2 : 4;
    size_t n = header + (size_t)w * h * bpp;
    uint8_t *d = malloc(n);
    uint32_t v[4] = {w, h, fmt, 7};
    for (int i = 0; i < 4 && (size_t)i * 4 < header; i++)
        for (int b = 0; b < 4; b++)
            d[i * 4 + b] = (uint8_t)(v[i] >> (8 * b));
    for (size_t i = header; i < n; i++)
        d[i] = (uint8_t)((i * 7) ^ (i >> 9));
    if (fmt == 1)
        for (size_t i = header + 3; i < n; i += 4)
            d[i] = 0xff;
    *len = n;
    return d;
}

static int shot_matches(uint32_t w, uint32_t h, size_t header)
{
    size_t n;
    uint8_t *raw = frame(&n, w, h, 1, header);
    td_put(&dev, "screencap.raw", raw, n);
    uint8_t *png = NULL, *pix = NULL;
    size_t plen = 0;
    int ok = 0;
    if (adbc_screenshot(&png, &plen, dev.conn, ADBC_SHOT_RAW, 15000) == 0) {
        uint32_t pw = 0, ph = 0;
        int chans = 0;
        if (tpng_decode(png, plen, &pw, &ph, &chans, &pix) == 0 && pw == w && ph == h &&
            chans == 3) {
            ok = 1;
            for (size_t i = 0; i < (size_t)w * h && ok; i++)
                ok = memcmp(pix + i * 3, raw + header + i * 4, 3) == 0;
        }
    } else {
        fprintf(stderr, "  %s\n", adbc_last_error());
    }
    free(raw);
    adbc_free(png);
    free(pix);
    return ok;
}

TEST(screenshot_raw)
{
    td_reset(&dev);
    CHECK(shot_matches(64, 48, 12));
    CHECK(shot_matches(1080, 2400, 16));
    CHECK(td_calls_are(&dev, "screencap\nscreencap\n"));
    /* a cut-short frame is an error, not a partial image */
    size_t n;
    uint8_t *raw = frame(&n, 100, 100, 1, 16);
    td_put(&dev, "screencap.raw", raw, n - 100);
    uint8_t *png = NULL;
    size_t plen;
    CHECK_EQ_INT(adbc_screenshot(&png, &plen, dev.conn, ADBC_SHOT_RAW, 15000), ADBC_EFORMAT);
    CHECK(png == NULL);
    free(raw);
    td_drop(&dev, "screencap.raw");
}

TEST(screenshot_device_png_and_fallback)
{
    /* the device's PNG comes back byte for byte */
    size_t n, plen;
    uint8_t *raw = frame(&n, 30, 20, 1, 12);
    adbc_frame f;
    uint8_t *served, *png = NULL;
    size_t slen;
    CHECK_EQ_INT(adbc_frame_parse(&f, raw, n), 0);
    CHECK_EQ_INT(adbc_frame_png(&served, &slen, &f, 6), 0);
    CHECK_EQ_INT(td_put(&dev, "screencap.png", served, slen), 0);
    td_reset(&dev);
    CHECK_EQ_INT(adbc_screenshot(&png, &plen, dev.conn, ADBC_SHOT_DEVICE_PNG, 15000), 0);
    CHECK(plen == slen && memcmp(png, served, slen) == 0);
    adbc_free(png);
    CHECK(td_calls_are(&dev, "screencap -p\n"));
    /* auto: a raw pixel format adbc does not read -> the device's PNG */
    uint8_t odd[16 + 4 * 8] = {2, 0, 0, 0, 2, 0, 0, 0, 22, 0, 0, 0};
    CHECK_EQ_INT(td_put(&dev, "screencap.raw", odd, sizeof odd), 0);
    td_reset(&dev);
    CHECK_EQ_INT(adbc_screenshot(&png, &plen, dev.conn, ADBC_SHOT_AUTO, 15000), 0);
    CHECK(plen == slen && memcmp(png, served, slen) == 0);
    adbc_free(png);
    CHECK(td_calls_are(&dev, "screencap\nscreencap -p\n"));
    /* auto with a good raw frame stays raw */
    CHECK_EQ_INT(td_put(&dev, "screencap.raw", raw, n), 0);
    td_reset(&dev);
    CHECK_EQ_INT(adbc_screenshot(&png, &plen, dev.conn, ADBC_SHOT_AUTO, 15000), 0);
    CHECK_EQ_INT(act_png_check(png, plen, NULL, NULL), 0);
    adbc_free(png);
    CHECK(td_calls_are(&dev, "screencap\n"));
    /* -p output that is not a PNG */
    CHECK_EQ_INT(td_puts(&dev, "screencap.png", "Error: capture failed\n"), 0);
    CHECK_EQ_INT(adbc_screenshot(&png, &plen, dev.conn, ADBC_SHOT_DEVICE_PNG, 15000),
                 ADBC_EFORMAT);
    CHECK(strstr(adbc_last_error(), "capture failed"));
    td_reset(&dev);
    adbc_free(served);
    free(raw);
    td_drop(&dev, "screencap.png");
    td_drop(&dev, "screencap.raw");
}

/* ---- apps and device ------------------------------------------------------------------ */

TEST(launch_stop_top)
{
    CHECK_EQ_INT(td_puts(&dev, "packages", "com.example.app\n"), 0);
    td_reset(&dev);
    CHECK_EQ_INT(adbc_app_launch(dev.conn, "com.example.app", 15000), 0);
    CHECK_EQ_INT(adbc_app_launch(dev.conn, "com.missing", 15000), ADBC_ENOTFOUND);
    CHECK(strstr(adbc_last_error(), "no launcher activity"));
    CHECK_EQ_INT(adbc_app_stop(dev.conn, "com.example.app", 15000), 0);
    CHECK_EQ_INT(adbc_app_launch(dev.conn, "", 15000), ADBC_EINVAL);
    CHECK(td_calls_are(&dev, "monkey -p com.example.app -c android.intent.category.LAUNCHER 1\n"
                             "monkey -p com.missing -c android.intent.category.LAUNCHER 1\n"
                             "am force-stop com.example.app\n"));
    CHECK_EQ_INT(td_puts(&dev, "dumpsys-activity-activities",
                         "  Display #0 (activities from top to bottom):\n"
                         "    mLastResumedActivity: ActivityRecord{9 u0 com.old/.A t1}\n"
                         "  topResumedActivity=ActivityRecord{c1e5a07 u0 "
                         "com.example.app/.MainActivity t12}\n"),
                 0);
    CHECK_EQ_INT(td_puts(&dev, "dumpsys-window",
                         "  mCurrentFocus=Window{8d2f1b3 u0 "
                         "com.example.app/com.example.app.MainActivity}\n"
                         "  mFocusedApp=ActivityRecord{c1e5a07 u0 com.example.app/.MainActivity "
                         "t12}\n  mOther=1\n"),
                 0);
    td_reset(&dev);
    char *act = NULL, *pkg = NULL;
    CHECK_EQ_INT(adbc_app_top(&act, &pkg, dev.conn, 15000), 0);
    CHECK_STR(act, "com.example.app/.MainActivity");
    CHECK_STR(pkg, "com.example.app");
    adbc_free(act);
    adbc_free(pkg);
    CHECK(td_calls_are(&dev, "dumpsys activity activities\ndumpsys window\n"));
    td_drop(&dev, "dumpsys-activity-activities");
    td_drop(&dev, "dumpsys-window");
    CHECK_EQ_INT(adbc_app_top(&act, NULL, dev.conn, 15000), 0);
    CHECK_STR(act, "");
    adbc_free(act);
}

TEST(intents)
{
    const adbc_intent_extra ex[] = {
        {'s', "greeting", "hello world; $(touch /data/local/tmp/canary)"},
        {'i', "count", "-42"},
        {'b', "flag", "true"},
    };
    adbc_intent in = {.size = sizeof(adbc_intent), .action = "android.intent.action.VIEW",
                      .data = "https://example.com/?a=1&b='2'",
                      .component = "com.example.app/.MainActivity",
                      .extras = ex,
                      .nextras = 3};
    td_reset(&dev);
    CHECK_EQ_INT(adbc_app_start(dev.conn, &in, 15000), 0);
    CHECK(td_calls_are(&dev, "am start -a android.intent.action.VIEW -d "
                             "'https://example.com/?a=1&b='\\''2'\\''' -n "
                             "com.example.app/.MainActivity --es greeting 'hello world; $(touch "
                             "/data/local/tmp/canary)' --ei count -42 --ez flag true\n"));
    CHECK(!td_exists(&dev, "data/local/tmp/canary"));
    adbc_intent only = {.size = sizeof(adbc_intent), .action = "android.settings.SETTINGS"};
    td_reset(&dev);
    CHECK_EQ_INT(adbc_app_start(dev.conn, &only, 15000), 0);
    CHECK(td_calls_are(&dev, "am start -a android.settings.SETTINGS\n"));
    /* bad extras are refused on the host */
    const adbc_intent_extra bad_int[] = {{'i', "n", "12abc"}};
    const adbc_intent_extra bad_bool[] = {{'b', "f", "yes"}};
    const adbc_intent_extra bad_type[] = {{'x', "f", "1"}};
    adbc_intent b1 = {.size = sizeof(adbc_intent), .action = "a", .extras = bad_int, .nextras = 1};
    adbc_intent b2 = {.size = sizeof(adbc_intent), .action = "a", .extras = bad_bool, .nextras = 1};
    adbc_intent b3 = {.size = sizeof(adbc_intent), .action = "a", .extras = bad_type, .nextras = 1};
    adbc_intent empty = {.size = sizeof(adbc_intent)};
    td_reset(&dev);
    CHECK_EQ_INT(adbc_app_start(dev.conn, &b1, 15000), ADBC_EINVAL);
    CHECK_EQ_INT(adbc_app_start(dev.conn, &b2, 15000), ADBC_EINVAL);
    CHECK_EQ_INT(adbc_app_start(dev.conn, &b3, 15000), ADBC_EINVAL);
    CHECK_EQ_INT(adbc_app_start(dev.conn, &empty, 15000), ADBC_EINVAL);
    CHECK(td_calls_are(&dev, ""));
    /* am prints an error and exits 0: still a failure */
    CHECK_EQ_INT(td_puts(&dev, "am-start.out",
                         "Starting: Intent { act=a }\nError: Activity not started, unable to "
                         "resolve Intent { act=a flg=0x10000000 }\n"),
                 0);
    CHECK_EQ_INT(adbc_app_start(dev.conn, &only, 15000), ADBC_EREMOTE);
    CHECK(strstr(adbc_last_error(), "unable to resolve Intent"));
    CHECK_EQ_INT(td_puts(&dev, "am-start.out",
                         "Exception occurred while executing 'start':\n"
                         "java.lang.SecurityException: Permission Denial: starting Intent\n"),
                 0);
    CHECK_EQ_INT(adbc_app_start(dev.conn, &only, 15000), ADBC_EREMOTE);
    CHECK(strstr(adbc_last_error(), "Permission Denial") || strstr(adbc_last_error(), "while "
                                                                   "executing"));
    /* words in the echoed intent are not errors */
    CHECK_EQ_INT(td_puts(&dev, "am-start.out",
                         "Starting: Intent { act=a dat=https://x.test/Error/NullPointerException "
                         "}\n"),
                 0);
    CHECK_EQ_INT(adbc_app_start(dev.conn, &only, 15000), 0);
    td_drop(&dev, "am-start.out");
}

TEST(install_streamed_and_uninstall)
{
    char apk[512];
    snprintf(apk, sizeof apk, "%s/test.apk", dev.dir);
    FILE *f = fopen(apk, "wb");
    CHECK(f != NULL);
    size_t size = 300000; /* several stream writes */
    for (size_t i = 0; i < size; i++)
        fputc((int)((i * 131) >> 3 & 0xff), f);
    fclose(f);
    CHECK(adbc_conn_has_feature(dev.conn, "cmd"));
    CHECK(adbc_conn_has_feature(dev.conn, "abb_exec"));
    td_reset(&dev);
    CHECK_EQ_INT(adbc_app_install(dev.conn, apk, 30000), 0);
    char want[64];
    snprintf(want, sizeof want, "cmd package install -S %zu\n", size);
    CHECK(td_calls_are(&dev, want));
    size_t got_len;
    char *got = td_get(&dev, "cmd-installed.apk", &got_len);
    char *sent = malloc(size);
    f = fopen(apk, "rb");
    CHECK(fread(sent, 1, size, f) == size);
    fclose(f);
    CHECK(got_len == size && memcmp(got, sent, size) == 0);
    free(got);
    free(sent);
    /* the device refuses */
    CHECK_EQ_INT(td_puts(&dev, "install.fail", "Failure [INSTALL_FAILED_OLDER_SDK: Requires "
                                               "newer sdk version #99]\n"),
                 0);
    CHECK_EQ_INT(adbc_app_install(dev.conn, apk, 30000), ADBC_EREMOTE);
    CHECK(strstr(adbc_last_error(), "INSTALL_FAILED_OLDER_SDK"));
    td_drop(&dev, "install.fail");
    CHECK_EQ_INT(adbc_app_install(dev.conn, "/nonexistent/x.apk", 30000), ADBC_ENOTFOUND);
    CHECK_EQ_INT(adbc_app_install(dev.conn, dev.dir, 30000), ADBC_EINVAL);
    /* uninstall */
    CHECK_EQ_INT(td_puts(&dev, "packages", "com.a\ncom.b\n"), 0);
    td_reset(&dev);
    CHECK_EQ_INT(adbc_app_uninstall(dev.conn, "com.a", 15000), 0);
    CHECK_EQ_INT(adbc_app_uninstall(dev.conn, "com.a", 15000), ADBC_EREMOTE);
    CHECK(strstr(adbc_last_error(), "DELETE_FAILED_INTERNAL_ERROR"));
    /* through abb_exec: the package service's shell command, as cmd runs it */
    CHECK(td_calls_are(&dev, "cmd package uninstall com.a\npm uninstall com.a\n"
                             "cmd package uninstall com.a\npm uninstall com.a\n"));
    char *left = td_get(&dev, "packages", NULL);
    CHECK_STR(left, "com.b\n");
    free(left);
    td_drop(&dev, "packages");
}

/* Without the cmd feature: pushed with sync, `pm install -r`, copy removed. */
/* adbc_app_install_apks: pm's flags checked before anything is sent, and
 * several files in one install session, as adb installs them. */
TEST(install_flags_and_session)
{
    char a[512], b[512];
    snprintf(a, sizeof a, "%s/base.apk", dev.dir);
    snprintf(b, sizeof b, "%s/split_x'y.apk", dev.dir); /* a name that needs quoting */
    FILE *f = fopen(a, "wb");
    CHECK(f != NULL);
    fputs("base-apk-bytes", f);
    fclose(f);
    f = fopen(b, "wb");
    CHECK(f != NULL);
    fputs("split", f);
    fclose(f);
    adbc_install_opts o;
    adbc_install_opts_init(&o);
    const char *one[] = {a}, *two[] = {a, b};
    td_reset(&dev);
    o.flags = 0x80u; /* no such flag */
    CHECK_EQ_INT(adbc_app_install_apks(dev.conn, one, 1, &o), ADBC_EINVAL);
    o.flags = ADBC_INSTALL_REPLACE;
    o.user = "10; reboot";
    CHECK_EQ_INT(adbc_app_install_apks(dev.conn, one, 1, &o), ADBC_EINVAL);
    CHECK(strstr(adbc_last_error(), "--user"));
    CHECK_EQ_INT(adbc_app_install_apks(dev.conn, NULL, 1, &o), ADBC_EINVAL);
    CHECK_EQ_INT(adbc_app_install_apks(dev.conn, one, 0, &o), ADBC_EINVAL);
    adbc_install_opts bad = {0}; /* not initialised: refused */
    CHECK_EQ_INT(adbc_app_install_apks(dev.conn, one, 1, &bad), ADBC_EINVAL);
    CHECK(td_calls_are(&dev, "")); /* nothing was sent */
    o.flags = ADBC_INSTALL_REPLACE | ADBC_INSTALL_GRANT | ADBC_INSTALL_DOWNGRADE;
    o.user = "current";
    CHECK_EQ_INT(adbc_app_install_apks(dev.conn, one, 1, &o), 0);
    CHECK(td_calls_are(&dev, "cmd package install -r -d -g --user current -S 14\n"));
    td_reset(&dev);
    o.user = NULL;
    o.flags = ADBC_INSTALL_TEST;
    CHECK_EQ_INT(adbc_app_install_apks(dev.conn, two, 2, &o), 0);
    char *calls = td_get(&dev, "calls", NULL);
    CHECK(calls && strstr(calls, "cmd package install-create -t -S 19\n"));
    CHECK(calls && strstr(calls, " base.apk -\n"));
    CHECK(calls && strstr(calls, "split_x"));
    CHECK(calls && strstr(calls, "install-commit "));
    free(calls);
}

TEST(install_pushed)
{
    td old;
    const char *const args[] = {"--features", "shell_v2,delayed_ack,stat_v2,ls_v2,fixed_push_mkdir",
                                NULL};
    CHECK_EQ_INT(td_start(&old, args), 0);
    CHECK(!adbc_conn_has_feature(old.conn, "cmd"));
    char apk[512];
    snprintf(apk, sizeof apk, "%s/old.apk", old.dir);
    FILE *f = fopen(apk, "wb");
    CHECK(f != NULL);
    size_t size = 200001;
    for (size_t i = 0; i < size; i++)
        fputc((int)(i * 7 & 0xff), f);
    fclose(f);
    int rc = adbc_app_install(old.conn, apk, 30000);
    if (rc != 0)
        fprintf(stderr, "  install: %s\n", adbc_last_error());
    char *calls = td_calls(&old);
    size_t got_len;
    char *got = td_get(&old, "pm-installed.apk", &got_len);
    /* the pushed copy is gone from /data/local/tmp */
    char cmd[600];
    snprintf(cmd, sizeof cmd, "ls %s/data/local/tmp | grep -c adbc-install > /dev/null", old.dir);
    int left = system(cmd) == 0;
    td_stop(&old);
    CHECK_EQ_INT(rc, 0);
    const char *pre = "pm install -r /data/local/tmp/adbc-install-";
    CHECK(strncmp(calls, pre, strlen(pre)) == 0);
    CHECK(strstr(calls, ".apk\n") && !strchr(strchr(calls, '\n') + 1, '\n'));
    CHECK_EQ_INT(got_len, size);
    for (size_t i = 0; i < size; i++)
        CHECK((unsigned char)got[i] == (i * 7 & 0xff));
    CHECK(!left);
    free(calls);
    free(got);
}

TEST(getprop_and_logcat)
{
    char *v = NULL;
    CHECK_EQ_INT(adbc_getprop(&v, dev.conn, "ro.product.brand", 15000), 0);
    CHECK_STR(v, "adbc");
    adbc_free(v);
    CHECK_EQ_INT(adbc_getprop(&v, dev.conn, "no.such.prop", 15000), 0);
    CHECK_STR(v, "");
    adbc_free(v);
    CHECK_EQ_INT(adbc_getprop(&v, dev.conn, "$(touch /data/local/tmp/canary)", 15000), 0);
    adbc_free(v);
    CHECK(!td_exists(&dev, "data/local/tmp/canary"));
    CHECK_EQ_INT(adbc_getprop(&v, dev.conn, NULL, 15000), 0);
    CHECK(strstr(v, "[ro.product.brand]: [adbc]\n"));
    adbc_free(v);
    CHECK_EQ_INT(adbc_getprop(&v, dev.conn, "", 15000), ADBC_EINVAL);
    /* the API level: the connection's (asked by the typing tests above) */
    CHECK_EQ_INT(adbc_device_sdk(NULL, 15000), ADBC_EINVAL);
    CHECK_EQ_INT(adbc_device_sdk(dev.conn, 0), ADBC_EINVAL);
    CHECK_EQ_INT(adbc_device_sdk(dev.conn, 15000), 34);

    CHECK_EQ_INT(td_puts(&dev, "logcat.txt", "l1\nl2\nl3\nl4\nl5\n"), 0);
    CHECK_EQ_INT(td_puts(&dev, "logcat.more", "new1\n"), 0);
    td_reset(&dev);
    char *out;
    size_t len;
    CHECK_EQ_INT(adbc_logcat(&out, &len, dev.conn, 3, 0, 15000), 0);
    CHECK_STR(out, "l3\nl4\nl5\n");
    CHECK_EQ_INT(len, 9);
    adbc_free(out);
    /* following is bounded by the time asked for, though logcat never ends
     * (3 s: time for the stand-in to start and print on a busy machine; the
     * upper bound only tells bounded from never ending) */
    int64_t t0 = core_now_ms();
    CHECK_EQ_INT(adbc_logcat(&out, &len, dev.conn, 2, 3000, 15000), 0);
    int64_t took = core_now_ms() - t0;
    CHECK_STR(out, "l4\nl5\nnew1\n");
    CHECK(took >= 2950 && took < 30000);
    adbc_free(out);
    CHECK_EQ_INT(adbc_logcat(&out, &len, dev.conn, 0, 300, 15000), 0);
    CHECK_STR(out, "l1\nl2\nl3\nl4\nl5\nnew1\n");
    adbc_free(out);
    CHECK(td_calls_are(&dev, "logcat -d -t 3\nlogcat -T 2\nlogcat\n"));
    CHECK_EQ_INT(adbc_logcat(&out, &len, dev.conn, 0, 0, 15000), ADBC_EINVAL);
    CHECK(strstr(adbc_last_error(), "never follows the log open-ended"));
    /* the connection still works after the followed streams were closed */
    CHECK_EQ_INT(adbc_act_tap_xy(dev.conn, 1, 1, &opts), 0);
}

/* Last before teardown: a screencap abandoned at timeout 0 may still run on
 * the device and be logged at any later moment (the device's process is not
 * waited for), so no test after this one reads the record of calls. */
TEST(screenshot_timeout_zero)
{
    uint8_t *png = NULL;
    size_t plen;
    /* the message names the caller's 0 ms, not the 1 ms each inner wait is given */
    CHECK_EQ_INT(adbc_screenshot(&png, &plen, dev.conn, ADBC_SHOT_RAW, 0), ADBC_ETIMEDOUT);
    CHECK(strstr(adbc_last_error(), "within 0 ms") != NULL);
    CHECK(strstr(adbc_last_error(), "1 ms") == NULL);
}

TEST(teardown)
{
    adbc_ui_snap_free(screen);
    td_stop(&dev);
}

int main(void)
{
    RUN(setup);
    if (!dev.conn) {
        printf("the test device did not start\n");
        return 1;
    }
    RUN(taps_swipes_keys);
    RUN(acts_on_refs_unverified);
    RUN(input_failure_is_reported);
    RUN(grid_from_wm_size);
    RUN(type_into_field);
    RUN(type_hostile_text);
    RUN(type_non_ascii);
    RUN(screenshot_raw);
    RUN(screenshot_device_png_and_fallback);
    RUN(launch_stop_top);
    RUN(intents);
    RUN(install_streamed_and_uninstall);
    RUN(install_flags_and_session);
    RUN(install_pushed);
    RUN(getprop_and_logcat);
    RUN(screenshot_timeout_zero);
    RUN(teardown);
    return T_DONE();
}
