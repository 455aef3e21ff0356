/* Independent pointer chases: argv[3] chains (default 4) walk one random cycle through a footprint of 64-byte lines
 * (argv[1] KiB, default 4096), each from its own starting line, argv[2] steps each (default 250000), interleaved. Each
 * load depends on its own chain's previous load only, so a core can have one miss per chain in flight: a
 * memory-bound program with memory-level parallelism, where chase.c has none. The cycle is built as chase.c builds
 * it, in a copy rather than a shared header: chase.c's compiled setup is part of kernel:chase's trace, which the
 * policy study's windows measure (bench/README.md), and a change to it would record a different trace. */
#include <stdio.h>
#include <stdlib.h>

struct Line { struct Line *next; long pad[7]; };

enum { kMaxChains = 8 };

int main(int argc, char **argv) {
  long kib = argc > 1 ? atol(argv[1]) : 4096, steps = argc > 2 ? atol(argv[2]) : 250000;
  int chains = argc > 3 ? atoi(argv[3]) : 4;
  if (chains < 1 || chains > kMaxChains) return 2;
  long n = kib * 1024 / (long)sizeof(struct Line);
  struct Line *lines = malloc((size_t)n * sizeof *lines);
  long *order = malloc((size_t)n * sizeof *order);
  if (!lines || !order) return 1;
  unsigned long long s = 88172645463325252ull;
  for (long i = 0; i < n; ++i) order[i] = i;
  for (long i = n - 1; i > 0; --i) { /* Fisher-Yates with xorshift */
    s ^= s << 13; s ^= s >> 7; s ^= s << 17;
    long j = (long)(s % (unsigned long long)(i + 1)), t = order[i];
    order[i] = order[j]; order[j] = t;
  }
  for (long i = 0; i < n; ++i) lines[order[i]].next = &lines[order[(i + 1) % n]];
  /* The chains start evenly spaced around the cycle, so they never meet within n / chains steps. */
  struct Line *p[kMaxChains];
  for (int c = 0; c < chains; ++c) p[c] = &lines[order[(long)c * (n / chains)]];
  /* The marker: kernel:chains is the walk from here on (the setup before it is not in the trace). */
  __asm__ volatile("pause" ::: "memory");
  for (long i = 0; i < steps; ++i) {
    for (int c = 0; c < chains; ++c) p[c] = p[c]->next;
  }
  for (int c = 0; c < chains; ++c) printf("%p\n", (void *)p[c]);
  return 0;
}
