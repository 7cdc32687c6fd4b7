/* SPDX-License-Identifier: Apache-2.0 */
/* adb's server protocol, the requests a client of adb's server sends and
 * the replies it reads (AOSP packages/modules/adb: SERVICES.TXT,
 * OVERVIEW.TXT; adb.cpp handle_host_request, sockets.cpp's smart socket,
 * services.cpp host_service_to_socket). No I/O: bytes in, requests out;
 * replies built into a caller's buffer. adbc-serve's adb server
 * (tools/adbc-serve/adbsrv.c) is the I/O around it.
 *
 * A request is 4 lowercase-or-uppercase hex digits (its length, 1..65535)
 * then that many bytes. A reply is "OKAY" or "FAIL", a FAIL followed by a
 * protocol string (4 hex digits and the bytes): the message. */
#ifndef ADBC_OPS_HOSTPROTO_H
#define ADBC_OPS_HOSTPROTO_H

#include <stddef.h>
#include <stdint.h>

#define OPS_HP_MAX 65535 /* the longest request: what 4 hex digits say */

/* The length a 4-byte header says: 1..65535, or -1 when it is not 4 hex
 * digits or says 0 (adb refuses both). */
long ops_hp_header(const uint8_t hdr[4]);

/* Which device a request is for. */
typedef enum ops_hp_sel {
    OPS_HP_ANY = 0,  /* host:, host:transport-any, tport:any */
    OPS_HP_USB,      /* host-usb:, transport-usb, tport:usb */
    OPS_HP_LOCAL,    /* host-local:, transport-local, tport:local */
    OPS_HP_SERIAL,   /* host-serial:S:, transport:S, tport:serial:S */
    OPS_HP_ID        /* host-transport-id:N:, transport-id:N */
} ops_hp_sel;

typedef enum ops_hp_kind {
    OPS_HP_DEVICE = 0, /* not a host request: a device service (after a transport) */
    OPS_HP_HOST,       /* a host request: cmd is what follows its prefix */
    OPS_HP_TRANSPORT   /* a transport switch: sel/serial/id say which; tport: its form */
} ops_hp_kind;

typedef struct ops_hp_req {
    ops_hp_kind kind;
    ops_hp_sel sel;
    char serial[256];
    uint64_t id;
    int tport;         /* transport switch in the tport: form (8-byte id reply) */
    const char *cmd;   /* points into the request: the host command, or the service */
} ops_hp_req;

/* Parse one request (NUL-terminated, as read after its header). 0, or -1
 * with why in err (a malformed prefix or transport id: adb's words where
 * adb has them). r->cmd points into req. */
int ops_hp_parse(ops_hp_req *r, const char *req, char *err, size_t errlen);

/* A "wait-for-TRANSPORT-STATE[-STATE...]" spec (what follows "wait-for-"):
 * the transport and the states as bits of ops_hp_state. 0, or -1 with
 * adb's message in err ("bad wait-for- state: ..."). */
enum {
    OPS_HP_ST_DEVICE = 1, OPS_HP_ST_RECOVERY = 2, OPS_HP_ST_RESCUE = 4, OPS_HP_ST_SIDELOAD = 8,
    OPS_HP_ST_BOOTLOADER = 16, OPS_HP_ST_ANY = 32, OPS_HP_ST_DISCONNECT = 64
};
int ops_hp_wait_spec(const char *spec, ops_hp_sel *sel, unsigned *states, char *err,
                     size_t errlen);

/* Replies, written into out (cap bytes); each returns the length, or 0 when
 * cap is too small. A string longer than 65535 bytes is cut there. */
size_t ops_hp_okay(char *out, size_t cap, const char *str);   /* OKAY [%04x str] */
size_t ops_hp_fail(char *out, size_t cap, const char *msg);   /* FAIL %04x msg */
size_t ops_hp_string(char *out, size_t cap, const char *str); /* %04x str */

/* One line of "host:devices" ("SERIAL\tSTATE\n") or, long, of
 * "host:devices-l" (serial padded to 22, the state, then " DEVPATH",
 * " product:P", " model:M" (non-alphanumerics as '_'), " device:D", each
 * only when known, and " transport_id:N"), appended to out at *used
 * (cap bytes, kept NUL-terminated). 0, or -1 when it does not fit. */
int ops_hp_device_line(char *out, size_t cap, size_t *used, int long_form, const char *serial,
                       const char *state, const char *devpath, const char *product,
                       const char *model, const char *device, uint64_t id);

/* The same for n bytes of data (binary: a protobuf answer). */
size_t ops_hp_bytes(char *out, size_t cap, const void *data, size_t n);

/* host:mdns:check's answer for the n multicast interfaces ifs names
 * (adbc_mdns_interfaces): "mdns daemon version [adbc built-in mDNS:
 * IFS]", or adb's "ERROR: mdns daemon unavailable" when there is none
 * (clients test the "ERROR:" start). Written into buf; returns buf. */
