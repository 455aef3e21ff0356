/* What the probe's files share (probe.c runs the phases, probe_net.c the network ones, probe_fs.c the page-cache ones): the path ids of
 * kpath_paths.h, the marker instruction and the helpers. docs/tracing.md, "System mode", says what a marker is. */
#ifndef SMTLAB_KPATH_PROBE_H
#define SMTLAB_KPATH_PROBE_H

enum {
#define KPATH(name, kind, what) KP_##name,
#include "kpath_paths.h"
#undef KPATH
  KP_COUNT
};

/* The 7-byte nop `nopl 0x534dXXXX(%rax)`: high half "SM", low half the path id, bit 15 set for the end marker. */
#define KP_MARK(payload) __asm__ volatile(".byte 0x0f, 0x1f, 0x80\n\t.long %c0" ::"i"(0x534d0000u | (payload)) : "memory")
#define BEGIN(id) KP_MARK(id)
#define END(id) KP_MARK(0x8000u | (id))

/* Prints what failed with errno's text and exits with status 1 (the guest's console shows it). */
void die(const char *what);
void pin_to_cpu(int cpu);

/* The network phase (probe_net.c): TCP send and receive on loopback, select on TCP sockets. */
void tcp_paths(int n);
/* The page-cache phase (probe_fs.c): a 1 KiB read of a cached ext4 file, the write-back of 16 dirty KiB. */
void page_cache_paths(int n);

#endif
