/* SPDX-License-Identifier: Apache-2.0 */
/* ADB_VENDOR_KEYS: a colon-separated list of key files and directories.
 *
 * As in adb, a file is loaded as a private key, and a directory contributes
 * the files directly inside it whose names end in ".adb_key" (no recursion).
 * Unlike adb, which logs a bad entry and carries on, a path that does not
 * exist or a key that does not load is an error naming the file: a silently
 * missing vendor key shows up much later as an unexplained "unauthorized".
 * Empty entries (a stray or trailing ':') are skipped. Directory entries are
 * taken in name order so the key order does not depend on the filesystem. */
#include "auth/auth_internal.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define SUFFIX ".adb_key"

static int load_into(adbc_keyring *ring, const char *path)
{
    adbc_key *key;
    int rc = adbc_key_load(&key, path, 0);
    if (rc)
        return rc;
    return adbc_keyring_add(ring, key);
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int has_suffix(const char *name)
{
    size_t n = strlen(name), s = sizeof SUFFIX - 1;
    return n >= s && memcmp(name + n - s, SUFFIX, s) == 0;
}

static int load_dir(adbc_keyring *ring, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return core_fail(errno == EACCES ? ADBC_EPERM : ADBC_EIO,
                         "cannot list vendor key directory %s: %s", dir, strerror(errno));
    char **names = NULL;
    size_t count = 0, cap = 0;
    int rc = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!has_suffix(e->d_name))
            continue;
        if (count == cap) {
            size_t ncap = cap ? cap * 2 : 8;
            char **n = core_realloc(names, ncap * sizeof *n);
            if (!n) {
                rc = core_fail(ADBC_ENOMEM, "out of memory listing %s", dir);
                break;
            }
            names = n;
            cap = ncap;
        }
        if (!(names[count] = core_strdup(e->d_name))) {
            rc = core_fail(ADBC_ENOMEM, "out of memory listing %s", dir);
            break;
        }
        count++;
    }
    closedir(d);
    if (!rc && count)
        qsort(names, count, sizeof *names, cmp_names);

    size_t dlen = strlen(dir);
    for (size_t i = 0; i < count && !rc; i++) {
        char *path = core_malloc(dlen + 1 + strlen(names[i]) + 1);
        if (!path) {
            rc = core_fail(ADBC_ENOMEM, "out of memory listing %s", dir);
            break;
        }
        memcpy(path, dir, dlen);
        path[dlen] = '/';
        strcpy(path + dlen + 1, names[i]);
        rc = load_into(ring, path);
        core_free(path);
    }
    for (size_t i = 0; i < count; i++)
        core_free(names[i]);
    core_free(names);
    return rc;
}

static int load_entry(adbc_keyring *ring, const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        if (errno == ENOENT || errno == ENOTDIR)
            return core_fail(ADBC_ENOTFOUND,
                             "vendor key %s does not exist: fix ADB_VENDOR_KEYS", path);
        return core_fail(errno == EACCES ? ADBC_EPERM : ADBC_EIO, "cannot stat vendor key %s: %s",
                         path, strerror(errno));
    }
    if (S_ISDIR(st.st_mode))
        return load_dir(ring, path);
    if (S_ISREG(st.st_mode))
        return load_into(ring, path);
    return core_fail(ADBC_EKEY, "vendor key %s is neither a file nor a directory", path);
}

int adbc_keyring_add_vendor_keys(adbc_keyring *ring, const char *spec)
{
    if (!ring || !spec)
        return core_fail(ADBC_EINVAL, "adbc_keyring_add_vendor_keys: ring and spec are required");

    /* Collect into a scratch ring so a failure leaves `ring` untouched. */
    adbc_keyring *tmp;
    int rc = adbc_keyring_new(&tmp);
    if (rc)
        return rc;
    const char *p = spec;
    while (!rc) {
        const char *end = strchr(p, ':');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n) {
            char *path = core_strndup(p, n);
            rc = path ? load_entry(tmp, path)
                      : core_fail(ADBC_ENOMEM, "out of memory reading ADB_VENDOR_KEYS");
            core_free(path);
        }
        if (!end)
            break;
        p = end + 1;
    }
    if (!rc)
        rc = keyring_merge(ring, tmp);
    adbc_keyring_free(tmp);
    return rc;
}
