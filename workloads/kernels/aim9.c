/* AIM Suite IX-like CPU loops: one test per run, named by argv[1] (add_short add_int add_long add_float add_double,
 * mul_*, div_*, call0 call1 call2 call15, sieve, memcpy, string, sort); argv[2] scales the iterations.
 * Each loop keeps its values live through volatile sinks so that -O2 cannot remove the work. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ARITH(NAME, T, OP, INIT)                              \
  static void NAME(long n) {                                  \
    volatile T sink;                                          \
    T a = (T)(INIT), b = (T)3, c = (T)7, d = (T)11;           \
    for (long i = 0; i < n; ++i) {                            \
      a = a OP b; b = b OP c; c = c OP d; d = d OP a;         \
      if ((i & 255) == 0) { a = (T)(INIT); b = (T)3; c = (T)7; d = (T)11; } \
    }                                                         \
    sink = a + b + c + d;                                     \
    (void)sink;                                               \
  }

ARITH(add_short, short, +, 1)
ARITH(add_int, int, +, 1)
ARITH(add_long, long, +, 1)
ARITH(add_float, float, +, 1)
ARITH(add_double, double, +, 1)
ARITH(mul_short, short, *, 1)
ARITH(mul_int, int, *, 1)
ARITH(mul_long, long, *, 1)
ARITH(mul_float, float, *, 1.0001)
ARITH(mul_double, double, *, 1.0001)

#define DIV(NAME, T)                                          \
  static void NAME(long n) {                                  \
    volatile T sink;                                          \
    T a = (T)30000, b = (T)3, r = 0;                          \
    for (long i = 0; i < n; ++i) {                            \
      r += a / b; r += (T)(a - 7) / (T)(b + 2);               \
      b = (T)(b + 1); if (b > (T)100) b = (T)3;               \
    }                                                         \
    sink = r;                                                 \
    (void)sink;                                               \
  }
DIV(div_short, short)
DIV(div_int, int)
DIV(div_long, long)
DIV(div_float, float)
DIV(div_double, double)

static long __attribute__((noipa)) f0(void) { return 1; }
static long __attribute__((noipa)) f1(long a) { return a + 1; }
static long __attribute__((noipa)) f2(long a, long b) { return a + b; }
static long __attribute__((noipa)) f15(long a, long b, long c, long d, long e, long f, long g, long h, long i,
                                          long j, long k, long l, long m, long n, long o) {
  return a + b + c + d + e + f + g + h + i + j + k + l + m + n + o;
}
static void call0(long n) { volatile long s = 0; for (long i = 0; i < n; ++i) s += f0(); }
static void call1(long n) { volatile long s = 0; for (long i = 0; i < n; ++i) s += f1(i); }
static void call2(long n) { volatile long s = 0; for (long i = 0; i < n; ++i) s += f2(i, s); }
static void call15(long n) {
  volatile long s = 0;
  for (long i = 0; i < n; ++i) s += f15(i, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, s);
}

static void sieve(long n) {
  enum { kSize = 8192 };
  static char flags[kSize + 1];
  volatile long count = 0;
  for (long rep = 0; rep < n / 20000 + 1; ++rep) {
    memset(flags, 1, sizeof flags);
    for (long i = 2; i <= kSize; ++i) {
      if (!flags[i]) continue;
      for (long k = i + i; k <= kSize; k += i) flags[k] = 0;
      count++;
    }
  }
}

static void mem_copy(long n) {
  enum { kBytes = 16384 };
  static char a[kBytes], b[kBytes];
  for (long rep = 0; rep < n / 2000 + 1; ++rep) {
    memcpy(b, a, kBytes);
    memcpy(a, b, kBytes);
    a[rep % kBytes]++;
  }
}

static void string_ops(long n) {
  char buf[256], dst[256];
  volatile long s = 0;
  for (long i = 0; i < n / 20 + 1; ++i) {
    snprintf(buf, sizeof buf, "aim9 string test %ld with some more text", i);
    strcpy(dst, buf);
    strcat(dst, " tail");
    s += (long)strlen(dst) + strcmp(dst, buf) + (strchr(dst, 'w') - dst);
  }
}

static int cmp(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}
static void sort(long n) {
  enum { kCount = 4096 };
  static int v[kCount];
  unsigned s = 12345;
  for (long rep = 0; rep < n / 60000 + 1; ++rep) {
    for (int i = 0; i < kCount; ++i) v[i] = (int)((s = s * 1103515245u + 12345u) >> 8);
    qsort(v, kCount, sizeof v[0], cmp);
  }
}

static const struct { const char *name; void (*fn)(long); } kTests[] = {
    {"add_short", add_short}, {"add_int", add_int}, {"add_long", add_long}, {"add_float", add_float},
    {"add_double", add_double}, {"mul_short", mul_short}, {"mul_int", mul_int}, {"mul_long", mul_long},
    {"mul_float", mul_float}, {"mul_double", mul_double}, {"div_short", div_short}, {"div_int", div_int},
    {"div_long", div_long}, {"div_float", div_float}, {"div_double", div_double}, {"call0", call0},
    {"call1", call1}, {"call2", call2}, {"call15", call15}, {"sieve", sieve}, {"memcpy", mem_copy},
    {"string", string_ops}, {"sort", sort},
};

int main(int argc, char **argv) {
  if (argc < 2) { fprintf(stderr, "usage: aim9 TEST [N]\n"); return 2; }
  long n = argc > 2 ? atol(argv[2]) : 200000;
  for (size_t i = 0; i < sizeof kTests / sizeof kTests[0]; ++i) {
    if (strcmp(argv[1], kTests[i].name) == 0) { kTests[i].fn(n); return 0; }
  }
  fprintf(stderr, "aim9: unknown test '%s'\n", argv[1]);
  return 2;
}
