/* SPDX-License-Identifier: Apache-2.0 */
/* Writing a shell's output to stdout or stderr, shared by the front end
 * (front/front.c) and the full tool (cmd_core.c), which print the same
 * bytes the same way. */
#ifndef ADBC_SNAP_WRITE_ALL_H
#define ADBC_SNAP_WRITE_ALL_H

#include <errno.h>
#include <stddef.h>
#include <unistd.h>

/* Write all len bytes to fd, retrying after signals: 0, or -1 (errno). */
static inline int snap_write_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

#endif
