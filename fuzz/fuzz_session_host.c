/* SPDX-License-Identifier: Apache-2.0 */
/* The session engine in the host role (what adbc is) fed whatever a device
 * might send: packet decoding, CNXN/AUTH/STLS, streams, flow control. */
#include "session_driver.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sd_run(ADBC_ROLE_HOST, data, size);
    return 0;
}
