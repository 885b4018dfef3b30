/* The C tests' seeded random numbers: splitmix64 (Steele, Lea and Flood, "Fast splittable
 * pseudorandom number generators", OOPSLA 2014) in (0, 1), and standard normals by Box-Muller.
 * A test sets rng_state to its seed: every run prints the same numbers. */
#ifndef JT_TEST_RNG_H
#define JT_TEST_RNG_H

#include <math.h>
#include <stdint.h>

static uint64_t rng_state;

static inline double uniform(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return ((double)(z >> 11) + 0.5) / 9007199254740992.0;
}

static inline double normal(void)
{
    return sqrt(-2 * log(uniform())) * cos(2 * M_PI * uniform());
}

#endif
