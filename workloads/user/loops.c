/* The timing loops of LMbench and AIM9 around their system calls, one shape per run: `loops lmbench|aim9 CALLS`.
 * The study's LMbench and AIM9 file-system rows run each call's kernel path from a kpath: recording, whose instance
 * holds the call as the probe makes it: argument set-up, the libc wrapper, the kernel, the return and the result
 * check (workloads/kpath/probe.c, BEGIN / END around the call). What the benchmark adds per operation is its loop's
 * control around the call; that is what an instance here holds:
 *   lmbench: LMbench 3's benchmark functions (lat_syscall.c do_getppid, do_read, ...; lat_pipe.c, lat_proc.c) loop
 *            `while (iterations-- > 0) { call; }`.
 *   aim9:    AIM9's file-system tests (creat-clo, link_test) loop `for (j = 0; j < n; j++) { calls; }`.
 * The call inside the loop is getppid(), outside every instance: only the loop's control is measured here, so which
 * call it is does not matter (the kernel side is the row's kpath: stream). The markers (user_mark.h) sit right after
 * a call returns and right before the next one, so an instance is the code from a call's return to the next call:
 * the loop's counter, its test and its branch. With CALLS iterations the loop's condition is evaluated CALLS + 1
 * times (the last one ends the loop), so a run holds CALLS + 1 instances with one system call between two of them.
 * Deterministic: no time, no randomness, no environment. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "user_mark.h"

/* Each loop is its own function (noinline), as in the benchmarks, so its counter lives in a register of its own. */
__attribute__((noinline)) static void lmbench_loop(long iterations) {
  USER_MARK();
  while (iterations-- > 0) {
    USER_MARK();
    getppid();
    USER_MARK();
  }
  USER_MARK();
}

__attribute__((noinline)) static void aim9_loop(long n) {
  USER_MARK();
  for (long j = 0; j < n; j++) {
    USER_MARK();
    getppid();
    USER_MARK();
  }
  USER_MARK();
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: loops lmbench|aim9 CALLS\n");
    return 2;
  }
  const long calls = atol(argv[2]);
  if (!strcmp(argv[1], "lmbench")) {
    lmbench_loop(calls);
  } else if (!strcmp(argv[1], "aim9")) {
    aim9_loop(calls);
  } else {
    fprintf(stderr, "loops: unknown shape '%s'\n", argv[1]);
    return 2;
  }
  sink = (unsigned long)calls;
  return 0;
}
