/* A small floating-point program for the simulation-speed benchmark (bench/): a Whitted-style ray tracer.
 * Spheres over a checkered plane, one point light with hard shadows, mirror reflections up to a fixed depth, a
 * fixed grid of samples per pixel. Its work is what FP benchmarks of the SPEC kind do: dependent double-precision
 * multiply/add chains, square roots and divides, data-dependent branches, a small working set (the scene fits in L1).
 * Rows are rendered in an interleaved order (a stride coprime to the height), so that any window of the run -- a
 * benchmark traces a bounded window -- sees sky, spheres and floor alike rather than only the sky at the top.
 * Deterministic: no random numbers, no time; the image depends only on the arguments.
 * Usage: raytrace [WIDTH HEIGHT [SAMPLES]] > image.ppm   (binary PPM; defaults 160 120 2, SAMPLES per axis)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
  double x, y, z;
} Vec;

static Vec vec(double x, double y, double z) {
  Vec v = {x, y, z};
  return v;
}
static Vec add(Vec a, Vec b) { return vec(a.x + b.x, a.y + b.y, a.z + b.z); }
static Vec sub(Vec a, Vec b) { return vec(a.x - b.x, a.y - b.y, a.z - b.z); }
static Vec scale(Vec a, double s) { return vec(a.x * s, a.y * s, a.z * s); }
static Vec mulv(Vec a, Vec b) { return vec(a.x * b.x, a.y * b.y, a.z * b.z); }
static double dot(Vec a, Vec b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
static Vec norm(Vec a) { return scale(a, 1.0 / sqrt(dot(a, a))); }

typedef struct {
  Vec centre;
  double radius;
  Vec colour;
  double reflect;
} Sphere;

enum { kSpheres = 9, kMaxDepth = 4 };
static Sphere spheres[kSpheres];
static const Vec kLight = {-4.0, 8.0, -2.0};
static const double kPlaneY = -1.0;

static void buildScene(void) {
  /* A ring of eight small spheres around a big mirror sphere: enough objects that every ray tests several. */
  spheres[0] = (Sphere){{0.0, 0.5, 6.0}, 1.5, {0.9, 0.9, 0.9}, 0.6};
  for (int i = 1; i < kSpheres; ++i) {
    const double a = (i - 1) * (2.0 * M_PI / (kSpheres - 1));
    spheres[i] = (Sphere){{3.0 * cos(a), -0.4 + 0.25 * (i % 3), 6.0 + 3.0 * sin(a)},
                          0.6,
                          {0.3 + 0.7 * (i & 1), 0.3 + 0.7 * ((i >> 1) & 1), 0.3 + 0.7 * ((i >> 2) & 1)},
                          0.25};
  }
}

/* Nearest hit along origin + t * dir (dir normalised): the sphere index, kSpheres for the plane, -1 for none. */
static int intersect(Vec origin, Vec dir, double* tHit) {
  int hit = -1;
  double best = 1e30;
  for (int i = 0; i < kSpheres; ++i) {
    const Vec oc = sub(origin, spheres[i].centre);
    const double b = dot(oc, dir);
    const double c = dot(oc, oc) - spheres[i].radius * spheres[i].radius;
    const double disc = b * b - c;
    if (disc <= 0.0) continue;
    const double root = sqrt(disc);
    double t = -b - root;
    if (t < 1e-6) t = -b + root;
    if (t > 1e-6 && t < best) {
      best = t;
      hit = i;
    }
  }
  if (dir.y < -1e-9) {
    const double t = (kPlaneY - origin.y) / dir.y;
    if (t > 1e-6 && t < best) {
      best = t;
      hit = kSpheres;
    }
  }
  *tHit = best;
  return hit;
}

