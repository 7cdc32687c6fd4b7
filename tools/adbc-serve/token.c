/* SPDX-License-Identifier: Apache-2.0 */
/* The bearer token. From ADBC_SERVE_TOKEN, or a file that holds it: when the
 * file is missing it is created (O_EXCL, mode 0600) with 32 random bytes
 * from getrandom() written as 64 hex digits. A file others can read is
 * refused: the token is the only thing between the network and the phone.
 * Comparison takes the same time wherever the first difference is. */
#include "serve.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ops_util.h"

static int valid(const char *t)
{
    size_t n = strlen(t);
    if (n < 16 || n > 2 * SERVE_TOKEN_BYTES)
        return 0;
    for (const char *p = t; *p; p++)
        if (*p <= ' ' || *p > '~')
            return 0;
    return 1;
}

static int create(const char *path)
{
    unsigned char raw[SERVE_TOKEN_BYTES];
    size_t got = 0;
    while (got < sizeof raw) {
        ssize_t k = getrandom(raw + got, sizeof raw - got, 0);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            fprintf(stderr, SERVE_NAME ": getrandom: %s\n", strerror(errno));
            return -1;
        }
        got += (size_t)k;
    }
    char hex[2 * SERVE_TOKEN_BYTES + 2];
    for (size_t i = 0; i < sizeof raw; i++)
        snprintf(hex + 2 * i, 3, "%02x", raw[i]);
    strcat(hex, "\n");
    if (ops_write_file_atomic(path, hex, strlen(hex), 0600,
                              OPS_FILE_SYNC | OPS_FILE_NOREPLACE) != 0) {
        fprintf(stderr, SERVE_NAME ": cannot create the token file %s: %s\n", path,
                strerror(errno));
        return -1;
    }
    fprintf(stderr, SERVE_NAME ": created the token file %s (mode 0600)\n", path);
    return 0;
}

static void mkparent(const char *path)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    for (char *p = dir + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            mkdir(dir, 0700);
            *p = '/';
        }
}

int serve_secret_read(const char *path, const char *what, char *out, size_t cap, char *why,
                      size_t whycap)
{
    /* O_NOFOLLOW: a link planted in the file's place (by whoever can
     * write its directory) is refused, not followed. */
    struct stat st;
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        snprintf(why, whycap, "%s %s: %s%s", what, path, strerror(errno),
                 errno == ELOOP ? " (it may not be a symbolic link)" : "");
        return -1;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(why, whycap, "%s %s is not a regular file", what, path);
        close(fd);
        return -1;
    }
    if (st.st_uid != geteuid()) {
        snprintf(why, whycap, "%s %s belongs to user %u, not to this user (%u): its owner "
                 "could change it; chown it", what, path, (unsigned)st.st_uid,
                 (unsigned)geteuid());
        close(fd);
        return -1;
    }
    if (st.st_mode & 077) {
        snprintf(why, whycap, "%s %s is readable by others (mode %03o): chmod 600 it", what,
                 path, (unsigned)(st.st_mode & 0777));
        close(fd);
        return -1;
    }
    char buf[512];
    ssize_t got = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (got < 0)
        got = 0;
    buf[got] = '\0';
    /* One line and nothing after it: a NUL byte, or junk past the line,
     * means the file is not one secret. */
    size_t line = strcspn(buf, "\r\n");
    size_t end = line;
    while (end < (size_t)got && (buf[end] == '\r' || buf[end] == '\n'))
        end++;
    if (memchr(buf, '\0', (size_t)got) || end != (size_t)got || line >= cap) {
        explicit_bzero(buf, sizeof buf);
        snprintf(why, whycap, "%s %s must hold one line of at most %zu bytes", what, path,
                 cap - 1);
        return -1;
    }
    memcpy(out, buf, line);
    out[line] = '\0';
    explicit_bzero(buf, sizeof buf);
    return 0;
}

int serve_token_load(serve *s, const char *path)
{
    const char *env = getenv("ADBC_SERVE_TOKEN");
    if (env && *env) {
        if (!valid(env)) {
            fprintf(stderr, SERVE_NAME ": ADBC_SERVE_TOKEN must be 16 to 64 printable "
                            "characters without spaces\n");
            return -1;
        }
        s->token_len = strlen(env);
        memcpy(s->token, env, s->token_len + 1); /* valid(): at most 64 bytes */
        return 0;
    }
    struct stat st;
    if (lstat(path, &st) != 0) {
        if (errno != ENOENT) {
            fprintf(stderr, SERVE_NAME ": %s: %s\n", path, strerror(errno));
            return -1;
        }
        mkparent(path);
        if (create(path) != 0)
            return -1;
    }
    char buf[256], why[512];
    if (serve_secret_read(path, "the token file", buf, sizeof buf, why, sizeof why) != 0) {
        fprintf(stderr, SERVE_NAME ": %s%s\n", why, strstr(why, "one line") ? " (delete it to "
                "have a new one made)" : "");
        return -1;
    }
    if (!valid(buf)) {
        fprintf(stderr, SERVE_NAME ": the token file %s must hold one line of 16 to 64 "
                        "printable characters (delete it to have a new one made)\n", path);
        return -1;
    }
    s->token_len = strlen(buf);
    memcpy(s->token, buf, s->token_len + 1); /* valid(): at most 64 bytes */
    return 0;
}

int serve_token_ok(const serve *s, const char *given)
{
    return given && ops_secret_equal(s->token, s->token_len, given, strlen(given));
}
