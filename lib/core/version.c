/* SPDX-License-Identifier: Apache-2.0 */
/* The library's own version, for programs that check at run time which
 * libadbc the dynamic linker gave them. */
#include "adbc/version.h"

unsigned adbc_version(const char **str)
{
    if (str)
        *str = ADBC_VERSION_STRING;
    return ADBC_VERSION_NUMBER;
}
