/* Times the tile of gen.py: K=64 reduction steps per call, 2M calls, best of 5, one thread, data in L1. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
void k(float *out, const float *inp, const float *w, long K);
static double now() { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
int main(int argc, char **argv) {
  int R = atoi(argv[1]), C = atoi(argv[2]); long K = 64; long iters = 2000000;
  float *inp = aligned_alloc(64, 64 * 1024 * 4), *w = aligned_alloc(64, K * 16 * C * 4 + 64), *out = aligned_alloc(64, R * C * 64 + 64);
  for (int i = 0; i < 16 * 1024; i++) inp[i] = 1e-3f * (i % 7);
  for (long i = 0; i < K * 16 * C; i++) w[i] = 1e-3f * (i % 5);
  double best = 1e9;
  for (int rep = 0; rep < 5; rep++) {
    double t0 = now();
    for (long it = 0; it < iters; it++) k(out, inp, w, K);
    double t = now() - t0; if (t < best) best = t;
  }
  double flops = 2.0 * 16 * R * C * K * iters;
  printf("%dx%d: %.1f GFLOP/s (ns per call %.2f)\n", R, C, flops / best * 1e-9, best / iters * 1e9);
  return 0;
}
