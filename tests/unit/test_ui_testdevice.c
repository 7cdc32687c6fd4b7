/* SPDX-License-Identifier: Apache-2.0 */
/* The device path end to end: adbc-testdevice (fixtures/testdevice) serves
 * recorded dumps through its uiautomator stand-in, and adbc_ui_dump,
 * adbc_ui_snapshot and the waits go through a real connection and exec
 * streams. Needs the test device built (it is part of the tree); without
 * it the test fails and says so. */
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "adbc/auth.h"
#include "adbc/conn.h"
#include "t.h"
#include "ui_test_util.h"

static char sandbox[256], ctl[400], addr[128], fixdir[4096];
static pid_t td_pid = -1;
static adbc_conn *conn;
static adbc_keyring *ring;

static long long ms_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void write_file(const char *path, const char *data, size_t n)
{
    char tmpp[600];
    snprintf(tmpp, sizeof tmpp, "%s.tmp", path);
    FILE *f = fopen(tmpp, "wb");
    if (f) {
        fwrite(data, 1, n, f);
        fclose(f);
        rename(tmpp, path); /* a reader never sees half a file */
    }
}

static char *read_file(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *b = malloc(1 << 20);
    *n = fread(b, 1, (1 << 20) - 1, f);
    b[*n] = '\0';
    fclose(f);
    return b;
}

static void ctl_file(const char *name, const char *data)
{
    char path[600];
    snprintf(path, sizeof path, "%s/%s", ctl, name);
    write_file(path, data, strlen(data));
}

/* A fresh stand-in configuration; the run counter and log start over. */
static void configure(const char *conf)
{
    char path[600];
    snprintf(path, sizeof path, "%s/uiautomator.count", ctl);
    unlink(path);
    snprintf(path, sizeof path, "%s/uiautomator.log", ctl);
    unlink(path);
    ctl_file("uiautomator.conf", conf);
}

static int runs(void)
{
    char path[600];
    size_t n;
    snprintf(path, sizeof path, "%s/uiautomator.count", ctl);
    char *s = read_file(path, &n);
    int v = s ? atoi(s) : 0;
    free(s);
    return v;
}

