/* SPDX-License-Identifier: Apache-2.0 */
/* The adbkey.pub line: base64 of the public key struct, a space, a comment.
 *
 * adb's comment is user@host: $LOGNAME else getlogin(), and $HOSTNAME else
 * gethostname(). With both variables set (as in a login shell) every adb
 * version writes the same text, so our line is byte-identical to the .pub
 * file `adb keygen` writes for the same key. Where adb versions disagree
 * (neither found: Debian's adb 29 writes " @unknown", later versions
 * " @host") we fall back to the passwd entry and then "unknown", which at least names
 * something. */
#include "auth/auth_internal.h"

#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Longest comment accepted: the whole line travels in one AUTH packet, and
 * the oldest devices take at most 4096 bytes of payload. */
#define MAX_COMMENT 1024

void auth_user_host(char *buf, size_t size)
{
    char host[256] = "", login[256] = "", pwbuf[4096];
    /* The reentrant calls, since keys may be used from several threads.
     * Bionic has getlogin_r only from API 28 (Termux builds for 24): there
     * the passwd entry below names the user. */
    const char *user = getenv("LOGNAME");
#if !defined(__ANDROID__) || __ANDROID_API__ >= 28
    if ((!user || !*user) && getlogin_r(login, sizeof login) == 0 && login[0])
        user = login;
#else
    (void)login;
#endif
    if (!user || !*user) {
        struct passwd pw, *found = NULL;
        if (getpwuid_r(geteuid(), &pw, pwbuf, sizeof pwbuf, &found) == 0 && found &&
            found->pw_name && *found->pw_name)
            user = found->pw_name;
        else
            user = "unknown";
    }
    const char *env_host = getenv("HOSTNAME");
    if (env_host && *env_host) {
        snprintf(host, sizeof host, "%s", env_host);
    } else if (gethostname(host, sizeof host - 1) != 0 || host[0] == '\0') {
        snprintf(host, sizeof host, "unknown");
    }
    host[sizeof host - 1] = '\0';

    snprintf(buf, size, "%.255s@%s", user, host);
    /* A newline in $LOGNAME must not become a second line in adb_keys. */
    for (char *p = buf; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = '_';
}

int adbc_key_public_line(char **out, const adbc_key *key, const char *comment)
{
    if (!out)
        return core_fail(ADBC_EINVAL, "adbc_key_public_line: out is NULL");
    *out = NULL;
    if (!key || !key->pkey)
        return core_fail(ADBC_EINVAL, "adbc_key_public_line: key is NULL");

    char who[600];
    if (!comment) {
        auth_user_host(who, sizeof who);
        comment = who;
    } else {
        size_t clen = strlen(comment);
        if (clen > MAX_COMMENT)
            return core_fail(ADBC_EINVAL,
                             "public key comment is %zu bytes; at most %d are allowed", clen,
                             MAX_COMMENT);
        for (const char *p = comment; *p; p++)
            if ((unsigned char)*p < 0x20 || *p == 0x7f)
                return core_fail(ADBC_EINVAL,
                                 "public key comment contains a control character "
                                 "(newline?): use printable text");
    }

    uint8_t raw[ADBC_PUBKEY_SIZE];
    int rc = pubkey_encode(key->pkey, raw);
    if (rc)
        return rc;

    size_t clen = strlen(comment);
    size_t len = ADBC_PUBKEY_B64_LEN + (clen ? 1 + clen : 0);
    char *line = core_malloc(len + 1);
    if (!line)
        return core_fail(ADBC_ENOMEM, "out of memory building the public key line");
    b64_encode(raw, sizeof raw, line);
    if (clen) {
        line[ADBC_PUBKEY_B64_LEN] = ' ';
        memcpy(line + ADBC_PUBKEY_B64_LEN + 1, comment, clen + 1);
    }
    *out = line;
    return 0;
}
