/* SPDX-License-Identifier: Apache-2.0 */
/* The CNXN banner parser: "<type>:<serial>:<key>=<value>;...;features=a,b". */
#include <string.h>

#include "adbc/banner.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    adbc_banner b;
    memset(&b, 0xa5, sizeof b);
    if (adbc_banner_parse(&b, (const char *)data, size) == 0) {
        FUZZ_ASSERT(b.raw && b.type && b.serial && b.product && b.model && b.device);
        for (size_t i = 0; i < b.nfeatures; i++)
            FUZZ_ASSERT(adbc_banner_has_feature(&b, b.features[i]));
        for (size_t i = 0; i < b.nprops; i++)
            FUZZ_ASSERT(adbc_banner_prop(&b, b.props[i].key) != NULL);
        adbc_dev_state_name(b.state);
        adbc_banner_clear(&b);
    }
    return 0;
}
