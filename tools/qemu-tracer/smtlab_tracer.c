/*
 * smtlab QEMU TCG plugin: records, per guest thread, which translated blocks execute and every load/store address
 * and size, into a compact raw stream that smtlab's decoder (src/tracer/) turns into native smtlab traces.
 * Instruction bytes are written once per translated block, into one shared blocks file.
 *
 * Copyright (C) 2025 the smtlab authors.
 * SPDX-License-Identifier: GPL-2.0-or-later (it is built against QEMU's GPL-2.0-or-later qemu-plugin.h; see LICENSE).
 *
 * Usage: qemu-x86_64 -plugin libsmtlab_qemu_tracer.so,out=PREFIX[,skip=N][,max=N] PROGRAM ARGS...
 * Files: PREFIX.blocks (block definitions), PREFIX.tK.raw (thread K, in order of creation, 0 = main thread),
 * PREFIX.events (text, one line per event smtlab must report: "cap K N" when thread K stopped at the max=N cap,
 * "fork K" when the program forked its K-th child process, which runs untraced).
 * Stream layout: docs/tracing.md, "Raw stream".
 */
#include <fcntl.h>
#include <sys/mman.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <qemu-plugin.h>

#include "abandoned_insn.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define MAX_VCPUS 4096
#define RING (1u << 20) /* bytes of a thread's stream buffered before they are appended to its raw file */
#define RAW_MAGIC "SMTLRAW\2" /* version 2: block ids from 1, a zero word ends the stream (see below) */
#define BLK_MAGIC "SMTLBLK\1"

/* A thread's entries are buffered in a MAP_SHARED mapping of a file, PREFIX.tK.ring, not in private memory: the
 * kernel keeps what was written there when QEMU dies of the guest's fatal signal (QEMU 7.2 calls no plugin callback
 * on that path) or is killed, so nothing executed is lost. When full, the ring is appended to PREFIX.tK.raw with
 * write() and cleared to zeros; at a normal exit it is appended and removed. A ring left behind is the stream's last
 * part: smtlab appends it whole, and as block ids start at 1 its first zero word ends the stream. (The ring is mapped
 * once and reused: writing the raw file itself through a moving mapping costs a file-system write fault per page and
 * made QEMU about 1.7 times slower.) */
typedef struct {
  int fd;             /* PREFIX.tK.raw */
  int ring_fd;        /* PREFIX.tK.ring */
  unsigned char *map; /* the ring */
  size_t pos;         /* bytes used in the ring */
  uint64_t count;     /* instructions executed by this thread */
  int recording;      /* between skip and skip + max */
  int done;
  int seq;            /* thread number in order of creation */
} Vcpu;

static Vcpu *vcpus[MAX_VCPUS];
static char *prefix;
static uint64_t skip_count, max_count;
static int blocks_fd = -1;
static uint32_t next_tb_id = 1; /* 0 is never a block: a zero word ends a stream */
static int next_seq;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static csh capstone;          /* recognises QEMU's abandoned page-crossing instruction (abandoned_insn.h); */
static cs_insn *capstone_buf; /* both used under the lock */
/* Set in a child process the guest forked (QEMU user mode forks itself, plugin state included): the child must write
 * nothing, as its copies of the buffers and files belong to the parent's trace. */
static volatile int in_forked_child;

static void die(const char *what) {
  fprintf(stderr, "smtlab tracer: %s\n", what);
  _exit(125);
}

static void write_all(int fd, const void *data, size_t n) {
  const unsigned char *p = data;
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w <= 0) die("write failed (disk full?)");
    p += w;
    n -= (size_t)w;
  }
}

/* Appends one line to PREFIX.events; rare (a cap, a fork), so open/write/close each time. Async-signal-safe calls
 * only, as it also runs in a freshly forked child. */
static void note_event(const char *line) {
  char path[4096];
  snprintf(path, sizeof path, "%s.events", prefix);
  int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd < 0) return;
  ssize_t ignored = write(fd, line, strlen(line));
  (void)ignored;
  close(fd);
}

static void ring_path(char *path, size_t n, int seq) { snprintf(path, n, "%s.t%d.ring", prefix, seq); }

/* Creates and maps the ring (allocated on disk now: a full disk is an error here, not a SIGBUS later). */
static void open_ring(Vcpu *v) {
  char path[4096];
  ring_path(path, sizeof path, v->seq);
  v->ring_fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (v->ring_fd < 0) die("cannot create a ring file");
  if (posix_fallocate(v->ring_fd, 0, RING) != 0) die("cannot allocate a ring file (disk full?)");
  void *m = mmap(NULL, RING, PROT_READ | PROT_WRITE, MAP_SHARED, v->ring_fd, 0);
  if (m == MAP_FAILED) die("cannot map a ring file");
  v->map = m;
  v->pos = 0;
}

static void flush(Vcpu *v) {
  if (!v->pos) return;
  write_all(v->fd, v->map, v->pos);
  memset(v->map, 0, v->pos); /* a ring left by a crash must end at its first zero word */
  v->pos = 0;
}

