/* SPDX-License-Identifier: Apache-2.0 */
/* The test bed: umockdev's testbed, the host key the devices trust, and
 * plugging devices in and out. */
#include "bed_int.h"

#include <errno.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The host key adbc will use, created in a private $ANDROID_USER_HOME unless
 * the caller chose one; devices with BED_AUTH_KEY accept it. */
static int setup_keys(bed *b)
{
    const char *home = getenv("ANDROID_USER_HOME");
    if (!home || !*home) {
        snprintf(b->home, sizeof b->home, "/tmp/adbc-usbbed-XXXXXX");
        if (!mkdtemp(b->home)) {
            b->home[0] = '\0';
            return -1;
        }
        setenv("ANDROID_USER_HOME", b->home, 1);
        home = b->home;
    }
    adbc_keyring *ring;
    if (adbc_keyring_load_default(&ring, 1) < 0) {
        fprintf(stderr, "bed: no host key: %s\n", adbc_last_error());
        return -1;
    }
    adbc_keyring_free(ring);
    char path[512], *line = NULL;
    gsize len = 0;
    snprintf(path, sizeof path, "%s/adbkey.pub", home);
    if (!g_file_get_contents(path, &line, &len, NULL))
        return -1;
    int rc = adbc_authorized_keys_new(&b->keys);
    if (rc == 0)
        rc = adbc_authorized_keys_add_line(b->keys, line, len);
    g_free(line);
    return rc;
}

void bed_note_worker(bed *b)
{
    g_mutex_lock(&b->mu);
    if (!b->worker)
        b->worker = g_main_context_ref_thread_default();
    g_mutex_unlock(&b->mu);
}

struct stop_wait {
    GMutex mu;
    GCond cond;
    int done;
};

static gboolean stop_openssl_thread(gpointer user)
{
    struct stop_wait *w = user;
    OPENSSL_thread_stop(); /* the device's signature checks left per-thread state */
    g_mutex_lock(&w->mu);
    w->done = 1;
    g_cond_signal(&w->cond);
    g_mutex_unlock(&w->mu);
    return G_SOURCE_REMOVE;
}

/* Free what OpenSSL keeps for umockdev's worker thread, in that thread: it
 * is not joined before the program exits. */
static void stop_worker_openssl(bed *b)
{
    if (!b->worker)
        return;
    struct stop_wait *w = g_new0(struct stop_wait, 1);
    g_mutex_init(&w->mu);
    g_cond_init(&w->cond);
    g_main_context_invoke(b->worker, stop_openssl_thread, w);
    gint64 end = g_get_monotonic_time() + G_TIME_SPAN_SECOND;
    g_mutex_lock(&w->mu);
    while (!w->done && g_cond_wait_until(&w->cond, &w->mu, end))
        ;
    int done = w->done;
    g_mutex_unlock(&w->mu);
    if (done) { /* else the callback may still come: leave w alone */
        g_mutex_clear(&w->mu);
        g_cond_clear(&w->cond);
        g_free(w);
    }
    g_main_context_unref(b->worker);
    b->worker = NULL;
}

bed *bed_new(void)
{
    const char *preload = getenv("LD_PRELOAD");
    if (!preload || !strstr(preload, "umockdev")) {
        fprintf(stderr, "bed: run this program under umockdev-wrapper\n");
        return NULL;
    }
    bed *b = g_new0(bed, 1);
    g_mutex_init(&b->mu);
    b->tb = umockdev_testbed_new();
    if (!umockdev_in_mock_environment()) {
        fprintf(stderr, "bed: the umockdev test bed is not active\n");
        bed_free(b);
        return NULL;
    }
    if (setup_keys(b) < 0) {
        fprintf(stderr, "bed: cannot set up the host key\n");
        bed_free(b);
        return NULL;
    }
    return b;
}

