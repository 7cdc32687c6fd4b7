/* SPDX-License-Identifier: Apache-2.0 */
/* adbc-snap: the local terminal of an interactive shell. While the device's
 * PTY shell runs, our terminal is raw (every key, ^C and ^D included, goes
 * to the device, whose own terminal does the echo and line editing, as with
 * adb and ssh), and it is restored on every way out: the command's end, an
 * error, a signal (signals.c calls snap_tty_restore before it exits), and
 * exit(). SIGWINCH is turned into a byte on a pipe the stdin pump polls, so
 * the new window size is sent from that thread. */
#include "snap.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

static struct termios saved;
static _Atomic int saved_fd = -1; /* the terminal made raw, -1: none */
static int winch_pipe[2] = {-1, -1};

void snap_tty_restore(void)
{
    int fd = atomic_exchange(&saved_fd, -1);
    /* tcsetattr is async-signal-safe: this may run from the signal thread. */
    if (fd >= 0)
        tcsetattr(fd, TCSADRAIN, &saved);
}

int snap_tty_raw(int fd)
{
    static int registered;
    struct termios t;
    if (tcgetattr(fd, &t) != 0)
        return -1;
    saved = t;
    if (!registered && atexit(snap_tty_restore) == 0)
        registered = 1;
    cfmakeraw(&t);
    t.c_cc[VMIN] = 1;
    t.c_cc[VTIME] = 0;
    saved_fd = fd;
    /* TCSAFLUSH as adb: what was typed before the shell was there is not
     * sent to it. */
    if (tcsetattr(fd, TCSAFLUSH, &t) != 0) {
        saved_fd = -1;
        return -1;
    }
    return 0;
}

int snap_tty_size(int fd, unsigned *rows, unsigned *cols, unsigned *xpix, unsigned *ypix)
{
    struct winsize ws;
    if (ioctl(fd, TIOCGWINSZ, &ws) != 0 || ws.ws_row == 0 || ws.ws_col == 0)
        return -1;
    *rows = ws.ws_row;
    *cols = ws.ws_col;
    if (xpix)
        *xpix = ws.ws_xpixel;
    if (ypix)
        *ypix = ws.ws_ypixel;
    return 0;
}

static void on_winch(int sig)
{
    (void)sig;
    int e = errno;
    if (winch_pipe[1] >= 0 && write(winch_pipe[1], "w", 1) < 0) {
        /* full: a resize is pending already */
    }
    errno = e;
}

int snap_winch_start(void)
{
    if (winch_pipe[0] < 0 && pipe2(winch_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
        return -1;
    struct sigaction sa = {.sa_handler = on_winch, .sa_flags = SA_RESTART};
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGWINCH, &sa, NULL) != 0)
        return -1;
    return winch_pipe[0];
}

int snap_winch_take(void)
{
    char b[64];
    int got = 0;
    while (winch_pipe[0] >= 0 && read(winch_pipe[0], b, sizeof b) > 0)
        got = 1;
    return got;
}

void snap_winch_stop(void)
{
    signal(SIGWINCH, SIG_DFL);
}