/* Appends the ring, removes it and closes the raw file. Only for a thread that no longer writes. */
static void finalize(Vcpu *v) {
  if (v->fd < 0) return;
  flush(v);
  munmap(v->map, RING);
  v->map = NULL;
  close(v->ring_fd);
  v->ring_fd = -1;
  char path[4096];
  ring_path(path, sizeof path, v->seq);
  unlink(path);
  close(v->fd);
  v->fd = -1;
}

static inline void put32(Vcpu *v, uint32_t x) {
  if (v->pos + 16 > RING) flush(v); /* room for a word and an address */
  memcpy(v->map + v->pos, &x, 4); /* x86-64 host: little-endian */
  v->pos += 4;
}

static inline void put64(Vcpu *v, uint64_t x) {
  memcpy(v->map + v->pos, &x, 8);
  v->pos += 8;
}

static void finish(void) {
  for (int i = 0; i < MAX_VCPUS; ++i) {
    if (vcpus[i]) finalize(vcpus[i]);
  }
  if (blocks_fd >= 0) close(blocks_fd);
  blocks_fd = -1;
}

static void vcpu_init(qemu_plugin_id_t id, unsigned int index) {
  (void)id;
  if (index >= MAX_VCPUS) die("too many guest threads");
  pthread_mutex_lock(&lock);
  Vcpu *v = vcpus[index];
  if (!v) {
    v = calloc(1, sizeof(Vcpu));
    if (!v) die("out of memory");
    v->fd = -1;
    v->ring_fd = -1;
    vcpus[index] = v;
  } else {
    finalize(v); /* a thread that exited left this slot */
  }
  v->pos = 0;
  v->count = 0;
  v->recording = 0;
  v->done = 0;
  if (in_forked_child) { /* a thread of an untraced child process */
    v->fd = -1;
    v->done = 1;
    pthread_mutex_unlock(&lock);
    return;
  }
  v->seq = next_seq++;
  char path[4096];
  snprintf(path, sizeof path, "%s.t%d.raw", prefix, v->seq);
  v->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (v->fd < 0) die("cannot create the raw trace file");
  write_all(v->fd, RAW_MAGIC, 8);
  open_ring(v);
  pthread_mutex_unlock(&lock);
}

static void vcpu_exit(qemu_plugin_id_t id, unsigned int index) {
  (void)id;
  pthread_mutex_lock(&lock);
  Vcpu *v = index < MAX_VCPUS ? vcpus[index] : NULL;
  if (v) finalize(v); /* called by the exiting thread itself */
  pthread_mutex_unlock(&lock);
}

/* Entry words (u32, little-endian): bit 0 clear: a block executes, bits 1-31 its id; bit 0 set and bit 31 clear: a
 * memory access, bits 1-2 log2(size), bit 3 store, bits 4-13 instruction index in the block, then u64 address;
 * bit 0 and bit 31 set: position, then u64 instructions the thread executed before the next block. */
static void tb_exec(unsigned int index, void *udata) {
  Vcpu *v = vcpus[index];
  uintptr_t u = (uintptr_t)udata;
  uint64_t n = u & 1023, before = v->count;
  v->count += n;
  if (!v->recording) {
    if (v->done || v->count <= skip_count) return;
    v->recording = 1;
    put32(v, 0x80000001u);
    put64(v, before);
  }
  if (max_count && before >= skip_count + max_count) {
    v->recording = 0;
    v->done = 1;
    char line[64];
    snprintf(line, sizeof line, "cap %d %llu\n", v->seq, (unsigned long long)max_count);
    note_event(line);
    if (v->seq == 0) { /* the main thread has enough: stop the program */
      /* Other threads may be writing: only this thread's files are finalized; smtlab appends their rings. */
      pthread_mutex_lock(&lock);
      finalize(v);
      if (blocks_fd >= 0) close(blocks_fd);
      _exit(0);
    }
    return;
  }
  put32(v, (uint32_t)(u >> 10) << 1);
}

static void mem_access(unsigned int index, qemu_plugin_meminfo_t info, uint64_t vaddr, void *udata) {
  Vcpu *v = vcpus[index];
  if (!v->recording) return;
  uint32_t w = 1u | ((qemu_plugin_mem_size_shift(info) & 3u) << 1) | ((uint32_t)qemu_plugin_mem_is_store(info) << 3) |
               ((uint32_t)(uintptr_t)udata << 4);
  put32(v, w);
  put64(v, vaddr);
}

/* Block definition: magic-less record u32 id, u64 pc, u32 instruction count, then per instruction u8 length and its
 * bytes. Instructions of a block are contiguous, so their pcs follow from the lengths. */
