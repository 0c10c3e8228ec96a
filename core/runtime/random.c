/* random.c — the runtime's generator: xoshiro256** seeded by splitmix64, uniforms and normals. */
#include <math.h>

#include "runtime.h"

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static uint64_t next(uint64_t *s) {
  uint64_t r = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return r;
}

void pr_manual_seed(pr_Runtime *rt, uint64_t seed) {
  /* splitmix64 spreads one seed over the four words, as xoshiro's authors advise */
  for (int i = 0; i < 4; i++) {
    uint64_t z = (seed += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    rt->rng[i] = z ^ (z >> 31);
  }
}

double pr_rand_uniform(pr_Runtime *rt) {
  return (double)(next(rt->rng) >> 11) * 0x1.0p-53;
}

double pr_rand_normal(pr_Runtime *rt) {
  /* Box-Muller; the second value is dropped to keep the generator's state simple */
  double u = pr_rand_uniform(rt), v = pr_rand_uniform(rt);
  return sqrt(-2.0 * log(1.0 - u)) * cos(2.0 * 3.14159265358979323846 * v);
}
