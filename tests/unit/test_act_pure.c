/* SPDX-License-Identifier: Apache-2.0 */
/* The act layer's device-free parts: key names, directions and scroll
 * points, the grid, `wm size` parsing, typing command lines (hostile text
 * quoted so the device shell runs nothing of it), the ADB Keyboard
 * broadcast, `dumpsys` top parsing, and the stale-ref matching rule. */
#include "t.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "adbc/act.h"
#include "adbc/error.h"
#include "act/act_internal.h"

void core_test_fail_alloc_at(long n);

/* ---- keys and directions ---------------------------------------------------- */

TEST(key_names)
{
    static const struct {
        const char *name;
        int code;
    } want[] = {
        {"back", 4},      {"home", 3},      {"enter", 66},   {"delete", 67},  {"tab", 61},
        {"escape", 111},  {"up", 19},       {"down", 20},    {"left", 21},    {"right", 22},
        {"space", 62},    {"power", 26},    {"volup", 24},   {"voldown", 25}, {"recent", 187},
        {"BACK", 4},      {"Enter", 66},    {"KEYCODE_HOME", 3}, {"keycode_del", 67},
        {"dpad_up", 19},  {"move_end", 123}, {"0", 0},       {"187", 187},    {"9999", 9999},
        {"KEYCODE_5", 12}, {"keycode_0", 7},  {"KEYCODE_CALL", 5}, {"KEYCODE_ENDCALL", 6},
        {"KEYCODE_POWER", 26}, {"KEYCODE_A", 29}, {"KEYCODE_11", 227}, {"call", 5},
        {"dpad_center", 23}, {"KEYCODE_SOFT_SLEEP", 276}, {"KEYCODE_ALL_APPS", 284},
        {"KEYCODE_VOICE_ASSIST", 231}, {"KEYCODE_UNKNOWN", 0}, {"5", 5},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        int code = -1;
        CHECK_EQ_INT(adbc_keycode_parse(&code, want[i].name), 0);
        CHECK_EQ_INT(code, want[i].code);
    }
    const char *bad[] = {"", "bak", "10000", "-1", "4a", "4 ", " 4", "KEYCODE_", "home;reboot",
                         "99999999999999999999", "KEYCODE_26", "KEYCODE_13", "KEYCODE_-1",
                         "KEYCODE_CALLX", "unknown"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int code = -7;
        CHECK_EQ_INT(adbc_keycode_parse(&code, bad[i]), ADBC_EINVAL);
        CHECK_EQ_INT(code, -7);
    }
    int code;
    CHECK_EQ_INT(adbc_keycode_parse(&code, "bak"), ADBC_EINVAL);
    CHECK(strstr(adbc_last_error(), "volup"));
    CHECK_STR(adbc_keycode_name(4), "back");
    CHECK_STR(adbc_keycode_name(187), "recent");
    CHECK(adbc_keycode_name(5000) == NULL);
    CHECK_STR(adbc_keycode_name(5), "CALL");
    CHECK_STR(adbc_keycode_name(12), "5");
    CHECK(adbc_keycode_name(285) == NULL);
}