bed_dev *bed_add(bed *b, const bed_dev_spec *spec)
{
    /* umockdev takes one device per sysfs name and one handler per node,
     * for the life of the bed (an unplugged device keeps both): a second
     * one would abort the whole bed, and every device with it. */
    char sysname[32], node[64];
    snprintf(sysname, sizeof sysname, "%u-%s", spec->bus, spec->port);
    snprintf(node, sizeof node, "/dev/bus/usb/%03u/%03u", spec->bus, spec->devnum);
    for (GList *l = b->devs; l; l = l->next) {
        const bed_dev *o = l->data;
        if (strcmp(o->sysname, sysname) == 0 || strcmp(o->node, node) == 0) {
            fprintf(stderr, "bed: cannot add %s at %s: %s at %s was plugged in before (give "
                    "each device its own port and device number)\n", sysname, node, o->sysname,
                    o->node);
            return NULL;
        }
    }
    bed_dev *d = g_new0(bed_dev, 1);
    d->b = b;
    d->spec = *spec;
    d->maxp = spec->max_packet ? spec->max_packet : 512;
    g_mutex_init(&d->mu);
    g_queue_init(&d->in_xfers);
    d->files = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
                                     (GDestroyNotify)bed_file_free);
    snprintf(d->sysname, sizeof d->sysname, "%u-%s", spec->bus, spec->port);
    snprintf(d->node, sizeof d->node, "/dev/bus/usb/%03u/%03u", spec->bus, spec->devnum);
    bed_build_descriptors(d);
    char *record = bed_device_record(d);
    GError *e = NULL;
    if (!umockdev_testbed_add_from_string(b->tb, record, &e)) {
        fprintf(stderr, "bed: cannot add %s: %s\n", d->sysname, e ? e->message : "?");
        g_clear_error(&e);
        g_free(record);
        g_hash_table_unref(d->files);
        g_mutex_clear(&d->mu);
        g_free(d);
        return NULL;
    }
    g_free(record);
    snprintf(d->syspath, sizeof d->syspath, "/sys/devices/pci0000:00/0000:00:14.0/usb%u/%s",
             spec->bus, d->sysname);
    if (spec->no_access) {
        char *root = umockdev_testbed_get_root_dir(b->tb);
        char path[512];
        snprintf(path, sizeof path, "%s%s", root, d->node);
        if (chmod(path, 0) < 0)
            fprintf(stderr, "bed: chmod %s: %s\n", path, strerror(errno));
        g_free(root);
    }
    bed_usbfs_attach(d);
    b->devs = g_list_append(b->devs, d);
    return d;
}

void bed_unplug(bed_dev *d)
{
    bed_usbfs_unplug(d);
    umockdev_testbed_uevent(d->b->tb, d->syspath, "remove");
    umockdev_testbed_remove_device(d->b->tb, d->syspath);
}

bed_stats bed_dev_stats(bed_dev *d)
{
    g_mutex_lock(&d->mu);
    bed_stats s = d->stats;
    g_mutex_unlock(&d->mu);
    return s;
}

void bed_dev_put_file(bed_dev *d, const char *path, const void *data, size_t len, unsigned mode)
{
    bed_file *f = g_new0(bed_file, 1);
    f->data = g_byte_array_new();
    g_byte_array_append(f->data, data, (guint)len);
    f->mode = mode;
    f->mtime = 1700000000;
    g_mutex_lock(&d->mu);
    g_hash_table_replace(d->files, g_strdup(path), f);
    g_mutex_unlock(&d->mu);
}

void *bed_dev_get_file(bed_dev *d, const char *path, size_t *len, unsigned *mode)
{
    void *copy = NULL;
    g_mutex_lock(&d->mu);
    bed_file *f = g_hash_table_lookup(d->files, path);
    if (f) {
        copy = malloc(f->data->len ? f->data->len : 1);
        if (copy && f->data->len)
            memcpy(copy, f->data->data, f->data->len);
        *len = f->data->len;
        if (mode)
            *mode = f->mode;
    }
    g_mutex_unlock(&d->mu);
    return copy;
}

const char *bed_dev_node(const bed_dev *d)
{
    return d->node;
}

static void dev_free(bed_dev *d)
{
    bed_usbfs_detach(d);
    g_mutex_lock(&d->mu);
    bed_adbd_free(d);
    g_hash_table_unref(d->files);
    g_mutex_unlock(&d->mu);
    g_mutex_clear(&d->mu);
    g_free(d);
}

void bed_free(bed *b)
{
    if (!b)
        return;
    for (GList *l = b->devs; l; l = l->next)
        dev_free(l->data);
    stop_worker_openssl(b);
    g_list_free(b->devs);
    if (b->tb)
        g_object_unref(b->tb);
    adbc_authorized_keys_free(b->keys);
    if (b->home[0]) {
        char path[512];
        snprintf(path, sizeof path, "%s/adbkey", b->home);
        unlink(path);
        snprintf(path, sizeof path, "%s/adbkey.pub", b->home);
        unlink(path);
        rmdir(b->home);
    }
    g_mutex_clear(&b->mu);
    g_free(b);
}
