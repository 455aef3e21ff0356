/*
 * smtlab QEMU TCG plugin for full-system emulation (qemu-system-x86_64): records, per virtual CPU, the translated
 * blocks that execute and every load/store virtual address and size, user and kernel alike, but only inside regions
 * that the guest's probe programs delimit with marker instructions. smtlab's decoder (src/tracer/system_trace.cpp)
 * splits the stream at the markers into kernel-path traces (kpath:NAME).
 *
 * Copyright (C) 2026 the smtlab authors.
 * SPDX-License-Identifier: GPL-2.0-or-later (it is built against QEMU's GPL-2.0-or-later qemu-plugin.h; see LICENSE).
 *
 * Usage: qemu-system-x86_64 ... -plugin libsmtlab_system_tracer.so,out=PREFIX[,limit=BYTES]
 * Files: PREFIX.blocks (block definitions, the user-mode plugin's format), PREFIX.cpuK.raw (virtual CPU K).
 *
 * Marker: `nopl 0x534dXXXX(%rax)`, bytes 0f 1f 80 XX XX 4d 53: XXXX bits 0-14 a region id, bit 15 set for an end.
 * A begin marker starts recording on the CPU that executes it, an end marker stops it; whatever that CPU runs in
 * between is recorded (system calls, interrupts, the other processes a context switch runs).
 *
 * Stream entries (u32 words, little-endian), docs/tracing.md "System mode":
 *   bit 0 clear              block (bits 1-30 its id) executes; bit 31 set: kernel (privileged) code
 *   bit 0 set, bit 31 clear  memory access of the current block, as in the user-mode stream; then u64 virtual address
 *   0x80000003               marker: then u32 payload (XXXX), u32 block id, u32 index of the marker in its block
 *   0x80000005               cut: then u32 k: the previous block was left after its k-th instruction had started
 *                            (a fault or exception in it); absent when the whole block ran
 *   0x80000007               limit: the stream reached limit=BYTES and stops here
 * Privilege: QEMU 7.2's plugin API cannot read the CPL, so bit 31 is taken from the block's address half: Linux on
 * x86-64 runs kernel code only in the upper canonical half and user code only in the lower one.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <qemu-plugin.h>

#include "abandoned_insn.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define MAX_VCPUS 64
#define BUF_SIZE (1u << 20)
#define SYS_MAGIC "SMTLSYS\1"
#define BLK_MAGIC "SMTLBLK\1"
#define MARKER_WORD 0x80000003u
#define CUT_WORD 0x80000005u
#define LIMIT_WORD 0x80000007u
#define KERNEL_HALF 0xffff800000000000ull

typedef struct {
  int fd;
  unsigned char *buf;
  size_t pos;
  uint64_t written;   /* bytes written to the file so far */
  int recording;
  int full;           /* reached the limit: nothing more is written */
  uint32_t block_n;   /* instruction count of the last block entry (0: none since recording started) */
  uint32_t started;   /* instructions of that block that started executing */
} Vcpu;

typedef struct {
  uint32_t payload, tb_id, index, n;
} Marker;

static Vcpu *vcpus[MAX_VCPUS];
static char *prefix;
static uint64_t limit_bytes = 4ull << 30;
static int blocks_fd = -1;
static uint32_t next_tb_id;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static csh capstone;          /* recognises QEMU's abandoned page-crossing instruction (abandoned_insn.h); */
static cs_insn *capstone_buf; /* both used under the lock */

