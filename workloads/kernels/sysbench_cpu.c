/* The sysbench cpu test: count primes up to --cpu-max-prime (default 10000) by trial division up to sqrt(c), as
 * sysbench's cpu_execute_event does. One event per run; argv[1] = max prime, argv[2] = events. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  unsigned long long max_prime = argc > 1 ? strtoull(argv[1], 0, 10) : 10000;
  int events = argc > 2 ? atoi(argv[2]) : 1;
  unsigned long long n = 0;
  for (int e = 0; e < events; ++e) {
    for (unsigned long long c = 3; c < max_prime; c++) {
      double t = sqrt((double)c);
      unsigned long long l;
      for (l = 2; l <= t; l++)
        if (c % l == 0) break;
      if (l > t) n++;
    }
  }
  printf("%llu primes\n", n);
  return 0;
}
