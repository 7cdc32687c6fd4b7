/* SPDX-License-Identifier: Apache-2.0 */
/* adbc — shell and exec services.
 *
 * shell,v2 (when the device has the shell_v2 feature) keeps stdout and
 * stderr apart and reports the exit code; shell v1 and exec: give one byte
 * stream. exec: is binary-safe (no PTY, no line-ending changes).
 */
#ifndef ADBC_SHELL_H
#define ADBC_SHELL_H

#include "adbc/version.h"
#include "adbc/alloc.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "adbc/conn.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Shell v2 packet ids: [u8 id][u32 le length][data]. */
enum {
    ADBC_SHELL_STDIN = 0,
    ADBC_SHELL_STDOUT = 1,
    ADBC_SHELL_STDERR = 2,
    ADBC_SHELL_EXIT = 3,
    ADBC_SHELL_CLOSE_STDIN = 4,
    ADBC_SHELL_WINDOW_SIZE = 5
};

typedef enum adbc_shell_mode {
    ADBC_SHELL_AUTO = 0, /* shell v2 raw when the device has shell_v2, else v1 */
    ADBC_SHELL_V1,       /* shell: one stream, no exit code */
    ADBC_SHELL_EXEC,     /* exec: binary-safe stream, no exit code */
    ADBC_SHELL_V2        /* shell,v2: required (ADBC_EUNSUPPORTED without it) */
} adbc_shell_mode;

/* abi: out — filled in by adbc; the caller only reads it */
typedef struct adbc_run_result {
    uint8_t *out;    /* stdout (NUL-terminated for convenience) */
    size_t out_len;
    uint8_t *err;    /* stderr (v2 only; empty otherwise) */
    size_t err_len;
    int exit_code;   /* v2: the command's status; v1/exec: -1 (unknown) */
} adbc_run_result;

/* Run a command and collect its output. stdin_data may be NULL. With v1 or
 * exec, stdin data is written and the stream is left open until the command
 * ends. max_output bounds stdout+stderr (0 = 64 MiB); past it ADBC_EIO.
 * res, c and command may not be NULL (ADBC_EINVAL). */
ADBC_API int adbc_run(adbc_run_result *res, adbc_conn *c, adbc_shell_mode mode, const char *command,
             const void *stdin_data, size_t stdin_len, size_t max_output, int timeout_ms);

/* Free the buffers of a result. */
ADBC_API void adbc_run_result_clear(adbc_run_result *res);

/* Streaming shell for long or interactive commands. */
typedef struct adbc_shell adbc_shell;

/* abi: in — filled in by the caller: size first (docs/abi.md) */
typedef struct adbc_shell_opts {
    size_t size;           /* sizeof the struct as the caller compiled it */
    adbc_shell_mode mode;
    int pty;            /* v2: "pty" instead of "raw"; v1: the device decides */
    const char *term;   /* v2 pty: TERM value, e.g. "xterm-256color" */
    unsigned rows, cols;/* v2 pty: initial window size (0 = device default) */
} adbc_shell_opts;

/* Open a shell stream running command ("" or NULL: interactive shell). */
ADBC_API int adbc_shell_open(adbc_shell **out, adbc_conn *c, const char *command,
                    const adbc_shell_opts *opts, int timeout_ms);

/* Read output. *fd gets 1 (stdout) or 2 (stderr). Returns bytes (> 0), 0 when
 * the command has ended and all output was read, or a negative error. */
ADBC_API ssize_t adbc_shell_read(adbc_shell *sh, int *fd, void *buf, size_t len, int timeout_ms);

/* Write to the command's stdin. */
ADBC_API int adbc_shell_write(adbc_shell *sh, const void *buf, size_t len, int timeout_ms);

/* Close the command's stdin (v2: CLOSE_STDIN packet; v1/exec: unsupported,
 * returns ADBC_EUNSUPPORTED). */
ADBC_API int adbc_shell_close_stdin(adbc_shell *sh, int timeout_ms);

/* v2 pty: tell the device the terminal size. */
ADBC_API int adbc_shell_resize(adbc_shell *sh, unsigned rows, unsigned cols, unsigned xpixels,
                      unsigned ypixels, int timeout_ms);

/* Exit code once read() returned 0: v2 the status, else -1. */
ADBC_API int adbc_shell_exit_code(const adbc_shell *sh);