static void die(const char *what) {
  fprintf(stderr, "smtlab system tracer: %s\n", what);
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

static void flush(Vcpu *v) {
  if (v->pos) write_all(v->fd, v->buf, v->pos);
  v->written += v->pos;
  v->pos = 0;
}

/* Room for the largest entry (16 bytes) is made before each entry; the limit is checked at each flush. */
static inline int room(Vcpu *v) {
  if (v->full) return 0;
  if (v->pos + 16 > BUF_SIZE) {
    flush(v);
    if (v->written + BUF_SIZE > limit_bytes) {
      uint32_t w = LIMIT_WORD;
      memcpy(v->buf, &w, 4);
      v->pos = 4;
      flush(v);
      v->full = 1;
      v->recording = 0;
      fprintf(stderr, "smtlab system tracer: a CPU's stream reached limit=%llu bytes; recording on it stops\n",
              (unsigned long long)limit_bytes);
      return 0;
    }
  }
  return 1;
}

static inline void put32(Vcpu *v, uint32_t x) {
  memcpy(v->buf + v->pos, &x, 4); /* x86-64 host: little-endian */
  v->pos += 4;
}

static inline void put64(Vcpu *v, uint64_t x) {
  memcpy(v->buf + v->pos, &x, 8);
  v->pos += 8;
}

static void finish(void) {
  for (int i = 0; i < MAX_VCPUS; ++i) {
    if (vcpus[i] && vcpus[i]->fd >= 0) {
      flush(vcpus[i]);
      close(vcpus[i]->fd);
      vcpus[i]->fd = -1;
    }
  }
  if (blocks_fd >= 0) close(blocks_fd);
  blocks_fd = -1;
}

static void vcpu_init(qemu_plugin_id_t id, unsigned int index) {
  (void)id;
  if (index >= MAX_VCPUS) die("too many virtual CPUs");
  pthread_mutex_lock(&lock);
  if (!vcpus[index]) {
    Vcpu *v = calloc(1, sizeof(Vcpu));
    if (!v || !(v->buf = malloc(BUF_SIZE))) die("out of memory");
    char path[4096];
    snprintf(path, sizeof path, "%s.cpu%u.raw", prefix, index);
    v->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (v->fd < 0) die("cannot create the raw trace file");
    write_all(v->fd, SYS_MAGIC, 8);
    v->written = 8;
    vcpus[index] = v;
  }
  pthread_mutex_unlock(&lock);
}

/* A block starts: the previous one ended, completely or cut by an exception (its instruction callbacks tell). */
static void tb_exec(unsigned int index, void *udata) {
  Vcpu *v = vcpus[index];
  if (!v->recording || !room(v)) return;
  uintptr_t u = (uintptr_t)udata;
  if (v->block_n && v->started < v->block_n) {
    put32(v, CUT_WORD);
    put32(v, v->started);
    if (!room(v)) return;
  }
  v->block_n = (uint32_t)(u & 1023);
  v->started = 0;
  put32(v, (uint32_t)(u >> 10)); /* id << 1 | kernel << 31, made at translation */
}

static void insn_exec(unsigned int index, void *udata) {
  Vcpu *v = vcpus[index];
  if (v->recording) v->started = (uint32_t)(uintptr_t)udata;
}

static void marker_exec(unsigned int index, void *udata) {
  Vcpu *v = vcpus[index];
  const Marker *m = udata;
  int end = (m->payload & 0x8000u) != 0;
  if (!end) {
    if (v->full) return;
    v->recording = 1;
    v->block_n = m->n;
  } else if (!v->recording) {
    return; /* an end without its begin on this CPU: nothing to close */
  }
  if (!room(v)) return;
  v->started = m->index + 1;
  put32(v, MARKER_WORD);
  put32(v, m->payload);
  put32(v, m->tb_id);
  put32(v, m->index);
  if (end) {
    v->recording = 0;
    v->block_n = 0;
  }
}

static void mem_access(unsigned int index, qemu_plugin_meminfo_t info, uint64_t vaddr, void *udata) {
  Vcpu *v = vcpus[index];
  if (!v->recording || !room(v)) return;
  uint32_t w = 1u | ((qemu_plugin_mem_size_shift(info) & 3u) << 1) | ((uint32_t)qemu_plugin_mem_is_store(info) << 3) |
               ((uint32_t)(uintptr_t)udata << 4);
  put32(v, w);
  put64(v, vaddr);
}

static int is_marker(const unsigned char *b, size_t len, uint32_t *payload) {
  if (len != 7 || b[0] != 0x0f || b[1] != 0x1f || b[2] != 0x80 || b[5] != 0x4d || b[6] != 0x53) return 0;
  *payload = (uint32_t)b[3] | (uint32_t)b[4] << 8;
  return 1;
}

/* Block definition as in the user-mode plugin: u32 id, u64 pc, u32 instruction count, then per instruction u8 length
 * and its bytes. */
static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb) {
  (void)id;
  size_t n = qemu_plugin_tb_n_insns(tb);
  unsigned char rec[16 + 512 * 17];
  pthread_mutex_lock(&lock);
  /* QEMU 7.2 counts an instruction it abandoned at a page boundary; it never runs in this block (abandoned_insn.h).
   * Left in, it never started either, so every run of the block ended in a cut entry one instruction short. */
  if (smtlab_insn_abandoned(capstone, capstone_buf, tb, n - 1, n)) --n;
  uint32_t tb_id = next_tb_id++;
  uint64_t pc = qemu_plugin_tb_vaddr(tb);
  uint32_t n32 = (uint32_t)n;
  size_t pos = 0;
  memcpy(rec + pos, &tb_id, 4);
  memcpy(rec + pos + 4, &pc, 8);
  memcpy(rec + pos + 12, &n32, 4);
  pos += 16;
  if (n > 512 || tb_id >= (1u << 30)) die("block too large or too many blocks");
  for (size_t i = 0; i < n; ++i) {
    struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
    size_t len = qemu_plugin_insn_size(insn);
    if (len > 16) len = 16;
    const unsigned char *bytes = qemu_plugin_insn_data(insn);
    rec[pos++] = (unsigned char)len;
    memcpy(rec + pos, bytes, len);
    pos += len;
    uint32_t payload;
    if (is_marker(bytes, len, &payload)) {
      Marker *m = malloc(sizeof *m); /* once per translation of a marker: a few hundred in a run */
      if (!m) die("out of memory");
      *m = (Marker){payload, tb_id, (uint32_t)i, n32};
      qemu_plugin_register_vcpu_insn_exec_cb(insn, marker_exec, QEMU_PLUGIN_CB_NO_REGS, m);
    } else {
      qemu_plugin_register_vcpu_insn_exec_cb(insn, insn_exec, QEMU_PLUGIN_CB_NO_REGS, (void *)(uintptr_t)(i + 1));
    }
    qemu_plugin_register_vcpu_mem_cb(insn, mem_access, QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_MEM_RW,
                                     (void *)(uintptr_t)i);
  }
  if (blocks_fd >= 0) write_all(blocks_fd, rec, pos);
  pthread_mutex_unlock(&lock);
  uint64_t word = ((uint64_t)tb_id << 1) | (pc >= KERNEL_HALF ? 0x80000000ull : 0);
  qemu_plugin_register_vcpu_tb_exec_cb(tb, tb_exec, QEMU_PLUGIN_CB_NO_REGS, (void *)(uintptr_t)((word << 10) | n));
}

