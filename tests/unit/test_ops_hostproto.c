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

/* Protobuf answers (proto/adb_host.proto), the bytes worked out by hand
 * from the .proto: a tag is (field << 3) | wire type (0 varint, 2 length
 * delimited), a default value is left out, fields go in number order. */
static const ops_hp_pbdev dev_tcp = {.serial = "127.0.0.1:5555", .state = "device",
                                     .product = "sdk", .model = "Pixel_7", .device = "emu64",
                                     .connection_type = OPS_HP_CT_SOCKET, .transport_id = 12};
static const ops_hp_pbdev dev_usb = {.serial = "0123456789ABCDEF", .state = "offline",
                                     .bus_address = "usb:1-2", .connection_type = OPS_HP_CT_USB,
                                     .negotiated_speed = 480, .max_speed = 5000,
                                     .transport_id = 300};

TEST(devices_protobuf_byte_for_byte)
{
    static const uint8_t want[] = {
        0x0a, 0x2b,                                     /* Devices.device, 43 bytes */
        0x0a, 0x0e, '1', '2', '7', '.', '0', '.', '0', '.', '1', ':', '5', '5', '5', '5',
        0x10, 0x08,                                     /* state DEVICE */
        0x22, 0x03, 's', 'd', 'k',                      /* product */
        0x2a, 0x07, 'P', 'i', 'x', 'e', 'l', '_', '7',  /* model */
        0x32, 0x05, 'e', 'm', 'u', '6', '4',            /* device */
        0x38, 0x02,                                     /* connection_type SOCKET */
        0x50, 0x0c,                                     /* transport_id 12 */
        0x0a, 0x28,                                     /* the second device, 40 bytes */
        0x0a, 0x10, '0', '1', '2', '3', '4', '5', '6', '7', '8', '9', 'A', 'B', 'C', 'D', 'E', 'F',
        0x10, 0x06,                                     /* OFFLINE */
        0x1a, 0x07, 'u', 's', 'b', ':', '1', '-', '2',  /* bus_address */
        0x38, 0x01,                                     /* USB */
        0x40, 0xe0, 0x03,                               /* negotiated_speed 480 */
        0x48, 0x88, 0x27,                               /* max_speed 5000 */
        0x50, 0xac, 0x02};                              /* transport_id 300 */
    ops_hp_pbdev two[2] = {dev_tcp, dev_usb};
    uint8_t out[256];
    size_t len = 0;
    CHECK_EQ_INT(ops_hp_pb_devices(out, sizeof out, &len, two, 2), 0);
    CHECK_EQ_INT(len, sizeof want);
    CHECK_MEM(out, want, sizeof want);
    /* No device: an empty message, zero bytes. */
    CHECK_EQ_INT(ops_hp_pb_devices(out, sizeof out, &len, NULL, 0), 0);
    CHECK_EQ_INT(len, 0);
    /* Too small a buffer: refused, never a cut message. */
    CHECK_EQ_INT(ops_hp_pb_devices(out, sizeof want - 1, &len, two, 2), -1);
    CHECK_EQ_INT(ops_hp_pb_devices(NULL, 10, &len, two, 2), -1);
    /* adb's state words and their numbers (adb.h's ConnectionState). */
    CHECK_EQ_INT(ops_hp_pb_state("unauthorized"), 3);
    CHECK_EQ_INT(ops_hp_pb_state("no permissions (see [http://...])"), 4);
    CHECK_EQ_INT(ops_hp_pb_state("recovery"), 10);
    CHECK_EQ_INT(ops_hp_pb_state("nonsense"), 0);
    CHECK_EQ_INT(ops_hp_pb_state(NULL), 0);
}

TEST(devices_text_protobuf_as_textformat_prints_it)
{
    ops_hp_pbdev two[2] = {dev_tcp, dev_usb};
    two[1].model = "a\"b\\c\n\xc3\xa9"; /* escaped as protobuf's CEscape does */
    char out[1024];
    size_t len = 0;
    CHECK_EQ_INT(ops_hp_pb_devices_text(out, sizeof out, &len, two, 2), 0);
    const char *want = "device {\n"
                       "  serial: \"127.0.0.1:5555\"\n"
                       "  state: DEVICE\n"
                       "  product: \"sdk\"\n"
                       "  model: \"Pixel_7\"\n"
                       "  device: \"emu64\"\n"
                       "  connection_type: SOCKET\n"
                       "  transport_id: 12\n"
                       "}\n"
                       "device {\n"
                       "  serial: \"0123456789ABCDEF\"\n"
                       "  state: OFFLINE\n"
                       "  bus_address: \"usb:1-2\"\n"
                       "  model: \"a\\\"b\\\\c\\n\\303\\251\"\n"
                       "  connection_type: USB\n"
                       "  negotiated_speed: 480\n"
                       "  max_speed: 5000\n"
                       "  transport_id: 300\n"
                       "}\n";
    CHECK_STR(out, want);
    CHECK_EQ_INT(len, strlen(want));
    CHECK_EQ_INT(ops_hp_pb_devices_text(out, sizeof out, &len, NULL, 0), 0);
    CHECK_STR(out, "");
    CHECK_EQ_INT(ops_hp_pb_devices_text(out, 40, &len, two, 2), -1);
}