static int start_device(void)
{
    const char *build = getenv("ADBC_BUILD_DIR");
    char bin[4200];
    snprintf(bin, sizeof bin, "%s/fixtures/adbc-testdevice", build ? build : ".");
    if (access(bin, X_OK) != 0) {
        fprintf(stderr, "  %s is not built: the device-path tests need the test device\n", bin);
        return -1;
    }
    snprintf(sandbox, sizeof sandbox, "/tmp/adbc-uitd-XXXXXX");
    if (!mkdtemp(sandbox))
        return -1;
    int fds[2];
    if (pipe(fds) < 0)
        return -1;
    td_pid = fork();
    if (td_pid == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        close(fds[1]);
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0 && !getenv("ADBC_TEST_VERBOSE"))
            dup2(null, 2);
        execl(bin, bin, "--sandbox", sandbox, "--no-auth", "--port", "0", (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    char line[256];
    size_t n = 0;
    long long t0 = ms_now();
    while (n < sizeof line - 1 && ms_now() - t0 < 10000) {
        struct pollfd p = {fds[0], POLLIN, 0};
        if (poll(&p, 1, 200) <= 0)
            continue;
        ssize_t k = read(fds[0], line + n, 1);
        if (k <= 0)
            break;
        if (line[n] == '\n')
            break;
        n++;
    }
    line[n] = '\0';
    close(fds[0]);
    if (sscanf(line, "listening on %127s", addr) != 1) {
        fprintf(stderr, "  test device did not start (said \"%s\")\n", line);
        return -1;
    }
    snprintf(ctl, sizeof ctl, "%s/data/local/tmp/.adbc-test", sandbox);
    adbc_key *k;
    if (adbc_keyring_new(&ring) < 0 || adbc_key_generate(&k, 2048) < 0)
        return -1;
    adbc_keyring_add(ring, k);
    adbc_conn_opts o;
    adbc_conn_opts_init(&o);
    o.keys = ring;
    int rc = adbc_connect(&conn, addr, &o);
    if (rc < 0)
        fprintf(stderr, "  connect %s: %s\n", addr, adbc_last_error());
    return rc;
}

static void stop_device(void)
{
    if (conn)
        adbc_conn_close(conn);
    adbc_keyring_free(ring);
    if (td_pid > 0) {
        kill(td_pid, SIGTERM);
        waitpid(td_pid, NULL, 0);
    }
    if (sandbox[0]) {
        char cmd[400];
        snprintf(cmd, sizeof cmd, "rm -rf %s", sandbox);
        if (system(cmd) != 0)
            fprintf(stderr, "cannot remove %s\n", sandbox);
    }
}

static char *fixture(const char *name, const char *ext, size_t *n)
{
    char path[4400];
    snprintf(path, sizeof path, "%s/%s.%s", fixdir, name, ext);
    return read_file(path, n);
}

static void serve_fixture(const char *name)
{
    size_t n;
    char *x = fixture(name, "xml", &n);
    char path[600];
    snprintf(path, sizeof path, "%s/screen.xml", ctl);
    write_file(path, x ? x : "", x ? n : 0);
    free(x);
}

static void serve(const char *xml)
{
    ctl_file("screen.xml", xml);
}

TEST(snapshot_of_every_recorded_dump)
{
    static const char *names[] = {"001-nexuslauncher-home", "014-wechat-cjk",
                                  "037-instagram-profile-emoji-multiroot", "043-vn-bank-empty",
                                  "046-haoce-noheader-largest", "054-philo-tv-pretty"};
    configure("dump=screen.xml\n");
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        serve_fixture(names[i]);
        adbc_ui_snap *s = NULL;
        int rc = adbc_ui_snapshot(&s, conn, NULL);
        if (rc)
            fprintf(stderr, "  %s: %s\n", names[i], adbc_last_error());
        CHECK_EQ_INT(rc, 0);
        size_t wn, tn;
        char *want = fixture(names[i], "txt", &wn), *tsv = fixture(names[i], "refs.tsv", &tn);
        CHECK(want && tsv);
        size_t gn;
        const char *got = adbc_ui_snap_text(s, &gn);
        CHECK_EQ_INT(gn, wn);
        CHECK(memcmp(got, want, wn) == 0);
        char *gt;
        CHECK_EQ_INT(adbc_ui_reftab_tsv(&gt, &gn, adbc_ui_snap_refs(s)), 0);
        CHECK(gn == tn && memcmp(gt, tsv, tn) == 0);
        adbc_free(gt);
        free(want);
        free(tsv);
        adbc_ui_snap_free(s);
    }
    CHECK_EQ_INT(runs(), 6); /* one uiautomator run each */
}

TEST(raw_dump_is_byte_exact)
{
    configure("dump=screen.xml\n");
    serve_fixture("028-webview-news-cjk-large");
    char *xml;
    size_t n, wn;
    CHECK_EQ_INT(adbc_ui_dump(&xml, &n, conn, NULL), 0);
    char *want = fixture("028-webview-news-cjk-large", "xml", &wn);
    CHECK_EQ_INT(n, wn);
    CHECK(memcmp(xml, want, n) == 0);
    CHECK(xml[n] == '\0');
    adbc_free(xml);
    free(want);
    /* Binary junk in a dump comes back unchanged too (exec: is binary-safe). */
    char junk[600];
    size_t jn = (size_t)snprintf(junk, sizeof junk, "<node text=\"");
    for (int i = 1; i < 256; i++)
        if (i != '"')
            junk[jn++] = (char)i;
    jn += (size_t)snprintf(junk + jn, sizeof junk - jn, "\"/>\r\n");
    char path[600];
    snprintf(path, sizeof path, "%s/screen.xml", ctl);
    write_file(path, junk, jn);
    CHECK_EQ_INT(adbc_ui_dump(&xml, &n, conn, NULL), 0);
    CHECK_EQ_INT(n, jn);
    CHECK(memcmp(xml, junk, jn) == 0);
    adbc_free(xml);
}

TEST(uiautomator_errors_are_retried)
{
    serve("<node class=\"T\" text=\"after retries\"/>");
    configure("dump=screen.xml\nfail=2\n");
    adbc_ui_snap *s = NULL;
    CHECK_EQ_INT(adbc_ui_snapshot(&s, conn, NULL), 0);
    CHECK_STR(adbc_ui_snap_text(s, NULL), "- T \"after retries\"");
    CHECK_EQ_INT(runs(), 3);
    adbc_ui_snap_free(s);
}

TEST(persistent_errors_quote_the_device)
{
    serve("<node class=\"T\" text=\"x\"/>");
    configure("dump=screen.xml\nmode=null-root\n");
    adbc_ui_snap *s = (adbc_ui_snap *)1;
    adbc_ui_opts o;
    adbc_ui_opts_init(&o);
    o.attempts = 2;
    CHECK_EQ_INT(adbc_ui_snapshot(&s, conn, &o), ADBC_EREMOTE);
    CHECK(s == NULL);
    CHECK(strstr(adbc_last_error(), "uiautomator dump failed 2 times") != NULL);
    CHECK(strstr(adbc_last_error(), "ERROR: null root node returned by UiTestAutomationBridge.") != NULL);
    CHECK_EQ_INT(runs(), 2);
    configure("dump=screen.xml\nmode=idle\n");
    CHECK_EQ_INT(adbc_ui_snapshot(&s, conn, &o), ADBC_EREMOTE);
    CHECK(strstr(adbc_last_error(), "ERROR: could not get idle state.") != NULL);
    /* uiautomator missing altogether: whatever the shell said is quoted. */
    configure("dump=nothing-here.xml\n");
    CHECK_EQ_INT(adbc_ui_snapshot(&s, conn, &o), ADBC_EREMOTE);
    CHECK(strstr(adbc_last_error(), "no dump to serve") != NULL);
}

TEST(animating_screen_falls_back_to_compressed)
{
    serve("<node class=\"T\" text=\"compressed\"/>");
    configure("dump=screen.xml\nmode=idle\ncompressed_ok=1\n");
    adbc_ui_snap *s = NULL;
    CHECK_EQ_INT(adbc_ui_snapshot(&s, conn, NULL), 0);
    CHECK_STR(adbc_ui_snap_text(s, NULL), "- T \"compressed\"");
    CHECK_EQ_INT(runs(), 2);
    char path[600];
    size_t n;
    snprintf(path, sizeof path, "%s/uiautomator.log", ctl);
    char *log = read_file(path, &n);
    CHECK(log && strstr(log, "2 dump --compressed ") != NULL);
    free(log);
    adbc_ui_snap_free(s);
}

TEST(hung_uiautomator_times_out)
{
    serve("<node/>");
    configure("dump=screen.xml\nmode=hang\n");
    adbc_ui_opts o;
    adbc_ui_opts_init(&o);
    o.timeout_ms = 1500;
    adbc_ui_snap *s = NULL;
    long long t0 = ms_now();
    CHECK_EQ_INT(adbc_ui_snapshot(&s, conn, &o), ADBC_ETIMEDOUT);
    long long took = ms_now() - t0;
    CHECK(took >= 1400 && took < 30000); /* bounded, however busy the machine */
    CHECK(strstr(adbc_last_error(), "did not finish within") != NULL);
    /* The connection is still good afterwards. */
    configure("dump=screen.xml\n");
    serve("<node class=\"T\" text=\"alive\"/>");
    CHECK_EQ_INT(adbc_ui_snapshot(&s, conn, NULL), 0);
    CHECK_STR(adbc_ui_snap_text(s, NULL), "- T \"alive\"");
    adbc_ui_snap_free(s);
}

TEST(cut_dump_is_fetched_again_then_refused)
{
    serve_fixture("012-whatsapp-chat");
    configure("dump=screen.xml\nmode=truncate\ntruncate=50000\n");
    adbc_ui_snap *s = (adbc_ui_snap *)1;
    CHECK_EQ_INT(adbc_ui_snapshot(&s, conn, NULL), ADBC_EFORMAT);
    CHECK(s == NULL);
    CHECK(strstr(adbc_last_error(), "no whole dump in 3 tries") != NULL);
    CHECK(strstr(adbc_last_error(), "cut short") != NULL);
    CHECK_EQ_INT(runs(), 3);
    /* The raw dump call hands the bytes over as they came. */
    char *xml;
    size_t n;
    CHECK_EQ_INT(adbc_ui_dump(&xml, &n, conn, NULL), 0);
    CHECK_EQ_INT(n, 50000);
    adbc_free(xml);
}

/* Switches the served screen after a delay, as an app would. */
typedef struct later {
    int delay_ms;
    const char *xml;
} later;

static void *switch_later(void *arg)
{
    later *l = arg;
    struct timespec ts = {l->delay_ms / 1000, (long)(l->delay_ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
    serve(l->xml);
    return NULL;
}

#define SCREEN(body) "<hierarchy><node class=\"F\" package=\"com.app\">" body "</node></hierarchy>"

TEST(waits_against_the_device)
{
    configure("dump=screen.xml\n");
    adbc_ui_opts o;
    adbc_ui_opts_init(&o);
    o.poll_interval_ms = 50;

    /* Text appears. */
    serve(SCREEN("<node class=\"T\" text=\"Loading\"/>"));
    later l = {400, SCREEN("<node class=\"T\" text=\"Welcome back\"/>")};
    pthread_t th;
    pthread_create(&th, NULL, switch_later, &l);
    adbc_ui_snap *s = NULL;
    CHECK_EQ_INT(adbc_ui_wait_text(&s, conn, "welcome", ADBC_UI_MATCH_CONTAINS | ADBC_UI_MATCH_NOCASE,
                                   10000, &o), 0);
    pthread_join(th, NULL);
    CHECK(strstr(adbc_ui_snap_text(s, NULL), "Welcome back") != NULL);
    adbc_ui_snap_free(s);
    CHECK(runs() >= 2);

    /* ...and goes. */
    later g = {300, SCREEN("<node class=\"T\" text=\"Home\"/>")};
    pthread_create(&th, NULL, switch_later, &g);
    CHECK_EQ_INT(adbc_ui_wait_text(NULL, conn, "Welcome back", ADBC_UI_WAIT_GONE, 10000, &o), 0);
    pthread_join(th, NULL);

    /* Never appears: ETIMEDOUT within the bound, naming what was seen. */
    long long t0 = ms_now();
    CHECK_EQ_INT(adbc_ui_wait_text(NULL, conn, "Never", 0, 700, &o), ADBC_ETIMEDOUT);
    CHECK(ms_now() - t0 < 30000); /* bounded, however busy the machine */
    CHECK(strstr(adbc_last_error(), "text \"Never\" did not appear within 700 ms") != NULL);
    if (!strstr(adbc_last_error(), "- T \"Home\""))
        fprintf(stderr, "  message: %s\n", adbc_last_error());
    CHECK(strstr(adbc_last_error(), "- T \"Home\"") != NULL);

    /* A switch turns on; the ref comes from a saved table. */
    serve(SCREEN("<node class=\"android.widget.Switch\" text=\"Wi-Fi\" clickable=\"true\" "
                 "checked=\"false\" resource-id=\"com.app:id/wifi\" bounds=\"[0,100][200,160]\"/>"));
    CHECK_EQ_INT(adbc_ui_snapshot(&s, conn, &o), 0);
    char refs[600];
    snprintf(refs, sizeof refs, "%s/refs", sandbox);
    CHECK_EQ_INT(adbc_ui_reftab_save(adbc_ui_snap_refs(s), refs), 0);
    adbc_ui_snap_free(s);
    adbc_ui_reftab *t;
    CHECK_EQ_INT(adbc_ui_reftab_load(&t, refs), 0);
    later on = {300, SCREEN("<node class=\"T\" text=\"Connecting\"/>"
                            "<node class=\"android.widget.Switch\" text=\"Wi-Fi\" clickable=\"true\" "
                            "checked=\"true\" resource-id=\"com.app:id/wifi\" bounds=\"[0,100][200,160]\"/>")};
    pthread_create(&th, NULL, switch_later, &on);
    CHECK_EQ_INT(adbc_ui_wait_state(&s, conn, adbc_ui_reftab_get(t, 1), ADBC_UI_COND_CHECKED, 10000, &o), 0);
    pthread_join(th, NULL);
    CHECK(strstr(adbc_ui_snap_text(s, NULL), "[checked]") != NULL);
    adbc_ui_snap_free(s);
    CHECK_EQ_INT(adbc_ui_wait_state(NULL, conn, adbc_ui_reftab_get(t, 1), ADBC_UI_COND_UNCHECKED, 500, &o),
                 ADBC_ETIMEDOUT);
    if (!strstr(adbc_last_error(), "it was still checked"))
        fprintf(stderr, "  message: %s\n", adbc_last_error());
    CHECK(strstr(adbc_last_error(), "did not become unchecked") != NULL);
    CHECK(strstr(adbc_last_error(), "it was still checked") != NULL);
    adbc_ui_reftab_free(t);

    /* The screen settles. */
    CHECK_EQ_INT(adbc_ui_wait_stable(&s, conn, 10000, &o), 0);
    CHECK(strstr(adbc_ui_snap_text(s, NULL), "Connecting") != NULL);
    adbc_ui_snap_free(s);

    /* uiautomator errors during a wait are passing trouble: retried. */
    configure("dump=screen.xml\nfail=4\n");
    o.attempts = 1;
    CHECK_EQ_INT(adbc_ui_wait_text(NULL, conn, "Connecting", 0, 10000, &o), 0);
    CHECK_EQ_INT(runs(), 5);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const char *src = getenv("ADBC_SOURCE_DIR");
    snprintf(fixdir, sizeof fixdir, "%s/fixtures/snapshot", src ? src : ".");
    int ok = start_device() == 0;
    if (!ok) {
        stop_device();
        printf("FAIL test device\n0 passed, 1 failed\n");
        return 1;
    }
    RUN(snapshot_of_every_recorded_dump);
    RUN(raw_dump_is_byte_exact);
    RUN(uiautomator_errors_are_retried);
    RUN(persistent_errors_quote_the_device);
    RUN(animating_screen_falls_back_to_compressed);
    RUN(hung_uiautomator_times_out);
    RUN(cut_dump_is_fetched_again_then_refused);
    RUN(waits_against_the_device);
    stop_device();
    return T_DONE();
}
