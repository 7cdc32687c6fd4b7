/* SPDX-License-Identifier: Apache-2.0 */
/* The CNXN banner "<type>:<serial>:<key>=<value>;...;features=a,b": what
 * adbd and adb send (adb.cpp get_connection_string / parse_banner), the
 * state names, and malformed input. Every parse input is copied into a
 * buffer of exactly its length, so reading past it is caught under ASan. */
#include "t.h"

#include "adbc/banner.h"
#include "adbc/error.h"

/* Parse `len` bytes from an exactly-sized heap copy. */
static int parse_exact(adbc_banner *b, const char *data, size_t len)
{
    char *copy = malloc(len ? len : 1);
    if (!copy)
        abort();
    if (len)
        memcpy(copy, data, len);
    int rc = adbc_banner_parse(b, copy, len);
    free(copy);
    return rc;
}

static int parse_str(adbc_banner *b, const char *s)
{
    return parse_exact(b, s, strlen(s));
}

TEST(host_banner)
{
    adbc_banner b;
    const char *s = "host::features=shell_v2,cmd,stat_v2,ls_v2,fixed_push_mkdir,delayed_ack";
    CHECK_EQ_INT(parse_str(&b, s), 0);
    CHECK_EQ_INT(b.state, ADBC_DEV_HOST);
    CHECK_STR(b.type, "host");
    CHECK_STR(b.serial, "");
    CHECK_STR(b.product, "");
    CHECK_STR(b.model, "");
    CHECK_STR(b.device, "");
    CHECK_STR(b.raw, s);
    CHECK_EQ_INT(b.nprops, 0);
    CHECK_EQ_INT(b.nfeatures, 6);
    CHECK_STR(b.features[0], "shell_v2");
    CHECK_STR(b.features[5], "delayed_ack");
    CHECK(adbc_banner_has_feature(&b, "cmd"));
    CHECK(adbc_banner_has_feature(&b, "fixed_push_mkdir"));
    CHECK(!adbc_banner_has_feature(&b, "abb"));
    CHECK(!adbc_banner_has_feature(&b, "shell"));   /* no prefix matching */
    CHECK(!adbc_banner_has_feature(&b, "shell_v2,")); /* nor substring */
    adbc_banner_clear(&b);
    CHECK(b.type == NULL && b.nfeatures == 0 && b.features == NULL);
}

TEST(device_banner)
{
    adbc_banner b;
    const char *s = "device::ro.product.name=panther;ro.product.model=Pixel 7;"
                    "ro.product.device=panther;features=sendrecv_v2_brotli,remount_shell,"
                    "sendrecv_v2,abb_exec,fixed_push_mkdir,fixed_push_symlink_timestamp,abb,"
                    "shell_v2,cmd,ls_v2,apex,stat_v2,delayed_ack";
    CHECK_EQ_INT(parse_str(&b, s), 0);
    CHECK_EQ_INT(b.state, ADBC_DEV_DEVICE);
    CHECK_STR(b.type, "device");
    CHECK_STR(b.product, "panther");
    CHECK_STR(b.model, "Pixel 7");
    CHECK_STR(b.device, "panther");
    CHECK_EQ_INT(b.nprops, 3);
    CHECK_STR(adbc_banner_prop(&b, "ro.product.model"), "Pixel 7");
    CHECK(adbc_banner_prop(&b, "features") == NULL); /* features are not a prop */
    CHECK(adbc_banner_prop(&b, "ro.product") == NULL);
    CHECK_EQ_INT(b.nfeatures, 13);
    CHECK(adbc_banner_has_feature(&b, "delayed_ack"));
    CHECK(adbc_banner_has_feature(&b, "sendrecv_v2_brotli"));
    adbc_banner_clear(&b);
}

TEST(legacy_semicolon_terminated_banner)
{
    /* Before features existed the properties were ;-terminated. */
    adbc_banner b;
    CHECK_EQ_INT(parse_str(&b, "device::ro.product.name=x;ro.product.model=y;ro.product.device=z;"),
                 0);
    CHECK_STR(b.product, "x");
    CHECK_STR(b.model, "y");
    CHECK_STR(b.device, "z");
    CHECK_EQ_INT(b.nfeatures, 0);
    adbc_banner_clear(&b);

    /* The oldest hosts sent "host::" with a NUL. */
    CHECK_EQ_INT(parse_exact(&b, "host::\0", 7), 0);
    CHECK_EQ_INT(b.state, ADBC_DEV_HOST);
    CHECK_EQ_INT(b.nfeatures, 0);
    CHECK_STR(b.raw, "host::");
    adbc_banner_clear(&b);
}

