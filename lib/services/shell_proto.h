/* SPDX-License-Identifier: Apache-2.0 */
/* The shell v2 framing, [u8 id][u32 le length][data], as a sans-IO
 * demultiplexer: it hands out one fragment of one packet at a time without
 * copying, so any split of the byte stream works and large packets stream
 * through. Used by the host side here, by the test device, and by the fuzzer. */
#ifndef ADBC_SHELL_PROTO_H
#define ADBC_SHELL_PROTO_H

#include <stddef.h>
#include <stdint.h>

typedef struct adbc_shellv2_demux {
    uint8_t hdr[5];
    size_t hdrlen;
    uint32_t remaining; /* data bytes of the current packet still to come */
    int id;
    int lenient;        /* device side, as adbd: hand out packets of unknown ids
                           (the caller skips them) instead of ADBC_EPROTO, so
                           hosts can add packet types */
} adbc_shellv2_demux;

/* Consume bytes from in[0..len). Sets *consumed. When a data fragment is
 * available returns 1 with *id, *data, *dlen set (dlen may be 0 for an
 * empty packet, and *last tells whether it ends the packet); returns 0 when
 * more input is needed; ADBC_EPROTO on an unknown packet id. */
int shellv2_next(adbc_shellv2_demux *d, const uint8_t *in, size_t len, size_t *consumed,
                      int *id, const uint8_t **data, size_t *dlen, int *last);

/* Give back the last n bytes of the data fragment just handed out (a
 * consumer that took only part of it: a pipe that is full). The caller
 * rewinds its input by n; the next call hands the rest out again. */
void shellv2_unread(adbc_shellv2_demux *d, size_t n);

/* The size of a packet header. */
#define ADBC_SHELLV2_HEADER 5

/* Write a packet header for id and length into out[5]. */
void shellv2_header(uint8_t out[5], int id, uint32_t len);

#endif
