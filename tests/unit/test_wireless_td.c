/* SPDX-License-Identifier: Apache-2.0 */
/* Wireless debugging through the public API against the test device in TLS
 * mode with a pairing port: the error codes a program sees (ADBC_EPAIRCODE
 * for a wrong code, ADBC_ENOTPAIRED for a key the device does not know),
 * pairing an in-memory key, and then a connection whose transport is TLS
 * carrying adbc_run and a sync push/pull round trip. tests/sh/wireless.sh
 * checks the same through adbc-snap. */
#include "t.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "adbc/adbc.h"
#include "adbc/pair.h"
#include "adbc/sync.h"

#define CODE "135790"

static pid_t dev_pid = -1;
static char dir[256], keys_path[320], dev_addr[200], pair_addr[200];
static adbc_key *paired_key, *other_key;
static int have_pairing = 1;

/* One line of the device's stdout, bounded by 10 s. */
static int read_line(int fd, char *line, size_t cap)
{
    size_t len = 0;
    while (len + 1 < cap) {
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, 10000) <= 0 || read(fd, line + len, 1) != 1)
            return -1;
        if (line[len] == '\n') {
            line[len] = '\0';
            return 0;
        }
        len++;
    }
    return -1;
}

static int start_device(void)
{
    const char *build = getenv("ADBC_BUILD_DIR");
    char bin[512], sandbox[320];
    snprintf(bin, sizeof bin, "%s/fixtures/adbc-testdevice", build ? build : "build");
    snprintf(dir, sizeof dir, "%s/adbc-wl.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (access(bin, X_OK) != 0 || !mkdtemp(dir))
        return -1;
    snprintf(keys_path, sizeof keys_path, "%s/adb_keys", dir);
    snprintf(sandbox, sizeof sandbox, "%s/sandbox", dir);
    int fd[2];
    if (pipe(fd) != 0)
        return -1;
    dev_pid = fork();
    if (dev_pid == 0) {
        dup2(fd[1], 1);
        close(fd[0]);
        close(fd[1]);
        execl(bin, bin, "--port", "0", "--sandbox", sandbox, "--authorized-keys", keys_path,
              "--tls", "--pair-port", "0", "--pair-code", CODE, (char *)NULL);
        _exit(127);
    }
    close(fd[1]);
    char l1[200] = "", l2[200] = "";
    int rc = read_line(fd[0], l1, sizeof l1) == 0 && read_line(fd[0], l2, sizeof l2) == 0 &&
                     strncmp(l1, "listening on ", 13) == 0 && strncmp(l2, "pairing on ", 11) == 0
                 ? 0
                 : -1;
    close(fd[0]);
    if (rc != 0) {
        fprintf(stderr, "  test device did not start: \"%s\" \"%s\"\n", l1, l2);
        return -1;
    }
    snprintf(dev_addr, sizeof dev_addr, "%s", l1 + 13);
    snprintf(pair_addr, sizeof pair_addr, "%s", l2 + 11);
    return 0;
}

static void stop_device(void)
{
    if (dev_pid > 0) {
        kill(dev_pid, SIGTERM);
        int st;
        for (int i = 0; i < 100 && waitpid(dev_pid, &st, WNOHANG) == 0; i++)
            usleep(50000);
        if (waitpid(dev_pid, &st, WNOHANG) == 0) {
            kill(dev_pid, SIGKILL);
            waitpid(dev_pid, &st, 0);
        }
    }
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "  could not remove %s\n", dir);
}

static int connect_with(adbc_conn **out, const adbc_key *key)
{
    /* A keyring owns its keys: give it a copy made through a saved file. */
    char path[400];
    snprintf(path, sizeof path, "%s/key-%s", dir, key == paired_key ? "paired" : "other");
    adbc_key *copy = NULL;
    adbc_keyring *ring = NULL;
    if (adbc_key_save(key, path) != 0 || adbc_key_load(&copy, path, 1) != 0)
        return -1;
    if (adbc_keyring_new(&ring) != 0) {
        adbc_key_free(copy);
        return -1;
    }
    if (adbc_keyring_add(ring, copy) != 0) {
        adbc_keyring_free(ring);
        return -1;
    }
    adbc_conn_opts o;
    adbc_conn_opts_init(&o);
    o.keys = ring;
    o.connect_timeout_ms = 10000;
    int rc = adbc_connect(out, dev_addr, &o);
    adbc_keyring_free(ring);
    return rc;
}

static long file_lines(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return errno == ENOENT ? 0 : -1;
    long n = 0;
    int c;
    while ((c = fgetc(f)) != EOF)
        n += c == '\n';
    fclose(f);
    return n;
}

/* The device stores the key after it sent its GUID, so the host may see
 * success a moment before the file has the key (a phone is no different). */
static long wait_lines(const char *path, long want)
{
    long n = file_lines(path);
    for (int i = 0; i < 100 && n != want; i++) {
        usleep(50000);
        n = file_lines(path);
    }
    return n;
}