TEST(state_names)
{
    const struct {
        const char *type;
        adbc_dev_state st;
    } t[] = {{"device", ADBC_DEV_DEVICE},         {"recovery", ADBC_DEV_RECOVERY},
             {"sideload", ADBC_DEV_SIDELOAD},     {"bootloader", ADBC_DEV_BOOTLOADER},
             {"rescue", ADBC_DEV_RESCUE},         {"host", ADBC_DEV_HOST}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        char buf[64];
        snprintf(buf, sizeof buf, "%s::features=cmd", t[i].type);
        adbc_banner b;
        CHECK_EQ_INT(parse_str(&b, buf), 0);
        CHECK_EQ_INT(b.state, t[i].st);
        CHECK_STR(b.type, t[i].type);
        CHECK_STR(adbc_dev_state_name(t[i].st), t[i].type);
        adbc_banner_clear(&b);
    }
    CHECK_STR(adbc_dev_state_name(ADBC_DEV_UNKNOWN), "unknown");
    CHECK_STR(adbc_dev_state_name(ADBC_DEV_UNAUTHORIZED), "unauthorized");
    CHECK_STR(adbc_dev_state_name(ADBC_DEV_OFFLINE), "offline");
    CHECK_STR(adbc_dev_state_name((adbc_dev_state)999), "unknown");

    /* An unrecognized type parses, with its name kept. */
    adbc_banner b;
    CHECK_EQ_INT(parse_str(&b, "fastbootd::"), 0);
    CHECK_EQ_INT(b.state, ADBC_DEV_UNKNOWN);
    CHECK_STR(b.type, "fastbootd");
    adbc_banner_clear(&b);
    /* Type names are exact, not prefixes or case-folded. */
    CHECK_EQ_INT(parse_str(&b, "Device::"), 0);
    CHECK_EQ_INT(b.state, ADBC_DEV_UNKNOWN);
    adbc_banner_clear(&b);
    CHECK_EQ_INT(parse_str(&b, "devices::"), 0);
    CHECK_EQ_INT(b.state, ADBC_DEV_UNKNOWN);
    adbc_banner_clear(&b);
}

TEST(serial_field_and_short_forms)
{
    adbc_banner b;
    CHECK_EQ_INT(parse_str(&b, "device:ABC123:features=cmd"), 0);
    CHECK_STR(b.serial, "ABC123");
    CHECK_EQ_INT(b.nfeatures, 1);
    adbc_banner_clear(&b);

    /* Two fields: no properties at all. */
    CHECK_EQ_INT(parse_str(&b, "sideload:xyz"), 0);
    CHECK_EQ_INT(b.state, ADBC_DEV_SIDELOAD);
    CHECK_STR(b.serial, "xyz");
    CHECK_EQ_INT(b.nprops, 0);
    CHECK_EQ_INT(b.nfeatures, 0);
    adbc_banner_clear(&b);

    CHECK_EQ_INT(parse_str(&b, "recovery:"), 0);
    CHECK_EQ_INT(b.state, ADBC_DEV_RECOVERY);
    CHECK_STR(b.serial, "");
    adbc_banner_clear(&b);

    /* Empty type: parses, state unknown. */
    CHECK_EQ_INT(parse_str(&b, "::"), 0);
    CHECK_STR(b.type, "");
    CHECK_EQ_INT(b.state, ADBC_DEV_UNKNOWN);
    adbc_banner_clear(&b);
}

TEST(features_list_edge_cases)
{
    adbc_banner b;
    /* empty items are skipped, duplicates kept once */
    CHECK_EQ_INT(parse_str(&b, "device::features=a,,b,a,"), 0);
    CHECK_EQ_INT(b.nfeatures, 2);
    CHECK_STR(b.features[0], "a");
    CHECK_STR(b.features[1], "b");
    adbc_banner_clear(&b);

    CHECK_EQ_INT(parse_str(&b, "device::features="), 0);
    CHECK_EQ_INT(b.nfeatures, 0);
    adbc_banner_clear(&b);

    CHECK_EQ_INT(parse_str(&b, "device::features=,"), 0);
    CHECK_EQ_INT(b.nfeatures, 0);
    adbc_banner_clear(&b);

    /* features in the middle, props after it */
    CHECK_EQ_INT(parse_str(&b, "device::features=x,y;ro.product.model=m"), 0);
    CHECK_EQ_INT(b.nfeatures, 2);
    CHECK_STR(b.model, "m");
    adbc_banner_clear(&b);

    /* items without '=' and with an empty key are ignored */
    CHECK_EQ_INT(parse_str(&b, "device::junk;=v;;ro.product.name=p;features"), 0);
    CHECK_STR(b.product, "p");
    CHECK_EQ_INT(b.nprops, 1);
    CHECK_EQ_INT(b.nfeatures, 0);
    adbc_banner_clear(&b);

    /* an empty value is a value */
    CHECK_EQ_INT(parse_str(&b, "device::ro.product.model=;features=z"), 0);
    CHECK_STR(adbc_banner_prop(&b, "ro.product.model"), "");
    CHECK_EQ_INT(b.nfeatures, 1);
    adbc_banner_clear(&b);
}