/* 1 if this shell speaks v2. */
ADBC_API int adbc_shell_is_v2(const adbc_shell *sh);

/* Close and free. */
ADBC_API void adbc_shell_close(adbc_shell *sh);

/* Quote a string for the device's /system/bin/sh so it is one literal word:
 * wrapped in single quotes, with ' written as '\''. Free *out with adbc_free(). */
ADBC_API int adbc_shell_quote(char **out, const char *s);

/* ---- The shell v2 framing, sans-IO ----------------------------------------
 * For a program that carries shell,v2 over a transport of its own (its own
 * event loop, adbc_session without adbc_conn, a relay): the demultiplexer
 * that adbc_shell_read() and adbc-snap use, which takes the byte stream in
 * any split and hands out one fragment of one packet at a time, without
 * copying, so large packets stream through. The format (AOSP adb,
 * shell_protocol.h): [u8 id][u32 little-endian length][length bytes], ids as
 * in the enum above (the exit packet's one byte is the status; window-size
 * data is ASCII "ROWSxCOLS,XPIXELSxYPIXELS"). */

/* The size of a packet header. */
#define ADBC_SHELLV2_HEADER 5

/* adbc_shellv2_init() flag: hand out packets of unknown ids (the caller
 * skips them) instead of ADBC_EPROTO, as adbd does so that hosts may add
 * packet types. A host reading a device keeps the default, strict. */
#define ADBC_SHELLV2_LENIENT 1u

/* abi: fixed — frozen by design: the demultiplexer's state, held by the
 * caller (on the stack or in its own struct) and set up only by
 * adbc_shellv2_init(); its fields are adbc's, not to be read or written. */
typedef struct adbc_shellv2_demux {
    uint32_t magic;     /* set by adbc_shellv2_init: a zeroed struct is refused */
    uint32_t flags;
    uint8_t hdr[ADBC_SHELLV2_HEADER];
    size_t hdrlen;
    uint32_t remaining; /* data bytes of the current packet still to come */
    int id;
    size_t given;       /* length of the fragment last handed out */
} adbc_shellv2_demux;

/* abi: out — filled in by adbc_shellv2_next(); data points into the caller's input */
typedef struct adbc_shellv2_frag {
    int id;              /* packet id, 0..255 (only 0..5 unless lenient) */
    const uint8_t *data; /* len bytes of the packet's data, inside in[] */
    size_t len;          /* may be 0: an empty packet, or its empty end */
    int last;            /* 1: this fragment ends the packet */
} adbc_shellv2_frag;

/* Set up d (flags: 0 or ADBC_SHELLV2_LENIENT). NULL d or an unknown flag:
 * ADBC_EINVAL. */
ADBC_API int adbc_shellv2_init(adbc_shellv2_demux *d, unsigned flags);

/* Consume bytes from in[0..len) and set *consumed. Returns 1 with *out set
 * when a fragment of data is available (out->len may be 0 for an empty
 * packet; out->last says whether it ends the packet); 0 when every byte was
 * taken and more input is needed; ADBC_EPROTO on an unknown packet id (not
 * lenient); ADBC_EINVAL on a NULL argument (in may be NULL when len is 0)
 * or a d that adbc_shellv2_init() did not set up. Call again with the rest
 * of the input after a 1. */
ADBC_API int adbc_shellv2_next(adbc_shellv2_frag *out, size_t *consumed, adbc_shellv2_demux *d,
                               const void *in, size_t len);

/* Give back the last n bytes of the fragment just handed out (a consumer
 * that took only part of it: a pipe that is full). The caller rewinds its
 * input by n; the next call hands the rest out again. n larger than that
 * fragment, or NULL d: ADBC_EINVAL. */
ADBC_API int adbc_shellv2_unread(adbc_shellv2_demux *d, size_t n);

/* 0 when the input so far ended between packets; ADBC_EPROTO when it ended
 * inside one (a header or data still to come): a stream that closes now
 * was cut short. NULL or unset d: ADBC_EINVAL. */
ADBC_API int adbc_shellv2_finish(const adbc_shellv2_demux *d);

/* Write the header of a packet of id (0..255) with len data bytes into
 * out[ADBC_SHELLV2_HEADER]. NULL out or id out of range: ADBC_EINVAL. */
ADBC_API int adbc_shellv2_header(uint8_t out[ADBC_SHELLV2_HEADER], int id, uint32_t len);

#ifdef __cplusplus
}
#endif
#endif
