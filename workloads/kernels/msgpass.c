/* A message-passing pair: the main thread sends argv[1] messages (default 100000) through a single-producer /
 * single-consumer ring in shared memory, a second thread receives and sums them; both spin (with pause) when the ring
 * is full or empty. Traced as two threads of one process: msgpass_send (thread 0) and msgpass_recv (thread 1). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#define RING 256
static long ring[RING];
static _Atomic long head, tail;
static long messages;

static void *receiver(void *arg) {
  (void)arg;
  long sum = 0;
  for (long i = 0; i < messages; ++i) {
    while (atomic_load_explicit(&head, memory_order_acquire) == i) __builtin_ia32_pause();
    sum += ring[i % RING];
    atomic_store_explicit(&tail, i + 1, memory_order_release);
  }
  return (void *)sum;
}

int main(int argc, char **argv) {
  messages = argc > 1 ? atol(argv[1]) : 100000;
  pthread_t t;
  if (pthread_create(&t, 0, receiver, 0)) return 1;
  for (long i = 0; i < messages; ++i) {
    while (i - atomic_load_explicit(&tail, memory_order_acquire) >= RING) __builtin_ia32_pause();
    ring[i % RING] = i * 3;
    atomic_store_explicit(&head, i + 1, memory_order_release);
  }
  void *sum;
  pthread_join(t, &sum);
  printf("%ld\n", (long)sum);
  return 0;
}
