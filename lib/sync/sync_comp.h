/* SPDX-License-Identifier: Apache-2.0 */
/* Compressed file contents for sync v2 (SND2/RCV2 with kSyncFlagBrotli,
 * kSyncFlagLZ4 or kSyncFlagZstd): one compressed stream per file, carried in
 * ordinary DATA chunks of at most 64 KiB and ended by DONE, exactly as
 * adbd's compression_utils.h streams it. Brotli is a raw brotli stream
 * (RFC 7932), LZ4 one LZ4 frame (lz4frame), zstd one zstd frame.
 *
 * Both directions stream through caller buffers: nothing here grows with the
 * file. The decoder refuses a stream that inflates out of proportion (a
 * decompression bomb): see ADBC_SYNC_BOMB_*. Each library is optional at
 * build time (ADBC_WITH_ZSTD/LZ4/BROTLI); sync_comp_built() says which
 * are in. */
#ifndef ADBC_SYNC_COMP_H
#define ADBC_SYNC_COMP_H

#include <stddef.h>
#include <stdint.h>

/* SND2/RCV2 flags (file_sync_protocol.h, enum SyncFlag). */
#define ADBC_SYNC_FLAG_BROTLI 1u
#define ADBC_SYNC_FLAG_LZ4 2u
#define ADBC_SYNC_FLAG_ZSTD 4u
#define ADBC_SYNC_FLAG_DRY_RUN 0x80000000u
#define ADBC_SYNC_FLAGS_COMP (ADBC_SYNC_FLAG_BROTLI | ADBC_SYNC_FLAG_LZ4 | ADBC_SYNC_FLAG_ZSTD)

/* A decoder may write at most ADBC_SYNC_BOMB_BASE bytes beyond what the
 * caller expects (a pull: the size the device's stat gave), plus
 * ADBC_SYNC_BOMB_RATIO bytes per compressed byte received. Real data stays
 * far inside (text compresses about 10:1; zstd's best case, a run of zeros,
 * about 30000:1 is covered by the expected size on a pull); a 1 KB frame
 * that would inflate to gigabytes is refused after 64 MiB. */
#define ADBC_SYNC_BOMB_BASE (64ull * 1024 * 1024)
#define ADBC_SYNC_BOMB_RATIO 4096ull
/* Largest zstd window accepted (2^23 = 8 MiB; adbd's frames use 2 MiB at most). */
#define ADBC_SYNC_ZSTD_WINDOW_LOG_MAX 23

/* The compression flags this build can encode and decode. */
uint32_t sync_comp_built(void);

/* "brotli", "lz4", "zstd" for one flag; "none" for 0. */
const char *sync_comp_flag_name(uint32_t flag);

typedef struct adbc_sync_zenc adbc_sync_zenc;
typedef struct adbc_sync_zdec adbc_sync_zdec;

/* A compressor for one file. flag: one ADBC_SYNC_FLAG_* compression.
 * ADBC_EUNSUPPORTED when this build lacks it. */
int sync_zenc_new(adbc_sync_zenc **out, uint32_t flag);

/* Compress from *in (*in_len bytes) into *out (*out_cap bytes of room),
 * advancing both. finish: no more input will come (the stream is then
 * ended). Returns 1 when finish was given and the whole stream has been
 * written out, 0 when it wants more input or more room, or an error. */
int sync_zenc_run(adbc_sync_zenc *e, const uint8_t **in, size_t *in_len, uint8_t **out,
                       size_t *out_cap, int finish);

void sync_zenc_free(adbc_sync_zenc *e);

/* A decompressor for one file; expected: the bytes the caller expects (0
 * when unknown), to which the bomb limits are added. */
int sync_zdec_new(adbc_sync_zdec **out, uint32_t flag, uint64_t expected);

/* Decompress from *in into *out, advancing both. Returns 1 once the stream
 * has ended (a further byte of input is then an error), 0 when it wants
 * more input or more room (call again while it fills *out completely), or
 * ADBC_EPROTO for corrupt data or a stream that inflates past the limits. */
int sync_zdec_run(adbc_sync_zdec *d, const uint8_t **in, size_t *in_len, uint8_t **out,
                       size_t *out_cap);

/* The sender said DONE: ADBC_EPROTO unless the stream ended. */
int sync_zdec_finish(const adbc_sync_zdec *d);

/* Compressed bytes taken and bytes produced so far. */
uint64_t sync_zdec_in(const adbc_sync_zdec *d);
uint64_t sync_zdec_out(const adbc_sync_zdec *d);

void sync_zdec_free(adbc_sync_zdec *d);

#endif
