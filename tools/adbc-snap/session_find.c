/* SPDX-License-Identifier: Apache-2.0 */
/* How a command finds the session of its device (session_find.h). */
#include "session_find.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

int snap_seconds(const char *s, double max_s, int *ms)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    /* NaN and infinities pass a range check written as v <= 0 || v > max
     * (every comparison with NaN is false), and converting them to int is
     * undefined: refuse anything that is not a finite number in range. */
    if (end == s || *end || errno == ERANGE || !isfinite(v) || !(v > 0) || !(v <= max_s))
        return -1;
    double m = v * 1000;
    *ms = m < 1 ? 1 : (int)m;
    return 0;
}

int snap_globals_parse(int argc, char **argv, snap_globals *g, int *bad)
{
    *g = (snap_globals){.timeout_ms = 30000, .stream_timeout_ms = -1};
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        const char *a = argv[i];
        if ((strcmp(a, "-s") == 0 || strcmp(a, "-t") == 0) && i + 1 < argc) {
            /* Each names the device: both at once is a contradiction, not
             * a preference (one of them would be ignored silently). */
            if (a[1] == 's' ? g->target != NULL : g->serial != NULL) {
                *bad = i;
                return SNAP_G_CONFLICT;
            }
            if (a[1] == 's')
                g->serial = argv[++i];
            else
                g->target = argv[++i];
        } else if (strcmp(a, "--timeout") == 0 && i + 1 < argc) {
            if (snap_seconds(argv[++i], 86400, &g->timeout_ms) < 0) {
                *bad = i;
                return SNAP_G_BAD_TIMEOUT;
            }
            g->stream_timeout_ms = g->timeout_ms;
            g->timeout_set = 1;
        } else if (strcmp(a, "-q") == 0) {
            g->quiet = 1;
        } else if (strcmp(a, "--no-session") == 0) {
            g->no_session = 1;
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            return SNAP_G_HELP;
        } else if (strcmp(a, "--version") == 0) {
            return SNAP_G_VERSION;
        } else {
            *bad = i;
            return SNAP_G_UNKNOWN;
        }
    }
    return i < argc ? i : SNAP_G_NO_COMMAND;
}

/* Whether the command's arguments (argv[1..]) hold the option opt: among
 * the leading options only for commands whose arguments go to the device
 * (shell, exec), else anywhere before "--". */
int snap_has_opt(const char *name, int argc, char **argv, const char *opt)
{
    int passthrough = strcmp(name, "shell") == 0 || strcmp(name, "exec") == 0 ||
                      strcmp(name, "exec-out") == 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0 || (passthrough && argv[i][0] != '-'))
            break;
        if (strcmp(argv[i], opt) == 0)
            return 1;
    }
    return 0;
}

const char *snap_session_name(const snap_globals *g)
{
    if (g->target)
        return g->target;
    if (g->serial && *g->serial)
        return g->serial;
    const char *env = getenv("ANDROID_SERIAL");
    return env && *env ? env : NULL;
}

int snap_session_path(char *buf, size_t cap, const char *name, const char *ext, int loud)
{
    const char *rt = getenv("XDG_RUNTIME_DIR");
    char dir[PATH_MAX];
    if (rt && *rt)
        snprintf(dir, sizeof dir, "%s/adbc", rt);
    else
        snprintf(dir, sizeof dir, "/tmp/adbc-%u", (unsigned)getuid());
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
        if (loud)
            fprintf(stderr, "adbc-snap: cannot create %s: %s\n", dir, strerror(errno));
        return -1;
    }
    struct stat st;
    if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid() ||
        (st.st_mode & 077)) {
        if (loud)
            fprintf(stderr, "adbc-snap: %s must be a directory of ours with mode 0700\n", dir);
        return -1;
    }
    char esc[3 * 256 + 1];
    size_t k = 0;
    for (const unsigned char *p = (const unsigned char *)name; *p && k + 4 < sizeof esc; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
            *p == '.' || *p == '-' || *p == '_')
            esc[k++] = (char)*p;
        else
            k += (size_t)snprintf(esc + k, sizeof esc - k, "%%%02X", *p);
    }
    esc[k] = '\0';
    int n = snprintf(buf, cap, "%s/session-%s.%s", dir, esc, ext);
    if (n < 0 || (size_t)n >= cap || (strcmp(ext, "sock") == 0 && (size_t)n >= 108)) {
        if (loud)
            fprintf(stderr, "adbc-snap: the session path is too long: %s\n", buf);
        return -1;
    }
    return 0;
}

int snap_session_dial(const char *sock)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(sock) >= sizeof sa.sun_path)
        return -1;
    memcpy(sa.sun_path, sock, strlen(sock) + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

char *snap_join(int argc, char **argv, int from)
{
    size_t n = 1;
    for (int i = from; i < argc; i++)
        n += strlen(argv[i]) + 1;
    char *s = malloc(n);
    if (!s)
        return NULL;
    s[0] = '\0';
    for (int i = from; i < argc; i++) {
        if (i > from)
            strcat(s, " ");
        strcat(s, argv[i]);
    }
    return s;
}