TEST(unpaired_key_is_not_paired)
{
    adbc_conn *c = NULL;
    int rc = connect_with(&c, paired_key);
    CHECK_EQ_INT(rc, ADBC_ENOTPAIRED);
    CHECK(strstr(adbc_last_error(), "not paired with the device") != NULL);
    CHECK(strstr(adbc_last_error(), "run pairing") != NULL);
    CHECK(c == NULL);
}

TEST(wrong_code_is_epaircode)
{
    char *guid = NULL;
    int rc = adbc_pair(&guid, pair_addr, "246801", paired_key, 10000);
    if (rc == ADBC_EUNSUPPORTED) {
        printf("  (adbc built without libsodium: pairing checks skipped)\n");
        have_pairing = 0;
        return;
    }
    CHECK_EQ_INT(rc, ADBC_EPAIRCODE);
    CHECK(strstr(adbc_last_error(), "wrong pairing code") != NULL);
    CHECK(guid == NULL);
    CHECK_EQ_INT(file_lines(keys_path), 0);
}

TEST(right_code_pairs)
{
    if (!have_pairing) {
        /* Pair by hand so the TLS checks still run. */
        char *line = NULL;
        CHECK(adbc_key_public_line(&line, paired_key, "test@host") == 0);
        FILE *f = fopen(keys_path, "a");
        CHECK(f != NULL);
        fprintf(f, "%s\n", line);
        fclose(f);
        adbc_free(line);
        return;
    }
    char *guid = NULL;
    int rc = adbc_pair(&guid, pair_addr, CODE, paired_key, 10000);
    CHECK_EQ_INT(rc, 0);
    CHECK(guid != NULL && strncmp(guid, "adb-", 4) == 0);
    adbc_free(guid);
    CHECK_EQ_INT(wait_lines(keys_path, 1), 1);
}

TEST(paired_key_runs_inside_tls)
{
    adbc_conn *c = NULL;
    CHECK_EQ_INT(connect_with(&c, paired_key), 0);
    CHECK(strncmp(adbc_conn_desc(c), "tls:", 4) == 0);
    adbc_run_result r;
    memset(&r, 0, sizeof r);
    int rc = adbc_run(&r, c, ADBC_SHELL_AUTO, "cat; echo oops >&2; exit 5", "ping\n", 5, 0,
                      10000);
    int ok = rc == 0 && r.exit_code == 5 && r.out_len == 5 && memcmp(r.out, "ping\n", 5) == 0 &&
             r.err_len == 5 && memcmp(r.err, "oops\n", 5) == 0;
    adbc_run_result_clear(&r);
    if (!ok)
        adbc_conn_close(c);
    CHECK(ok);

    /* Sync round trip: 3 MiB of varied bytes out and back. */
    char src[400], back[400];
    snprintf(src, sizeof src, "%s/blob", dir);
    snprintf(back, sizeof back, "%s/blob.back", dir);
    size_t n = 3u << 20;
    uint8_t *data = malloc(n), *got = malloc(n);
    for (size_t i = 0; data && i < n; i++)
        data[i] = (uint8_t)(i * 2654435761u >> 13);
    FILE *f = fopen(src, "wb");
    int wrote = data && got && f && fwrite(data, 1, n, f) == n;
    if (f)
        fclose(f);
    adbc_sync *s = NULL;
    adbc_sync_result res;
    int prc = -1, grc = -1;
    if (wrote && adbc_sync_open(&s, c, 10000) == 0) {
        prc = adbc_sync_push(&res, s, src, "/sdcard/blob", NULL, 20000);
        grc = adbc_sync_pull(&res, s, "/sdcard/blob", back, NULL, 20000);
    }
    adbc_sync_close(s);
    adbc_conn_close(c);
    size_t rn = 0;
    f = fopen(back, "rb");
    if (f && got) {
        rn = fread(got, 1, n, f);
        fclose(f);
    }
    int same = rn == n && memcmp(data, got, n) == 0;
    free(data);
    free(got);
    CHECK(wrote);
    CHECK_EQ_INT(prc, 0);
    CHECK_EQ_INT(grc, 0);
    CHECK(same);
}

TEST(other_key_still_refused)
{
    adbc_conn *c = NULL;
    CHECK_EQ_INT(connect_with(&c, other_key), ADBC_ENOTPAIRED);
    CHECK_EQ_INT(file_lines(keys_path), 1);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    if (adbc_key_generate(&paired_key, 2048) != 0 || adbc_key_generate(&other_key, 2048) != 0) {
        fprintf(stderr, "key generation failed: %s\n", adbc_last_error());
        return 1;
    }
    if (start_device() != 0) {
        stop_device();
        return 1;
    }
    RUN(unpaired_key_is_not_paired);
    RUN(wrong_code_is_epaircode);
    RUN(right_code_pairs);
    RUN(paired_key_runs_inside_tls);
    RUN(other_key_still_refused);
    stop_device();
    adbc_key_free(paired_key);
    adbc_key_free(other_key);
    return T_DONE();
}
