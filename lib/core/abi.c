/* SPDX-License-Identifier: Apache-2.0 */
/* The size rule for public structs that callers fill in (docs/abi.md).
 *
 * A program compiled against older headers passes a smaller struct; one
 * compiled against newer headers than the library passes a larger one.
 * Reading only the bytes the caller has, and refusing what this library
 * cannot understand, keeps both from reading or writing past the end. */
#include "core/internal.h"

#include <string.h>

int core_abi_take(void *dst, size_t dst_size, const void *src, const char *type)
{
    if (!src)
        return 0;
    size_t size;
    memcpy(&size, src, sizeof size);
    if (size < sizeof size)
        return core_fail(ADBC_EINVAL,
                         "%s.size is %zu: initialise the struct with its _init() function "
                         "(or set .size = sizeof it) before passing it to adbc",
                         type, size);
    if (size > dst_size)
        return core_fail(ADBC_EINVAL,
                         "%s is %zu bytes but this libadbc knows only %zu: the program was "
                         "built against newer adbc headers than the library it runs with",
                         type, size, dst_size);
    memcpy(dst, src, size);
    memcpy(dst, &dst_size, sizeof dst_size);
    return 0;
}

void core_abi_give(void *dst, size_t size, const void *src, size_t src_size)
{
    if (!dst || size < sizeof(size_t))
        return;
    size_t n = size < src_size ? size : src_size;
    memcpy(dst, src, n);
    memcpy(dst, &n, sizeof n);
}
