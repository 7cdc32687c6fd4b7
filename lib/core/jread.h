/* SPDX-License-Identifier: Apache-2.0 */
/* A JSON reader for what devices send (DevTools protocol messages): the
 * whole text is split once into a flat array of tokens in document order,
 * each knowing where its subtree ends, so walking never recurses and a
 * lookup skips whole subtrees. Nesting is bounded; strings stay in the
 * text (jread_str decodes one on demand). Not installed. */
#ifndef ADBC_CORE_JREAD_H
#define ADBC_CORE_JREAD_H

#include <stddef.h>
#include <stdint.h>

enum { JR_NULL = 1, JR_BOOL, JR_NUM, JR_STR, JR_ARR, JR_OBJ };

typedef struct jr_tok {
    uint8_t type;
    uint32_t start, len; /* JR_STR: the bytes between the quotes; others: the value's text */
    uint32_t end;        /* index of the first token after this one's subtree */
    uint32_t n;          /* JR_ARR: elements; JR_OBJ: members */
} jr_tok;

typedef struct jread {
    const char *s;
    jr_tok *t;
    uint32_t n, cap;
} jread;

/* Tokenise s[0..len): one value, then only white space. 0, ADBC_EPROTO
 * (the message names the byte) or ADBC_ENOMEM. */
int jread_parse(jread *j, const char *s, size_t len);
void jread_free(jread *j);

/* The value of key in the object at index obj; -1 when absent or obj is not
 * an object (or is -1). The last of repeated keys counts. */
int jread_get(const jread *j, int obj, const char *key);
/* Children of the array or object at c: the first (-1 when empty), then
 * the one after i (-1 at the end). For an object these are its member
 * names; each one's value is at name + 1. */
int jread_first(const jread *j, int c);
int jread_next(const jread *j, int c, int i);

/* Type checks tolerate -1 (absent): they answer false / the default. */
int jread_is(const jread *j, int i, int type);
/* A decoded copy of the string at i (malloc'd, NUL-terminated; invalid
 * escapes give ADBC_EPROTO, NULs and surrogate halves become U+FFFD). */
int jread_str(const jread *j, int i, char **out);
/* 1 when the string at i equals lit (escapes decoded), else 0. */
int jread_streq(const jread *j, int i, const char *lit);
/* A number (def when i is absent or not a number). */
double jread_num(const jread *j, int i, double def);
/* true -> 1, false -> 0, else def. */
int jread_bool(const jread *j, int i, int def);

#endif
