/* SPDX-License-Identifier: Apache-2.0 */
/* The wait loop, driven by a scripted sequence of screens instead of a
 * device: conditions, the poll interval, the deadline, passing failures
 * and what the timeout message says. */
#include <time.h>

#include "t.h"
#include "core/internal.h"
#include "ui/ui_internal.h"
#include "ui_test_util.h"

typedef struct script {
    const char *const *screens; /* NULL entries: a failing snapshot */
    int n, next, calls;
    int fail_code;
    int last_timeout;
} script;

static int from_script(adbc_ui_snap **out, void *user, int timeout_ms)
{
    script *sc = user;
    sc->calls++;
    sc->last_timeout = timeout_ms;
    const char *x = sc->screens[sc->next < sc->n ? sc->next : sc->n - 1];
    if (sc->next < sc->n)
        sc->next++;
    if (!x)
        return core_fail(sc->fail_code, "scripted failure");
    return adbc_ui_snap_parse(out, x, strlen(x));
}

static long long ms_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

#define SCREEN(body) "<hierarchy><node class=\"F\">" body "</node></hierarchy>"
static const char *loading = SCREEN("<node class=\"T\" text=\"Loading\"/>");
static const char *done = SCREEN("<node class=\"T\" text=\"Done\"/><node class=\"B\" text=\"OK\" clickable=\"true\"/>");
static const char *sw_off = SCREEN("<node class=\"android.widget.Switch\" text=\"Wi-Fi\" clickable=\"true\" "
                                   "checked=\"false\" bounds=\"[0,0][100,50]\"/>");
static const char *sw_on = SCREEN("<node class=\"android.widget.Switch\" text=\"Wi-Fi\" clickable=\"true\" "
                                  "checked=\"true\" bounds=\"[0,0][100,50]\"/>");

TEST(text_appears)
{
    const char *seq[] = {loading, loading, NULL, done};
    script sc = {seq, 4, 0, 0, ADBC_EREMOTE, 0};
    ui_wait_spec w = {.kind = UI_WAIT_TEXT, .text = "Done"};
    adbc_ui_snap *s = NULL;
    long long t0 = ms_now();
    CHECK_EQ_INT(ui_wait(&s, from_script, &sc, &w, 5000, 20, 1000), 0);
    CHECK(ms_now() - t0 >= 3 * 20 - 5); /* three pauses between four snapshots */
    CHECK_EQ_INT(sc.calls, 4);
    CHECK(s);
    CHECK(strstr(adbc_ui_snap_text(s, NULL), "Done") != NULL);
    adbc_ui_snap_free(s);
}

TEST(text_gone_and_match_flags)
{
    const char *seq[] = {done, done, loading};
    script sc = {seq, 3, 0, 0, 0, 0};
    ui_wait_spec w = {.kind = UI_WAIT_TEXT, .text = "ok", .flags = ADBC_UI_WAIT_GONE | ADBC_UI_MATCH_NOCASE};
    CHECK_EQ_INT(ui_wait(NULL, from_script, &sc, &w, 5000, 0, 1000), 0);
    CHECK_EQ_INT(sc.calls, 3);
    /* Contains: "Load" is in "Loading". */
    script sc2 = {seq + 2, 1, 0, 0, 0, 0};
    ui_wait_spec w2 = {.kind = UI_WAIT_TEXT, .text = "Load", .flags = ADBC_UI_MATCH_CONTAINS};
    CHECK_EQ_INT(ui_wait(NULL, from_script, &sc2, &w2, 0, 0, 1000), 0);
}

TEST(timeout_says_what_was_seen)
{
    const char *seq[] = {loading};
    script sc = {seq, 1, 0, 0, 0, 0};
    ui_wait_spec w = {.kind = UI_WAIT_TEXT, .text = "Done"};
    long long t0 = ms_now();
    CHECK_EQ_INT(ui_wait(NULL, from_script, &sc, &w, 300, 50, 1000), ADBC_ETIMEDOUT);
    long long took = ms_now() - t0;
    CHECK(took >= 290 && took < 30000); /* bounded, however busy the machine */
    /* about one every 50 ms: at most 8 in 300 ms. A machine busy enough
     * to stall the test past the deadline after its first look leaves one
     * (that a wait looks again is text_appears' check, with no clock). */
    CHECK(sc.calls >= 1 && sc.calls <= 8);
    CHECK(strstr(adbc_last_error(), "text \"Done\" did not appear within 300 ms") != NULL);
    if (!strstr(adbc_last_error(), "the screen showed: - F | - T \"Loading\""))
        fprintf(stderr, "  message: %s\n", adbc_last_error());
    CHECK(strstr(adbc_last_error(), "the screen showed: - F | - T \"Loading\"") != NULL);
    /* Each snapshot is bounded by what is left of the wait. */
    CHECK(sc.last_timeout <= 300);

    script sc2 = {seq, 1, 0, 0, 0, 0};
    const char *seq2[] = {done};
    sc2.screens = seq2;
    ui_wait_spec g = {.kind = UI_WAIT_TEXT, .text = "OK", .flags = ADBC_UI_WAIT_GONE};
    CHECK_EQ_INT(ui_wait(NULL, from_script, &sc2, &g, 100, 30, 1000), ADBC_ETIMEDOUT);
    CHECK(strstr(adbc_last_error(), "did not go away") != NULL);
    CHECK(strstr(adbc_last_error(), "still on the screen (1 element)") != NULL);
}

