"""How long a sweep may take: the time-outs and progress estimates of a campaign's runs, from
jostle-bench's own defaults where a value is not given."""

from ..records import benchmarks


def estimate_sweep(sizes, min_reps=None, max_time=None, warmup=None, slow_gbps=0.5,
                   benchmark="pingpong") -> float:
    """Seconds a sweep takes at most: each point its repetitions at a pessimistic bandwidth
    (SLOW_GBPS, slower than any real link) plus the time cap that may follow them. What is
    not given is jostle-bench's own default for BENCHMARK."""
    def given(v, name, kind):
        return kind(benchmarks.default(benchmark, name)) if v is None else kind(v)
    reps = given(min_reps, "min-reps", int) + given(warmup, "warmup", int)
    cap = given(max_time, "max-time", float)
    return sum(reps * (2 * s / (slow_gbps * 1e9) + 50e-6) + cap for s in sizes)


def estimate_timeout(sizes, min_reps=None, max_time=None, warmup=None, slow_gbps=0.5,
                     benchmark="pingpong") -> float:
    """A generous time-out for a sweep: its estimate doubled, and a minute for MPI start-up.
    Hangs still end; slow-but-working runs do not."""
    return round(60 + 2 * estimate_sweep(sizes, min_reps, max_time, warmup, slow_gbps,
                                         benchmark))
