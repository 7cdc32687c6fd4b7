/* SPDX-License-Identifier: Apache-2.0 */
/* Internal to device discovery: the handshake probe every listing shares,
 * the emulator scan, and the serial forms the selection rule knows. */
#ifndef ADBC_DEVICES_INT_H
#define ADBC_DEVICES_INT_H

#include "adbc/devices.h"
#include "adbc/transport.h"

/* adb's first emulator adb port, and its default last one (16 emulators). */
#define ADBC_EMU_FIRST_PORT 5555
#define ADBC_EMU_DEFAULT_MAX_PORT 5585

/* Copy into a fixed field, cutting what does not fit (fields are labels). */
void devices_copy(char *dst, size_t len, const char *src);

/* Record rc and the calling thread's last error in e. */
void devices_note_error(adbc_device_entry *e, int rc);

/* Run the short handshake on t (taken; NULL: connect to e->serial over TCP)
 * and record the state, the banner's names or the error in e. */
void devices_probe(adbc_device_entry *e, adbc_transport *t, int timeout_ms, adbc_keyring *keys);

/* The last port the emulator scan tries: $ADB_LOCAL_TRANSPORT_MAX_PORT when
 * it is a number from 1 to 65535 (as adb reads it), else 5585. */
unsigned emu_max_port(void);

/* The adb port of "emulator-N" (N + 1), or 0 when serial is not of that form. */
unsigned emu_serial_port(const char *serial);

/* Connect, in parallel and without blocking, to 127.0.0.1 on the odd ports
 * 5555..emu_max_port(); each port that accepts is an entry
 * "emulator-(P-1)" (transport "local"). With probe, each gets the handshake
 * (in parallel, each bounded by timeout_ms), so the whole scan takes at most
 * about one timeout however many ports hang. *out is NULL when none answer. */
int emu_scan(adbc_device_entry **out, size_t *count, int probe, int timeout_ms,
                  adbc_keyring *keys);

#endif
