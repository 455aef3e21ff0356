/* The probe of kpath:NAME tracing (docs/tracing.md, "System mode"): runs inside the guest booted by smtlab, executes
 * every kernel path of kpath_paths.h COUNT times and brackets each instance with marker instructions that the system
 * plugin (tools/qemu-tracer/smtlab_system_tracer.c) turns into region boundaries. Set-up and tear-down of an instance
 * stay outside the markers.
 *
 * Marker: the 7-byte nop `nopl 0x534dXXXX(%rax)` (0f 1f 80 + disp32): the displacement's high half 0x534d ("SM")
 * says smtlab; its low half is the path id (bits 0-14) and bit 15 set for the end marker. A nop with that
 * displacement appears in no compiler's or kernel's padding (they use displacement 0).
 *
 * Usage: probe [COUNT]  (default $kpath_count, which the kernel passes from its command line, else 100)
 *        probe --exec-end  (the program execve runs: marks the end of the execve instance and exits) */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

enum {
#define KPATH(name, kind, what) KP_##name,
#include "kpath_paths.h"
#undef KPATH
  KP_COUNT
};

#define KP_MARK(payload) __asm__ volatile(".byte 0x0f, 0x1f, 0x80\n\t.long %c0" ::"i"(0x534d0000u | (payload)) : "memory")
#define BEGIN(id) KP_MARK(id)
#define END(id) KP_MARK(0x8000u | (id))

static void die(const char *what) {
  fprintf(stderr, "kpath probe: %s: %s\n", what, strerror(errno));
  exit(1);
}

static volatile sig_atomic_t caught;
static void on_signal(int sig) { (void)sig; ++caught; }

static void simple_syscalls(int n) {
  int zero = open("/dev/zero", O_RDONLY), null = open("/dev/null", O_WRONLY);
  int file = open("/probe", O_RDONLY);
  if (zero < 0 || null < 0 || file < 0) die("open");
  char c = 0;
  struct stat st;
  for (int i = 0; i < n; ++i) {
    BEGIN(KP_getppid);
    syscall(SYS_getppid); /* glibc caches nothing for getppid, but be explicit */
    END(KP_getppid);
  }
  for (int i = 0; i < n; ++i) {
    BEGIN(KP_read);
    if (read(zero, &c, 1) != 1) die("read /dev/zero");
    END(KP_read);
  }
  for (int i = 0; i < n; ++i) {
    BEGIN(KP_write);
    if (write(null, &c, 1) != 1) die("write /dev/null");
    END(KP_write);
  }
  for (int i = 0; i < n; ++i) {
    BEGIN(KP_stat);
    if (stat("/probe", &st) != 0) die("stat");
    END(KP_stat);
  }
  for (int i = 0; i < n; ++i) {
    BEGIN(KP_fstat);
    if (fstat(file, &st) != 0) die("fstat");
    END(KP_fstat);
  }
  for (int i = 0; i < n; ++i) {
    BEGIN(KP_open_close);
    int fd = open("/probe", O_RDONLY);
    if (fd < 0) die("open /probe");
    close(fd);
    END(KP_open_close);
  }
  for (int i = 0; i < n; ++i) {
    BEGIN(KP_sigaction);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    if (sigaction(SIGUSR1, &sa, NULL) != 0) die("sigaction");
    END(KP_sigaction);
  }
  for (int i = 0; i < n; ++i) {
    BEGIN(KP_signal);
    kill(getpid(), SIGUSR1);
    END(KP_signal);
  }
  if (caught != n) {
    errno = 0;
    die("signal count");
  }
  close(zero);
  close(null);
  close(file);
}

