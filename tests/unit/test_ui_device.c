/* SPDX-License-Identifier: Apache-2.0 */
/* The device-side dump script, run here by the host's /bin/sh with the
 * uiautomator stand-in of fixtures/testdevice on PATH: retries, the switch
 * to --compressed, the framing the host splits on. (test_ui_testdevice
 * runs the same through a real connection.) */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t.h"
#include "ui/ui_internal.h"
#include "ui_test_util.h"

static char tmp[256], ctl[300], tdir[300], bindir[4096], fixdir[4096];

static void write_file(const char *path, const char *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (f) {
        fwrite(data, 1, n, f);
        fclose(f);
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

/* A fresh control directory: conf, no run count, no log. */
static void setup(const char *conf)
{
    char cmd[1400];
    snprintf(cmd, sizeof cmd, "rm -rf %s %s && mkdir -p %s %s", ctl, tdir, ctl, tdir);
    if (system(cmd) != 0)
        fprintf(stderr, "setup failed\n");
    char path[400];
    snprintf(path, sizeof path, "%s/uiautomator.conf", ctl);
    write_file(path, conf, strlen(conf));
}

/* Run the script; its stdout in *out. Killed after limit_ms. Returns the
 * exit status, or -1 if it had to be killed. */
static int run_script(const char *cmd, char **out, size_t *len, int limit_ms)
{
    int fds[2];
    if (pipe(fds) < 0)
        return -2;
    pid_t pid = fork();
    if (pid == 0) {
        setpgid(0, 0);
        dup2(fds[1], 1);
        close(fds[0]);
        close(fds[1]);
        char path[4200], ctlenv[400], tmpenv[400], root[4200];
        snprintf(path, sizeof path, "PATH=%s:/usr/bin:/bin", bindir);
        snprintf(ctlenv, sizeof ctlenv, "ADBC_TEST_CTL=%s", ctl);
        snprintf(tmpenv, sizeof tmpenv, "TMPDIR=%s", tdir);
        snprintf(root, sizeof root, "ANDROID_ROOT=%.4000s/..", bindir);
        char *envp[] = {path, ctlenv, tmpenv, root, NULL};
        execle("/bin/sh", "sh", "-c", cmd, (char *)NULL, envp);
        _exit(127);
    }
    close(fds[1]);
    size_t cap = 1 << 20, n = 0;
    char *b = malloc(cap);
    int killed = 0;
    for (;;) {
        struct pollfd p = {fds[0], POLLIN, 0};
        int r = poll(&p, 1, limit_ms);
        if (r == 0) {
            kill(-pid, SIGKILL);
            killed = 1;
            break;
        }
        ssize_t k = read(fds[0], b + n, cap - n - 1);
        if (k <= 0)
            break;
        n += (size_t)k;
    }
    close(fds[0]);
    int st;
    waitpid(pid, &st, 0);
    b[n] = '\0';
    *out = b;
    *len = n;
    return killed ? -1 : WIFEXITED(st) ? WEXITSTATUS(st) : -3;
}

static int count_runs(void)
{
    char path[400];
    size_t n;
    snprintf(path, sizeof path, "%s/uiautomator.count", ctl);
    char *s = read_file(path, &n);
    int v = s ? atoi(s) : 0;
    free(s);
    return v;
}

static char *log_text(void)
{
    char path[400];
    size_t n;
    snprintf(path, sizeof path, "%s/uiautomator.log", ctl);
    char *s = read_file(path, &n);
    return s ? s : strdup("");
}

static int tmp_is_empty(void)
{
    char cmd[400];
    snprintf(cmd, sizeof cmd, "test -z \"$(ls -A %s)\"", tdir);
    return system(cmd) == 0;
}

TEST(serves_the_dump_byte_for_byte)
{
    char src[4200], dst[400];
    snprintf(src, sizeof src, "%s/037-instagram-profile-emoji-multiroot.xml", fixdir);
    size_t xn;
    char *xml = read_file(src, &xn);
    CHECK(xml);
    snprintf(dst, sizeof dst, "%s/d.xml", ctl);
    setup("dump=d.xml\n");
    write_file(dst, xml, xn);
    char cmd[2048], *out;
    size_t len, off;
    CHECK_EQ_INT(ui_dump_command(cmd, sizeof cmd, "n0nce", 3, 0, NULL), 0);
    CHECK_EQ_INT(run_script(cmd, &out, &len, 10000), 0);
    CHECK_EQ_INT(ui_dump_split(&off, out, len, "n0nce"), 0);
    CHECK_EQ_INT(len - off, xn);
    CHECK(memcmp(out + off, xml, xn) == 0);
    CHECK_EQ_INT(count_runs(), 1);
    char *log = log_text();
    CHECK(strstr(log, "1 dump ") != NULL && strstr(log, "--compressed") == NULL);
    free(log);
    CHECK(tmp_is_empty()); /* the device file is removed */
    free(out);
    free(xml);
}

TEST(retries_after_uiautomator_errors)
{
    setup("dump=d.xml\nfail=2\n");
    char dst[400];
    snprintf(dst, sizeof dst, "%s/d.xml", ctl);
    write_file(dst, "<node text=\"x\"/>", 16);
    char cmd[2048], *out;
    size_t len, off;
    CHECK_EQ_INT(ui_dump_command(cmd, sizeof cmd, "abc", 3, 0, NULL), 0);
    CHECK_EQ_INT(run_script(cmd, &out, &len, 10000), 0);
    CHECK_EQ_INT(count_runs(), 3);
    CHECK(strstr(out, "@adbc-ui-abc fail 1 \nERROR: null root node returned by UiTestAutomationBridge.\n"
                      "@adbc-ui-abc fail 2 \nERROR: null root node") == out);
    CHECK_EQ_INT(ui_dump_split(&off, out, len, "abc"), 0);
    CHECK_STR(out + off, "<node text=\"x\"/>");
    CHECK_EQ_INT(ui_dump_split(&off, out, len, "other"), -1);
    free(out);

    /* Two runs allowed: both fail, no ok marker, and the device file is gone. */
    setup("dump=d.xml\nfail=5\n");
    write_file(dst, "<node text=\"x\"/>", 16);
    CHECK_EQ_INT(ui_dump_command(cmd, sizeof cmd, "abc", 2, 0, NULL), 0);
    CHECK_EQ_INT(run_script(cmd, &out, &len, 10000), 0);
    CHECK_EQ_INT(count_runs(), 2);
    CHECK_EQ_INT(ui_dump_split(&off, out, len, "abc"), -1);
    CHECK(strstr(out, "@adbc-ui-abc end\n") != NULL);
    CHECK(tmp_is_empty());
    free(out);
}

TEST(idle_errors_switch_to_compressed)
{
    setup("dump=d.xml\nmode=idle\ncompressed_ok=1\n");
    char dst[400];
    snprintf(dst, sizeof dst, "%s/d.xml", ctl);
    write_file(dst, "<node text=\"y\"/>", 16);
    char cmd[2048], *out;
    size_t len, off;
    CHECK_EQ_INT(ui_dump_command(cmd, sizeof cmd, "q", 3, 0, NULL), 0);
    CHECK_EQ_INT(run_script(cmd, &out, &len, 10000), 0);
    CHECK_EQ_INT(count_runs(), 2);
    char *log = log_text();
    CHECK(strstr(log, "1 dump /") != NULL);
    CHECK(strstr(log, "2 dump --compressed /") != NULL);
    free(log);
    CHECK(strstr(out, "ERROR: could not get idle state.") != NULL);
    CHECK(strstr(out, "@adbc-ui-q ok 2 --compressed\n") != NULL);
    CHECK_EQ_INT(ui_dump_split(&off, out, len, "q"), 0);
    CHECK_STR(out + off, "<node text=\"y\"/>");
    free(out);
    /* Asked for from the start. */
    setup("dump=d.xml\n");
    write_file(dst, "<node text=\"y\"/>", 16);
    CHECK_EQ_INT(ui_dump_command(cmd, sizeof cmd, "q", 3, 1, NULL), 0);
    CHECK_EQ_INT(run_script(cmd, &out, &len, 10000), 0);
    log = log_text();
    CHECK(strstr(log, "1 dump --compressed /") != NULL);
    free(log);
    free(out);
}

TEST(empty_file_counts_as_failure)
{
    setup("dump=d.xml\nmode=empty\n");
    char dst[400];
    snprintf(dst, sizeof dst, "%s/d.xml", ctl);
    write_file(dst, "<node/>", 7);
    char cmd[2048], *out;
    size_t len, off;
    CHECK_EQ_INT(ui_dump_command(cmd, sizeof cmd, "e", 2, 0, NULL), 0);
    CHECK_EQ_INT(run_script(cmd, &out, &len, 10000), 0);
    CHECK_EQ_INT(ui_dump_split(&off, out, len, "e"), -1);
    CHECK(strstr(out, "UI hierchary dumped to:") != NULL);
    free(out);
}

/* The frame mark read after the dump and a side command run beside it come
 * back in front of the XML, which stays byte for byte. */
TEST(frame_mark_and_side_output)
{
    setup("dump=d.xml\n");
    char dst[400];
    snprintf(dst, sizeof dst, "%s/d.xml", ctl);
    write_file(dst, "<node text=\"z\"/>", 16);
    char cmd[2048], *out, frame[UI_FRAME_LEN];
    size_t len, off, sn;
    const char *side;
    CHECK_EQ_INT(ui_dump_command(cmd, sizeof cmd, "fm", 3, 0, "echo side-said; echo two"), 0);
    CHECK_EQ_INT(run_script(cmd, &out, &len, 10000), 0);
    CHECK_EQ_INT(ui_dump_split(&off, out, len, "fm"), 0);
    CHECK_STR(out + off, "<node text=\"z\"/>");
    ui_dump_extras(frame, &side, &sn, out, off, "fm");
    CHECK(ui_frame_valid(frame) && strlen(frame) > 9); /* the count, ':' and the boot id */
    CHECK(side != NULL && sn == 14 && memcmp(side, "side-said\ntwo\n", 14) == 0);
    CHECK(tmp_is_empty()); /* the side file is removed too */
    /* Another screen, another mark (the stand-in's count follows the dump). */
    char first[UI_FRAME_LEN];
    memcpy(first, frame, sizeof first);
    free(out);
    write_file(dst, "<node text=\"w\"/>", 16);
    CHECK_EQ_INT(run_script(cmd, &out, &len, 10000), 0);
    CHECK_EQ_INT(ui_dump_split(&off, out, len, "fm"), 0);
    ui_dump_extras(frame, &side, &sn, out, off, "fm");
    CHECK(ui_frame_valid(frame) && strcmp(frame, first) != 0);
    free(out);
    /* A device that refuses the call: the mark is unknown, the dump stands. */
    char so[400];
    snprintf(so, sizeof so, "%s/service.out", ctl);
    write_file(so, "Result: Parcel(Error: 0xffffffb5 \"Permission denied\")\n", 54);
    CHECK_EQ_INT(ui_dump_command(cmd, sizeof cmd, "fm", 3, 0, NULL), 0);
    CHECK_EQ_INT(run_script(cmd, &out, &len, 10000), 0);
    CHECK_EQ_INT(ui_dump_split(&off, out, len, "fm"), 0);
    ui_dump_extras(frame, &side, &sn, out, off, "fm");
    CHECK_STR(frame, "");
    CHECK(side == NULL);
    free(out);
}

TEST(extras_edge_cases)
{
    char frame[UI_FRAME_LEN];
    const char *side;
    size_t sn;
    static const char *const cases[][2] = {
        {"@adbc-ui-n frame |\n", ""},                                   /* no answer at all */
        {"@adbc-ui-n frame Result: Parcel(0000a3f|\n", ""},             /* cut short */
        {"@adbc-ui-n frame Result: Parcel(0000A3F1    '....')|\n", ""}, /* not as printed */
        {"@adbc-ui-n frame Result: Parcel(0000a3f1    '....')\n", ""},  /* no boot id part */
        {"@adbc-ui-nn frame Result: Parcel(0000a3f1    '....')|\n", ""}, /* another nonce */
        {"@adbc-ui-n frame Result: Parcel(0000a3f1    '....')|x'; reboot\n", ""},
        {"@adbc-ui-n frame Result: Parcel(0000a3f1    '....')|"
         "0123456789abcdef0123456789abcdef012345\n", ""}, /* boot id too long */
        {"@adbc-ui-n frame Result: Parcel(0000a3f1 00000001 '........')|\n", "0000a3f1:"},
        {"@adbc-ui-n frame Result: Parcel(0000a3f1    '....')|\n", "0000a3f1:"},
        {"@adbc-ui-n frame Result: Parcel(0000a3f1    '....')|"
         "5d6c3b3e-8f0a-4f4e-9c1e-2b7a1d0e9f11\n",
         "0000a3f1:5d6c3b3e-8f0a-4f4e-9c1e-2b7a1d0e9f11"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ui_dump_extras(frame, &side, &sn, cases[i][0], strlen(cases[i][0]), "n");
        CHECK_STR(frame, cases[i][1]);
    }
}

TEST(split_edge_cases)
{
    size_t off = 99;
    const char *a = "junk\n@adbc-ui-n ok 1 \n<node/>\n@adbc-ui-n ok 2 \nmore";
    CHECK_EQ_INT(ui_dump_split(&off, a, strlen(a), "n"), 0);
    CHECK_STR(a + off, "<node/>\n@adbc-ui-n ok 2 \nmore"); /* the XML may say anything */
    const char *b = "@adbc-ui-n ok 1";                    /* cut before the newline */
    CHECK_EQ_INT(ui_dump_split(&off, b, strlen(b), "n"), -1);
    const char *c = "x@adbc-ui-n ok 1\n<node/>";           /* not at a line start */
    CHECK_EQ_INT(ui_dump_split(&off, c, strlen(c), "n"), -1);
    const char *d = "@adbc-ui-nn ok 1\n<node/>";           /* another nonce */
    CHECK_EQ_INT(ui_dump_split(&off, d, strlen(d), "n"), -1);
    CHECK_EQ_INT(ui_dump_split(&off, "", 0, "n"), -1);
}

int main(void)
{
    const char *src = getenv("ADBC_SOURCE_DIR");
    snprintf(bindir, sizeof bindir, "%s/fixtures/testdevice/android/bin", src ? src : ".");
    snprintf(fixdir, sizeof fixdir, "%s/fixtures/snapshot", src ? src : ".");
    snprintf(tmp, sizeof tmp, "/tmp/adbc-uidev-XXXXXX");
    if (!mkdtemp(tmp))
        return 1;
    snprintf(ctl, sizeof ctl, "%s/ctl", tmp);
    snprintf(tdir, sizeof tdir, "%s/tmp", tmp);
    RUN(serves_the_dump_byte_for_byte);
    RUN(retries_after_uiautomator_errors);
    RUN(idle_errors_switch_to_compressed);
    RUN(empty_file_counts_as_failure);
    RUN(frame_mark_and_side_output);
    RUN(extras_edge_cases);
    RUN(split_edge_cases);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
    if (system(cmd) != 0)
        return 1;
    return T_DONE();
}