TEST(directions_and_scroll_points)
{
    adbc_dir d;
    CHECK_EQ_INT(adbc_dir_parse(&d, "Down"), 0);
    CHECK_EQ_INT(d, ADBC_DIR_DOWN);
    CHECK_EQ_INT(adbc_dir_parse(&d, "LEFT"), 0);
    CHECK_EQ_INT(d, ADBC_DIR_LEFT);
    CHECK_EQ_INT(adbc_dir_parse(&d, "sideways"), ADBC_EINVAL);
    int sx, sy, ex, ey;
    /* box [0,300][1080,2100]: centre (540,1200); a third of the way to the
     * top edge is 1200 - 900/3 = 900 */
    CHECK_EQ_INT(adbc_scroll_points(&sx, &sy, &ex, &ey, 0, 300, 1080, 2100, ADBC_DIR_DOWN), 0);
    CHECK(sx == 540 && sy == 1200 && ex == 540 && ey == 900);
    CHECK_EQ_INT(adbc_scroll_points(&sx, &sy, &ex, &ey, 0, 300, 1080, 2100, ADBC_DIR_UP), 0);
    CHECK(sx == 540 && sy == 1200 && ex == 540 && ey == 1500);
    CHECK_EQ_INT(adbc_scroll_points(&sx, &sy, &ex, &ey, 0, 300, 1080, 2100, ADBC_DIR_RIGHT), 0);
    CHECK(sx == 540 && sy == 1200 && ex == 360 && ey == 1200);
    CHECK_EQ_INT(adbc_scroll_points(&sx, &sy, &ex, &ey, 0, 300, 1080, 2100, ADBC_DIR_LEFT), 0);
    CHECK(sx == 540 && sy == 1200 && ex == 720 && ey == 1200);
    /* empty and tiny boxes, hostile bounds */
    CHECK_EQ_INT(adbc_scroll_points(&sx, &sy, &ex, &ey, 10, 10, 10, 500, ADBC_DIR_DOWN),
                 ADBC_EINVAL);
    CHECK_EQ_INT(adbc_scroll_points(&sx, &sy, &ex, &ey, 0, 0, 100, 2, ADBC_DIR_DOWN),
                 ADBC_EINVAL);
    CHECK_EQ_INT(adbc_scroll_points(&sx, &sy, &ex, &ey, 0, 0, 100, 100, (adbc_dir)9),
                 ADBC_EINVAL);
    CHECK_EQ_INT(adbc_scroll_points(&sx, &sy, &ex, &ey, -2147483647 - 1, 0, 2147483647, 100,
                                    ADBC_DIR_LEFT),
                 0);
}

/* ---- grid ------------------------------------------------------------------------ */

