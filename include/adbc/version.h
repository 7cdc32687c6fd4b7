/* SPDX-License-Identifier: Apache-2.0 */
/* adbc — version numbers and the export marker of the public API.
 *
 * ADBC_VERSION_* say which headers a program was compiled against;
 * adbc_version() says which library it runs with. docs/abi.md says what
 * a change in each number promises. */
#ifndef ADBC_VERSION_H
#define ADBC_VERSION_H

#define ADBC_VERSION_MAJOR 0
#define ADBC_VERSION_MINOR 2
#define ADBC_VERSION_PATCH 0
#define ADBC_VERSION_STRING "0.2.0"
/* 0xMMmmpp: compare with >= in #if. */
#define ADBC_VERSION_NUMBER \
    ((ADBC_VERSION_MAJOR << 16) | (ADBC_VERSION_MINOR << 8) | ADBC_VERSION_PATCH)

/* Every public function carries ADBC_API: the library is built with hidden
 * visibility, so only what the headers declare is exported. */
#if defined(__GNUC__) || defined(__clang__)
#define ADBC_API __attribute__((visibility("default")))
#else
#define ADBC_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The library's version as ADBC_VERSION_NUMBER computes it; the string form
 * in *str when str is not NULL ("0.2.0"). */
ADBC_API unsigned adbc_version(const char **str);

#ifdef __cplusplus
}
#endif

#endif
