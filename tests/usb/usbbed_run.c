/* SPDX-License-Identifier: Apache-2.0 */
/* adbc-usbbed: plug emulated USB devices into a test bed and run a command
 * that uses them (under umockdev-wrapper, so the command sees them too).
 *
 *   umockdev-wrapper adbc-usbbed [-d SPEC]... -- adbc-snap devices -l
 *
 * SPEC is comma-separated: serial=S, port=P (sysfs name BUS-P), dev=N (device
 * number), kind=adb|fastboot|other, auth=key|none|prompt, product=NAME,
 * maxp=N, and the flags sysfs-serial, mtp, silent, claimed, noaccess.
 * Without -d: one ADB device, serial EMU0001, at 1-1.
 * With -c FIFO, lines written to FIFO (a named pipe the caller made) plug
 * and unplug devices while the command runs: "plug SPEC" (numbered after
 * the -d ones) and "unplug SERIAL". They are done in this program's main
 * thread, the one that made the bed, never while another plug is half done.
 * The exit status is the command's. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bed.h"

static int parse_spec(char *s, bed_dev_spec *d, int index)
{
    memset(d, 0, sizeof *d);
    static char ports[16][12];
    snprintf(ports[index], sizeof ports[index], "%d", index + 1);
    d->port = ports[index];
    d->bus = 1;
    d->devnum = (unsigned)index + 2;
    d->vid = 0x18d1;
    d->pid = 0x4ee7;
    d->product = "Bed Phone";
    for (char *tok = strtok(s, ","); tok; tok = strtok(NULL, ",")) {
        char *eq = strchr(tok, '=');
        const char *v = eq ? eq + 1 : "";
        if (eq)
            *eq = '\0';
        if (strcmp(tok, "serial") == 0)
            d->serial = v;
        else if (strcmp(tok, "port") == 0)
            d->port = v;
        else if (strcmp(tok, "dev") == 0)
            d->devnum = (unsigned)atoi(v);
        else if (strcmp(tok, "product") == 0)
            d->product = v;
        else if (strcmp(tok, "maxp") == 0)
            d->max_packet = (uint16_t)atoi(v);
        else if (strcmp(tok, "kind") == 0)
            d->kind = strcmp(v, "fastboot") == 0 ? BED_FASTBOOT
                      : strcmp(v, "other") == 0  ? BED_NOT_ADB
                                                 : BED_ADB;
        else if (strcmp(tok, "auth") == 0)
            d->auth = strcmp(v, "none") == 0     ? BED_AUTH_NONE
                      : strcmp(v, "prompt") == 0 ? BED_AUTH_PROMPT
                                                 : BED_AUTH_KEY;
        else if (strcmp(tok, "sysfs-serial") == 0)
            d->sysfs_serial = 1;
        else if (strcmp(tok, "mtp") == 0)
            d->mtp_first = 1;
        else if (strcmp(tok, "silent") == 0)
            d->silent = 1;
        else if (strcmp(tok, "claimed") == 0)
            d->claimed = 1;
        else if (strcmp(tok, "noaccess") == 0)
            d->no_access = 1;
        else {
            fprintf(stderr, "adbc-usbbed: unknown device option \"%s\"\n", tok);
            return -1;
        }
    }
    return 0;
}

static bed_dev_spec specs[16];
static bed_dev *devs[16];
static char later[16][256]; /* the text of SPECs that came through the FIFO */

/* One line from the control FIFO. */
static void control_line(bed *b, char *line, int *n)
{
    if (strncmp(line, "plug ", 5) == 0 && *n < 16) {
        if (strlen(line + 5) >= sizeof later[*n]) {
            fprintf(stderr, "adbc-usbbed: device spec too long\n");
            return;
        }
        memcpy(later[*n], line + 5, strlen(line + 5) + 1);
        if (parse_spec(later[*n], &specs[*n], *n) < 0)
            return;
        devs[*n] = bed_add(b, &specs[*n]);
        if (devs[*n])
            (*n)++;
        return;
    }
    if (strncmp(line, "unplug ", 7) == 0) {
        for (int k = 0; k < *n; k++)
            if (devs[k] && specs[k].serial && strcmp(specs[k].serial, line + 7) == 0) {
                bed_unplug(devs[k]);
                devs[k] = NULL; /* bed_free frees it */
                return;
            }
        fprintf(stderr, "adbc-usbbed: no plugged device %s\n", line + 7);
        return;
    }
    fprintf(stderr, "adbc-usbbed: unknown control line \"%s\"\n", line);
}

/* Wait for the command, answering the control FIFO (fd, -1: none) meanwhile. */
static int wait_child(bed *b, pid_t pid, int fd, int *n)
{
    char buf[1024];
    size_t have = 0;
    int status = 0;
    for (;;) {
        pid_t r = waitpid(pid, &status, fd < 0 ? 0 : WNOHANG);
        if (r == pid)
            return status;
        if (r < 0 && errno != EINTR)
            return -1;
        if (fd < 0)
            continue;
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 100) <= 0)
            continue;
        ssize_t got = read(fd, buf + have, sizeof buf - 1 - have);
        if (got <= 0)
            continue;
        have += (size_t)got;
        buf[have] = '\0';
        char *nl;
        while ((nl = strchr(buf, '\n'))) {
            *nl = '\0';
            control_line(b, buf, n);
            have -= (size_t)(nl + 1 - buf);
            memmove(buf, nl + 1, have + 1);
        }
        if (have == sizeof buf - 1)
            have = 0; /* a line too long: dropped */
    }
}

int main(int argc, char **argv)
{
    int n = 0, i = 1, fd = -1;
    for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
        if (strcmp(argv[i], "-c") == 0 && i + 1 < argc && fd < 0) {
            /* read-write: there is always a writer, so no end of file */
            fd = open(argv[++i], O_RDWR | O_NONBLOCK | O_CLOEXEC);
            if (fd < 0) {
                fprintf(stderr, "adbc-usbbed: cannot open %s: %s\n", argv[i], strerror(errno));
                return 2;
            }
        } else if (strcmp(argv[i], "-d") == 0 && i + 1 < argc && n < 16) {
            if (parse_spec(argv[++i], &specs[n], n) < 0)
                return 2;
            n++;
        } else {
            fprintf(stderr, "usage: adbc-usbbed [-c FIFO] [-d SPEC]... -- COMMAND [ARGS...]\n");
            return 2;
        }
    }
    if (i + 1 >= argc) {
        fprintf(stderr, "usage: adbc-usbbed [-d SPEC]... -- COMMAND [ARGS...]\n");
        return 2;
    }
    if (n == 0) {
        char def[] = "serial=EMU0001";
        parse_spec(def, &specs[0], 0);
        n = 1;
    }
    bed *b = bed_new();
    if (!b)
        return 2;
    for (int k = 0; k < n; k++)
        if (!(devs[k] = bed_add(b, &specs[k]))) {
            bed_free(b);
            return 2;
        }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        execvp(argv[i + 1], argv + i + 1);
        fprintf(stderr, "adbc-usbbed: cannot run %s: %s\n", argv[i + 1], strerror(errno));
        _exit(127);
    }
    int status = pid > 0 ? wait_child(b, pid, fd, &n) : -1;
    bed_free(b);
    if (fd >= 0)
        close(fd);
    if (status < 0)
        return 2;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
