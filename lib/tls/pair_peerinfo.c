/* SPDX-License-Identifier: Apache-2.0 */
/* PeerInfo, the record each side sends once the cipher is up: 8192 bytes,
 * {u8 type; u8 data[8191]} with data a NUL-terminated string (the host's
 * adbkey.pub line, or the device's GUID). */
#include "tls/pair_proto.h"

#include <string.h>

#include "core/internal.h"

int peer_info_encode(uint8_t out[ADBC_PEER_INFO_SIZE], uint8_t type, const char *str)
{
    size_t len = str ? strlen(str) : 0;
    if (len > ADBC_PEER_INFO_MAX_STRING)
        return core_fail(ADBC_EINVAL, "pairing: the %s is %zu bytes; at most %d fit",
                         type == ADBC_PEER_RSA_PUB_KEY ? "public key line" : "GUID", len,
                         ADBC_PEER_INFO_MAX_STRING);
    memset(out, 0, ADBC_PEER_INFO_SIZE);
    out[0] = type;
    if (len)
        memcpy(out + 1, str, len);
    return 0;
}

int peer_info_decode(const uint8_t in[ADBC_PEER_INFO_SIZE], uint8_t *type, char **str)
{
    const uint8_t *data = in + 1;
    const size_t cap = ADBC_PEER_INFO_SIZE - 1;
    const uint8_t *nul = memchr(data, 0, cap);
    size_t len = nul ? (size_t)(nul - data) : cap;
    /* Tolerate a trailing newline or spaces (a key file's line ending). */
    while (len && (data[len - 1] == '\n' || data[len - 1] == '\r' || data[len - 1] == ' ' ||
                   data[len - 1] == '\t'))
        len--;
    if (len == 0)
        return core_fail(ADBC_EPROTO, "pairing: the peer's info (type %u) is empty", in[0]);
    for (size_t i = 0; i < len; i++) {
        if (data[i] < 0x20 || data[i] == 0x7f)
            return core_fail(ADBC_EPROTO,
                             "pairing: the peer's info (type %u) has a control character at "
                             "byte %zu", in[0], i);
    }
    char *s = core_strndup((const char *)data, len);
    if (!s)
        return core_fail(ADBC_ENOMEM, "out of memory reading the peer's pairing info");
    *type = in[0];
    *str = s;
    return 0;
}