static Vec trace(Vec origin, Vec dir, int depth) {
  double t;
  const int hit = intersect(origin, dir, &t);
  if (hit < 0) return vec(0.2 + 0.3 * dir.y, 0.3 + 0.3 * dir.y, 0.6 + 0.4 * dir.y); /* sky gradient */
  const Vec point = add(origin, scale(dir, t));
  Vec normal, colour;
  double reflect;
  if (hit == kSpheres) {
    normal = vec(0.0, 1.0, 0.0);
    const int check = ((int)floor(point.x) + (int)floor(point.z)) & 1;
    colour = check ? vec(0.8, 0.8, 0.8) : vec(0.2, 0.2, 0.25);
    reflect = 0.15;
  } else {
    normal = norm(sub(point, spheres[hit].centre));
    colour = spheres[hit].colour;
    reflect = spheres[hit].reflect;
  }
  const Vec toLight = sub(kLight, point);
  const double lightDistance = sqrt(dot(toLight, toLight));
  const Vec l = scale(toLight, 1.0 / lightDistance);
  double diffuse = dot(normal, l);
  double shadowT;
  const Vec shadowOrigin = add(point, scale(normal, 1e-4));
  if (diffuse > 0.0 && intersect(shadowOrigin, l, &shadowT) >= 0 && shadowT < lightDistance) diffuse = 0.0;
  if (diffuse < 0.0) diffuse = 0.0;
  const Vec half = norm(sub(l, dir));
  const double specular = pow(fmax(dot(normal, half), 0.0), 32.0);
  Vec result = add(scale(colour, 0.1 + 0.9 * diffuse), vec(specular, specular, specular));
  if (depth < kMaxDepth && reflect > 0.0) {
    const Vec r = sub(dir, scale(normal, 2.0 * dot(dir, normal)));
    result = add(scale(result, 1.0 - reflect), scale(mulv(trace(shadowOrigin, norm(r), depth + 1), colour), reflect));
  }
  return result;
}

static int gcd(int a, int b) { return b == 0 ? a : gcd(b, a % b); }

static unsigned char toByte(double v) {
  if (v < 0.0) v = 0.0;
  if (v > 1.0) v = 1.0;
  return (unsigned char)(255.0 * sqrt(v) + 0.5); /* gamma 2 */
}

int main(int argc, char** argv) {
  const int width = argc > 2 ? atoi(argv[1]) : 160;
  const int height = argc > 2 ? atoi(argv[2]) : 120;
  const int samples = argc > 3 ? atoi(argv[3]) : 2;
  if (width <= 0 || height <= 0 || samples <= 0 || width > 8192 || height > 8192 || samples > 64) {
    fprintf(stderr, "raytrace: WIDTH and HEIGHT must be 1..8192 and SAMPLES 1..64\n");
    return 2;
  }
  buildScene();
  unsigned char* image = malloc((size_t)width * height * 3);
  if (!image) return 1;
  const Vec eye = vec(0.0, 1.0, -2.0);
  const double aspect = (double)width / height;
  int stride = 7;
  while (gcd(stride, height) != 1) ++stride;
  for (int i = 0; i < height; ++i) {
    const int y = (int)(((long)i * stride) % height);
    unsigned char* row = image + (size_t)y * width * 3;
    for (int x = 0; x < width; ++x) {
      Vec sum = vec(0.0, 0.0, 0.0);
      for (int sy = 0; sy < samples; ++sy) {
        for (int sx = 0; sx < samples; ++sx) {
          const double u = ((x + (sx + 0.5) / samples) / width * 2.0 - 1.0) * aspect;
          const double v = 1.0 - (y + (sy + 0.5) / samples) / height * 2.0;
          sum = add(sum, trace(eye, norm(vec(u, v - 0.15, 1.5)), 0));
        }
      }
      const double inv = 1.0 / (samples * samples);
      row[3 * x] = toByte(sum.x * inv);
      row[3 * x + 1] = toByte(sum.y * inv);
      row[3 * x + 2] = toByte(sum.z * inv);
    }
  }
  printf("P6\n%d %d\n255\n", width, height);
  fwrite(image, 3, (size_t)width * height, stdout);
  free(image);
  return ferror(stdout) ? 1 : 0;
}
