/* SPDX-License-Identifier: Apache-2.0 */
/* Test-only hooks of the library (implemented in lib/core/alloc.c). Not
 * installed; tests and fuzz harnesses include it through the lib/ path. */
#ifndef ADBC_CORE_TESTHOOKS_H
#define ADBC_CORE_TESTHOOKS_H

/* Make the Nth library allocation from now fail, and every later one
 * (n <= 0 turns injection off). Resets the counter. */
void core_test_fail_alloc_at(long n);

/* Allocations counted since the last core_test_fail_alloc_at() with n > 0. */
long core_test_alloc_count(void);

#endif
