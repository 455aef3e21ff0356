/* The probe of kpath:NAME tracing (docs/tracing.md, "System mode"): runs inside the guest booted by smtlab, executes
 * every kernel path of kpath_paths.h COUNT times and brackets each instance with marker instructions that the system
 * plugin (tools/qemu-tracer/smtlab_system_tracer.c) turns into region boundaries. Set-up and tear-down of an instance
 * stay outside the markers.
 *
 * Marker: the 7-byte nop `nopl 0x534dXXXX(%rax)` (0f 1f 80 + disp32): the displacement's high half 0x534d ("SM")
 * says smtlab; its low half is the path id (bits 0-14) and bit 15 set for the end marker. A nop with that
 * displacement appears in no compiler's or kernel's padding (they use displacement 0).
 *
 * The network phase is in probe_net.c, the page-cache phase in probe_fs.c; probe.h holds the path ids, the marker and the helpers both files use.
 *
 * Usage: probe [COUNT]  (default $kpath_count, which the kernel passes from its command line, else 100)
 *        probe --exec-end  (the program execve runs: marks the end of the execve instance and exits)
 *        probe --sh-end  (the program /bin/sh -c runs: marks the end of the sh_c instance and exits) */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/select.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "probe.h"

void die(const char *what) {
  fprintf(stderr, "kpath probe failed: %s: %s\n", what, errno != 0 ? strerror(errno) : "no error code");
  exit(1);
}

void pin_to_cpu(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0) die("sched_setaffinity");
}

/* Unrecorded: waits until process `pid` sleeps (state S in /proc/PID/stat: it has reached its blocking read()), then
 * `settle_us` more for its CPU to go idle and halt. A fixed sleep alone was not enough on a loaded host, where the
 * guest's other vCPU may not run for a millisecond: the wake-up then found the reader still running and sent no IPI
 * (a KpathBoot bound failed, 4 of 10 waking writes). Gives up after about a second and goes on. */
static void wait_asleep(pid_t pid, unsigned settle_us) {
  char path[64], buf[256];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  for (int tries = 0; tries < 5000; ++tries) {
    FILE *f = fopen(path, "r");
    if (!f) die("fopen /proc/PID/stat");
    const size_t got = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[got] = '\0';
    const char *paren = strrchr(buf, ')'); /* "pid (comm) S ...": the state follows the command's closing paren */
    if (paren && paren[1] == ' ' && paren[2] == 'S') break;
    usleep(200);
  }
  usleep(settle_us);
}

/* Unrecorded where it is called: the inter-processor interrupts `cpu` has taken, from /proc/interrupts: CAL
 * (CALL_FUNCTION_SINGLE_VECTOR and CALL_FUNCTION_VECTOR) and RES (RESCHEDULE_VECTOR); zeros if it cannot be read. */
struct ipi_counts {
  unsigned long calls, reschedules;
};
static unsigned long interrupt_count(const char *line, int cpu) {
  unsigned long count = 0;
  for (int k = 0; k <= cpu; ++k) {
    char *end;
    count = strtoul(line, &end, 10);
    if (end == line) return 0;
    line = end;
  }
  return count;
}
static struct ipi_counts ipi_counts(int cpu) {
  struct ipi_counts c = {0, 0};
  FILE *f = fopen("/proc/interrupts", "r");
  if (!f) return c;
  char line[4096];
  while (fgets(line, sizeof line, f)) {
    const char *at;
    if ((at = strstr(line, "CAL:"))) c.calls = interrupt_count(at + 4, cpu);
    if ((at = strstr(line, "RES:"))) c.reschedules = interrupt_count(at + 4, cpu);
  }
  fclose(f);
  return c;
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
  /* LMbench's "Select on 10 fd's": lat_select's default descriptors are regular files (always ready). */
  int files[10], maxfd = -1;
  fd_set set;
  for (int k = 0; k < 10; ++k) {
    if ((files[k] = open("/probe", O_RDONLY)) < 0) die("open /probe");
    if (files[k] > maxfd) maxfd = files[k];
  }
  for (int i = 0; i < n; ++i) {
    struct timeval tv = {0, 0};
    FD_ZERO(&set);
    for (int k = 0; k < 10; ++k) FD_SET(files[k], &set);
    BEGIN(KP_select);
    if (select(maxfd + 1, &set, NULL, NULL, &tv) != 10) die("select");
    END(KP_select);
  }
  for (int k = 0; k < 10; ++k) close(files[k]);
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
   * without it, the parent sometimes preempts the child right at the wake-up (the child then has yet to reach read()). */
  for (int i = 0; i < n; ++i) {
    usleep(1000);
    c = 'r';
    BEGIN(KP_pipe_roundtrip);
    if (write(p[1], &c, 1) != 1 || read(q[0], &c, 1) != 1) die("pipe round trip");
    END(KP_pipe_roundtrip);
  }
  close(p[1]);
  waitpid(child, NULL, 0);
  close(p[0]);
  close(q[0]);
  close(q[1]);

