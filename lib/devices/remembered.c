/* SPDX-License-Identifier: Apache-2.0 */
/* The remembered TCP devices: what `adb connect` leaves in an adb server's
 * transport list, kept here in a small per-user file, since adbc has no
 * server (one HOST:PORT a line, mode 0600, replaced atomically). A file
 * rather than a running process: it costs nothing until it is read, every
 * front end and program sees the same list, and it survives a reboot as
 * the user's intent ("this is my device") should. */
#include "devices_int.h"

#include "auth/auth_internal.h"
#include "core/internal.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The file holds at most this many devices (a list for people). */
#define REMEMBERED_MAX 256
#define REMEMBERED_FILE_MAX (REMEMBERED_MAX * 260)

static int make_dirs(char *path)
{
    for (char *p = path + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        int rc = mkdir(path, 0700);
        *p = '/';
        if (rc != 0 && errno != EEXIST)
            return -1;
    }
    return 0;
}

int adbc_remembered_path(char *buf, size_t cap)
{
    if (!buf || cap == 0)
        return core_fail(ADBC_EINVAL, "adbc_remembered_path: buf must not be NULL");
    const char *env = getenv("ADBC_DEVICES_FILE");
    const char *state = getenv("XDG_STATE_HOME");
    const char *home = getenv("HOME");
    int n;
    if (env && *env)
        n = snprintf(buf, cap, "%s", env);
    else if (state && *state == '/')
        n = snprintf(buf, cap, "%s/adbc/devices", state);
    else if (home && *home)
        n = snprintf(buf, cap, "%s/.local/state/adbc/devices", home);
    else
        return core_fail(ADBC_ENOTFOUND, "no place for the remembered devices: set HOME, "
                                         "XDG_STATE_HOME or ADBC_DEVICES_FILE");
    if (n < 0 || (size_t)n >= cap)
        return core_fail(ADBC_EINVAL, "the remembered devices' path is too long");
    return 0;
}

void adbc_remembered_free(char **list, size_t count)
{
    if (!list)
        return;
    for (size_t i = 0; i < count; i++)
        core_free(list[i]);
    core_free(list);
}

int adbc_remembered_list(char ***out, size_t *count)
{
    if (!out || !count)
        return core_fail(ADBC_EINVAL, "adbc_remembered_list: out and count must not be NULL");
    *out = NULL;
    *count = 0;
    char path[PATH_MAX];
    int rc = adbc_remembered_path(path, sizeof path);
    if (rc < 0)
        return rc;
    char *data = NULL;
    size_t len = 0;
    rc = auth_read_file(path, "remembered devices", REMEMBERED_FILE_MAX, &data, &len, NULL);
    if (rc == ADBC_ENOTFOUND) {
        adbc_clear_error();
        return 0; /* nothing remembered yet */
    }
    if (rc < 0)
        return rc;
    char **list = core_calloc(REMEMBERED_MAX, sizeof *list);
    if (!list) {
        core_free(data);
        return core_fail(ADBC_ENOMEM, "out of memory");
    }
    size_t n = 0;
    for (char *line = data, *next; line && line < data + len && n < REMEMBERED_MAX;
         line = next) {
        char *nl = memchr(line, '\n', (size_t)(data + len - line));
        next = nl ? nl + 1 : NULL;
        if (nl)
            *nl = '\0';
        else
            line[data + len - line] = '\0';
        /* A line that is not a HOST:PORT (an edit gone wrong) is skipped. */
        if (!adbc_device_is_tcp(line) || strlen(line) > 255)
            continue;
        if (!(list[n] = core_strdup(line))) {
            adbc_remembered_free(list, n);
            core_free(data);
            return core_fail(ADBC_ENOMEM, "out of memory");
        }
        n++;
    }
    core_free(data);
    if (n == 0) {
        core_free(list);
        list = NULL;
    }
    *out = list;
    *count = n;
    return 0;
}

/* Write the list (without `drop`, plus `add`) back. */
static int store(char **list, size_t n, const char *drop, const char *add)
{
    char path[PATH_MAX];
    int rc = adbc_remembered_path(path, sizeof path);
    if (rc < 0)
        return rc;
    size_t cap = 1 + (add ? strlen(add) + 1 : 0);
    for (size_t i = 0; i < n; i++)
        cap += strlen(list[i]) + 1;
    char *text = core_malloc(cap), *w = text;
    if (!text)
        return core_fail(ADBC_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        if (drop && strcmp(list[i], drop) == 0)
            continue;
        w += sprintf(w, "%s\n", list[i]);
    }
    if (add)
        w += sprintf(w, "%s\n", add);
    if (make_dirs(path) != 0) {
        rc = core_fail(ADBC_EIO, "cannot create the directory of %s: %s", path,
                       strerror(errno));
    } else {
        rc = core_file_write_atomic(path, text, (size_t)(w - text), 0600,
                                    CORE_FILE_SYNC | CORE_FILE_SYNC_DIR);
    }
    core_free(text);
    return rc;
}

int adbc_remembered_add(const char *serial)
{
    if (!serial || !adbc_device_is_tcp(serial) || strlen(serial) > 255)
        return core_fail(ADBC_EINVAL, "a remembered device is a TCP device: HOST:PORT or "
                                      "[v6]:PORT (not \"%.100s\")",
                         serial ? serial : "(null)");
    char **list;
    size_t n;
    int rc = adbc_remembered_list(&list, &n);
    if (rc < 0)
        return rc;
    for (size_t i = 0; i < n; i++)
        if (strcmp(list[i], serial) == 0) {
            adbc_remembered_free(list, n);
            return 1; /* already there */
        }
    if (n >= REMEMBERED_MAX) {
        adbc_remembered_free(list, n);
        return core_fail(ADBC_ELIMIT, "%d devices are remembered already: disconnect some",
                         REMEMBERED_MAX);
    }
    rc = store(list, n, NULL, serial);
    adbc_remembered_free(list, n);
    return rc;
}

int adbc_remembered_remove(const char *serial)
{
    char **list;
    size_t n;
    int rc = adbc_remembered_list(&list, &n);
    if (rc < 0)
        return rc;
    int found = !serial && n > 0;
    for (size_t i = 0; serial && i < n; i++)
        found |= strcmp(list[i], serial) == 0;
    if (!found) {
        adbc_remembered_free(list, n);
        return serial ? core_fail(ADBC_ENOTFOUND, "no such device '%s' is remembered", serial)
                      : 0;
    }
    rc = serial ? store(list, n, serial, NULL) : store(NULL, 0, NULL, NULL);
    adbc_remembered_free(list, n);
    return rc;
}
