/* SPDX-License-Identifier: Apache-2.0 */
/* Runs each call null_args.py wrote in a child of its own (5 s each) and
 * lists those that crashed or hung: every public function must check the
 * pointers it is given. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

void call(int i);
extern const char *const names[];
extern const int count;

int main(void)
{
    int bad = 0;
    for (int i = 0; i < count; i++) {
        pid_t p = fork();
        if (p == 0) {
            /* a bound on a hang, not a timing: a call given 0 as its
             * timeout may still list devices (emulator ports, USB), which
             * a busy machine can slow many times over */
            alarm(60);
            int fd = open("/dev/null", O_WRONLY);
            dup2(fd, 1);
            dup2(fd, 2);
            call(i);
            _exit(0);
        }
        int st = 0;
        waitpid(p, &st, 0);
        if (WIFSIGNALED(st)) {
            printf("%s: %s\n", names[i],
                   WTERMSIG(st) == SIGALRM ? "hangs" : strsignal(WTERMSIG(st)));
            bad++;
        }
    }
    printf("%d of %d public functions crash or hang when given NULL and 0\n", bad, count);
    return bad != 0;
}