static void pipe_paths(int n) {
  int p[2], q[2];
  char c = 'x';
  if (pipe(p) != 0) die("pipe");
  for (int i = 0; i < n; ++i) {
    BEGIN(KP_pipe_write);
    if (write(p[1], &c, 1) != 1) die("pipe write");
    END(KP_pipe_write);
    BEGIN(KP_pipe_read);
    if (read(p[0], &c, 1) != 1) die("pipe read");
    END(KP_pipe_read);
  }
  int fds[8][2];
  fd_set set;
  for (int k = 0; k < 8; ++k)
    if (pipe(fds[k]) != 0) die("pipe");
  if (write(fds[7][1], &c, 1) != 1) die("pipe write");
  for (int i = 0; i < n; ++i) {
    struct timeval tv = {0, 0};
    FD_ZERO(&set);
    for (int k = 0; k < 8; ++k) FD_SET(fds[k][0], &set);
    BEGIN(KP_select);
    if (select(fds[7][0] + 1, &set, NULL, NULL, &tv) != 1) die("select");
    END(KP_select);
  }
  for (int k = 0; k < 8; ++k) close(fds[k][0]), close(fds[k][1]);
  close(p[0]);
  close(p[1]);

  /* Two processes, one pipe each way: the child echoes each byte. */
  if (pipe(p) != 0 || pipe(q) != 0) die("pipe");
  pid_t child = fork();
  if (child < 0) die("fork");
  if (child == 0) {
    close(p[1]); /* else its own write end keeps read() from ever seeing the end of the pipe */
    close(q[0]);
    for (;;) {
      if (read(p[0], &c, 1) != 1) _exit(0);
      if (write(q[1], &c, 1) != 1) _exit(1);
    }
  }
  /* Before each instance the parent sleeps 1 ms (unrecorded), so the child has run to its read() and sleeps there:
   * without it, the parent sometimes preempts the child right at the wake-up (the child then has yet to reach read(),
   * and the "waking" write wakes nobody). */
  for (int i = 0; i < n; ++i) {
    usleep(1000);
    c = 'r';
    BEGIN(KP_pipe_roundtrip);
    if (write(p[1], &c, 1) != 1 || read(q[0], &c, 1) != 1) die("pipe round trip");
    END(KP_pipe_roundtrip);
    c = 'w';
    usleep(1000);
    BEGIN(KP_pipe_write_wake);
    if (write(p[1], &c, 1) != 1) die("pipe write");
    END(KP_pipe_write_wake);
    if (read(q[0], &c, 1) != 1) die("pipe read");
  }
  close(p[1]);
  waitpid(child, NULL, 0);
  close(p[0]);
  close(q[0]);
  close(q[1]);
}

/* Two runnable processes on one CPU that yield to each other: a region runs from the parent's sched_yield() through
 * the switch to the child's return from its own sched_yield(), where the child ends it. No wake-up is involved, so
 * no wake-up preemption can reorder the markers (a pipe-based version lost about half of its instances that way).
 * CFS switches on a yield only when the other task's vruntime is within the wake-up granularity; the forked child
 * starts a slice ahead, so the parent's first yields return without a switch: the parent then ends the region with
 * the id KP_NONE, which the splitter drops as broken. Memory shared with the child says whether a region is open
 * (only then does the child end it) and how many the child ended. */
#define KP_NONE 0x7fff
static void ctxsw_path(int n) {
  volatile int *shared = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (shared == MAP_FAILED) die("mmap");
  volatile int *open_region = shared, *switches = shared + 1;
  pid_t child = fork();
  if (child < 0) die("fork");
  if (child == 0) {
    for (;;) {
      sched_yield();
      if (*open_region) {
        END(KP_ctxsw);
        *open_region = 0;
        ++*switches;
      }
    }
  }
  for (long i = 0; *switches < n && i < 200L * n; ++i) {
    *open_region = 1;
    BEGIN(KP_ctxsw);
    sched_yield();
    if (*open_region) {
      END(KP_NONE);
      *open_region = 0;
    }
  }
  kill(child, SIGKILL);
  waitpid(child, NULL, 0);
  munmap((void *)shared, 4096);
}

