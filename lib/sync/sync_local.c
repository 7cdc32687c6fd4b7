/* SPDX-License-Identifier: Apache-2.0 */
/* Local file-system helpers for push and pull: path joining, mkdir -p, the
 * umask, and the temporary files pulls are received into. */
#include "sync/sync_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char *sync_join(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    int slash = la > 0 && a[la - 1] == '/';
    char *out = core_malloc(la + lb + 2);
    if (!out)
        return NULL;
    memcpy(out, a, la);
    if (!slash)
        out[la++] = '/';
    memcpy(out + la, b, lb + 1);
    return out;
}

int sync_mkdirs(const char *path)
{
    char *p = core_strdup(path);
    if (!p)
        return core_fail(ADBC_ENOMEM, "out of memory");
    int rc = 0;
    size_t len = strlen(p);
    for (size_t i = 1; i <= len && rc == 0; i++) {
        if (p[i] != '/' && p[i] != '\0')
            continue;
        char c = p[i];
        p[i] = '\0';
        struct stat st;
        if (mkdir(p, 0777) != 0) {
            int e = errno;
            if (e == EEXIST && stat(p, &st) == 0 && !S_ISDIR(st.st_mode))
                rc = core_fail(ADBC_EIO,
                               "cannot create local directory %s: a file is in the way", p);
            else if (e != EEXIST)
                rc = core_fail(e == EACCES || e == EPERM ? ADBC_EPERM : ADBC_EIO,
                               "cannot create local directory %s: %s", p, strerror(e));
        }
        p[i] = c;
    }
    core_free(p);
    return rc;
}

mode_t sync_umask(void)
{
    /* umask() can only be read by setting it, which races with other
     * threads creating files; /proc/self/status has it (Linux 4.7+). */
    mode_t m = 022;
    FILE *f = fopen("/proc/self/status", "re");
    if (!f)
        return m;
    char line[256];
    while (fgets(line, sizeof line, f)) {
        unsigned v;
        if (sscanf(line, "Umask: %o", &v) == 1) {
            m = (mode_t)(v & 0777);
            break;
        }
    }
    fclose(f);
    return m;
}

