/* SPDX-License-Identifier: Apache-2.0 */
/* The size rule for public structs that callers fill in (docs/abi.md).
 *
 * A program compiled against older headers passes a smaller struct; one
 * compiled against newer headers than the library passes a larger one.
 * Reading only the bytes the caller has, and refusing what this library
 * cannot understand, keeps both from reading or writing past the end. */
#include "core/internal.h"

#include <string.h>

/* The structs that have an X_init() (include/adbc/); the others are
 * filled in by the caller, .size first. */
static const char *const with_init[] = {
    "adbc_act_opts", "adbc_conn_opts", "adbc_devices_opts", "adbc_forward_opts", "adbc_install_opts",
    "adbc_mdns_opts", "adbc_session_config", "adbc_sync_opts", "adbc_ui_opts",
};

int core_abi_take(void *dst, size_t dst_size, const void *src, const char *type)
{
    if (!src)
        return 0;
    size_t size;
    memcpy(&size, src, sizeof size);
    if (size < sizeof size) {
        for (size_t i = 0; i < sizeof with_init / sizeof with_init[0]; i++)
            if (strcmp(type, with_init[i]) == 0)
                return core_fail(ADBC_EINVAL,
                                 "%s is not initialised (.size is %zu): call %s_init() on it "
                                 "before setting fields and passing it to adbc",
                                 type, size, type);
        return core_fail(ADBC_EINVAL,
                         "%s is not initialised (.size is %zu): set .size = sizeof(%s) "
                         "when filling it in",
                         type, size, type);
    }
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
