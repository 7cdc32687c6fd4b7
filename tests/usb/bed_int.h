/* SPDX-License-Identifier: Apache-2.0 */
/* Internal state of the USB test bed, shared by its files. */
#ifndef ADBC_TEST_USB_BED_INT_H
#define ADBC_TEST_USB_BED_INT_H

#include <glib.h>
#include <umockdev.h>

#include "adbc/adbc.h"
#include "bed.h"

/* adbd reads bulk OUT data in blocks of this size (kUsbReadSize). */
#define BED_READ_BLOCK 16384

/* A URB a client submitted and the bed still holds. */
typedef struct bed_urb {
    void *client;             /* the UMockdevIoctlClient it came from */
    UMockdevIoctlData *ud;    /* the client's struct usbdevfs_urb */
    UMockdevIoctlData *bd;    /* its buffer (NULL when empty) */
    struct usbdevfs_urb *u;   /* ud->data */
    unsigned filled;          /* IN: bytes received so far */
} bed_urb;

/* One transfer the device queued on its bulk IN endpoint. */
typedef struct bed_in {
    uint8_t *data;
    size_t len, off;
} bed_in;

typedef struct bed_stream bed_stream;
typedef struct bed_sync bed_sync;

/* A file in the device's in-memory file system. */
typedef struct bed_file {
    GByteArray *data;
    uint32_t mode, mtime;
} bed_file;

struct bed_dev {
    bed *b;
    bed_dev_spec spec;
    char sysname[32];         /* "1-1" */
    char syspath[160];        /* /sys/devices/... as umockdev names it */
    char node[64];            /* /dev/bus/usb/001/002 */
    uint8_t desc[256];        /* device descriptor + configuration */
    size_t desc_len;
    uint16_t maxp;
    UMockdevIoctlBase *handler;

    GMutex mu;                /* the fields below: ioctl thread vs. test thread */
    int gone;
    void *claimer;            /* the client holding the interface */
    GList *in_urbs;           /* IN URBs waiting for data (bed_urb*) */
    GList *done_urbs;         /* completed, waiting to be reaped */
    GQueue in_xfers;          /* bed_in*: what the device sends, in order */

    /* adbd's reader: the block being filled, then the packet being framed */
    uint8_t block[BED_READ_BLOCK];
    size_t block_len;
    int have_header;
    uint8_t header[24];
    uint8_t *payload;
    size_t payload_len, payload_want;
    int broken;               /* the reader hit an error; the device stops */

    adbc_session *s;
    GList *streams;           /* bed_stream* */
    GHashTable *files;        /* path -> bed_file*: what sync: serves */
    bed_stats stats;
};

struct bed {
    UMockdevTestbed *tb;
    GMutex mu;
    GMainContext *worker;     /* umockdev's ioctl thread, once it has run */
    GList *devs;
    adbc_authorized_keys *keys;
    char home[256];           /* $ANDROID_USER_HOME we created, "" if given */
};

/* bed_desc.c: the descriptors of a spec, and the umockdev device record. */
void bed_build_descriptors(bed_dev *d);
char *bed_device_record(const bed_dev *d);
/* Answer a GET_DESCRIPTOR request; returns the length written to out, or -1
 * (stall) for descriptors the device does not have. */
int bed_get_descriptor(const bed_dev *d, uint16_t value, uint16_t index, uint8_t *out,
                       size_t len);

/* bed.c: note the thread the ioctl handlers run in (called from it). */
void bed_note_worker(bed *b);

/* bed_usbfs.c: the usbdevfs ioctl handler. */
void bed_usbfs_attach(bed_dev *d);
/* The device is gone: URBs in flight complete with ENODEV, as usbfs does. */
void bed_usbfs_unplug(bed_dev *d);
/* Detach the handler and drop the URBs still held. */
void bed_usbfs_detach(bed_dev *d);

/* bed_adbd.c: the device's ADB side. Locked: d->mu held. */
void bed_adbd_reset(bed_dev *d);               /* a new host claimed the interface */
void bed_adbd_out(bed_dev *d, const uint8_t *data, size_t len, int zero_packet);
void bed_adbd_free(bed_dev *d);

/* bed_sync.c: the sync: service. Feed host bytes; replies go to out.
 * Returns 1 when the session ends (QUIT, or a FAIL was sent). */
bed_sync *bed_sync_new(void);
void bed_sync_free(bed_sync *s);
int bed_sync_input(bed_dev *d, bed_sync *s, const uint8_t *data, size_t len, GByteArray *out);
void bed_file_free(bed_file *f);

#endif
