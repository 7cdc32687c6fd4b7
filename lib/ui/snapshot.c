/* SPDX-License-Identifier: Apache-2.0 */
/* The snapshot object: a dump taken over, parsed, pruned, printed.
 *
 * All the work happens once, when the snapshot is made; afterwards it is
 * read-only, so threads may share it. The dump buffer stays alive inside
 * the snapshot because every string (ref table included) points into it. */
#include "ui/ui_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/internal.h"

/* Same screen content, same id: the text and where every ref is. */
static void make_id(adbc_ui_snap *s)
{
    uint64_t h = ui_hash(0x1dull, s->text, s->text_len);
    for (size_t i = 0; i < s->refs.count; i++)
        h = ui_hash_u64(h, s->refs.refs[i].exact_token);
    snprintf(s->id, sizeof s->id, "%016llx", (unsigned long long)h);
}

int ui_snap_from(adbc_ui_snap **out, char *mem, char *buf, size_t len)
{
    *out = NULL;
    adbc_ui_snap *s = core_calloc(1, sizeof *s);
    if (!s) {
        core_free(mem);
        return core_fail(ADBC_ENOMEM, "out of memory for a snapshot");
    }
    s->doc.mem = mem;
    s->doc.buf = buf;
    s->doc.len = len;
    int rc = ui_xml_parse(&s->doc);
    if (rc == 0)
        rc = ui_prune(&s->doc);
    if (rc == 0)
        rc = ui_format_text(&s->text, &s->text_len, &s->doc);
    if (rc == 0)
        rc = ui_reftab_build(&s->refs, &s->doc);
    if (rc < 0) {
        adbc_ui_snap_free(s);
        return rc;
    }
    make_id(s);
    s->timestamp = core_wall_ms();
    memcpy(s->refs.id, s->id, sizeof s->id);
    s->refs.timestamp = s->timestamp;
    *out = s;
    return 0;
}

int adbc_ui_snap_parse(adbc_ui_snap **out, const void *xml, size_t len)
{
    if (!out || (!xml && len))
        return core_fail(ADBC_EINVAL, "adbc_ui_snap_parse: out and xml must not be NULL");
    *out = NULL;
    if (len > UI_MAX_DUMP)
        return core_fail(ADBC_EFORMAT, "dump of %zu bytes is larger than any screen (limit %zu)",
                         len, UI_MAX_DUMP);
    char *mem = core_malloc(len + 1);
    if (!mem)
        return core_fail(ADBC_ENOMEM, "out of memory copying a dump of %zu bytes", len);
    if (len)
        memcpy(mem, xml, len);
    mem[len] = '\0';
    return ui_snap_from(out, mem, mem, len);
}

int adbc_ui_snap_parse_owned(adbc_ui_snap **out, void *buf, size_t len)
{
    if (!out || (!buf && len)) {
        core_free(buf);
        return core_fail(ADBC_EINVAL, "adbc_ui_snap_parse_owned: out and buf must not be NULL");
    }
    *out = NULL;
    return ui_snap_from(out, buf, buf, len);
}

int adbc_ui_snap_load(adbc_ui_snap **out, const char *path)
{
    if (!out || !path)
        return core_fail(ADBC_EINVAL, "adbc_ui_snap_load: out and path must not be NULL");
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        return core_fail(e == ENOENT ? ADBC_ENOTFOUND : e == EACCES ? ADBC_EPERM : ADBC_EIO,
                         "cannot open dump file %s: %s", path, strerror(e));
    }
    struct stat st;
    size_t cap = 1 << 16;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
        if ((uint64_t)st.st_size > UI_MAX_DUMP) {
            close(fd);
            return core_fail(ADBC_EFORMAT, "dump file %s is %lld bytes, more than any screen "
                             "(limit %zu)", path, (long long)st.st_size, UI_MAX_DUMP);
        }
        cap = (size_t)st.st_size + 1;
    }
    char *mem = core_malloc(cap);
    size_t len = 0;
    if (!mem) {
        close(fd);
        return core_fail(ADBC_ENOMEM, "out of memory reading %s", path);
    }
    for (;;) {
        char *dst = mem + len;
        size_t room = cap - 1 - len;
        char probe;
        if (room == 0) { /* full: a pipe, or a file that grew; look before growing */
            dst = &probe;
            room = 1;
        }
        ssize_t r = read(fd, dst, room);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            core_free(mem);
            close(fd);
            return core_fail(ADBC_EIO, "cannot read dump file %s: %s", path, strerror(e));
        }
        if (r == 0)
            break;
        if (dst == &probe) {
            char *m = cap > UI_MAX_DUMP ? NULL : core_realloc(mem, cap * 2);
            if (!m) {
                core_free(mem);
                close(fd);
                if (cap > UI_MAX_DUMP)
                    return core_fail(ADBC_EFORMAT, "dump %s is larger than any screen (limit %zu)",
                                     path, UI_MAX_DUMP);
                return core_fail(ADBC_ENOMEM, "out of memory reading %s", path);
            }
            mem = m;
            cap *= 2;
            mem[len] = probe;
        }
        len += (size_t)r;
    }
    close(fd);
    mem[len] = '\0';
    return ui_snap_from(out, mem, mem, len);
}