static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb) {
  (void)id;
  size_t n = qemu_plugin_tb_n_insns(tb);
  unsigned char rec[16 + 512 * 17];
  pthread_mutex_lock(&lock);
  /* QEMU 7.2 counts an instruction it abandoned at a page boundary; it never runs in this block (abandoned_insn.h). */
  if (smtlab_insn_abandoned(capstone, capstone_buf, tb, n - 1, n)) --n;
  uint32_t tb_id = next_tb_id++;
  uint64_t pc = qemu_plugin_tb_vaddr(tb);
  uint32_t n32 = (uint32_t)n;
  size_t pos = 0;
  memcpy(rec + pos, &tb_id, 4);
  memcpy(rec + pos + 4, &pc, 8);
  memcpy(rec + pos + 12, &n32, 4);
  pos += 16;
  for (size_t i = 0; i < n && i < 512; ++i) {
    struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
    size_t len = qemu_plugin_insn_size(insn);
    if (len > 16) len = 16;
    rec[pos++] = (unsigned char)len;
    memcpy(rec + pos, qemu_plugin_insn_data(insn), len);
    pos += len;
    qemu_plugin_register_vcpu_mem_cb(insn, mem_access, QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_MEM_RW,
                                     (void *)(uintptr_t)i);
  }
  if (blocks_fd >= 0) write_all(blocks_fd, rec, pos);
  pthread_mutex_unlock(&lock);
  if (n > 1023 || tb_id >= (1u << 30)) die("block too large or too many blocks");
  qemu_plugin_register_vcpu_tb_exec_cb(tb, tb_exec, QEMU_PLUGIN_CB_NO_REGS,
                                       (void *)(((uintptr_t)tb_id << 10) | n));
}

/* QEMU calls it at the program's exit with every other vCPU stopped and no callback left registered, so every file
 * can be finalized. It is not called when the guest dies of a signal (QEMU 7.2): the shared mappings keep the data. */
static void at_exit(qemu_plugin_id_t id, void *p) {
  (void)id;
  (void)p;
  pthread_mutex_lock(&lock);
  finish();
  pthread_mutex_unlock(&lock);
}

/* fork() of the guest is a fork() of QEMU (vfork and clone without CLONE_VM too). The lock is held across it so the
 * child's copy is consistent; the child closes its copies of the files unflushed (their buffered records are the
 * parent's, which the parent writes) and records nothing: the trace holds the parent process only. */
static void fork_prepare(void) { pthread_mutex_lock(&lock); }
static int forks;
static void fork_parent(void) {
  /* Noted here, not in the child: the parent may exit before the child runs at all. */
  if (!in_forked_child) {
    char line[64];
    snprintf(line, sizeof line, "fork %d\n", ++forks);
    note_event(line);
  }
  pthread_mutex_unlock(&lock);
}
static void fork_child(void) {
  in_forked_child = 1;
  for (int i = 0; i < MAX_VCPUS; ++i) {
    Vcpu *v = vcpus[i];
    if (!v) continue;
    /* The rings are shared with the parent: unmap them, never write to them. */
    if (v->map) munmap(v->map, RING);
    v->map = NULL;
    if (v->ring_fd >= 0) close(v->ring_fd);
    v->ring_fd = -1;
    if (v->fd >= 0) close(v->fd);
    v->fd = -1;
    v->pos = 0;
    v->recording = 0;
    v->done = 1;
  }
  if (blocks_fd >= 0) close(blocks_fd);
  blocks_fd = -1;
  pthread_mutex_unlock(&lock);
}

static int parse_u64(const char *s, uint64_t *out) {
  char *end;
  unsigned long long x = strtoull(s, &end, 10);
  if (*s == '\0' || *end != '\0') return 0;
  *out = x;
  return 1;
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv) {
  if (info->system_emulation) {
    fprintf(stderr, "smtlab tracer: only user-mode emulation (qemu-x86_64) is supported\n");
    return -1;
  }
  for (int i = 0; i < argc; ++i) {
    if (strncmp(argv[i], "out=", 4) == 0) prefix = strdup(argv[i] + 4);
    else if (strncmp(argv[i], "skip=", 5) == 0 && parse_u64(argv[i] + 5, &skip_count)) continue;
    else if (strncmp(argv[i], "max=", 4) == 0 && parse_u64(argv[i] + 4, &max_count)) continue;
    else {
      fprintf(stderr, "smtlab tracer: bad argument '%s' (out=PREFIX, skip=N, max=N)\n", argv[i]);
      return -1;
    }
  }
  if (!prefix) {
    fprintf(stderr, "smtlab tracer: give out=PREFIX\n");
    return -1;
  }
  if (cs_open(CS_ARCH_X86, CS_MODE_64, &capstone) != CS_ERR_OK || !(capstone_buf = cs_malloc(capstone))) {
    fprintf(stderr, "smtlab tracer: capstone cannot be opened for x86-64\n");
    return -1;
  }
  char path[4096];
  snprintf(path, sizeof path, "%s.blocks", prefix);
  blocks_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (blocks_fd < 0) {
    fprintf(stderr, "smtlab tracer: cannot create %s\n", path);
    return -1;
  }
  write_all(blocks_fd, BLK_MAGIC, 8);
  qemu_plugin_register_vcpu_init_cb(id, vcpu_init);
  qemu_plugin_register_vcpu_exit_cb(id, vcpu_exit);
  qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
  qemu_plugin_register_atexit_cb(id, at_exit, NULL);
  if (pthread_atfork(fork_prepare, fork_parent, fork_child) != 0) {
    fprintf(stderr, "smtlab tracer: pthread_atfork failed\n");
    return -1;
  }
  return 0;
}
