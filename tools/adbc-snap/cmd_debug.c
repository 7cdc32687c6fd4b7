/* SPDX-License-Identifier: Apache-2.0 */
/* adbc-snap jdwp, bugreport, sideload: adb's debugging and recovery
 * commands, asked of the device as adb asks them (packages/modules/adb
 * client/commandline.cpp, client/bugreport.cpp; daemon/jdwp_service.cpp):
 *
 *   jdwp       the "jdwp" service's text (a pid a line), printed as it comes
 *              until the device closes the stream
 *   bugreport  `bugreportz -v` (its version on stderr), then `bugreportz -p`:
 *              "BEGIN:PATH", "PROGRESS:N/TOTAL", "OK:PATH" or "FAIL:MESSAGE"
 *              lines; the zip named by OK is pulled. Without bugreportz and
 *              without PATH, the plain-text `bugreport` goes to stdout
 *   sideload   "sideload-host:SIZE:BLOCK": the device (recovery's minadbd)
 *              asks for blocks by number ("%08d"), each answered with that
 *              block of the file (the last one short), until "DONEDONE" or
 *              "FAILFAIL" */
#include "snap.h"
#include "write_all.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "adbc/sync.h"

static int cmd_jdwp(snap_ctx *ctx, int argc, char **argv);
static int cmd_bugreport(snap_ctx *ctx, int argc, char **argv);
static int cmd_sideload(snap_ctx *ctx, int argc, char **argv);

const snap_cmd snap_cmds_debug[] = {
    {"jdwp", cmd_jdwp, "jdwp", "list pids of processes hosting a JDWP transport"},
    {"bugreport", cmd_bugreport, "bugreport [PATH]",
     "take a zipped bug report and copy it to PATH (a file or directory; default: here)"},
    {"sideload", cmd_sideload, "sideload OTAPACKAGE",
     "send a full OTA package to a device in recovery's sideload mode"},
    {NULL, NULL, NULL, NULL},
};

static int cmd_jdwp(snap_ctx *ctx, int argc, char **argv)
{
    if (argc != 1)
        return snap_usage(&snap_cmds_debug[0], "takes no arguments");
    (void)argv;
    adbc_conn *c;
    if (snap_connect(ctx, &c) < 0)
        return SNAP_EXIT_FAIL;
    adbc_stream *s;
    int rc = adbc_stream_open(&s, c, "jdwp", ctx->timeout_ms);
    if (rc == ADBC_EREFUSED)
        return snap_error(SNAP_EXIT_FAIL, "jdwp", "the device refused the jdwp service (adbd "
                          "serves it on Android builds, not in recovery)");
    if (rc < 0)
        return snap_fail("jdwp", rc);
    char buf[4096];
    for (;;) {
        /* adb prints what comes until the device closes: no time bound
         * but --timeout's, when given. */
        ssize_t n = adbc_stream_read(s, buf, sizeof buf, ctx->stream_timeout_ms);
        if (n == 0 || n == ADBC_ECLOSED)
            break;
        if (n < 0) {
            adbc_stream_close(s);
            return snap_fail("jdwp", (int)n);
        }
        if (snap_write_all(1, buf, (size_t)n) != 0)
            break;
    }
    adbc_stream_close(s);
    return 0;
}

/* ---- bugreport ---- */

/* Run command in the shell; its stdout and stderr collected. */
static int run(adbc_run_result *r, adbc_conn *c, const char *command, int timeout_ms)
{
    return adbc_run(r, c, ADBC_SHELL_AUTO, command, NULL, 0, 1 << 20, timeout_ms);
}

typedef struct bugz {
    char src[1024];   /* the zip on the device (BEGIN:/OK:) */
    char dest[4096];  /* where it goes */
    int dest_is_dir;  /* dest names a directory: the device's file name goes in it */
    int failed, done;
    int last_pct;
    int quiet;
} bugz;

static void bugz_line(bugz *b, char *line)
{
    size_t n = strlen(line);
    if (n && line[n - 1] == '\r')
        line[--n] = '\0';
    if (!n)
        return;
    if (strncmp(line, "BEGIN:", 6) == 0 || strncmp(line, "OK:", 3) == 0) {
        snprintf(b->src, sizeof b->src, "%s", strchr(line, ':') + 1);
        b->done |= line[0] == 'O';
    } else if (strncmp(line, "FAIL:", 5) == 0) {
        fprintf(stderr, "adbc-snap: bugreport: the device failed to take a zipped bug report: "
                        "%s\n", line + 5);
        b->failed = 1;
    } else if (strncmp(line, "PROGRESS:", 9) == 0) {
        long cur = 0, total = 0;
        if (sscanf(line + 9, "%ld/%ld", &cur, &total) == 2 && total > 0 && cur >= 0) {
            int pct = (int)(cur * 100 / total);
            if (pct > b->last_pct && !b->quiet) {
                b->last_pct = pct;
                fprintf(stderr, "\r[%3d%%] generating", pct);
            }
        }
    } else {
        fprintf(stderr, "adbc-snap: bugreport: bugreportz printed a line it does not define: "
                        "%s\n", line);
    }
}