const char *ops_hp_mdns_check(char *buf, size_t cap, const char *ifs, int n);

/* host:mdns:check's answer when mDNS is off (ADB_MDNS=0), adb's words
 * when its discovery was never started (client/transport_mdns.cpp); then
 * host:mdns:services lists nothing, as adb's empty cache. */
#define OPS_HP_MDNS_OFF_ANSWER "ERROR: mdns discovery disabled"

/* adb's ADB_MDNS as its server reads it: mDNS is on unless it is "0". */
int ops_hp_mdns_enabled(void);

/* One line of host:mdns:services, as adb's server lists a service:
 * "INSTANCE\tSERVICE\tADDR:PORT\n" ([ADDR]:PORT for IPv6), appended to
 * out at *used (kept NUL-terminated). Names come from the network: a
 * control character in them is written as '_', so one service stays one
 * line. 0, or -1 when it does not fit (out unchanged). */
int ops_hp_mdns_line(char *out, size_t cap, size_t *used, const char *instance,
                     const char *service, const char *addr, unsigned port);

/* ---- protobuf answers (adb's proto/adb_host.proto, encoded by hand) ----
 * Fields at their default (0, "", an enum's 0) are left out, as proto3
 * writes them; fields are written in field-number order, as protobuf's
 * own serializer does, so the bytes equal adb's server's for the same
 * message. */

/* adb.proto.ConnectionState (adb.h's ConnectionState) for one of adb's
 * state words ("device", "offline", "unauthorized", ...); 0 (ANY) for a
 * word adb does not have. */
int ops_hp_pb_state(const char *state);

enum { OPS_HP_CT_UNKNOWN = 0, OPS_HP_CT_USB = 1, OPS_HP_CT_SOCKET = 2 }; /* ConnectionType */

/* One adb.proto.Device; NULL strings are "" (left out). */
typedef struct ops_hp_pbdev {
    const char *serial;
    const char *state;        /* adb's word; ops_hp_pb_state gives the number */
    const char *bus_address;  /* the devpath, '\n' as '_' */
    const char *product, *model, *device; /* model: non-alphanumerics as '_', as devices -l */
    int connection_type;      /* OPS_HP_CT_* */
    int64_t negotiated_speed, max_speed; /* Mb/s; 0 unknown */
    uint64_t transport_id;
} ops_hp_pbdev;

/* adb.proto.Devices with n devices, binary (track-devices-proto-binary)
 * or in protobuf's text format (track-devices-proto-text: what
 * TextFormat::PrintToString writes), into out (cap bytes); *len gets the
 * length (text: NUL-terminated too). 0, or -1 when it does not fit. */
int ops_hp_pb_devices(uint8_t *out, size_t cap, size_t *len, const ops_hp_pbdev *devs,
                      size_t n);
int ops_hp_pb_devices_text(char *out, size_t cap, size_t *len, const ops_hp_pbdev *devs,
                           size_t n);

/* adb.proto.AdbServerStatus (host:server-status). The plain fields are
 * left out at their default; the `optional` ones (trace_level and after)
 * are written when present, even empty or false: NULL strings and -1
 * booleans are absent. */
enum { OPS_HP_USB_UNKNOWN = 0, OPS_HP_USB_NATIVE = 1, OPS_HP_USB_LIBUSB = 2,
       OPS_HP_USB_DISABLED = 3 };
enum { OPS_HP_MDNS_UNKNOWN = 0, OPS_HP_MDNS_BONJOUR = 1, OPS_HP_MDNS_OPENSCREEN = 2,
       OPS_HP_MDNS_LIBADBMDNS = 3, OPS_HP_MDNS_DISABLED = 4 };
typedef struct ops_hp_status {
    int usb_backend, usb_backend_forced, mdns_backend, mdns_backend_forced;
    const char *version, *build, *executable_absolute_path, *log_absolute_path, *os;
    const char *trace_level;  /* optional */
    int burst_mode;           /* optional: -1 absent */
    int mdns_enabled;         /* optional: -1 absent */
    const char *keystore_path, *known_hosts_path; /* optional */
} ops_hp_status;

/* Initialise s: every field at its default, the optional ones absent. */
void ops_hp_status_init(ops_hp_status *s);
int ops_hp_pb_status(uint8_t *out, size_t cap, size_t *len, const ops_hp_status *s);

/* The address of adb's server as adb's client finds it: ADB_SERVER_SOCKET
 * when set, else tcp:ANDROID_ADB_SERVER_ADDRESS (127.0.0.1):
 * ANDROID_ADB_SERVER_PORT (5037). buf (cap bytes) holds it when built. */
const char *ops_hp_server_addr(char *buf, size_t cap);

#endif
