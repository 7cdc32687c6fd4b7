/* SPDX-License-Identifier: Apache-2.0 */
/* The CNXN banner: "<type>:<serial>:<key>=<value>;...;features=a,b,c".
 * Parsed into owned strings; total on any input (malformed gives EFORMAT). */
#include "adbc/banner.h"
#include "core/internal.h"

#include <string.h>

static const struct {
    const char *name;
    adbc_dev_state state;
} state_names[] = {
    {"device", ADBC_DEV_DEVICE},         {"host", ADBC_DEV_HOST},
    {"recovery", ADBC_DEV_RECOVERY},     {"sideload", ADBC_DEV_SIDELOAD},
    {"bootloader", ADBC_DEV_BOOTLOADER}, {"rescue", ADBC_DEV_RESCUE},
    {"unauthorized", ADBC_DEV_UNAUTHORIZED}, {"offline", ADBC_DEV_OFFLINE},
};

const char *adbc_dev_state_name(adbc_dev_state s)
{
    for (size_t i = 0; i < sizeof state_names / sizeof state_names[0]; i++)
        if (state_names[i].state == s)
            return state_names[i].name;
    return "unknown";
}

void adbc_banner_clear(adbc_banner *b)
{
    if (!b)
        return;
    core_free(b->type);
    core_free(b->serial);
    core_free(b->product);
    core_free(b->model);
    core_free(b->device);
    for (size_t i = 0; i < b->nprops; i++) {
        core_free(b->props[i].key);
        core_free(b->props[i].value);
    }
    core_free(b->props);
    for (size_t i = 0; i < b->nfeatures; i++)
        core_free(b->features[i]);
    core_free(b->features);
    core_free(b->raw);
    memset(b, 0, sizeof *b);
}

static int add_feature(adbc_banner *b, const char *s, size_t n)
{
    if (n == 0)
        return 0;
    for (size_t i = 0; i < b->nfeatures; i++)
        if (strlen(b->features[i]) == n && memcmp(b->features[i], s, n) == 0)
            return 0;
    char **nf = core_realloc(b->features, (b->nfeatures + 1) * sizeof *nf);
    if (!nf)
        return ADBC_ENOMEM;
    b->features = nf;
    if (!(b->features[b->nfeatures] = core_strndup(s, n)))
        return ADBC_ENOMEM;
    b->nfeatures++;
    return 0;
}

static int add_prop(adbc_banner *b, const char *k, size_t kn, const char *v, size_t vn)
{
    adbc_prop *np = core_realloc(b->props, (b->nprops + 1) * sizeof *np);
    if (!np)
        return ADBC_ENOMEM;
    b->props = np;
    adbc_prop *p = &b->props[b->nprops];
    p->key = core_strndup(k, kn);
    p->value = core_strndup(v, vn);
    if (!p->key || !p->value) {
        core_free(p->key);
        core_free(p->value);
        return ADBC_ENOMEM;
    }
    b->nprops++;
    return 0;
}

static int parse_props(adbc_banner *b, const char *s, const char *end)
{
    while (s < end) {
        const char *semi = memchr(s, ';', (size_t)(end - s));
        const char *item_end = semi ? semi : end;
        const char *eq = memchr(s, '=', (size_t)(item_end - s));
        if (eq) {
            size_t kn = (size_t)(eq - s);
            const char *v = eq + 1;
            size_t vn = (size_t)(item_end - v);
            int rc;
            if (kn == 8 && memcmp(s, "features", 8) == 0) {
                const char *f = v;
                while (f <= item_end) {
                    const char *comma = memchr(f, ',', (size_t)(item_end - f));
                    const char *fe = comma ? comma : item_end;
                    if ((rc = add_feature(b, f, (size_t)(fe - f))) < 0)
                        return rc;
                    f = fe + 1;
                }
            } else if (kn > 0 && (rc = add_prop(b, s, kn, v, vn)) < 0) {
                return rc;
            }
        }
        s = item_end + 1;
    }
    return 0;
}

static char *dup_or_empty(const char *v)
{
    return core_strdup(v ? v : "");
}

int adbc_banner_parse(adbc_banner *b, const char *data, size_t len)
{
    if (!b || (!data && len))
        return core_null(__func__, !b ? "the banner" : "data");
    memset(b, 0, sizeof *b);
    while (len > 0 && data[len - 1] == '\0')
        len--;
    if (memchr(data, '\0', len))
        return core_fail(ADBC_EFORMAT, "malformed banner: it contains a NUL byte");
    const char *end = data + len;
    const char *c1 = memchr(data, ':', len);
    if (!c1)
        return core_fail(ADBC_EFORMAT,
                         "malformed banner \"%.*s\": expected <type>:<serial>:<properties>",
                         (int)(len < 64 ? len : 64), data);
    const char *c2 = memchr(c1 + 1, ':', (size_t)(end - c1 - 1));
    int rc = ADBC_ENOMEM;
    if (!(b->raw = core_strndup(data, len)) ||
        !(b->type = core_strndup(data, (size_t)(c1 - data))) ||
        !(b->serial = core_strndup(c1 + 1, (size_t)((c2 ? c2 : end) - c1 - 1))))
        goto fail;
    if (c2 && (rc = parse_props(b, c2 + 1, end)) < 0)
        goto fail;
    b->state = ADBC_DEV_UNKNOWN;
    for (size_t i = 0; i < sizeof state_names / sizeof state_names[0]; i++)
        if (strcmp(b->type, state_names[i].name) == 0)
            b->state = state_names[i].state;
    rc = ADBC_ENOMEM;
    if (!(b->product = dup_or_empty(adbc_banner_prop(b, "ro.product.name"))) ||
        !(b->model = dup_or_empty(adbc_banner_prop(b, "ro.product.model"))) ||
        !(b->device = dup_or_empty(adbc_banner_prop(b, "ro.product.device"))))
        goto fail;
    return 0;
fail:
    adbc_banner_clear(b);
    if (rc == ADBC_ENOMEM)
        return core_fail(rc, "out of memory while parsing the device banner");
    return rc;
}

int adbc_banner_has_feature(const adbc_banner *b, const char *feature)
{
    if (!b)
        return 0;
    for (size_t i = 0; i < b->nfeatures; i++)
        if (strcmp(b->features[i], feature) == 0)
            return 1;
    return 0;
}

const char *adbc_banner_prop(const adbc_banner *b, const char *key)
{
    if (!b)
        return NULL;
    for (size_t i = 0; i < b->nprops; i++)
        if (strcmp(b->props[i].key, key) == 0)
            return b->props[i].value;
    return NULL;
}
