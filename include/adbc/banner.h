/* SPDX-License-Identifier: Apache-2.0 */
/* adbc — the CNXN banner: "<type>:<serial>:<key>=<value>;...;features=a,b,c". */
#ifndef ADBC_BANNER_H
#define ADBC_BANNER_H

#include "adbc/version.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum adbc_dev_state {
    ADBC_DEV_UNKNOWN = 0,
    ADBC_DEV_DEVICE,
    ADBC_DEV_HOST,
    ADBC_DEV_RECOVERY,
    ADBC_DEV_SIDELOAD,
    ADBC_DEV_BOOTLOADER,
    ADBC_DEV_RESCUE,
    ADBC_DEV_UNAUTHORIZED,
    ADBC_DEV_OFFLINE
} adbc_dev_state;

/* abi: out — filled in by adbc; the caller only reads it */
typedef struct adbc_prop {
    char *key;
    char *value;
} adbc_prop;

/* abi: out — filled in by adbc; the caller only reads it */
typedef struct adbc_banner {
    adbc_dev_state state;
    char *type;       /* "device", "recovery", ... as sent */
    char *serial;     /* the middle field (usually empty) */
    char *product;    /* ro.product.name, or "" */
    char *model;      /* ro.product.model, or "" */
    char *device;     /* ro.product.device, or "" */
    adbc_prop *props; /* every key=value except features */
    size_t nprops;
    char **features;
    size_t nfeatures;
    char *raw;        /* the banner as received, NUL-terminated */
} adbc_banner;

/* Parse a banner (need not be NUL-terminated; a trailing NUL is dropped).
 * Strict about structure but total: ADBC_EFORMAT for anything malformed. */
ADBC_API int adbc_banner_parse(adbc_banner *out, const char *data, size_t len);

/* Free what a parse allocated and zero the struct. */
ADBC_API void adbc_banner_clear(adbc_banner *b);

/* 1 if the feature is listed. */
ADBC_API int adbc_banner_has_feature(const adbc_banner *b, const char *feature);

/* Value of a property, or NULL. */
ADBC_API const char *adbc_banner_prop(const adbc_banner *b, const char *key);

/* "device", "recovery", ... for a state. */
ADBC_API const char *adbc_dev_state_name(adbc_dev_state s);

#ifdef __cplusplus
}
#endif
#endif