TEST(grid_layout)
{
    adbc_grid g;
    CHECK_EQ_INT(adbc_grid_make(&g, 1080, 2400), 0);
    CHECK_EQ_INT(g.cols, 10);
    CHECK_EQ_INT(g.rows, 22); /* 2400 / 108 = 22.2 */
    int x, y;
    CHECK_EQ_INT(adbc_grid_cell(&x, &y, &g, "A1"), 0);
    CHECK(x == 53 && y == 54); /* [0,107] x [0,108] */
    CHECK_EQ_INT(adbc_grid_cell(&x, &y, &g, "C5"), 0);
    CHECK(x == 269 && y == 490); /* [216,323] x [436,544] */
    CHECK_EQ_INT(adbc_grid_cell(&x, &y, &g, "j22"), 0);
    CHECK(x == 1025 && y == 2344); /* [972,1079] x [2290,2399] */
    const char *bad[] = {"", "A", "K1", "A0", "A23", "5C", "C5x", "C-1", "C 5", "@1", "C0005x",
                         "A9999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK_EQ_INT(adbc_grid_cell(&x, &y, &g, bad[i]), ADBC_EINVAL);
    CHECK(strstr(adbc_last_error(), "1-22"));
    /* landscape and tiny screens, rounding of the row count */
    CHECK_EQ_INT(adbc_grid_make(&g, 2400, 1080), 0);
    CHECK_EQ_INT(g.rows, 5); /* 1080 / 240 = 4.5 -> 5 */
    CHECK_EQ_INT(adbc_grid_make(&g, 720, 1600), 0);
    CHECK_EQ_INT(g.rows, 22);
    CHECK_EQ_INT(adbc_grid_make(&g, 1000, 10), 0);
    CHECK_EQ_INT(g.rows, 1);
    CHECK_EQ_INT(adbc_grid_make(&g, 9, 100), ADBC_EINVAL);
    CHECK_EQ_INT(adbc_grid_make(&g, 0, 100), ADBC_EINVAL);
    CHECK_EQ_INT(adbc_grid_make(&g, 100, 70000), ADBC_EINVAL);
    /* every cell's centre lies inside the screen, and cells tile it */
    CHECK_EQ_INT(adbc_grid_make(&g, 1081, 2401), 0);
    char name[16];
    for (int c = 0; c < g.cols; c++)
        for (int r = 1; r <= g.rows; r++) {
            snprintf(name, sizeof name, "%c%d", 'A' + c, r);
            CHECK_EQ_INT(adbc_grid_cell(&x, &y, &g, name), 0);
            CHECK(x >= c * 1081 / 10 && x < (c + 1) * 1081 / 10);
            CHECK(y >= (r - 1) * 2401 / g.rows && y < r * 2401 / g.rows);
        }
}

TEST(grid_legend)
{
    adbc_grid g;
    CHECK_EQ_INT(adbc_grid_make(&g, 1080, 2400), 0);
    char *leg;
    CHECK_EQ_INT(adbc_grid_legend(&leg, &g), 0);
    static const char head[] = "grid 10x22 on a 1080x2400 screen: columns A-J, rows 1-22,";
    CHECK(strncmp(leg, head, sizeof head - 1) == 0);
    CHECK(strstr(leg, "\nA x 0-107 centre 53\n"));
    CHECK(strstr(leg, "\nC x 216-323 centre 269\n"));
    CHECK(strstr(leg, "\nJ x 972-1079 centre 1025\n"));
    CHECK(strstr(leg, "\n5 y 436-544 centre 490\n"));
    CHECK(strstr(leg, "\n22 y 2290-2399 centre 2344\n"));
    size_t lines = 0;
    for (const char *p = leg; *p; p++)
        lines += *p == '\n';
    CHECK_EQ_INT(lines, 1 + 10 + 22);
    adbc_free(leg);
}

TEST(wm_size)
{
    int w = 0, h = 0;
    const char *phys = "Physical size: 1080x2400\n";
    CHECK_EQ_INT(adbc_wm_size_parse(&w, &h, phys, strlen(phys)), 0);
    CHECK(w == 1080 && h == 2400);
    const char *over = "Physical size: 1440x3200\nOverride size: 1080x2400\n";
    CHECK_EQ_INT(adbc_wm_size_parse(&w, &h, over, strlen(over)), 0);
    CHECK(w == 1080 && h == 2400);
    const char *crlf = "Physical size: 720x1280\r\n";
    CHECK_EQ_INT(adbc_wm_size_parse(&w, &h, crlf, strlen(crlf)), 0);
    CHECK(w == 720 && h == 1280);
    const char *nonl = "Physical size: 800x600";
    CHECK_EQ_INT(adbc_wm_size_parse(&w, &h, nonl, strlen(nonl)), 0);
    CHECK(w == 800 && h == 600);
    w = h = -1;
    const char *bad[] = {"", "size: 1x1", "Physical size: 1080\n", "Physical size: x2400\n",
                         "Physical size: 0x2400\n", "Physical size: 1080x99999999\n",
                         "Physical size: 1080x2400junk\n", "Physical size: -1080x2400\n",
                         "Error: no display\n", "xPhysical size: 1x1\n"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK_EQ_INT(adbc_wm_size_parse(&w, &h, bad[i], strlen(bad[i])), ADBC_EFORMAT);
    CHECK(w == -1 && h == -1);
    /* a damaged override falls back to the physical size */
    const char *half = "Physical size: 1080x2400\nOverride size: 1080x\n";
    CHECK_EQ_INT(adbc_wm_size_parse(&w, &h, half, strlen(half)), 0);
    CHECK(w == 1080 && h == 2400);
}

/* ---- typing ------------------------------------------------------------------------ */

static char *typed(const char *text, int sdk)
{
    char *cmd = NULL;
    if (act_type_command(&cmd, text, sdk) != 0)
        return NULL;
    return cmd;
}

TEST(type_command_lines)
{
    char *c;
    CHECK_STR(c = typed("hello", 34), "input text 'hello'");
    free(c);
    CHECK_STR(c = typed("hello world", 34), "input text 'hello%sworld'");
    free(c);
    CHECK_STR(c = typed("hello world", 35),
              "input text 'hello' && input keyevent 62 && input text 'world'");
    free(c);
    CHECK_STR(c = typed("a  b ", 36), "input text 'a' && input keyevent 62 62 && input text "
                                      "'b' && input keyevent 62");
    free(c);
    /* a literal %s is split so `input` does not make it a space */
    CHECK_STR(c = typed("50%s", 34), "input text '50%' && input text 's'");
    free(c);
    CHECK_STR(c = typed("5% off", 34), "input text '5%%soff'");
    free(c);
    CHECK_STR(c = typed("5% off", 35),
              "input text '5%' && input keyevent 62 && input text 'off'");
    free(c);
    CHECK_STR(c = typed("line1\nline2\tx", 34),
              "input text 'line1' && input keyevent 66 && input text 'line2' && input "
              "keyevent 61 && input text 'x'");
    free(c);
    CHECK_STR(c = typed("", 34), "");
    free(c);
    CHECK_STR(c = typed("it's", 34), "input text 'it'\\''s'");
    free(c);
    CHECK(typed("h\xc3\xa9llo", 34) == NULL);
    CHECK(strstr(adbc_last_error(), "ADB Keyboard"));
    CHECK(typed("bell\a", 34) == NULL);
    CHECK(act_text_plain("a b\n\t~!"));
    CHECK(!act_text_plain("\x7f"));
    CHECK(!act_text_plain("\xe4\xbd\xa0"));
}

static int canary_exists(const char *dir)
{
    char p[512];
    snprintf(p, sizeof p, "%s/canary", dir);
    struct stat st;
    return stat(p, &st) == 0;
}

/* Run cmd with a real POSIX shell in which `input` prints its arguments as
 * [arg] and nothing else exists; return what it printed. */
static char *run_in_sh(const char *cmd, const char *dir)
{
    char *script = NULL;
    size_t n = strlen(cmd) + 512;
    script = malloc(n);
    snprintf(script, n,
             "cd '%s' || exit 9; input() { for a in \"$@\"; do printf '[%%s]' \"$a\"; done; "
             "printf '\\n'; }; %s",
             dir, cmd);
    int fd[2];
    if (pipe(fd) != 0)
        return NULL;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fd[1], 1);
        close(fd[0]);
        execl("/bin/sh", "sh", "-c", script, (char *)NULL);
        _exit(127);
    }
    close(fd[1]);
    free(script);
    char *out = calloc(1, 65536);
    size_t len = 0;
    ssize_t r;
    while ((r = read(fd[0], out + len, 65535 - len)) > 0)
        len += (size_t)r;
    close(fd[0]);
    int st;
    waitpid(pid, &st, 0);
    return out;
}