TEST(zero_timeout_looks_once)
{
    const char *seq[] = {loading, done};
    script sc = {seq, 2, 0, 0, 0, 0};
    ui_wait_spec w = {.kind = UI_WAIT_TEXT, .text = "Done"};
    CHECK_EQ_INT(ui_wait(NULL, from_script, &sc, &w, 0, 10, 1000), ADBC_ETIMEDOUT);
    CHECK_EQ_INT(sc.calls, 1);
    CHECK_EQ_INT(sc.last_timeout, 1000);
    CHECK(strstr(adbc_last_error(), "(1 snapshot)") != NULL);
}

TEST(failures_pass_or_end_the_wait)
{
    /* uiautomator errors and timeouts are retried: two failures, then the
     * text (a long bound, never reached: the count is the check, not the
     * clock, so a busy machine cannot change it). */
    const char *retried[] = {NULL, NULL, SCREEN("<node class=\"T\" text=\"x\"/>")};
    ui_wait_spec w = {.kind = UI_WAIT_TEXT, .text = "x"};
    script sc0 = {retried, 3, 0, 0, ADBC_ETIMEDOUT, 0};
    CHECK_EQ_INT(ui_wait(NULL, from_script, &sc0, &w, 30000, 1, 1000), 0);
    CHECK_EQ_INT(sc0.calls, 3);
    /* Failures until the deadline: the last is reported. */
    const char *seq[] = {NULL};
    script sc = {seq, 1, 0, 0, ADBC_EREMOTE, 0};
    CHECK_EQ_INT(ui_wait(NULL, from_script, &sc, &w, 150, 20, 1000), ADBC_ETIMEDOUT);
    CHECK(sc.calls >= 1);
    CHECK(strstr(adbc_last_error(), "no snapshot succeeded") != NULL);
    CHECK(strstr(adbc_last_error(), "the last one failed: scripted failure") != NULL);
    /* A failure after a good snapshot keeps what that one showed. */
    const char *mixed[] = {loading, NULL};
    script sc3 = {mixed, 2, 0, 0, ADBC_ETIMEDOUT, 0};
    CHECK_EQ_INT(ui_wait(NULL, from_script, &sc3, &w, 100, 20, 1000), ADBC_ETIMEDOUT);
    CHECK(strstr(adbc_last_error(), "the screen showed: - F | - T \"Loading\"; then a snapshot "
                                    "failed: scripted failure") != NULL);
    /* A closed connection ends it at once, with its own code and message. */
    script sc2 = {seq, 1, 0, 0, ADBC_ECLOSED, 0};
    CHECK_EQ_INT(ui_wait(NULL, from_script, &sc2, &w, 5000, 20, 1000), ADBC_ECLOSED);
    CHECK_EQ_INT(sc2.calls, 1);
    CHECK_STR(adbc_last_error(), "scripted failure");
}

