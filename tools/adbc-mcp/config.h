/* SPDX-License-Identifier: Apache-2.0 */
/* adbc-mcp configuration: a strict subset of TOML (see docs/mcp.md), read
 * by the tools' one configuration reader (tools/ops/ops_config.h).
 *
 * Only the tables and keys listed in mcp_config are accepted; anything else
 * (an unknown key, a wrong type, a duplicate, a value out of range, TOML
 * this parser does not take) is an error naming the file and line, so a
 * typo in a safety setting such as the allowlist never passes silently. */
#ifndef ADBC_MCP_CONFIG_H
#define ADBC_MCP_CONFIG_H

#include <stddef.h>

typedef struct mcp_config {
    char **allowlist;      /* [device] allowlist: physical devices allowed, by serial */
    size_t nallow;
    char *default_serial;  /* [device] default: the device used when none is selected */
    char **targets;        /* [device] targets: "HOST:PORT" devices reached over TCP */
    size_t ntargets;
    int usb;               /* [device] usb: list USB devices; default 1 */
    int mdns;              /* [device] mdns: list the phones announced by mDNS
                              (wireless debugging); default 0 */
    int call_ms;           /* [timeouts] call_ms: bound of one tool call; default 30000 */
    int connect_ms;        /* [timeouts] connect_ms: connect + handshake; default 10000 */
    int settle_ms;         /* [timeouts] settle_ms: pause after an act before the
                              snapshot it returns; default 500 */
    char *screenshot_dir;  /* [screenshots] dir; default "./screenshots" */
    char **uninstall;      /* [apps] uninstall: packages uninstall_app may remove */
    size_t nuninstall;
    char **allow_tools;    /* [tools] allow: opt-in tools allowed by name (termux_sms_send,
                              termux_call, system_keys) */
    size_t nallow_tools;
} mcp_config;

/* Defaults as documented above. */
void mcp_config_init(mcp_config *cfg);

/* Free what the config holds and reset it to the defaults' empty state. */
void mcp_config_free(mcp_config *cfg);

/* Parse text (len bytes, need not be NUL-terminated) into cfg, on top of the
 * defaults already there. name labels errors ("FILE:LINE: what"). Returns 0,
 * or -1 with err filled. */
int mcp_config_parse(mcp_config *cfg, const char *text, size_t len, const char *name, char *err,
                     size_t errlen);

/* Read and parse a file (at most 1 MiB). A missing file is an error only if
 * must_exist. */
int mcp_config_load(mcp_config *cfg, const char *path, int must_exist, char *err, size_t errlen);

/* 1 if serial is on the allowlist. */
int mcp_config_allowed(const mcp_config *cfg, const char *serial);

#endif