TEST(type_hostile_text_runs_nothing)
{
    char dir[] = "/tmp/adbc-act-quote.XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    static const struct {
        const char *text;
        const char *args34; /* what `input` must receive, sdk 34 */
        const char *args35; /* sdk 35 */
    } cases[] = {
        {"; touch canary", "[text][;%stouch%scanary]\n",
         "[text][;]\n[keyevent][62]\n[text][touch]\n[keyevent][62]\n[text][canary]\n"},
        {"a && touch canary", "[text][a%s&&%stouch%scanary]\n", NULL},
        {"$(touch canary)", "[text][$(touch%scanary)]\n", NULL},
        {"`touch canary`", "[text][`touch%scanary`]\n", NULL},
        {"'; touch canary; '", "[text][';%stouch%scanary;%s']\n", NULL},
        {"\"$(touch canary)\"", "[text][\"$(touch%scanary)\"]\n", NULL},
        {"back\\slash \\' \\\"", "[text][back\\slash%s\\'%s\\\"]\n", NULL},
        {"100%s sure", "[text][100%]\n[text][s%ssure]\n", NULL},
        {"x\ntouch canary", "[text][x]\n[keyevent][66]\n[text][touch%scanary]\n", NULL},
        {"| touch canary > /dev/null", "[text][|%stouch%scanary%s>%s/dev/null]\n", NULL},
        {"${IFS}touch${IFS}canary", "[text][${IFS}touch${IFS}canary]\n", NULL},
        {"*", "[text][*]\n", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        for (int sdk = 34; sdk <= 35; sdk++) {
            char *cmd = typed(cases[i].text, sdk);
            CHECK(cmd != NULL);
            char *out = run_in_sh(cmd, dir);
            CHECK(out != NULL);
            if (canary_exists(dir)) {
                fprintf(stderr, "  text %zu ran a command: %s\n", i, cmd);
                CHECK(0);
            }
            const char *want = sdk == 34 ? cases[i].args34 : cases[i].args35;
            if (want && strcmp(out, want) != 0) {
                fprintf(stderr, "  text %zu sdk %d: got %s  want %s", i, sdk, out, want);
                CHECK(0);
            }
            adbc_free(out);
            free(cmd);
        }
    }
    rmdir(dir);
}

