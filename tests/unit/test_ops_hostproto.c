/* SPDX-License-Identifier: Apache-2.0 */
/* ops_hostproto: adb's server protocol as byte vectors. The requests are
 * those adb's client sends (adb_client.cpp, commandline.cpp) and the
 * serial rule's cases are those AOSP tests its smart socket with
 * (sockets_test.cpp, parse_host_service); the replies are compared byte
 * for byte with what adb's server writes (adb.cpp: SendOkay,
 * SendProtocolString; transport.cpp: the device lines). */
#include "t.h"

#include "ops_hostproto.h"

TEST(header_is_four_hex_digits)
{
    CHECK_EQ_INT(ops_hp_header((const uint8_t *)"000c"), 12);
    CHECK_EQ_INT(ops_hp_header((const uint8_t *)"FFFF"), 65535);
    CHECK_EQ_INT(ops_hp_header((const uint8_t *)"00aB"), 0xab);
    CHECK_EQ_INT(ops_hp_header((const uint8_t *)"0000"), -1); /* adb refuses an empty request */
    CHECK_EQ_INT(ops_hp_header((const uint8_t *)"00 c"), -1);
    CHECK_EQ_INT(ops_hp_header((const uint8_t *)"0x0c"), -1);
    CHECK_EQ_INT(ops_hp_header((const uint8_t *)"-001"), -1);
}

static int parse(ops_hp_req *r, const char *req)
{
    char err[256];
    return ops_hp_parse(r, req, err, sizeof err);
}

TEST(host_requests_and_their_device)
{
    ops_hp_req r;
    CHECK_EQ_INT(parse(&r, "host:version"), 0);
    CHECK_EQ_INT(r.kind, OPS_HP_HOST);
    CHECK_EQ_INT(r.sel, OPS_HP_ANY);
    CHECK_STR(r.cmd, "version");
    CHECK_EQ_INT(parse(&r, "host-usb:get-state"), 0);
    CHECK_EQ_INT(r.sel, OPS_HP_USB);
    CHECK_STR(r.cmd, "get-state");
    CHECK_EQ_INT(parse(&r, "host-local:features"), 0);
    CHECK_EQ_INT(r.sel, OPS_HP_LOCAL);
    CHECK_EQ_INT(parse(&r, "host-transport-id:17:get-serialno"), 0);
    CHECK_EQ_INT(r.sel, OPS_HP_ID);
    CHECK_EQ_INT(r.id, 17);
    CHECK_STR(r.cmd, "get-serialno");
    CHECK_EQ_INT(parse(&r, "host-transport-id:x:get-state"), -1);
    CHECK_EQ_INT(parse(&r, "host-transport-id:5"), -1);
    CHECK_EQ_INT(parse(&r, "host:"), -1);
    /* Not a host request: a device service. */
    CHECK_EQ_INT(parse(&r, "shell,v2,raw:echo hi"), 0);
    CHECK_EQ_INT(r.kind, OPS_HP_DEVICE);
    CHECK_STR(r.cmd, "shell,v2,raw:echo hi");
}

/* host-serial:SERIAL:COMMAND, the serial as adb's smart socket reads it. */
static int serial_of(const char *req, const char *serial, const char *cmd)
{
    ops_hp_req r;
    if (parse(&r, req) != 0 || r.kind != OPS_HP_HOST || r.sel != OPS_HP_SERIAL)
        return 0;
    if (strcmp(r.serial, serial) != 0 || strcmp(r.cmd, cmd) != 0) {
        fprintf(stderr, "  %s: serial '%s' command '%s'\n", req, r.serial, r.cmd);
        return 0;
    }
    return 1;
}