TEST(server_status_protobuf_byte_for_byte)
{
    ops_hp_status st;
    ops_hp_status_init(&st);
    uint8_t out[256];
    size_t len = 99;
    /* Everything at its default, nothing optional: an empty message. */
    CHECK_EQ_INT(ops_hp_pb_status(out, sizeof out, &len, &st), 0);
    CHECK_EQ_INT(len, 0);
    st.usb_backend = OPS_HP_USB_LIBUSB;
    st.version = "0.2.0";
    st.executable_absolute_path = "/usr/bin/adbc-serve";
    st.os = "Linux";
    st.trace_level = "";  /* optional: written even empty */
    st.burst_mode = 0;    /* optional: written even false */
    st.mdns_enabled = 1;
    st.keystore_path = "/h/.android/adbkey";
    static const uint8_t want[] = {
        0x08, 0x02,                               /* usb_backend LIBUSB */
        0x2a, 0x05, '0', '.', '2', '.', '0',      /* version */
        0x3a, 0x13, '/', 'u', 's', 'r', '/', 'b', 'i', 'n', '/', 'a', 'd', 'b', 'c', '-', 's',
        'e', 'r', 'v', 'e',                       /* executable_absolute_path */
        0x4a, 0x05, 'L', 'i', 'n', 'u', 'x',      /* os */
        0x52, 0x00,                               /* trace_level "" */
        0x58, 0x00,                               /* burst_mode false */
        0x60, 0x01,                               /* mdns_enabled true */
        0x6a, 0x12, '/', 'h', '/', '.', 'a', 'n', 'd', 'r', 'o', 'i', 'd', '/', 'a', 'd', 'b',
        'k', 'e', 'y'};                           /* keystore_path */
    CHECK_EQ_INT(ops_hp_pb_status(out, sizeof out, &len, &st), 0);
    CHECK_EQ_INT(len, sizeof want);
    CHECK_MEM(out, want, sizeof want);
    CHECK_EQ_INT(ops_hp_pb_status(out, 10, &len, &st), -1);
    CHECK_EQ_INT(ops_hp_pb_status(out, sizeof out, &len, NULL), -1);
    /* A binary answer is framed by its byte count, NULs and all. */
    char framed[300];
    CHECK_EQ_INT(ops_hp_bytes(framed, sizeof framed, "a\0b", 3), 7);
    CHECK_MEM(framed, "0003a\0b", 7);
}

TEST(mdns_answers_as_adb_lists_them)
{
    char buf[256];
    CHECK_STR(ops_hp_mdns_check(buf, sizeof buf, "eth0 (IPv4)", 1),
              "mdns daemon version [adbc built-in mDNS: eth0 (IPv4)]");
    CHECK_STR(ops_hp_mdns_check(buf, sizeof buf, "", 0), "ERROR: mdns daemon unavailable");
    size_t used = 0;
    buf[0] = '\0';
    CHECK_EQ_INT(ops_hp_mdns_line(buf, sizeof buf, &used, "adb-R5CT-aBcDeF",
                                  "_adb-tls-connect._tcp", "192.168.1.20", 37001), 0);
    CHECK_EQ_INT(ops_hp_mdns_line(buf, sizeof buf, &used, "evil\nname\t",
                                  "_adb-tls-pairing._tcp", "fe80::1%eth0", 37002), 0);
    CHECK_STR(buf, "adb-R5CT-aBcDeF\t_adb-tls-connect._tcp\t192.168.1.20:37001\n"
                   "evil_name_\t_adb-tls-pairing._tcp\t[fe80::1%eth0]:37002\n");
    size_t before = used;
    CHECK_EQ_INT(ops_hp_mdns_line(buf, used + 10, &used, "x", "_adb._tcp", "10.0.0.1", 5555), -1);
    CHECK_EQ_INT(used, before);
    CHECK_EQ_INT(ops_hp_mdns_line(buf, sizeof buf, &used, NULL, "_adb._tcp", "", 1), -1);
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
    RUN(devices_protobuf_byte_for_byte);
    RUN(devices_text_protobuf_as_textformat_prints_it);
    RUN(server_status_protobuf_byte_for_byte);
    RUN(mdns_answers_as_adb_lists_them);
    return T_DONE();
}