TEST(clear_and_adbkbd_commands)
{
    char *c;
    CHECK_EQ_INT(act_clear_command(&c, 0), 0);
    CHECK_STR(c, "input keyevent 123");
    free(c);
    CHECK_EQ_INT(act_clear_command(&c, 3), 0);
    CHECK_STR(c, "input keyevent 123 67 67 67");
    free(c);
    CHECK_EQ_INT(act_utf8_chars("h\xc3\xa9llo \xf0\x9f\x94\xa5"), 7);
    CHECK_EQ_INT(act_utf8_chars(""), 0);
    CHECK_EQ_INT(act_adbkbd_command(&c, "h\xc3\xa9llo"), 0);
    CHECK_STR(c, "am broadcast -a ADB_INPUT_B64 --es msg 'aMOpbGxv'");
    free(c);
    CHECK_EQ_INT(act_adbkbd_command(&c, "\xe4\xbd\xa0\xe5\xa5\xbd'$(x)"), 0);
    CHECK_STR(c, "am broadcast -a ADB_INPUT_B64 --es msg '5L2g5aW9JyQoeCk='");
    free(c);
}

/* ---- top ------------------------------------------------------------------------ */

static int top(const char *text, const char *act, const char *pkg)
{
    char *a = NULL, *p = NULL;
    int rc = act_top_parse(&a, &p, text, strlen(text));
    int ok = rc == 0 && a && p && strcmp(a, act) == 0 && strcmp(p, pkg) == 0;
    if (!ok)
        fprintf(stderr, "  got \"%s\" \"%s\", want \"%s\" \"%s\"\n", a ? a : "?", p ? p : "?",
                act, pkg);
    free(a);
    free(p);
    return ok;
}

TEST(top_parsing)
{
    CHECK(top("  topResumedActivity=ActivityRecord{c1e5a07 u0 com.android.settings/.Settings "
              "t12}\n    mResumedActivity: ActivityRecord{c1e5a07 u0 "
              "com.android.settings/.Settings t12}\n  mCurrentFocus=Window{8d2f1b3 u0 "
              "com.android.settings/com.android.settings.Settings}\n  "
              "mFocusedApp=ActivityRecord{c1e5a07 u0 com.android.settings/.Settings t12}\n",
              "com.android.settings/.Settings", "com.android.settings"));
    /* Android 7: focus on the status bar, app token wrapped */
    CHECK(top("    mResumedActivity: ActivityRecord{3f0b7c1 u0 "
              "com.google.android.apps.nexuslauncher/.NexusLauncherActivity t2}\n  "
              "mCurrentFocus=Window{52ad4a3 u0 StatusBar}\n  mFocusedApp=AppWindowToken{6e3cf0b "
              "token=Token{c9a4ada ActivityRecord{3f0b7c1 u0 "
              "com.google.android.apps.nexuslauncher/.NexusLauncherActivity t2}}}\n",
              "com.google.android.apps.nexuslauncher/.NexusLauncherActivity",
              "com.google.android.apps.nexuslauncher"));
    /* a dialog of another package has focus */
    CHECK(top("  ResumedActivity: ActivityRecord{1 u10 com.a/.Main t5}\n  mCurrentFocus=Window{2 "
              "u10 com.b/com.b.Dialog}\n",
              "com.a/.Main", "com.b"));
    /* only a last-resumed record: not the resumed one */
    CHECK(top("    mLastResumedActivity: ActivityRecord{1 u0 com.old/.A t3}\n", "", ""));
    CHECK(top("", "", ""));
    CHECK(top("mCurrentFocus=null\nmFocusedApp=null\n", "", ""));
    CHECK(top("ResumedActivity: ActivityRecord{broken\nmCurrentFocus=Window{x u0 }\n", "", ""));
}

