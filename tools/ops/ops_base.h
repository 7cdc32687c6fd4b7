/* SPDX-License-Identifier: Apache-2.0 */
/* The part of tools/ops that needs no JSON: operation errors, the
 * five-tier selectors and the constant-time compare of secrets. adbc-snap links only this (libadbc_ops_base); the
 * servers link all of tools/ops (ops.h), which needs cJSON. */
#ifndef ADBC_OPS_BASE_H
#define ADBC_OPS_BASE_H

#include <stddef.h>
#include <stdint.h>

#include "adbc/act.h"
#include "adbc/conn.h"
#include "adbc/ui.h"

typedef enum ops_code {
    OPS_OK = 0,
    OPS_EARG,        /* a bad argument: nothing was sent */
    OPS_ENOREF,      /* a ref the latest snapshot does not have (or no snapshot yet) */
    OPS_ESTALE,      /* the ref's element is gone or cannot be told apart: nothing sent */
    OPS_ENOMATCH,    /* a selector matched nothing */
    OPS_EAMBIGUOUS,  /* a selector matched several: the candidates are listed */
    OPS_EBUSY,       /* the device stayed busy with another call */
    OPS_EDEVICE,     /* the device is gone (connection lost or refused) */
    OPS_ETIMEOUT,    /* the device did not answer in time */
    OPS_EFAIL        /* the device refused or the command failed */
} ops_code;

typedef struct ops_err {
    ops_code code;
    char msg[2048];
} ops_err;

/* "bad_request", "unknown_ref", "stale", "not_found", "ambiguous", "busy",
 * "device_gone", "timeout", "failed". */
const char *ops_code_name(ops_code code);
/* The HTTP status of a code: 400, 404, 409, 404, 409, 423, 502, 504, 500. */
int ops_code_http(ops_code code);

int ops_fail(ops_err *e, ops_code code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Fail with adbc's last error for rc, the code it maps to, and what to do
 * next. "WHAT failed: MESSAGE (NEXT STEP)". */
int ops_fail_adbc(ops_err *e, int rc, const char *what);

int64_t ops_now_ms(void); /* monotonic */

/* 1 when given equals the secret, else 0, in a time that depends only on
 * secret_len and given_len, never on the bytes (ops_secret.c). */
int ops_secret_equal(const char *secret, size_t secret_len, const char *given,
                     size_t given_len);

/* ---- UTF-8 (ops_utf8.c) ---- */
/* The length of the UTF-8 sequence at p (at most n bytes, n >= 1), 0 when
 * it is not one (overlong forms, surrogates, past U+10FFFF). */
size_t ops_utf8_len(const unsigned char *p, size_t n);
/* The offset of the first byte of s[0..len) that does not start a valid
 * sequence, or len. */
size_t ops_utf8_bad(const char *s, size_t len);
/* Replace each such byte of the C string s with '?', in place. */
void ops_utf8_fix(char *s);

/* ---- selectors by five tiers (ops_select.c) ---- */
typedef struct ops_sel {
    const char *id;    /* resource-id: "pkg:id/name" whole, or "name" */
    const char *text;  /* visible text */
    const char *desc;  /* content-desc */
} ops_sel;

/* Find the one element sel names in s, trying in order: 1 an exact
 * resource-id; 2 an actionable element whose own text is the text; 3 an
 * element with the text whose nearest actionable ancestor takes it (a
 * label inside a clickable row); 4 content-desc (the desc, or the text);
 * 5 an editable field whose text or hint contains the text (any case).
 * The first tier with a match decides: one match gives *ref; several are
 * OPS_EAMBIGUOUS with the candidates listed; none in any tier is
 * OPS_ENOMATCH. *tier gets 1..5 (may be NULL). */
int ops_select(int *ref, int *tier, const adbc_ui_snap *s, const ops_sel *sel, ops_err *e);
#endif
