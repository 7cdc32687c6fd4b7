/* SPDX-License-Identifier: Apache-2.0 */
/* The keys adb itself would use: the user key, then ADB_VENDOR_KEYS.
 *
 * Where the user key lives, as adb decides it on Linux and macOS:
 *   $ANDROID_USER_HOME/adbkey   (newer adb versions)
 *   $HOME/.android/adbkey       (every version)
 *   <passwd home>/.android/adbkey when HOME is unset (later versions)
 * ANDROID_SDK_HOME is not consulted: adb only ever read it on Windows, so
 * honouring it here would pick a different key than adb on the same
 * machine. An empty variable counts as unset. */
#include "auth/auth_internal.h"

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int user_dir(char *buf, size_t size)
{
    const char *dir = getenv("ANDROID_USER_HOME");
    int n;
    if (dir && *dir) {
        n = snprintf(buf, size, "%s", dir);
    } else {
        const char *home = getenv("HOME");
        struct passwd pw, *found = NULL;
        char pwbuf[4096];
        if ((!home || !*home) &&
            getpwuid_r(getuid(), &pw, pwbuf, sizeof pwbuf, &found) == 0 && found)
            home = found->pw_dir;
        if (!home || !*home)
            return core_fail(ADBC_ENOTFOUND,
                             "cannot find the home directory for the adb key: set HOME or "
                             "ANDROID_USER_HOME");
        n = snprintf(buf, size, "%s/.android", home);
    }
    if (n < 0 || (size_t)n >= size)
        return core_fail(ADBC_EINVAL, "adb key directory path is too long");
    return 0;
}

/* Create the user key: directory 0750 as adb makes it, key 0600, .pub. */
static int create_user_key(const char *dir, const char *path)
{
    if (mkdir(dir, 0750) != 0 && errno != EEXIST)
        return core_fail(errno == EACCES ? ADBC_EPERM : ADBC_EIO,
                         "cannot create adb key directory %s: %s", dir, strerror(errno));
    adbc_key *key;
    int rc = adbc_key_generate(&key, 2048);
    if (rc)
        return rc;
    rc = key_save_ex(key, path, 0);
    adbc_key_free(key);
    /* Another process created the key first: theirs is the one to use. */
    if (rc == ADBC_EBUSY)
        rc = 0;
    return rc;
}

int adbc_keyring_load_default(adbc_keyring **out, int generate)
{
    if (!out)
        return core_fail(ADBC_EINVAL, "adbc_keyring_load_default: out is NULL");
    *out = NULL;

    char dir[4096], path[4096 + 8];
    int rc = user_dir(dir, sizeof dir);
    if (rc)
        return rc;
    snprintf(path, sizeof path, "%s/adbkey", dir);

    adbc_keyring *ring;
    if ((rc = adbc_keyring_new(&ring)))
        return rc;

    adbc_key *key;
    rc = adbc_key_load(&key, path, 0);
    if (rc == ADBC_ENOTFOUND && generate) {
        rc = create_user_key(dir, path);
        if (!rc)
            /* Load what is on disk now, which may be another process's key. */
            rc = adbc_key_load(&key, path, 0);
    }
    if (!rc)
        rc = adbc_keyring_add(ring, key);
    else if (rc == ADBC_ENOTFOUND && !generate)
        rc = 0; /* no user key, and none wanted: vendor keys may still do */
    if (rc)
        goto fail;

    const char *vendor = getenv("ADB_VENDOR_KEYS");
    if (vendor && *vendor && (rc = adbc_keyring_add_vendor_keys(ring, vendor)))
        goto fail;

    if (adbc_keyring_count(ring) == 0) {
        rc = core_fail(ADBC_ENOTFOUND,
                       "no adb key: %s does not exist and ADB_VENDOR_KEYS names none; create "
                       "one with `adbc-snap keygen %s` or let adbc generate it",
                       path, path);
        goto fail;
    }
    *out = ring;
    return 0;
fail:
    adbc_keyring_free(ring);
    return rc;
}