TEST(state_by_ref_from_an_earlier_snapshot)
{
    adbc_ui_snap *first = parse_str(sw_off);
    CHECK(first);
    const adbc_ui_ref *r = adbc_ui_reftab_get(adbc_ui_snap_refs(first), 1);
    CHECK(r && !(r->states & ADBC_UI_CHECKED));
    const char *seq[] = {sw_off, loading, sw_on};
    script sc = {seq, 3, 0, 0, 0, 0};
    ui_wait_spec w = {.kind = UI_WAIT_STATE, .ref = r, .cond = ADBC_UI_COND_CHECKED};
    adbc_ui_snap *s = NULL;
    CHECK_EQ_INT(ui_wait(&s, from_script, &sc, &w, 5000, 0, 1000), 0);
    CHECK_EQ_INT(sc.calls, 3);
    adbc_ui_snap_free(s);
    /* Never checked: the message names the element and its state. */
    const char *seq2[] = {sw_off};
    script sc2 = {seq2, 1, 0, 0, 0, 0};
    CHECK_EQ_INT(ui_wait(NULL, from_script, &sc2, &w, 100, 20, 1000), ADBC_ETIMEDOUT);
    CHECK(strstr(adbc_last_error(), "ref 1 (Switch \"Wi-Fi\") did not become checked") != NULL);
    CHECK(strstr(adbc_last_error(), "it was still unchecked") != NULL);
    /* Gone from the screen. */
    const char *seq3[] = {loading};
    script sc3 = {seq3, 1, 0, 0, 0, 0};
    ui_wait_spec e = {.kind = UI_WAIT_STATE, .ref = r, .cond = ADBC_UI_COND_ENABLED};
    CHECK_EQ_INT(ui_wait(NULL, from_script, &sc3, &e, 60, 20, 1000), ADBC_ETIMEDOUT);
    CHECK(strstr(adbc_last_error(), "it was not on the screen") != NULL);
    /* Each condition. */
    static const struct { adbc_ui_cond c; const char *screen; } ok[] = {
        {ADBC_UI_COND_UNCHECKED, "checked=\"false\""}, {ADBC_UI_COND_ENABLED, "enabled=\"true\""},
        {ADBC_UI_COND_DISABLED, "enabled=\"false\""}, {ADBC_UI_COND_FOCUSED, "focused=\"true\""},
        {ADBC_UI_COND_UNFOCUSED, "focused=\"false\""}, {ADBC_UI_COND_SELECTED, "selected=\"true\""},
        {ADBC_UI_COND_UNSELECTED, "selected=\"false\""}};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        char x[400];
        snprintf(x, sizeof x, SCREEN("<node class=\"android.widget.Switch\" text=\"Wi-Fi\" "
                                     "clickable=\"true\" %s bounds=\"[0,0][100,50]\"/>"), ok[i].screen);
        const char *one[] = {x};
        script s1 = {one, 1, 0, 0, 0, 0};
        ui_wait_spec c = {.kind = UI_WAIT_STATE, .ref = r, .cond = ok[i].c};
        CHECK_EQ_INT(ui_wait(NULL, from_script, &s1, &c, 0, 0, 1000), 0);
    }
    adbc_ui_snap_free(first);
}

TEST(stable_needs_two_equal_snapshots_in_a_row)
{
    const char *seq[] = {loading, done, NULL, done, done};
    script sc = {seq, 5, 0, 0, ADBC_EREMOTE, 0};
    ui_wait_spec w = {.kind = UI_WAIT_STABLE};
    CHECK_EQ_INT(ui_wait(NULL, from_script, &sc, &w, 5000, 0, 1000), 0);
    CHECK_EQ_INT(sc.calls, 5); /* done, failure, done does not count */
    const char *flip[] = {loading, done, loading, done, loading, done, loading, done};
    script sc2 = {flip, 8, 0, 0, 0, 0};
    CHECK_EQ_INT(ui_wait(NULL, from_script, &sc2, &w, 60, 15, 1000), ADBC_ETIMEDOUT);
    CHECK(strstr(adbc_last_error(), "the screen did not settle") != NULL);
    CHECK(strstr(adbc_last_error(), "line 2 went from") != NULL);
}

TEST(condition_names)
{
    adbc_ui_cond c;
    CHECK_EQ_INT(adbc_ui_cond_parse(&c, "unchecked"), 0);
    CHECK_EQ_INT(c, ADBC_UI_COND_UNCHECKED);
    CHECK_EQ_INT(adbc_ui_cond_parse(&c, "selected"), 0);
    CHECK_STR(adbc_ui_cond_name(c), "selected");
    CHECK_EQ_INT(adbc_ui_cond_parse(&c, "Checked"), ADBC_EINVAL);
    CHECK(strstr(adbc_last_error(), "use checked, unchecked") != NULL);
}

int main(void)
{
    RUN(text_appears);
    RUN(text_gone_and_match_flags);
    RUN(timeout_says_what_was_seen);
    RUN(zero_timeout_looks_once);
    RUN(failures_pass_or_end_the_wait);
    RUN(state_by_ref_from_an_earlier_snapshot);
    RUN(stable_needs_two_equal_snapshots_in_a_row);
    RUN(condition_names);
    return T_DONE();
}