static void process_paths(int n) {
  for (int i = 0; i < n; ++i) {
    BEGIN(KP_fork);
    pid_t pid = fork();
    if (pid == 0) _exit(0);
    END(KP_fork);
    if (pid < 0) die("fork");
    BEGIN(KP_exit_wait);
    waitpid(pid, NULL, 0);
    END(KP_exit_wait);
  }
  for (int i = 0; i < n; ++i) {
    pid_t pid = fork();
    if (pid < 0) die("fork");
    if (pid == 0) {
      char *argv[] = {"/probe", "--exec-end", NULL};
      char *envp[] = {NULL};
      BEGIN(KP_execve);
      execve("/probe", argv, envp);
      _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      errno = 0;
      die("execve child");
    }
  }
  long page = sysconf(_SC_PAGESIZE);
  char *area = mmap(NULL, (size_t)page * (size_t)n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (area == MAP_FAILED) die("mmap");
  for (int i = 0; i < n; ++i) {
    volatile char *p = area + (size_t)i * (size_t)page;
    BEGIN(KP_page_fault);
    *p = 1;
    END(KP_page_fault);
  }
  munmap(area, (size_t)page * (size_t)n);
}

static void file_paths(int n) {
  char name[64], other[64];
  for (int i = 0; i < n; ++i) {
    snprintf(name, sizeof name, "/tmp/f%d", i);
    snprintf(other, sizeof other, "/tmp/g%d", i);
    BEGIN(KP_creat);
    int fd = creat(name, 0644);
    if (fd < 0) die("creat");
    close(fd);
    END(KP_creat);
    BEGIN(KP_link);
    if (link(name, other) != 0) die("link");
    END(KP_link);
    BEGIN(KP_unlink);
    if (unlink(other) != 0) die("unlink");
    END(KP_unlink);
    unlink(name);
  }
}

static void tcp_paths(int n) {
  int server = socket(AF_INET, SOCK_STREAM, 0), client = socket(AF_INET, SOCK_STREAM, 0);
  if (server < 0 || client < 0) die("socket");
  struct sockaddr_in addr;
  memset(&addr, 0, sizeof addr);
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(5001);
  int one = 1;
  setsockopt(server, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (bind(server, (struct sockaddr *)&addr, sizeof addr) != 0 || listen(server, 1) != 0) die("bind/listen");
  if (connect(client, (struct sockaddr *)&addr, sizeof addr) != 0) die("connect (is lo up?)");
  int conn = accept(server, NULL, NULL);
  if (conn < 0) die("accept");
  setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  char buf[16] = "0123456789abcdef";
  for (int i = 0; i < n; ++i) {
    BEGIN(KP_tcp_send);
    if (send(client, buf, sizeof buf, 0) != (ssize_t)sizeof buf) die("send");
    END(KP_tcp_send);
    BEGIN(KP_tcp_recv);
    if (recv(conn, buf, sizeof buf, MSG_WAITALL) != (ssize_t)sizeof buf) die("recv");
    END(KP_tcp_recv);
  }
  close(conn);
  close(client);
  close(server);
}

/* The tick interrupts user code at random points: spin in marked regions until `n` of them held a kernel excursion
 * (the probe cannot see that; it spins long enough: a tick every 4 ms at HZ=250 and some 10-50 M instructions per second under the plugin, so a 250 k-instruction spin is often interrupted). */
static void timer_path(int n) {
  if (n > 20) n = 20;
  for (int i = 0; i < n; ++i) {
    volatile unsigned long x = 0;
    BEGIN(KP_timer);
    for (unsigned long k = 0; k < 50000; ++k) x += k;
    END(KP_timer);
  }
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "--exec-end") == 0) {
    END(KP_execve);
    return 0;
  }
  const char *env = getenv("kpath_count");
  int n = argc > 1 ? atoi(argv[1]) : env ? atoi(env) : 100;
  if (n <= 0 || n > 100000) {
    fprintf(stderr, "kpath probe: bad count\n");
    return 2;
  }
  printf("kpath probe: %d instances of %d paths\n", n, KP_COUNT);
  fflush(stdout);
  /* The first run of each path is cold (caches, page tables, first faults); it is recorded like the others. */
  /* Progress lines name the phase that hangs or fails, if one does (the recorder prints the console on failure). */
  static const struct { const char *name; void (*run)(int); } phases[] = {
      {"system calls", simple_syscalls}, {"pipes", pipe_paths}, {"context switch", ctxsw_path},
      {"processes", process_paths},
      {"files", file_paths},             {"tcp", tcp_paths},    {"timer", timer_path}};
  for (size_t k = 0; k < sizeof phases / sizeof phases[0]; ++k) {
    printf("kpath probe: %s\n", phases[k].name);
    fflush(stdout);
    phases[k].run(n);
  }
  printf("kpath probe: done\n");
  return 0;
}
