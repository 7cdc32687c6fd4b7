/* SPDX-License-Identifier: Apache-2.0 */
/* The emulated device's sync: service, v1 (STAT, LIST, SEND, RECV, QUIT),
 * over an in-memory table of files, so push and pull run over USB. The
 * device does not advertise stat_v2/ls_v2, so the host speaks v1 to it.
 * Every failure answers FAIL with a message and ends the session, as adbd
 * does. */
#include "bed_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MKID(a, b, c, d) ((uint32_t)(a) | (uint32_t)(b) << 8 | (uint32_t)(c) << 16 | (uint32_t)(d) << 24)
#define ID_STAT MKID('S', 'T', 'A', 'T')
#define ID_LIST MKID('L', 'I', 'S', 'T')
#define ID_DENT MKID('D', 'E', 'N', 'T')
#define ID_SEND MKID('S', 'E', 'N', 'D')
#define ID_RECV MKID('R', 'E', 'C', 'V')
#define ID_DATA MKID('D', 'A', 'T', 'A')
#define ID_DONE MKID('D', 'O', 'N', 'E')
#define ID_OKAY MKID('O', 'K', 'A', 'Y')
#define ID_FAIL MKID('F', 'A', 'I', 'L')
#define ID_QUIT MKID('Q', 'U', 'I', 'T')
#define DATA_MAX (64 * 1024)

struct bed_sync {
    GByteArray *in;
    int sending;      /* between SEND and DONE */
    char path[1025];
    uint32_t mode;
    GByteArray *file; /* the file being received */
};

static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put32(GByteArray *out, uint32_t v)
{
    uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    g_byte_array_append(out, b, 4);
}

static int fail(GByteArray *out, const char *msg)
{
    put32(out, ID_FAIL);
    put32(out, (uint32_t)strlen(msg));
    g_byte_array_append(out, (const guint8 *)msg, (guint)strlen(msg));
    return 1;
}

bed_sync *bed_sync_new(void)
{
    bed_sync *s = g_new0(bed_sync, 1);
    s->in = g_byte_array_new();
    return s;
}

void bed_sync_free(bed_sync *s)
{
    if (!s)
        return;
    g_byte_array_unref(s->in);
    if (s->file)
        g_byte_array_unref(s->file);
    g_free(s);
}

void bed_file_free(bed_file *f)
{
    g_byte_array_unref(f->data);
    g_free(f);
}

static void reply_stat(bed_dev *d, const char *path, GByteArray *out)
{
    bed_file *f = g_hash_table_lookup(d->files, path);
    put32(out, ID_STAT);
    put32(out, f ? f->mode : 0);
    put32(out, f ? f->data->len : 0);
    put32(out, f ? f->mtime : 0);
}

static void reply_list(bed_dev *d, const char *path, GByteArray *out)
{
    size_t plen = strlen(path);
    GHashTableIter it;
    gpointer key, value;
    g_hash_table_iter_init(&it, d->files);
    while (g_hash_table_iter_next(&it, &key, &value)) {
        const char *name = key;
        if (strncmp(name, path, plen) != 0 || name[plen] != '/' || strchr(name + plen + 1, '/'))
            continue;
        bed_file *f = value;
        put32(out, ID_DENT);
        put32(out, f->mode);
        put32(out, f->data->len);
        put32(out, f->mtime);
        put32(out, (uint32_t)strlen(name + plen + 1));
        g_byte_array_append(out, (const guint8 *)name + plen + 1, (guint)strlen(name + plen + 1));
    }
    put32(out, ID_DONE);
    for (int i = 0; i < 4; i++)
        put32(out, 0);
}

static int reply_recv(bed_dev *d, const char *path, GByteArray *out)
{
    bed_file *f = g_hash_table_lookup(d->files, path);
    if (!f)
        return fail(out, "No such file or directory");
    for (guint off = 0; off < f->data->len; off += DATA_MAX) {
        guint n = f->data->len - off < DATA_MAX ? f->data->len - off : DATA_MAX;
        put32(out, ID_DATA);
        put32(out, n);
        g_byte_array_append(out, f->data->data + off, n);
    }
    put32(out, ID_DONE);
    put32(out, 0);
    return 0;
}

static int start_send(bed_sync *s, const char *arg, GByteArray *out)
{
    const char *comma = strrchr(arg, ',');
    if (!comma)
        return fail(out, "missing , in ID_SEND");
    size_t n = (size_t)(comma - arg);
    memcpy(s->path, arg, n);
    s->path[n] = '\0';
    s->mode = (uint32_t)strtoul(comma + 1, NULL, 10);
    if (!S_ISREG(s->mode) && !S_ISLNK(s->mode))
        s->mode = S_IFREG | (s->mode & 07777);
    s->file = g_byte_array_new();
    s->sending = 1;
    return 0;
}

int bed_sync_input(bed_dev *d, bed_sync *s, const uint8_t *data, size_t len, GByteArray *out)
{
    g_byte_array_append(s->in, data, (guint)len);
    while (s->in->len >= 8) {
        uint32_t id = rd32(s->in->data), n = rd32(s->in->data + 4);
        if (s->sending && id == ID_DONE) { /* n is the mtime */
            bed_file *f = g_new0(bed_file, 1);
            f->data = s->file;
            f->mode = s->mode;
            f->mtime = n;
            s->file = NULL;
            s->sending = 0;
            g_hash_table_replace(d->files, g_strdup(s->path), f);
            put32(out, ID_OKAY);
            put32(out, 0);
            g_byte_array_remove_range(s->in, 0, 8);
            continue;
        }
        if (n > (s->sending ? DATA_MAX : 1024u))
            return fail(out, s->sending ? "data chunk too large" : "path too long");
        if (s->in->len < 8 + n)
            break;
        char arg[1025];
        memcpy(arg, s->in->data + 8, s->sending ? 0 : n);
        arg[s->sending ? 0 : n] = '\0';
        if (s->sending) {
            if (id != ID_DATA)
                return fail(out, "unexpected request during a transfer");
            g_byte_array_append(s->file, s->in->data + 8, n);
        } else if (id == ID_STAT) {
            reply_stat(d, arg, out);
        } else if (id == ID_LIST) {
            reply_list(d, arg, out);
        } else if (id == ID_RECV) {
            if (reply_recv(d, arg, out))
                return 1;
        } else if (id == ID_SEND) {
            if (start_send(s, arg, out))
                return 1;
        } else if (id == ID_QUIT) {
            return 1;
        } else {
            return fail(out, "unknown sync request");
        }
        g_byte_array_remove_range(s->in, 0, 8 + n);
    }
    return 0;
}
