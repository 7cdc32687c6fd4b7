/* SPDX-License-Identifier: Apache-2.0 */
/* adbc-snap: helpers shared by the UI commands (cmd_ui.c) and the act
 * commands (cmd_act.c): the saved ref table of each device, argument
 * parsing, and printing snapshots. */
#ifndef ADBC_SNAP_UI_H
#define ADBC_SNAP_UI_H

#include "snap.h"

#include "adbc/act.h"
#include "adbc/ui.h"

/* Exit status when an act was refused because its ref is stale, so a
 * script can tell "take a new snapshot" from other failures. */
#define SNAP_EXIT_STALE 3

/* The ref table file of the selected device: $XDG_CACHE_HOME/adbc (else
 * ~/.cache/adbc) / refs-<device address or serial, %-escaped>.tab; for a
 * device picked automatically this connects to learn which it is. NULL
 * (after printing why) when no device or no cache directory is known.
 * malloc'd. */
char *snap_refs_path(snap_ctx *ctx);

/* Save s's refs for the device so later invocations can act on them.
 * Prints the error; returns 0 or SNAP_EXIT_FAIL. */
int snap_refs_save(snap_ctx *ctx, const adbc_ui_snap *s);

/* The record of ref in the device's saved table. *tab must be freed with
 * adbc_ui_reftab_free. Prints the error (no table: run snapshot first) and
 * returns SNAP_EXIT_FAIL. */
int snap_ref_lookup(snap_ctx *ctx, const char *arg, adbc_ui_reftab **tab,
                    const adbc_ui_ref **ref);

/* Strict integer in [min, max]; 0 or -1. */
int snap_int(const char *s, long min, long max, long *out);

/* Print a snapshot: its text and a newline, or JSON; an empty screen
 * prints nothing and says so on stderr. Returns 0 or SNAP_EXIT_FAIL. */
int snap_print(FILE *f, const adbc_ui_snap *s, int json, int quiet);

/* Snapshot options from the context (its timeout). */
void snap_ui_opts(const snap_ctx *ctx, adbc_ui_opts *o);

/* Exit status for a failed library call: SNAP_EXIT_STALE for ADBC_ESTALE. */
int snap_fail_act(const char *what, int rc);

#endif
