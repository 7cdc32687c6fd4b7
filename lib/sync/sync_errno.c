/* SPDX-License-Identifier: Apache-2.0 */
/* errno on the sync: wire: adb sends Linux's numbers whatever the host
 * (sysdeps/errno.cpp); these translate both ways and name them. */
#include "sync/sync_proto.h"
#include "core/internal.h"

#include <errno.h>

/* ---- errno ---- */

/* adb's wire errno values are Linux's (sysdeps/errno.cpp). */
static const struct {
    uint32_t wire;
    int host;
    const char *name, *text;
} errnos[] = {
    {1, EPERM, "EPERM", "Operation not permitted"},
    {2, ENOENT, "ENOENT", "No such file or directory"},
    {4, EINTR, "EINTR", "Interrupted system call"},
    {5, EIO, "EIO", "I/O error"},
    {12, ENOMEM, "ENOMEM", "Out of memory"},
    {13, EACCES, "EACCES", "Permission denied"},
    {14, EFAULT, "EFAULT", "Bad address"},
    {17, EEXIST, "EEXIST", "File exists"},
    {20, ENOTDIR, "ENOTDIR", "Not a directory"},
    {21, EISDIR, "EISDIR", "Is a directory"},
    {22, EINVAL, "EINVAL", "Invalid argument"},
    {23, ENFILE, "ENFILE", "Too many open files in system"},
    {24, EMFILE, "EMFILE", "Too many open files"},
    {26, ETXTBSY, "ETXTBSY", "Text file busy"},
    {27, EFBIG, "EFBIG", "File too large"},
    {28, ENOSPC, "ENOSPC", "No space left on device"},
    {30, EROFS, "EROFS", "Read-only file system"},
    {36, ENAMETOOLONG, "ENAMETOOLONG", "File name too long"},
    {40, ELOOP, "ELOOP", "Too many levels of symbolic links"},
    {75, EOVERFLOW, "EOVERFLOW", "Value too large for defined data type"},
};

#define NERRNOS (sizeof errnos / sizeof errnos[0])

const char *adbc_sync_errno_name(uint32_t wire)
{
    for (size_t i = 0; i < NERRNOS; i++)
        if (errnos[i].wire == wire)
            return errnos[i].name;
    return "E?";
}

const char *adbc_sync_errno_text(uint32_t wire)
{
    for (size_t i = 0; i < NERRNOS; i++)
        if (errnos[i].wire == wire)
            return errnos[i].text;
    return "unknown error";
}

int sync_errno_code(uint32_t wire)
{
    switch (wire) {
    case 2: return ADBC_ENOTFOUND;
    case 1:
    case 13: return ADBC_EPERM;
    default: return ADBC_EREMOTE;
    }
}

uint32_t sync_errno_to_wire(int host)
{
    for (size_t i = 0; i < NERRNOS; i++)
        if (errnos[i].host == host)
            return errnos[i].wire;
    return (uint32_t)host;
}