static void at_exit(qemu_plugin_id_t id, void *p) {
  (void)id;
  (void)p;
  pthread_mutex_lock(&lock);
  finish();
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
  if (!info->system_emulation) {
    fprintf(stderr, "smtlab system tracer: only system emulation (qemu-system-x86_64) is supported; "
                    "user mode has libsmtlab_qemu_tracer.so\n");
    return -1;
  }
  for (int i = 0; i < argc; ++i) {
    if (strncmp(argv[i], "out=", 4) == 0) prefix = strdup(argv[i] + 4);
    else if (strncmp(argv[i], "limit=", 6) == 0 && parse_u64(argv[i] + 6, &limit_bytes)) continue;
    else {
      fprintf(stderr, "smtlab system tracer: bad argument '%s' (out=PREFIX, limit=BYTES)\n", argv[i]);
      return -1;
    }
  }
  if (!prefix) {
    fprintf(stderr, "smtlab system tracer: give out=PREFIX\n");
    return -1;
  }
  if (cs_open(CS_ARCH_X86, CS_MODE_64, &capstone) != CS_ERR_OK || !(capstone_buf = cs_malloc(capstone))) {
    fprintf(stderr, "smtlab system tracer: capstone cannot be opened for x86-64\n");
    return -1;
  }
  char path[4096];
  snprintf(path, sizeof path, "%s.blocks", prefix);
  blocks_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (blocks_fd < 0) {
    fprintf(stderr, "smtlab system tracer: cannot create %s\n", path);
    return -1;
  }
  write_all(blocks_fd, BLK_MAGIC, 8);
  qemu_plugin_register_vcpu_init_cb(id, vcpu_init);
  qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
  qemu_plugin_register_atexit_cb(id, at_exit, NULL);
  return 0;
}