static int cmd_bugreport(snap_ctx *ctx, int argc, char **argv)
{
    if (argc > 2)
        return snap_usage(&snap_cmds_debug[1], "takes one PATH at most");
    adbc_conn *c;
    if (snap_connect(ctx, &c) < 0)
        return SNAP_EXIT_FAIL;
    adbc_run_result r;
    int rc = run(&r, c, "bugreportz -v", ctx->timeout_ms);
    if (rc < 0)
        return snap_fail("bugreport: bugreportz -v", rc);
    /* bugreportz prints its version on stderr ("1.2"). */
    int major = 0, minor = 0;
    int have = r.exit_code == 0 && r.err_len > 0 &&
               sscanf((const char *)r.err, "%d.%d", &major, &minor) == 2;
    adbc_run_result_clear(&r);
    if (!have) {
        if (argc == 2)
            return snap_error(SNAP_EXIT_FAIL, "bugreport",
                              "the device has no bugreportz (Android 7.0 and later have it); "
                              "for a plain-text report run `adbc-snap bugreport > "
                              "bugreport.txt`");
        fprintf(stderr, "adbc-snap: bugreport: the device has no bugreportz (Android 7.0 and "
                        "later have it): a plain-text bug report instead\n");
        adbc_shell *sh;
        if ((rc = adbc_shell_open(&sh, c, "bugreport", NULL, ctx->timeout_ms)) < 0)
            return snap_fail("bugreport", rc);
        char buf[16384];
        int fd;
        ssize_t n;
        while ((n = adbc_shell_read(sh, &fd, buf, sizeof buf, ctx->stream_timeout_ms)) > 0)
            snap_write_all(fd == 2 ? 2 : 1, buf, (size_t)n);
        adbc_shell_close(sh);
        return n < 0 ? snap_fail("bugreport", (int)n) : 0;
    }
    bugz b;
    memset(&b, 0, sizeof b);
    b.quiet = ctx->quiet;
    struct stat st;
    if (argc == 2 && stat(argv[1], &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(b.dest, sizeof b.dest, "%s", argv[1]);
        b.dest_is_dir = 1;
    } else if (argc == 2) {
        size_t n = strlen(argv[1]);
        /* As adb: the name gets ".zip" when it has none. */
        snprintf(b.dest, sizeof b.dest, "%s%s", argv[1],
                 n >= 4 && strcasecmp(argv[1] + n - 4, ".zip") == 0 ? "" : ".zip");
    } else if (getcwd(b.dest, sizeof b.dest)) {
        b.dest_is_dir = 1; /* as adb: here, under the device's name for it */
    } else {
        return snap_error(SNAP_EXIT_FAIL, "bugreport", "the current directory: %s",
                          strerror(errno));
    }
    const char *cmd = major == 1 && minor == 0 ? "bugreportz" : "bugreportz -p";
    if (major == 1 && minor == 0 && !ctx->quiet)
        fprintf(stderr, "Bugreport is in progress and it could take minutes to complete.\n"
                        "Please be patient and do not cancel or disconnect your device until "
                        "it completes.\n");
    adbc_shell *sh;
    if ((rc = adbc_shell_open(&sh, c, cmd, NULL, ctx->timeout_ms)) < 0)
        return snap_fail("bugreport", rc);
    char line[2048];
    size_t len = 0;
    ssize_t n;
    char buf[4096];
    int fd;
    /* A report takes minutes: no bound but --timeout's, when given. */
    while ((n = adbc_shell_read(sh, &fd, buf, sizeof buf, ctx->stream_timeout_ms)) > 0) {
        if (fd == 2) {
            snap_write_all(2, buf, (size_t)n);
            continue;
        }
        for (ssize_t i = 0; i < n; i++) {
            if (buf[i] == '\n' || len + 1 == sizeof line) {
                line[len] = '\0';
                bugz_line(&b, line);
                len = 0;
                if (buf[i] == '\n')
                    continue;
            }
            line[len++] = buf[i];
        }
    }
    line[len] = '\0';
    bugz_line(&b, line);
    adbc_shell_close(sh);
    if (b.last_pct > 0)
        fputc('\n', stderr);
    if (n < 0)
        return snap_fail("bugreport", (int)n);
    if (b.failed)
        return SNAP_EXIT_FAIL;
    if (!b.done || !b.src[0])
        return snap_error(SNAP_EXIT_FAIL, "bugreport", "bugreportz ended without an OK: or "
                          "FAIL: line");
    char dest[4096 + 1024];
    if (b.dest_is_dir) {
        const char *base = strrchr(b.src, '/');
        snprintf(dest, sizeof dest, "%s/%s", b.dest, base ? base + 1 : b.src);
    } else {
        snprintf(dest, sizeof dest, "%s", b.dest);
    }
    adbc_sync *s;
    if ((rc = adbc_sync_open(&s, c, ctx->timeout_ms)) < 0)
        return snap_fail("bugreport: sync", rc);
    rc = adbc_sync_pull(NULL, s, b.src, dest, NULL, ctx->timeout_ms);
    adbc_sync_close(s);
    if (rc < 0)
        return snap_error(SNAP_EXIT_FAIL, "bugreport",
                          "the bug report is done but could not be copied to '%s' (%s); "
                          "`adbc-snap pull %s DIRECTORY` copies it elsewhere",
                          dest, adbc_last_error(), b.src);
    printf("Bug report copied to %s\n", dest);
    return 0;
}

/* ---- sideload ---- */

#define SIDELOAD_BLOCK (64 * 1024) /* adb's SIDELOAD_HOST_BLOCK_SIZE */

static int cmd_sideload(snap_ctx *ctx, int argc, char **argv)
{
    if (argc != 2)
        return snap_usage(&snap_cmds_debug[2], "give the OTA package");
    const char *file = argv[1];
    int fd = open(file, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        return snap_error(SNAP_EXIT_FAIL, "sideload", "cannot read %s: %s", file,
                          fd >= 0 ? "not a regular file" : strerror(e));
    }
    adbc_conn *c;
    if (snap_connect(ctx, &c) < 0) {
        close(fd);
        return SNAP_EXIT_FAIL;
    }
    char svc[64];
    snprintf(svc, sizeof svc, "sideload-host:%lld:%d", (long long)st.st_size, SIDELOAD_BLOCK);
    adbc_stream *s;
    int rc = adbc_stream_open(&s, c, svc, ctx->timeout_ms);
    if (rc < 0) {
        close(fd);
        if (rc == ADBC_EREFUSED)
            return snap_error(SNAP_EXIT_FAIL, "sideload",
                              "the device refused sideload-host: it must be in recovery's "
                              "sideload mode (`adbc-snap reboot sideload`, or Apply update "
                              "from ADB in recovery)");
        return snap_fail("sideload", rc);
    }
    char *buf = malloc(SIDELOAD_BLOCK);
    long long xfer = 0, size = st.st_size;
    int last_pct = -1, status = 0;
    for (;;) {
        char cmd[9];
        /* The device reads and verifies at its pace: no bound but
         * --timeout's, when given. */
        rc = buf ? adbc_stream_read_full(s, cmd, 8, ctx->stream_timeout_ms) : ADBC_ENOMEM;
        if (rc < 0) {
            status = snap_fail("sideload: reading the device's request", rc);
            break;
        }
        cmd[8] = '\0';
        if (strcmp(cmd, "DONEDONE") == 0 || strcmp(cmd, "FAILFAIL") == 0) {
            printf("\rTotal xfer: %.2fx%*s\n", (double)xfer / (double)(size ? size : 1),
                   (int)strlen(file) + 10, "");
            if (cmd[0] == 'F')
                status = snap_error(SNAP_EXIT_FAIL, "sideload", "the device failed to install "
                                    "the package (its recovery screen says why)");
            break;
        }
        char *end;
        long long block = strtoll(cmd, &end, 10);
        if (*end || block < 0) {
            status = snap_error(SNAP_EXIT_FAIL, "sideload", "the device asked for \"%s\", not "
                                "a block number", cmd);
            break;
        }
        long long off = block * SIDELOAD_BLOCK;
        if (off >= size) {
            status = snap_error(SNAP_EXIT_FAIL, "sideload", "the device asked for block %lld "
                                "at offset %lld, past the end %lld", block, off, size);
            break;
        }
        size_t want = size - off < SIDELOAD_BLOCK ? (size_t)(size - off) : SIDELOAD_BLOCK;
        ssize_t got = pread(fd, buf, want, off);
        if (got != (ssize_t)want) {
            status = snap_error(SNAP_EXIT_FAIL, "sideload", "reading block %lld of %s: %s",
                                block, file, got < 0 ? strerror(errno) : "the file shrank");
            break;
        }
        if ((rc = adbc_stream_write(s, buf, want, ctx->timeout_ms)) < 0) {
            status = snap_fail("sideload: sending a block", rc);
            break;
        }
        xfer += (long long)want;
        /* As adb: a package is read about twice over (verified, then
         * installed), so 100% is about 2.13 times its size. */
        int pct = (int)(xfer * 47 / (size ? size : 1));
        if (pct != last_pct) {
            printf("\rserving: '%s'  (~%d%%)    ", file, pct);
            fflush(stdout);
            last_pct = pct;
        }
    }
    free(buf);
    adbc_stream_close(s);
    close(fd);
    return status;
}
