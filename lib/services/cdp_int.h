/* SPDX-License-Identifier: Apache-2.0 */
/* What lib/ui needs of a DevTools session beyond adbc/webview.h: how many
 * events the page has sent (lib/ui/web.c keeps a session per page and
 * reads the page's accessibility tree again only after the page said it
 * changed). Not installed. */
#ifndef ADBC_CDP_INT_H
#define ADBC_CDP_INT_H

#include "adbc/webview.h"

/* The events (messages without an id) received on the session so far;
 * 0 without wslay or for NULL. */
unsigned long cdp_events(const adbc_cdp *cdp);

#endif
