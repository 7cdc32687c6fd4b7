/* SPDX-License-Identifier: Apache-2.0 */
/* The session engine in the device role (what the test device runs) fed
 * whatever a host might send. */
#include "session_driver.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sd_run(ADBC_ROLE_DEVICE, data, size);
    return 0;
}