/* ---- stale-ref matching --------------------------------------------------------- */

#define ROOT_OPEN                                                                              \
    "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">"        \
    "<node class=\"android.widget.FrameLayout\" package=\"com.x\" bounds=\"[0,0][1080,2400]\">"
#define ROOT_CLOSE "</node></hierarchy>"
#define BUTTON(text, b)                                                                       \
    "<node class=\"android.widget.Button\" text=\"" text "\" resource-id=\"com.x:id/b\" "      \
    "package=\"com.x\" clickable=\"true\" enabled=\"true\" bounds=\"" b "\"/>"

static adbc_ui_snap *snap_of(const char *xml)
{
    adbc_ui_snap *s = NULL;
    if (adbc_ui_snap_parse(&s, xml, strlen(xml)) != 0)
        return NULL;
    return s;
}

/* Ref of the record with this text in s. */
static const adbc_ui_ref *ref_with(const adbc_ui_snap *s, const char *text)
{
    const adbc_ui_reftab *t = adbc_ui_snap_refs(s);
    for (size_t i = 1; i <= adbc_ui_reftab_count(t); i++) {
        const adbc_ui_ref *r = adbc_ui_reftab_get(t, (int)i);
        if (strcmp(r->text, text) == 0)
            return r;
    }
    return NULL;
}

/* Match old (by text) from screen a in screen b. Returns the rc; *x,*y the
 * point found. */
static int match(const char *a, const char *b, const char *text, int *x, int *y,
                 adbc_act_how *how)
{
    adbc_ui_snap *sa = snap_of(a), *sb = snap_of(b);
    int rc = -100;
    if (sa && sb) {
        const adbc_ui_ref *old = ref_with(sa, text), *found = NULL;
        if (old) {
            rc = adbc_act_match(&found, how, adbc_ui_snap_refs(sb), old);
            if (rc == 0) {
                *x = found->x;
                *y = found->y;
            }
        }
    }
    adbc_ui_snap_free(sa);
    adbc_ui_snap_free(sb);
    return rc;
}

