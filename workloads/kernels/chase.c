/* Pointer chase: a random cycle through a footprint of 64-byte lines (argv[1] KiB, default 4096), followed argv[2]
 * times (default 1000000): every load depends on the previous one and most miss in small caches. */
#include <stdio.h>
#include <stdlib.h>

struct Line { struct Line *next; long pad[7]; };

int main(int argc, char **argv) {
  long kib = argc > 1 ? atol(argv[1]) : 4096, steps = argc > 2 ? atol(argv[2]) : 1000000;
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
  struct Line *p = &lines[order[0]];
  for (long i = 0; i < steps; ++i) p = p->next;
  printf("%p\n", (void *)p);
  return 0;
}