void adbc_ui_snap_free(adbc_ui_snap *s)
{
    if (!s)
        return;
    core_free(s->doc.mem);
    core_free(s->doc.arena);
    core_free(s->doc.nodes);
    core_free(s->doc.winroot);
    core_free(s->doc.refnode);
    core_free(s->text);
    core_free(s->refs.refs);
    core_free(s);
}

const char *adbc_ui_snap_text(const adbc_ui_snap *s, size_t *len)
{
    if (len)
        *len = s ? s->text_len : 0;
    return s ? s->text : "";
}

int adbc_ui_snap_json(char **out, size_t *len, const adbc_ui_snap *s)
{
    if (!out || !s)
        return core_fail(ADBC_EINVAL, "adbc_ui_snap_json: out and s must not be NULL");
    size_t n;
    int rc = ui_format_json(out, &n, &s->doc, s->id, s->timestamp);
    if (rc == 0 && len)
        *len = n;
    return rc;
}

const adbc_ui_reftab *adbc_ui_snap_refs(const adbc_ui_snap *s)
{
    return s ? &s->refs : NULL;
}

const char *adbc_ui_snap_id(const adbc_ui_snap *s)
{
    return s ? s->id : "";
}

int64_t adbc_ui_snap_timestamp(const adbc_ui_snap *s)
{
    return s ? s->timestamp : 0;
}

int adbc_ui_snap_complete(const adbc_ui_snap *s)
{
    return s && s->doc.complete;
}

const char *adbc_ui_snap_damage(const adbc_ui_snap *s)
{
    return s ? s->doc.damage : "";
}

size_t adbc_ui_snap_windows(const adbc_ui_snap *s)
{
    return s ? s->doc.nwin : 0;
}

const char *adbc_ui_snap_window_package(const adbc_ui_snap *s, size_t window)
{
    if (!s || window >= s->doc.nwin)
        return "";
    return ui_sp(&s->doc, s->doc.nodes[s->doc.winroot[window]].pkg);
}

size_t adbc_ui_snap_nodes(const adbc_ui_snap *s)
{
    return s ? s->doc.n : 0;
}

int adbc_ui_snap_node(adbc_ui_node *out, const adbc_ui_snap *s, size_t i)
{
    if (!out || !s)
        return core_fail(ADBC_EINVAL, "adbc_ui_snap_node: out and s must not be NULL");
    if (i >= s->doc.n)
        return core_fail(ADBC_ENOTFOUND, "adbc_ui_snap_node: node %zu of a dump of %u nodes "
                         "(they run from 0 to adbc_ui_snap_nodes() - 1)", i, s->doc.n);
    const ui_doc *d = &s->doc;
    const ui_node *n = &d->nodes[i];
    out->cls = ui_sp(d, n->cls);
    out->resource_id = ui_sp(d, n->rid);
    out->text = ui_sp(d, n->text);
    out->desc = ui_sp(d, n->desc);
    out->package = ui_sp(d, n->pkg);
    out->x1 = n->x1;
    out->y1 = n->y1;
    out->x2 = n->x2;
    out->y2 = n->y2;
    out->states = n->flags & UI_PUBLIC_STATES;
    out->window = (int)n->window;
    out->ref = (int)n->ref;
    out->actref = (int)n->actref;
    return 0;
}
