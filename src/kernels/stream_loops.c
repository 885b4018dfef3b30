/* The STREAM loops, copy and triad, per instruction set and kind of store
 * (kernels/stream_loops.h): what the copy and triad kernels and the node's probe sweep. */
#include "kernels/stream_loops.h"

#include <stdint.h>

const char *const jt_stores_names[] = {"normal", "nt", NULL};

/* Scalar head (until the destination is aligned for the vector stores) and tail. */
static void copy_c(double *restrict b, const double *restrict a, size_t n)
{
    for (size_t i = 0; i < n; i++)
        b[i] = a[i];
}

static void triad_c(double *restrict c, const double *restrict a, const double *restrict b,
                    double s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        c[i] = a[i] + s * b[i];
}

/* Elements before p is aligned to `align` bytes (at most n). */
static size_t head(const double *p, size_t n, size_t align)
{
    size_t h = ((align - ((uintptr_t)p & (align - 1))) & (align - 1)) / sizeof(double);
    return h < n ? h : n;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

/* Four vectors (a 128-byte block, two cache lines) per iteration, as likwid-bench's AVX
 * kernels unroll: enough independent loads in flight to cover the memory latency.  The store
 * kind is loop-invariant: -O3 unswitches the loop into one per kind (checked with objdump). */
#define STORE256(p, x) (nt ? _mm256_stream_pd(p, x) : _mm256_store_pd(p, x))
#define STORE128(p, x) (nt ? _mm_stream_pd(p, x) : _mm_store_pd(p, x))

__attribute__((target("avx2,fma"))) static void copy_avx2(double *restrict b,
                                                         const double *restrict a, size_t n,
                                                         int nt)
{
    size_t i = head(b, n, 32), end = i + (n - i) / 16 * 16;
    copy_c(b, a, i);
    for (; i < end; i += 16) {
        __m256d x0 = _mm256_loadu_pd(a + i), x1 = _mm256_loadu_pd(a + i + 4);
        __m256d x2 = _mm256_loadu_pd(a + i + 8), x3 = _mm256_loadu_pd(a + i + 12);
        STORE256(b + i, x0), STORE256(b + i + 4, x1);
        STORE256(b + i + 8, x2), STORE256(b + i + 12, x3);
    }
    if (nt)
        _mm_sfence(); /* the streamed lines reach memory before the sweep counts as done */
    copy_c(b + end, a + end, n - end);
}

__attribute__((target("avx2,fma"))) static void triad_avx2(double *restrict c,
                                                          const double *restrict a,
                                                          const double *restrict b, double s,
                                                          size_t n, int nt)
{
    size_t i = head(c, n, 32), end = i + (n - i) / 16 * 16;
    triad_c(c, a, b, s, i);
    const __m256d vs = _mm256_set1_pd(s);
#define TRIAD4(k) _mm256_fmadd_pd(vs, _mm256_loadu_pd(b + i + (k)), _mm256_loadu_pd(a + i + (k)))
    for (; i < end; i += 16) {
        __m256d x0 = TRIAD4(0), x1 = TRIAD4(4), x2 = TRIAD4(8), x3 = TRIAD4(12);
        STORE256(c + i, x0), STORE256(c + i + 4, x1);
        STORE256(c + i + 8, x2), STORE256(c + i + 12, x3);
    }
#undef TRIAD4
    if (nt)
        _mm_sfence();
    triad_c(c + end, a + end, b + end, s, n - end);
}

/* SSE2 is in every x86-64: the fallback, same structure at half the width. */
static void copy_sse2(double *restrict b, const double *restrict a, size_t n, int nt)
{
    size_t i = head(b, n, 16), end = i + (n - i) / 8 * 8;
    copy_c(b, a, i);
    for (; i < end; i += 8) {
        __m128d x0 = _mm_loadu_pd(a + i), x1 = _mm_loadu_pd(a + i + 2);
        __m128d x2 = _mm_loadu_pd(a + i + 4), x3 = _mm_loadu_pd(a + i + 6);
        STORE128(b + i, x0), STORE128(b + i + 2, x1);
        STORE128(b + i + 4, x2), STORE128(b + i + 6, x3);
    }
    if (nt)
        _mm_sfence();
    copy_c(b + end, a + end, n - end);
}

static void triad_sse2(double *restrict c, const double *restrict a, const double *restrict b,
                       double s, size_t n, int nt)
{
    size_t i = head(c, n, 16), end = i + (n - i) / 8 * 8;
    triad_c(c, a, b, s, i);
    const __m128d vs = _mm_set1_pd(s);
#define TRIAD2(k) _mm_add_pd(_mm_loadu_pd(a + i + (k)), _mm_mul_pd(vs, _mm_loadu_pd(b + i + (k))))
    for (; i < end; i += 8) {
        __m128d x0 = TRIAD2(0), x1 = TRIAD2(2), x2 = TRIAD2(4), x3 = TRIAD2(6);
        STORE128(c + i, x0), STORE128(c + i + 2, x1);
        STORE128(c + i + 4, x2), STORE128(c + i + 6, x3);
    }
#undef TRIAD2
    if (nt)
        _mm_sfence();
    triad_c(c + end, a + end, b + end, s, n - end);
}

static int have_avx2(void)
{
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

const char *jt_streams_isa(void) { return have_avx2() ? "avx2+fma" : "sse2"; }
int jt_streams_nt_available(void) { return 1; }

void jt_stream_copy(double *restrict b, const double *restrict a, size_t n, int stores)
{
    int nt = stores == JT_STORES_NT;
    if (have_avx2())
        copy_avx2(b, a, n, nt);
    else
        copy_sse2(b, a, n, nt);
}

void jt_stream_triad(double *restrict c, const double *restrict a, const double *restrict b,
                     double s, size_t n, int stores)
{
    int nt = stores == JT_STORES_NT;
    if (have_avx2())
        triad_avx2(c, a, b, s, n, nt);
    else
        triad_sse2(c, a, b, s, n, nt);
}

#else /* no x86 vectors: the compiler's own loops, normal stores only */

const char *jt_streams_isa(void) { return "c"; }
int jt_streams_nt_available(void) { return 0; }

void jt_stream_copy(double *restrict b, const double *restrict a, size_t n, int stores)
{
    (void)stores, (void)head;
    copy_c(b, a, n);
}

void jt_stream_triad(double *restrict c, const double *restrict a, const double *restrict b,
                     double s, size_t n, int stores)
{
    (void)stores;
    triad_c(c, a, b, s, n);
}

#endif
