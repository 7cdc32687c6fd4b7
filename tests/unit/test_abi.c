/* SPDX-License-Identifier: Apache-2.0 */
/* The size rule of docs/abi.md, exercised through the public API: a struct
 * from an older header (smaller) keeps defaults for the fields it lacks, one
 * from newer headers (larger) or one never initialised (size 0) is refused
 * with a message saying what to do. And the version calls agree. */
#include <stddef.h>

#include "adbc/adbc.h"
#include "t.h"

static const char XML[] = "<?xml version=\"1.0\"?><hierarchy rotation=\"0\"><node index=\"0\" text=\"x\" resource-id=\"\" class=\"android.widget.Button\" package=\"p\" content-desc=\"\" clickable=\"true\" enabled=\"true\" bounds=\"[0,0][10,10]\"/></hierarchy>";

TEST(version_call_matches_the_headers)
{
    const char *s = NULL;
    CHECK_EQ_INT(adbc_version(&s), ADBC_VERSION_NUMBER);
    CHECK_STR(s, ADBC_VERSION_STRING);
    CHECK_EQ_INT(adbc_version(NULL), (ADBC_VERSION_MAJOR << 16) | (ADBC_VERSION_MINOR << 8) |
                                         ADBC_VERSION_PATCH);
}

TEST(init_writes_only_the_callers_size)
{
    /* A caller whose header ends after io_timeout_ms: the init function
     * must not write past it. */
    unsigned char buf[sizeof(adbc_conn_opts) + 16];
    memset(buf, 0xAB, sizeof buf);
    size_t small = offsetof(adbc_conn_opts, io_timeout_ms) + sizeof(int);
    adbc_conn_opts_init_sized((adbc_conn_opts *)buf, small);
    adbc_conn_opts *o = (adbc_conn_opts *)buf;
    CHECK_EQ_INT(o->size, small);
    CHECK_EQ_INT(o->connect_timeout_ms, 10000);
    CHECK_EQ_INT(o->io_timeout_ms, 30000);
    for (size_t i = small; i < sizeof buf; i++)
        CHECK_EQ_INT(buf[i], 0xAB);
    adbc_conn_opts full;
    adbc_conn_opts_init(&full);
    CHECK_EQ_INT(full.size, sizeof full);
}

TEST(uninitialised_struct_is_refused_with_advice)
{
    adbc_ui_snap *snap = NULL;
    CHECK_EQ_INT(adbc_ui_snap_parse(&snap, XML, strlen(XML)), 0);
    adbc_ui_selector sel;
    memset(&sel, 0, sizeof sel);
    sel.text = "x";
    int *refs = NULL;
    size_t n = 0;
    int rc = adbc_ui_find(&refs, &n, snap, &sel);
    adbc_ui_snap_free(snap);
    CHECK_EQ_INT(rc, ADBC_EINVAL);
    /* It has no _init(): the message says what to set, and names no
     * function that does not exist. */
    CHECK(strstr(adbc_last_error(), "adbc_ui_selector is not initialised (.size is 0)") != NULL);
    CHECK(strstr(adbc_last_error(), "set .size = sizeof(adbc_ui_selector)") != NULL);
    CHECK(strstr(adbc_last_error(), "_init") == NULL);
}

TEST(struct_from_newer_headers_is_refused)
{
    struct {
        adbc_ui_selector sel;
        char future[32];
    } big;
    memset(&big, 0, sizeof big);
    big.sel.size = sizeof big;
    big.sel.text = "x";
    adbc_ui_snap *snap = NULL;
    CHECK_EQ_INT(adbc_ui_snap_parse(&snap, XML, strlen(XML)), 0);
    int *refs = NULL;
    size_t n = 0;
    int rc = adbc_ui_find(&refs, &n, snap, &big.sel);
    adbc_ui_snap_free(snap);
    CHECK_EQ_INT(rc, ADBC_EINVAL);
    CHECK(strstr(adbc_last_error(), "newer adbc headers") != NULL);
}

TEST(struct_from_older_headers_gets_defaults)
{
    /* An adbc_devices_opts as a header with only size and usb would have
     * it: probe and timeout_ms come from the library's defaults. */
    adbc_devices_opts full;
    adbc_devices_opts_init(&full);
    unsigned char buf[sizeof full];
    memset(buf, 0, sizeof buf);
    adbc_devices_opts *o = (adbc_devices_opts *)buf;
    size_t small = offsetof(adbc_devices_opts, usb) + sizeof o->usb;
    adbc_devices_opts_init_sized(o, small);
    CHECK_EQ_INT(o->size, small);
    o->usb = 0; /* no USB: the listing needs no hardware */
    adbc_device_entry *list = NULL;
    size_t count = 99;
    CHECK_EQ_INT(adbc_devices_list(&list, &count, NULL, 0, o), 0);
    CHECK_EQ_INT(count, 0);
    adbc_devices_free(list);
}

int main(void)
{
    RUN(version_call_matches_the_headers);
    RUN(init_writes_only_the_callers_size);
    RUN(uninitialised_struct_is_refused_with_advice);
    RUN(struct_from_newer_headers_is_refused);
    RUN(struct_from_older_headers_gets_defaults);
    return T_DONE();
}