TEST(host_serial_as_adb_reads_it)
{
    CHECK(serial_of("host-serial:abc123:get-state", "abc123", "get-state"));
    CHECK(serial_of("host-serial:127.0.0.1:5555:get-state", "127.0.0.1:5555", "get-state"));
    CHECK(serial_of("host-serial:localhost:1234:forward:tcp:1;tcp:2", "localhost:1234",
                    "forward:tcp:1;tcp:2"));
    CHECK(serial_of("host-serial:emulator-5554:forward:norebind:tcp:1;tcp:2", "emulator-5554",
                    "forward:norebind:tcp:1;tcp:2"));
    CHECK(serial_of("host-serial:[::1]:5555:get-serialno", "[::1]:5555", "get-serialno"));
    CHECK(serial_of("host-serial:[::1]:get-serialno", "[::1]", "get-serialno"));
    CHECK(serial_of("host-serial:tcp:localhost:5555:shell", "tcp:localhost:5555", "shell"));
    CHECK(serial_of("host-serial:usb:1-2.3:get-devpath", "usb:1-2.3", "get-devpath"));
    CHECK(serial_of("host-serial:vsock:3:5555:get-state", "vsock:3:5555", "get-state"));
    CHECK(serial_of("host-serial:abc:list-forward", "abc", "list-forward"));
    ops_hp_req r;
    CHECK_EQ_INT(parse(&r, "host-serial:abc"), -1);       /* no command */
    CHECK_EQ_INT(parse(&r, "host-serial:abc:"), -1);      /* an empty one */
    CHECK_EQ_INT(parse(&r, "host-serial:[::1]x:a"), -1);  /* garbage after the address */
}

TEST(transport_switches)
{
    ops_hp_req r;
    CHECK_EQ_INT(parse(&r, "host:transport:emulator-5554"), 0);
    CHECK_EQ_INT(r.kind, OPS_HP_TRANSPORT);
    CHECK_EQ_INT(r.sel, OPS_HP_SERIAL);
    CHECK_EQ_INT(r.tport, 0);
    CHECK_STR(r.serial, "emulator-5554");
    CHECK_EQ_INT(parse(&r, "host:transport-any"), 0);
    CHECK_EQ_INT(r.kind, OPS_HP_TRANSPORT);
    CHECK_EQ_INT(r.sel, OPS_HP_ANY);
    CHECK_EQ_INT(parse(&r, "host:transport-usb"), 0);
    CHECK_EQ_INT(r.sel, OPS_HP_USB);
    CHECK_EQ_INT(parse(&r, "host:transport-local"), 0);
    CHECK_EQ_INT(r.sel, OPS_HP_LOCAL);
    CHECK_EQ_INT(parse(&r, "host:transport-id:42"), 0);
    CHECK_EQ_INT(r.sel, OPS_HP_ID);
    CHECK_EQ_INT(r.id, 42);
    CHECK_EQ_INT(parse(&r, "host:transport-id:4x"), -1);
    CHECK_EQ_INT(parse(&r, "host:tport:serial:127.0.0.1:5555"), 0);
    CHECK_EQ_INT(r.kind, OPS_HP_TRANSPORT);
    CHECK_EQ_INT(r.tport, 1);
    CHECK_EQ_INT(r.sel, OPS_HP_SERIAL);
    CHECK_STR(r.serial, "127.0.0.1:5555");
    CHECK_EQ_INT(parse(&r, "host:tport:any"), 0);
    CHECK_EQ_INT(r.tport, 1);
    CHECK_EQ_INT(r.sel, OPS_HP_ANY);
    CHECK_EQ_INT(parse(&r, "host:tport:usb"), 0);
    CHECK_EQ_INT(r.sel, OPS_HP_USB);
    CHECK_EQ_INT(parse(&r, "host:tport:local"), 0);
    CHECK_EQ_INT(r.sel, OPS_HP_LOCAL);
    CHECK_EQ_INT(parse(&r, "host:tport:nope"), -1);
    CHECK_EQ_INT(parse(&r, "host:transport:"), -1);
    /* "host:transports" is no switch: a host command adb does not know. */
    CHECK_EQ_INT(parse(&r, "host:transports"), 0);
    CHECK_EQ_INT(r.kind, OPS_HP_HOST);
}

TEST(wait_for_specs)
{
    ops_hp_sel sel;
    unsigned st;
    char err[128];
    CHECK_EQ_INT(ops_hp_wait_spec("any-device", &sel, &st, err, sizeof err), 0);
    CHECK_EQ_INT(sel, OPS_HP_ANY);
    CHECK_EQ_INT(st, OPS_HP_ST_DEVICE);
    CHECK_EQ_INT(ops_hp_wait_spec("usb-recovery-sideload", &sel, &st, err, sizeof err), 0);
    CHECK_EQ_INT(sel, OPS_HP_USB);
    CHECK_EQ_INT(st, OPS_HP_ST_RECOVERY | OPS_HP_ST_SIDELOAD);
    CHECK_EQ_INT(ops_hp_wait_spec("local-disconnect", &sel, &st, err, sizeof err), 0);
    CHECK_EQ_INT(sel, OPS_HP_LOCAL);
    CHECK_EQ_INT(st, OPS_HP_ST_DISCONNECT);
    CHECK_EQ_INT(ops_hp_wait_spec("any", &sel, &st, err, sizeof err), -1);
    CHECK_STR(err, "short wait-for: any");
    CHECK_EQ_INT(ops_hp_wait_spec("wifi-device", &sel, &st, err, sizeof err), -1);
    CHECK_STR(err, "bad wait-for- transport: wifi-device");
    CHECK_EQ_INT(ops_hp_wait_spec("any-devic", &sel, &st, err, sizeof err), -1);
    CHECK_STR(err, "bad wait-for- state: any-devic");
}

