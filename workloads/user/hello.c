/* lmbench's hello, the program lat_proc's fork+execve and fork+/bin/sh -c children exec (`write(1, "Hello
 * world\n", 12)`, then return from main), from its write() to its end: `hello`.
 * The study's recorded execve (kpath:execve, kpath:sh_c) runs up to the program's main() and the write is the
 * recorded null call's entry and exit (lat_proc's child has no stdout, so the write fails at the descriptor lookup,
 * EBADF); what is left is the user code from the write's return to the exit_group system call: main's return and
 * glibc's exit() (its atexit handlers and stdio clean-up, then _exit). That is the one instance here: from the marker
 * after the write to the trace's last record, the exit_group call (user_streams.py cuts it; exit() is glibc's, so no
 * marker can follow it). stdout is closed first, outside the instance, so that the write fails as in the row.
 * Deterministic: no time, no randomness, no environment. */
#include <unistd.h>

#include "user_mark.h"

int main(void) {
  close(1);
  write(1, "Hello world\n", 12); /* EBADF: stdout is closed, as lat_proc's child has it */
  USER_MARK();
  return 0;
}
