/* SPDX-License-Identifier: Apache-2.0 */
/* Devices: listing and choosing the one the other tools act on. */
#include "ops_tool.h"

static int t_list_devices(ops_call *c, const cJSON *a)
{
    (void)a;
    return c->fe->list_devices(c);
}

static int t_select_device(ops_call *c, const cJSON *a)
{
    const char *serial;
    if (ops_call_str(c, a, "serial", 1, 255, &serial) != 0)
        return -1;
    return c->fe->select_device(c, serial);
}

const ops_tool ops_tools_device[] = {
    {"list_devices", "List devices",
     "Devices this server can reach (USB, emulators, configured TCP targets and, when "
     "configured, phones announced by mDNS) with their state, and which one is active. "
     "Emulators are always usable; a physical device only when a person has put it on the "
     "allowlist.",
     "{\"type\":\"object\",\"properties\":{},\"additionalProperties\":false}", t_list_devices,
     OPS_TOOL_READONLY | OPS_TOOL_DEVICES},
    {"select_device", "Select a device",
     "Make serial (as list_devices shows it) the device every other tool acts on. Refused "
     "for a physical device that is not on the allowlist.",
     "{\"type\":\"object\",\"properties\":{\"serial\":{\"type\":\"string\",\"minLength\":1,"
     "\"maxLength\":255}},\"required\":"
     "[\"serial\"],\"additionalProperties\":false}",
     t_select_device, OPS_TOOL_DEVICES},
    {NULL, NULL, NULL, NULL, NULL, 0},
};