TEST(malformed_banners_are_eformat)
{
    static const struct {
        const char *data;
        size_t len;
    } bad[] = {
        {"", 0},
        {"device", 6},
        {"host", 4},
        {"abcde", 5},
        {"dev\0ice::features=a", 20},
        {"device::features=a\0b", 20},
        {"\0device::", 9},
        {"device\0:", 8},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        adbc_banner b;
        adbc_clear_error();
        int rc = parse_exact(&b, bad[i].data, bad[i].len);
        if (rc != ADBC_EFORMAT)
            fprintf(stderr, "  case %zu: rc %d\n", i, rc);
        CHECK_EQ_INT(rc, ADBC_EFORMAT);
        CHECK(adbc_last_error()[0] != '\0');
        CHECK(strstr(adbc_last_error(), "banner") != NULL);
        /* the struct is left empty: clearing it is safe */
        CHECK(b.type == NULL && b.raw == NULL && b.features == NULL);
        adbc_banner_clear(&b);
    }
}

TEST(all_nul_banner_is_eformat)
{
    /* Trailing NULs are dropped; nothing is left. */
    adbc_banner b;
    CHECK_EQ_INT(parse_exact(&b, "\0\0\0\0", 4), ADBC_EFORMAT);
    adbc_banner_clear(&b);
}

TEST(trailing_nuls_are_dropped)
{
    adbc_banner b;
    CHECK_EQ_INT(parse_exact(&b, "device::features=a,b\0\0\0\0", 24), 0);
    CHECK_EQ_INT(b.nfeatures, 2);
    CHECK_STR(b.features[1], "b");
    CHECK_EQ_INT(strlen(b.raw), 20);
    adbc_banner_clear(&b);
}

TEST(huge_banner)
{
    /* 1 MiB of properties and a long features list: parses completely. */
    size_t cap = 1u << 20;
    char *s = malloc(cap + 1);
    CHECK(s != NULL);
    size_t n = (size_t)snprintf(s, cap, "device::");
    for (int i = 0; n + 64 < cap / 16; i++)
        n += (size_t)snprintf(s + n, cap - n, "k%d=v%d;", i, i);
    n += (size_t)snprintf(s + n, cap - n, "features=");
    int nf = 0;
    while (n + 32 < cap) {
        n += (size_t)snprintf(s + n, cap - n, "f%d,", nf);
        nf++;
        if (nf == 2000)
            break;
    }
    while (n < cap)
        s[n++] = 'x'; /* one long last feature */
    adbc_banner b;
    int rc = parse_exact(&b, s, n);
    free(s);
    CHECK_EQ_INT(rc, 0);
    CHECK_EQ_INT(b.nfeatures, (size_t)nf + 1);
    CHECK(b.nprops > 5000);
    CHECK_STR(adbc_banner_prop(&b, "k7"), "v7");
    CHECK(adbc_banner_has_feature(&b, "f1999"));
    adbc_banner_clear(&b);
}

TEST(clear_is_idempotent_and_null_safe)
{
    adbc_banner b;
    CHECK_EQ_INT(parse_str(&b, "device::features=a"), 0);
    adbc_banner_clear(&b);
    adbc_banner_clear(&b);
    adbc_banner_clear(NULL);
    CHECK(!adbc_banner_has_feature(NULL, "a"));
    CHECK(adbc_banner_prop(NULL, "a") == NULL);
}

/* Random banners over the delimiter alphabet: parse either succeeds with a
 * consistent result or fails with EFORMAT and a message; never a crash or a
 * read outside the buffer. */
TEST(random_banners_never_crash)
{
    static const char alpha[] = {':', ';', '=', ',', 'a', 'b', '\0', 'f', 'e', 's', 'd', 'v'};
    uint32_t seed = 12345;
    for (int iter = 0; iter < 20000; iter++) {
        char buf[96];
        seed = seed * 1103515245u + 12345u;
        size_t len = (seed >> 16) % sizeof buf;
        for (size_t i = 0; i < len; i++) {
            seed = seed * 1103515245u + 12345u;
            buf[i] = alpha[(seed >> 16) % sizeof alpha];
        }
        if (iter % 7 == 0 && len > 9)
            memcpy(buf, "device::features=", len > 17 ? 17 : len);
        adbc_banner b;
        adbc_clear_error();
        int rc = parse_exact(&b, buf, len);
        CHECK(rc == 0 || rc == ADBC_EFORMAT);
        if (rc == 0) {
            CHECK(b.type && b.serial && b.product && b.model && b.device && b.raw);
            CHECK(strchr(b.type, ':') == NULL);
            for (size_t i = 0; i < b.nfeatures; i++) {
                CHECK(b.features[i][0] != '\0');
                CHECK(strchr(b.features[i], ',') == NULL);
                CHECK(strchr(b.features[i], ';') == NULL);
                for (size_t j = 0; j < i; j++)
                    CHECK(strcmp(b.features[i], b.features[j]) != 0);
            }
        } else {
            CHECK(adbc_last_error()[0] != '\0');
        }
        adbc_banner_clear(&b);
    }
}

int main(void)
{
    RUN(host_banner);
    RUN(device_banner);
    RUN(legacy_semicolon_terminated_banner);
    RUN(state_names);
    RUN(serial_field_and_short_forms);
    RUN(features_list_edge_cases);
    RUN(malformed_banners_are_eformat);
    RUN(all_nul_banner_is_eformat);
    RUN(trailing_nuls_are_dropped);
    RUN(huge_banner);
    RUN(clear_is_idempotent_and_null_safe);
    RUN(random_banners_never_crash);
    return T_DONE();
}