TEST(replies_byte_for_byte)
{
    char out[64];
    CHECK_EQ_INT(ops_hp_okay(out, sizeof out, NULL), 4);
    CHECK_MEM(out, "OKAY", 4);
    /* host:version: OKAY, then the version as a protocol string. */
    CHECK_EQ_INT(ops_hp_okay(out, sizeof out, "0029"), 12);
    CHECK_MEM(out, "OKAY00040029", 12);
    CHECK_EQ_INT(ops_hp_fail(out, sizeof out, "closed"), 14);
    CHECK_MEM(out, "FAIL0006closed", 14);
    CHECK_EQ_INT(ops_hp_string(out, sizeof out, ""), 4);
    CHECK_MEM(out, "0000", 4);
    CHECK_EQ_INT(ops_hp_okay(out, 8, "too long for it"), 0); /* never a cut reply */
    char *big = malloc(70000), *res = malloc(70010);
    CHECK(big && res);
    memset(big, 'x', 69999);
    big[69999] = '\0';
    CHECK_EQ_INT(ops_hp_string(res, 70010, big), 4 + 65535); /* cut at what 4 digits say */
    CHECK_MEM(res, "ffff", 4);
    free(big);
    free(res);
}

TEST(device_lines_as_adb_lists_them)
{
    char out[512];
    size_t used = 0;
    out[0] = '\0';
    CHECK_EQ_INT(ops_hp_device_line(out, sizeof out, &used, 0, "emulator-5554", "device", NULL,
                                    "sdk", "Pixel 7", "emu64", 3), 0);
    CHECK_STR(out, "emulator-5554\tdevice\n");
    used = 0;
    CHECK_EQ_INT(ops_hp_device_line(out, sizeof out, &used, 1, "127.0.0.1:5555", "device", NULL,
                                    "sdk_gphone", "Pixel 7 (x)", "emu64", 12), 0);
    CHECK_STR(out, "127.0.0.1:5555         device product:sdk_gphone model:Pixel_7__x_ "
                   "device:emu64 transport_id:12\n");
    used = 0;
    CHECK_EQ_INT(ops_hp_device_line(out, sizeof out, &used, 1, "0123456789ABCDEF", "offline",
                                    "usb:1-2", "", NULL, "", 1), 0);
    CHECK_STR(out, "0123456789ABCDEF       offline usb:1-2 transport_id:1\n");
    used = 0;
    CHECK_EQ_INT(ops_hp_device_line(out, sizeof out, &used, 0, "", "device", NULL, NULL, NULL,
                                    NULL, 1), 0);
    CHECK_STR(out, "(no serial number)\tdevice\n");
    /* Appended; one that does not fit leaves what was there. */
    CHECK_EQ_INT(ops_hp_device_line(out, sizeof out, &used, 0, "b", "device", NULL, NULL, NULL,
                                    NULL, 2), 0);
    CHECK_STR(out, "(no serial number)\tdevice\nb\tdevice\n");
    size_t before = used;
    CHECK_EQ_INT(ops_hp_device_line(out, used + 5, &used, 0, "toolong", "device", NULL, NULL,
                                    NULL, NULL, 3), -1);
    CHECK_EQ_INT(used, before);
    CHECK_STR(out, "(no serial number)\tdevice\nb\tdevice\n");
}

int main(void)
{
    RUN(header_is_four_hex_digits);
    RUN(host_requests_and_their_device);
    RUN(host_serial_as_adb_reads_it);
    RUN(transport_switches);
    RUN(wait_for_specs);
    RUN(replies_byte_for_byte);
    RUN(device_lines_as_adb_lists_them);
    return T_DONE();
}