  /* The waking write with its reader asleep on the other CPU (-smp 2), as in lat_pipe with the two processes on two
   * logical CPUs: try_to_wake_up queues the reader on CPU 1's wake list and sends it an IPI, and the writer returns
   * without a switch (on one CPU the woken reader would preempt the writer inside the write, and the region would
   * hold the reader's whole run). */
  if (pipe(p) != 0 || pipe(q) != 0) die("pipe");
  child = fork();
  if (child < 0) die("fork");
  if (child == 0) {
    pin_to_cpu(1);
    close(p[1]);
    close(q[0]);
    for (;;) {
      if (read(p[0], &c, 1) != 1) _exit(0);
      if (write(q[1], &c, 1) != 1) _exit(1);
    }
  }
  for (int i = 0; i < n; ++i) {
    /* Unrecorded: the reader is back asleep in read() on CPU 1, and 20 ms more for CPU 1 to halt. With 1 ms, under a
     * compile load on this project's CI class of host 2-3 of 10 waking writes found CPU 1 not yet halted (no wake
     * list, no IPI; one CI run had 6 of 10), and with 20 ms 0-1 of 10 (eleven runs): the guest's CPU 1 may not run for
     * several milliseconds while the host's CPUs are busy, and may have to take an idle-balance kick first. */
    wait_asleep(child, 20000);
    c = 'w';
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
  /* LMbench's fork+/bin/sh -c: the child execs busybox's ash (/bin/sh, linked by /init's busybox --install) with the
   * probe's environment, ash runs its start-up and execs `/probe --sh-end`, which ends the region at its main.
   * At most 8 instances (chosen): each is about a million instructions, 30 of them were 40 % of a whole recording
   * (and of its boot and split time), and they differ little (instances of two recordings: 943 k to 1.21 M kernel
   * records; the user part is the same to within 20 records). */
  extern char **environ;
  const int sh_count = n < 8 ? n : 8;
  for (int i = 0; i < sh_count; ++i) {
    pid_t pid = fork();
    if (pid < 0) die("fork");
    if (pid == 0) {
      char *argv[] = {"sh", "-c", "/probe --sh-end", NULL};
      BEGIN(KP_sh_c);
      execve("/bin/sh", argv, environ);
      _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      errno = 0;
      die("/bin/sh -c child");
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
    /* On the ext4 disk, as AIM9's creat-clo and link tests run on a disk file system (journalled metadata). */
    snprintf(name, sizeof name, "/mnt/f%d", i);
    snprintf(other, sizeof other, "/mnt/g%d", i);
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

/* A file write and fsync on a real file system: /mnt is an ext4 disk on virtio-blk (make_initramfs.sh), where fsync
 * must put the data block and a journal commit on the device and wait for them (on tmpfs it does nothing). */
static void disk_paths(int n) {
  static char block[1024]; /* AIM9's sync disk tests write 1 KiB then fsync */
  memset(block, 'd', sizeof block);
  int fd = open("/mnt/kpath-fsync", O_CREAT | O_TRUNC | O_WRONLY, 0644);
  if (fd < 0) die("open /mnt/kpath-fsync (is the disk mounted?)");
  if (fsync(fd) != 0) die("fsync"); /* the creation's own journal commit stays outside the instances */
  for (int i = 0; i < n; ++i) {
    BEGIN(KP_disk_write);
    if (write(fd, block, sizeof block) != (ssize_t)sizeof block) die("write /mnt/kpath-fsync");
    END(KP_disk_write);
    BEGIN(KP_fsync);
    if (fsync(fd) != 0) die("fsync /mnt/kpath-fsync");
    END(KP_fsync);
  }
  close(fd);
  unlink("/mnt/kpath-fsync");
}

/* A file server's operations (dbench's NetBench mix: open, read, write, lock, close, create, rename, find) on the ext4
 * disk: 16 files of 64 KiB written and synced first, so reads and writes hit the page cache and the disk model of
 * the study stays the only disk wait; each instance works on file i mod 16 at offset (i mod 16) x 4 KiB. */
static void fileserver_paths(int n) {
  enum { FILES = 16, FILE_KIB = 64 };
  static char data[4096], dents[4096];
  memset(data, 's', sizeof data);
  char name[64], tmp[64], fresh[64];
  if (mkdir("/mnt/srv", 0755) != 0 && errno != EEXIST) die("mkdir /mnt/srv");
  for (int f = 0; f < FILES; ++f) {
    snprintf(name, sizeof name, "/mnt/srv/f%02d", f);
    int fd = open(name, O_CREAT | O_TRUNC | O_WRONLY, 0644);
    if (fd < 0) die("create /mnt/srv file");
    for (int k = 0; k < FILE_KIB / 4; ++k)
      if (write(fd, data, sizeof data) != (ssize_t)sizeof data) die("fill /mnt/srv file");
    if (fsync(fd) != 0) die("fsync /mnt/srv file");
    close(fd);
  }
  int dir = open("/mnt/srv", O_RDONLY | O_DIRECTORY);
  if (dir < 0) die("open /mnt/srv");
  for (int i = 0; i < n; ++i) {
    int f = i % FILES;
    off_t off = (off_t)f * (off_t)sizeof data;
    snprintf(name, sizeof name, "/mnt/srv/f%02d", f);
    snprintf(tmp, sizeof tmp, "/mnt/srv/t%02d", f);
    snprintf(fresh, sizeof fresh, "/mnt/srv/n%d", i);
    BEGIN(KP_file_open);
    int fd = open(name, O_RDWR);
    END(KP_file_open);
    if (fd < 0) die("open /mnt/srv file");
    BEGIN(KP_file_read);
    ssize_t got = pread(fd, data, sizeof data, off);
    END(KP_file_read);
    if (got != (ssize_t)sizeof data) die("pread /mnt/srv file");
    BEGIN(KP_file_write);
    ssize_t put = pwrite(fd, data, sizeof data, off);
    END(KP_file_write);
    if (put != (ssize_t)sizeof data) die("pwrite /mnt/srv file");
    struct flock lock = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = off, .l_len = 1};
    BEGIN(KP_file_lock);
    int locked = fcntl(fd, F_SETLK, &lock);
    END(KP_file_lock);
    if (locked != 0) die("fcntl F_SETLK");
    lock.l_type = F_UNLCK;
    if (fcntl(fd, F_SETLK, &lock) != 0) die("fcntl F_UNLCK");
    BEGIN(KP_file_close);
    close(fd);
    END(KP_file_close);
    BEGIN(KP_file_create);
    int nfd = open(fresh, O_CREAT | O_EXCL | O_RDWR, 0644);
    END(KP_file_create);
    if (nfd < 0) die("create a new /mnt/srv file");
    close(nfd);
    unlink(fresh);
    BEGIN(KP_rename);
    int moved = rename(name, tmp);
    END(KP_rename);
    if (moved != 0 || rename(tmp, name) != 0) die("rename /mnt/srv file");
    if (lseek(dir, 0, SEEK_SET) != 0) die("lseek /mnt/srv");
    BEGIN(KP_getdents);
    long listed = syscall(SYS_getdents64, dir, dents, sizeof dents);
    END(KP_getdents);
    if (listed <= 0) die("getdents64 /mnt/srv");
  }
  close(dir);
  for (int f = 0; f < FILES; ++f) {
    snprintf(name, sizeof name, "/mnt/srv/f%02d", f);
    unlink(name);
  }
  rmdir("/mnt/srv");
  /* Nothing of this phase may be left for later: the journal's commit and the write-back of the dirtied pages would
   * run in a kernel thread during the next phases and could send their CPU a reschedule IPI (the resched_ipi
   * instances must come from the probe's own wake-ups only). sync() returns when both are done. */
  sync();
}

/* A reschedule IPI as the receiving CPU handles it (-smp 2 guest). On CPU 1 a SCHED_IDLE spinner runs in a marked
 * user region while a normal task, also on CPU 1, sleeps in read(); the parent on CPU 0 wakes that task. Linux 6.1's
 * try_to_wake_up queues it on CPU 1's run queue from CPU 0 (the CPUs share a cache and CPU 1 is busy, so not the
 * wake list), and check_preempt_wakeup preempts a SCHED_IDLE task for any normal one: resched_curr sends
 * RESCHEDULE_VECTOR to CPU 1. The interrupt arrives while the spinner is in user mode, so it is a kernel run of the
 * region (RESCHED_IPI kind in kpath_paths.h: runs that start at the vector; ticks in the spin are left out). The
 * woken task records that it ran; the spinner then ends its region. */
static void resched_ipi_path(int n) {
  volatile int *shared = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (shared == MAP_FAILED) die("mmap");
  volatile int *spinning = shared, *woken = shared + 1;
  int start[2], wake[2];
  if (pipe(start) != 0 || pipe(wake) != 0) die("pipe");
  pid_t sleeper = fork();
  if (sleeper < 0) die("fork");
  if (sleeper == 0) {
    close(start[0]), close(start[1]), close(wake[1]); /* else its own write end keeps read() from seeing the end */
    pin_to_cpu(1);
    int i;
    while (read(wake[0], &i, sizeof i) == (ssize_t)sizeof i) *woken = i;
    _exit(0);
  }
  pid_t spinner = fork();
  if (spinner < 0) die("fork");
  if (spinner == 0) {
    close(wake[0]), close(wake[1]), close(start[1]);
    pin_to_cpu(1);
    struct sched_param none = {0};
    if (sched_setscheduler(0, SCHED_IDLE, &none) != 0) die("sched_setscheduler SCHED_IDLE");
    int i;
    while (read(start[0], &i, sizeof i) == (ssize_t)sizeof i) {
      BEGIN(KP_resched_ipi);
      *spinning = i;
      while (*woken != i) {
      }
      END(KP_resched_ipi);
    }
    _exit(0);
  }
  for (int i = 1; i <= n; ++i) {
    wait_asleep(sleeper, 2000); /* unrecorded: the sleeper has reached its read() on CPU 1 */
    if (write(start[1], &i, sizeof i) != (ssize_t)sizeof i) die("pipe write");
    while (*spinning != i) {
    }
    if (write(wake[1], &i, sizeof i) != (ssize_t)sizeof i) die("pipe write");
    while (*woken != i) {
    }
  }
  close(start[1]);
  close(wake[1]);
  waitpid(sleeper, NULL, 0);
  waitpid(spinner, NULL, 0);
  close(start[0]);
  close(wake[0]);
  munmap((void *)shared, 4096);
}

/* A wake-up of a task on a halted CPU as the receiving CPU handles it (-smp 2 guest; the WAKE_IPI kind). A reader
 * pinned to CPU 1 begins a region and sleeps in read() on a pipe; CPU 1 has nothing else to run and halts (the guest
 * has no MONITOR/MWAIT, so its idle loop clears TIF_POLLING_NRFLAG and executes HLT). The parent on CPU 0 waits
 * until the reader sleeps and 2 ms more (unrecorded: CPU 1 is in HLT by then, wait_asleep) and writes a byte. Linux 6.1's try_to_wake_up finds no task running on
 * CPU 1 (ttwu_queue_cond: nr_running == 0), queues the reader on CPU 1's wake list (__ttwu_queue_wakelist), and
 * send_call_function_single_ipi, finding the idle task not polling, sends CALL_FUNCTION_SINGLE_VECTOR. CPU 1 leaves
 * HLT at asm_sysvec_call_function_single, runs sched_ttwu_pending (the enqueue and the preemption check that sets
 * need_resched on the idle task), returns to the idle loop, which leaves (tick_nohz_idle_exit) and calls
 * schedule_idle -> __schedule: the splitter keeps the records from the vector to that __schedule. The reader's
 * read() returns and it ends the region. Had the idle loop been polling, no IPI is sent and the region holds no
 * instance. The end of the pipe (parent's close) wakes the reader once more: that region ends as KP_NONE (dropped). */
static void wake_ipi_path(int n) {
  struct ipi_counts *base = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED) die("mmap");
  int p[2], q[2];
  char c = 'i';
  if (pipe(p) != 0 || pipe(q) != 0) die("pipe");
  pid_t child = fork();
  if (child < 0) die("fork");
  if (child == 0) {
    pin_to_cpu(1);
    close(p[1]); /* else its own write end keeps read() from ever seeing the end of the pipe */
    close(q[0]);
    for (;;) {
      *base = ipi_counts(1); /* unrecorded: CPU 1's interrupts so far, for the parent's check (below) */
      BEGIN(KP_wake_ipi);
      /* The wake-up, then the parent's verdict on it: the region's instance ends at the first __schedule after the
       * vector, so what the second read() runs (another sleep and wake-up) is not part of it. */
      if (read(p[0], &c, 1) != 1 || write(q[1], &c, 1) != 1 || read(p[0], &c, 1) != 1) {
        END(KP_NONE);
        _exit(0);
      }
      if (c == 'y') {
        END(KP_wake_ipi);
      } else {
        END(KP_NONE);
      }
      if (write(q[1], &c, 1) != 1) _exit(1);
    }
  }
  close(p[0]);
  close(q[1]);
  /* n kept wake-ups in at most 5n tries. The splitter takes the region's first call-function-single vector as the
   * instance, so a region is kept only if CPU 1 took exactly one inter-processor interrupt in it, the wake-up's
   * call-function IPI: none from the reader's count just before it began the region until the wake byte (the
   * parent's first count) and, from then until the reader has run (the second count), one function call and no
   * reschedule. The usual other one is an idle-balance kick (nohz_csd_func), which CPU 0's tick sends an idle CPU 1
   * about every 32 ms to update its blocked load, and more often when it looks busy. A kick anywhere in the region
   * before the wake-up is handled alone, before the wake list holds the reader: it becomes the instance, and the
   * wake-up's own interrupt, later in the region, is cut out as a nested interrupt. On a loaded host the guest's
   * CPUs stall for milliseconds at a time, which makes that likelier: with a single count taken by the parent once
   * the reader slept, one CI run kept 7 of 10 regions that ran no sched_ttwu_pending. */
  int done = 0, tries = 0;
  for (; done < n && tries < 5 * n; ++tries) {
    wait_asleep(child, 2000); /* unrecorded: the reader is back in read() and CPU 1 halted */
    const struct ipi_counts before = ipi_counts(1);
    if (write(p[1], &c, 1) != 1) die("pipe write");
    if (read(q[0], &c, 1) != 1) die("pipe read");
    const struct ipi_counts after = ipi_counts(1);
    c = before.calls == base->calls && before.reschedules == base->reschedules && after.calls == before.calls + 1 &&
                after.reschedules == before.reschedules
            ? 'y'
            : 'n';
    if (write(p[1], &c, 1) != 1) die("pipe write");
    if (read(q[0], &c, 1) != 1) die("pipe read");
    done += c == 'y';
  }
  printf("kpath probe: wake-up IPI: %d regions kept of %d\n", done, tries);
  fflush(stdout);
  close(p[1]);
  waitpid(child, NULL, 0);
  close(q[0]);
  munmap(base, 4096);
}

/* The kernel symbols the tests check the recording against (the IPI's vector, the block layer's entry, virtio-blk's
 * submission, the scheduler): their addresses in this boot, from /proc/kallsyms, one console line each, which smtlab
 * stores in the manifest (kpath.cpp); the RESCHED_IPI kind is cut with two of them. */
static void print_symbols(void) {
  static const char *const wanted[] = {"asm_sysvec_reschedule_ipi", "asm_sysvec_apic_timer_interrupt", "__schedule",
                                       "blk_mq_submit_bio", "virtio_queue_rq", "virtio_queue_rqs",
                                       "ext4_sync_file",
                                       /* the write-back path (probe_fs.c) */
                                       "do_writepages", "ext4_writepages", "ext4_bio_write_page",
                                       "virtblk_done", "ext4_end_bio", /* its completion (writeback_irq) */
                                       /* where interrupts enter and leave (src/tracer/interrupts.cpp): the
                                          device vectors' stubs, their common entry, the interrupt return */
                                       "irq_entries_start", "spurious_entries_start", "asm_common_interrupt",
                                       "native_irq_return_iret",
                                       /* the halted-CPU wake-up: its vector, the receiver's and sender's sides */
                                       "asm_sysvec_call_function_single", "sched_ttwu_pending",
                                       "send_call_function_single_ipi", "native_send_call_func_single_ipi",
                                       "tick_nohz_idle_exit", "schedule_idle",
                                       /* the file-server paths' ext4 and VFS entry points */
                                       "ext4_file_open", "ext4_file_read_iter", "ext4_file_write_iter",
                                       "fcntl_setlk", "filp_close", "ext4_create", "ext4_rename2", "ext4_readdir",
                                       /* the network paths' socket and TCP entry points (probe_net.c) */
                                       "tcp_sendmsg", "tcp_recvmsg", "sock_poll", "tcp_poll", "do_select",
                                       /* the process paths' system-call entries (fork+/bin/sh -c) */
                                       "__x64_sys_execve", "kernel_clone"};
  FILE *f = fopen("/proc/kallsyms", "r");
  if (!f) die("/proc/kallsyms");
  char line[512], name[256], type;
  unsigned long long addr;
  while (fgets(line, sizeof line, f)) {
    if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3) continue;
    for (size_t k = 0; k < sizeof wanted / sizeof wanted[0]; ++k)
      if (strcmp(name, wanted[k]) == 0) printf("kpath: symbol %s %llx\n", name, addr);
  }
  fclose(f);
  fflush(stdout);
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
  if (argc > 1 && strcmp(argv[1], "--sh-end") == 0) {
    END(KP_sh_c);
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
  print_symbols();
  /* Every path but the IPI runs on CPU 0 (the children inherit it), as on the one-CPU guest they were first
   * recorded on: a wake-up stays on its CPU, and each region begins and ends in one CPU's stream. */
  pin_to_cpu(0);
  /* The first run of each path is cold (caches, page tables, first faults); it is recorded like the others. */
  /* Progress lines name the phase that hangs or fails, if one does (the recorder prints the console on failure). */
  static const struct { const char *name; void (*run)(int); } phases[] = {
      {"system calls", simple_syscalls}, {"pipes", pipe_paths}, {"context switch", ctxsw_path},
      {"processes", process_paths},
      {"files", file_paths},             {"tcp", tcp_paths},    {"timer", timer_path},
      {"disk", disk_paths},              {"page cache", page_cache_paths}, {"file server", fileserver_paths},
      {"reschedule IPI", resched_ipi_path},
      {"wake-up IPI", wake_ipi_path}};
  for (size_t k = 0; k < sizeof phases / sizeof phases[0]; ++k) {
    printf("kpath probe: %s\n", phases[k].name);
    fflush(stdout);
    phases[k].run(n);
  }
  printf("kpath probe: done\n");
  return 0;
}