TEST(stale_ref_rule)
{
    const char *before = ROOT_OPEN BUTTON("Cancel", "[100,2000][500,2200]")
        BUTTON("Send", "[600,2000][1000,2200]") ROOT_CLOSE;
    int x = 0, y = 0;
    adbc_act_how how = ADBC_ACT_UNVERIFIED;
    /* same screen: same element, same place */
    CHECK_EQ_INT(match(before, before, "Send", &x, &y, &how), 0);
    CHECK(x == 800 && y == 2100 && how == ADBC_ACT_SAME);
    /* moved 700 px up (scrolled): the identity token finds it */
    const char *moved = ROOT_OPEN BUTTON("Cancel", "[100,1300][500,1500]")
        BUTTON("Send", "[600,1300][1000,1500]") ROOT_CLOSE;
    CHECK_EQ_INT(match(before, moved, "Send", &x, &y, &how), 0);
    CHECK(x == 800 && y == 1400 && how == ADBC_ACT_MOVED);
    /* gone: refused, and the message names it */
    const char *gone = ROOT_OPEN BUTTON("Cancel", "[100,2000][500,2200]") ROOT_CLOSE;
    CHECK_EQ_INT(match(before, gone, "Send", &x, &y, &how), ADBC_ESTALE);
    CHECK(strstr(adbc_last_error(), "stale ref 2 (Button \"Send\")"));
    CHECK(strstr(adbc_last_error(), "not on the screen"));
    /* moved and now twice on the screen: refused, never a guess */
    const char *twice = ROOT_OPEN BUTTON("Send", "[600,300][1000,500]")
        BUTTON("Send", "[600,1300][1000,1500]") ROOT_CLOSE;
    CHECK_EQ_INT(match(before, twice, "Send", &x, &y, &how), ADBC_ESTALE);
    CHECK(strstr(adbc_last_error(), "2 elements"));
    CHECK(strstr(adbc_last_error(), "will not guess"));
    /* still in place and a copy appeared elsewhere: the exact one */
    const char *copy = ROOT_OPEN BUTTON("Send", "[600,300][1000,500]")
        BUTTON("Send", "[600,2000][1000,2200]") ROOT_CLOSE;
    CHECK_EQ_INT(match(before, copy, "Send", &x, &y, &how), 0);
    CHECK(x == 800 && y == 2100 && how == ADBC_ACT_SAME);
    /* two identical at the very place: refused */
    const char *stacked = ROOT_OPEN BUTTON("Send", "[600,2000][1000,2200]")
        BUTTON("Send", "[600,2000][1000,2200]") ROOT_CLOSE;
    CHECK_EQ_INT(match(before, stacked, "Send", &x, &y, &how), ADBC_ESTALE);
    /* same place, other text: a different element */
    const char *changed = ROOT_OPEN BUTTON("Cancel", "[100,2000][500,2200]")
        BUTTON("Delete", "[600,2000][1000,2200]") ROOT_CLOSE;
    CHECK_EQ_INT(match(before, changed, "Send", &x, &y, &how), ADBC_ESTALE);
    /* a small shift inside the 16 px grid cell or across it */
    const char *nudged = ROOT_OPEN BUTTON("Send", "[601,2001][1001,2201]") ROOT_CLOSE;
    CHECK_EQ_INT(match(before, nudged, "Send", &x, &y, &how), 0);
    CHECK(x == 801 && y == 2101);
    /* resized (other identity) and moved: refused */
    const char *resized = ROOT_OPEN BUTTON("Send", "[0,0][1080,800]") ROOT_CLOSE;
    CHECK_EQ_INT(match(before, resized, "Send", &x, &y, &how), ADBC_ESTALE);
}

/* Every allocation of the command builders failing in turn: a clean
 * ADBC_ENOMEM, no output, nothing leaked (ASan), then success. */
TEST(allocation_failures)
{
    adbc_grid g;
    CHECK_EQ_INT(adbc_grid_make(&g, 1080, 2400), 0);
    const char *top_text = "topResumedActivity=ActivityRecord{1 u0 com.a/.B t1}\n"
                           "mCurrentFocus=Window{2 u0 com.a/com.a.B}\n";
    for (int which = 0; which < 5; which++) {
        int done = 0;
        for (long n = 1; n < 400 && !done; n++) {
            char *out = NULL, *out2 = NULL;
            core_test_fail_alloc_at(n);
            int rc;
            switch (which) {
            case 0: rc = act_type_command(&out, "a b%s 'c' $(d)\nline two", 35); break;
            case 1: rc = act_adbkbd_command(&out, "h\xc3\xa9llo 'x'"); break;
            case 2: rc = act_clear_command(&out, 300); break;
            case 3: rc = adbc_grid_legend(&out, &g); break;
            default: rc = act_top_parse(&out, &out2, top_text, strlen(top_text)); break;
            }
            core_test_fail_alloc_at(0);
            if (rc == 0) {
                CHECK(out != NULL);
                done = 1;
            } else {
                CHECK_EQ_INT(rc, ADBC_ENOMEM);
                CHECK(out == NULL && out2 == NULL);
            }
            adbc_free(out);
            free(out2);
        }
        CHECK(done);
    }
}

int main(void)
{
    RUN(key_names);
    RUN(directions_and_scroll_points);
    RUN(grid_layout);
    RUN(grid_legend);
    RUN(wm_size);
    RUN(type_command_lines);
    RUN(type_hostile_text_runs_nothing);
    RUN(clear_and_adbkbd_commands);
    RUN(top_parsing);
    RUN(stale_ref_rule);
    RUN(allocation_failures);
    return T_DONE();
}
