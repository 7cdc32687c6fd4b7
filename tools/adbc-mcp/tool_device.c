/* SPDX-License-Identifier: Apache-2.0 */
/* Devices: listing and choosing the one the other tools act on. */
#include "mcp.h"

static int t_list_devices(mcp_call *c, const cJSON *a)
{
    (void)a;
    return device_list_text(c);
}

static int t_select_device(mcp_call *c, const cJSON *a)
{
    const char *serial;
    if (arg_str(c, a, "serial", 1, 255, &serial) != 0)
        return -1;
    return device_select(c, serial);
}

const mcp_tool mcp_tools_device[] = {
    {"list_devices", "List devices",
     "Devices this server can reach (USB, emulators, configured TCP targets and, when "
     "configured, phones announced by mDNS) with their state, and which one is active. "
     "Emulators are always usable; a physical device only when a person has put it on the "
     "allowlist.",
     "{\"type\":\"object\",\"properties\":{},\"additionalProperties\":false}", t_list_devices,
     TOOL_READONLY},
    {"select_device", "Select a device",
     "Make serial (as list_devices shows it) the device every other tool acts on. Refused "
     "for a physical device that is not on the allowlist.",
     "{\"type\":\"object\",\"properties\":{\"serial\":{\"type\":\"string\"}},\"required\":"
     "[\"serial\"],\"additionalProperties\":false}",
     t_select_device, 0},
    {NULL, NULL, NULL, NULL, NULL, 0},
};
