/* The timing loops of LMbench and AIM9 around their system calls, one shape per run: `loops SHAPE CALLS`.
 * The study's LMbench and AIM9 file-system rows run each call's kernel path from a kpath: recording, whose instance
 * holds the call as the probe makes it: argument set-up, the libc wrapper, the kernel, the return and the result
 * check (workloads/kpath/probe.c, BEGIN / END around the call). What the benchmark adds per operation is the code of
 * its loop between two calls; that is what an instance here holds. The shapes, as the benchmarks' sources write
 * their loops (LMbench 3; AIM's creat-clo.c 1.17 and disk1.c 1.20 as the public AIM7 / re-aim sources carry them,
 * whose tests have Suite IX's names and units):
 *   lmbench:  LMbench 3's benchmark functions (lat_syscall.c do_getppid, do_read, ...; lat_pipe.c, lat_proc.c):
 *             `while (iterations-- > 0) { call; }`.
 *   creat:    AIM's creat_clo: `while (n--) { creat; close; res->i++; }`, res the test's result record.
 *   link:     AIM's link_test: `while (n--) for (i = 1; i < 8; i++) { unlink; link; res->i++; }` (seven link/unlink
 *             pairs per outer pass; CALLS / 7 passes).
 *   sync:     AIM's sync_disk_wrt and sync_disk_cp: `while (n--) { write; }` and `{ read; write; }` on an O_SYNC file.
 *   sync_rw:  AIM's sync_disk_rw: `for (i = 0; i < blocks; i++) { block = rand() % blocks; lseek(block << 10);
 *             write; }`, rand() being AIM's own linear congruential generator (multiplier 1103515245, increment
 *             12345, bits 16-30 of the state), in a function of its own file in AIM, so not inlined here.
 * A system call stands for the operation's calls (getppid(), outside every instance: the kernel side of a row is its
 * kpath: stream, so which call it is does not matter), except in sync_rw, whose lseek needs the offset the loop
 * computes: there the calls are lseek() and write() on /dev/null, two per iteration. The markers (user_mark.h) sit
 * right after a call returns and right before the next one, so an instance is the code from a call's return to the
 * next call. The loop's condition is evaluated once more than the calls are made, and the first and last markers
 * sit outside the loop: a run of C calls holds C + 1 instances. Deterministic: no time, no randomness, no
 * environment. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "user_mark.h"

/* The test's result record as AIM passes it to every test (a pointer: the counter is a memory update). */
struct result {
  char c;
  short s;
  int i;
  long l;
  float f;
  double d;
};

/* Each loop is a function of its own (noinline), as in the benchmarks, so its counters live in its own registers. */
__attribute__((noinline)) static void lmbench_loop(long iterations) {
  USER_MARK();
  while (iterations-- > 0) {
    USER_MARK();
    getppid();
    USER_MARK();
  }
  USER_MARK();
}

__attribute__((noinline)) static void creat_loop(int n, struct result *res) {
  USER_MARK();
  while (n--) {
    USER_MARK();
    getppid();
    USER_MARK();
    res->i++;
  }
  USER_MARK();
}

__attribute__((noinline)) static void link_loop(int n, struct result *res) {
  USER_MARK();
  while (n--) {
    for (int i = 1; i < 8; i++) {
      USER_MARK();
      getppid();
      USER_MARK();
      res->i++;
    }
  }
  USER_MARK();
}

__attribute__((noinline)) static void sync_loop(int n) {
  USER_MARK();
  while (n--) {
    USER_MARK();
    getppid();
    USER_MARK();
  }
  USER_MARK();
}

static unsigned long rand_state = 1;

__attribute__((noinline)) static unsigned int lcg_rand(void) {
  rand_state = rand_state * 1103515245ul + 12345ul;
  return (unsigned int)((rand_state >> 16) & 0x7fff);
}

__attribute__((noinline)) static void sync_rw_loop(int blocks, int fd, const char *buf) {
  USER_MARK();
  for (int i = 0; i < blocks; i++) {
    long block = lcg_rand() % ((blocks * (long)1024) >> 10);
    block <<= 10;
    USER_MARK();
    if (lseek(fd, block, SEEK_SET) == -1) return;
    if (write(fd, buf, 1024) != 1024) return;
    USER_MARK();
  }
  USER_MARK();
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: loops lmbench|creat|link|sync|sync_rw CALLS\n");
    return 2;
  }
  const long calls = atol(argv[2]);
  static char buf[1024];
  struct result res;
  memset(&res, 0, sizeof res);
  if (!strcmp(argv[1], "lmbench")) {
    lmbench_loop(calls);
  } else if (!strcmp(argv[1], "creat")) {
    creat_loop((int)calls, &res);
  } else if (!strcmp(argv[1], "link")) {
    link_loop((int)(calls / 7), &res);
  } else if (!strcmp(argv[1], "sync")) {
    sync_loop((int)calls);
  } else if (!strcmp(argv[1], "sync_rw")) {
    const int fd = open("/dev/null", O_WRONLY);
    if (fd < 0) return 1;
    sync_rw_loop((int)calls, fd, buf);
  } else {
    fprintf(stderr, "loops: unknown shape '%s'\n", argv[1]);
    return 2;
  }
  sink = (unsigned long)res.i;
  return 0;
}
