/* SPDX-License-Identifier: Apache-2.0 */
/* adbc — error codes and the thread-local last-error message.
 *
 * Every adbc function that can fail returns 0 (ADBC_OK) or a negative
 * adbc_err. The failing call also leaves a message for the calling thread,
 * read with adbc_last_error(), that names the cause and what to do about it.
 */
#ifndef ADBC_ERROR_H
#define ADBC_ERROR_H

#include "adbc/version.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum adbc_err {
    ADBC_OK = 0,
    ADBC_EINVAL = -1,        /* invalid argument from the caller */
    ADBC_ENOMEM = -2,        /* allocation failed */
    ADBC_EIO = -3,           /* transport or local I/O error */
    ADBC_ETIMEDOUT = -4,     /* a blocking call ran past its timeout */
    ADBC_ECLOSED = -5,       /* connection or stream closed by the peer */
    ADBC_EPROTO = -6,        /* the peer broke the protocol */
    ADBC_EUNAUTHORIZED = -7, /* the device did not accept any of our keys */
    ADBC_EOFFLINE = -8,      /* the device is not in a usable state */
    ADBC_EREFUSED = -9,      /* connection or service refused */
    ADBC_ENOTFOUND = -10,    /* no such device, file, key or element */
    ADBC_EUNSUPPORTED = -11, /* the device or build lacks the feature */
    ADBC_EREMOTE = -12,      /* the device reported a failure (message says which) */
    ADBC_ESTALE = -13,       /* a ref no longer matches the screen */
    ADBC_EKEY = -14,         /* a key file is missing, unreadable or malformed */
    ADBC_EPERM = -15,        /* permission denied */
    ADBC_EBUSY = -16,        /* resource held by someone else */
    ADBC_ENOTPAIRED = -17,   /* TLS: this computer's key is not paired */
    ADBC_EPAIRCODE = -18,    /* pairing: wrong pairing code */
    ADBC_EFORMAT = -19,      /* malformed input data (a file, a dump) */
    ADBC_ECANCELED = -20,    /* stopped by adbc_conn_interrupt or a callback */
    ADBC_ELIMIT = -21        /* a cap was reached (entries, depth of a tree walk) */
} adbc_err;

/* Short static description of an error code ("timed out"). Never NULL. */
ADBC_API const char *adbc_strerror(int code);

/* The calling thread's message for the last failed adbc call: cause and
 * remedy. Never NULL; "" when nothing has failed on this thread. */
ADBC_API const char *adbc_last_error(void);

/* Clear the calling thread's last-error message. */
ADBC_API void adbc_clear_error(void);

#ifdef __cplusplus
}
#endif
#endif
