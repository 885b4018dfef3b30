"""Drift found per node (analysis/drift.py): a step, a slope and a latency step found with their
dates on simulated series, spikes and quiet series left alone, and the false alarms held over
every series at once (Holm)."""

import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest

from jostle.analysis import drift, history
from jostle.records import store_checks, store_docs

pytestmark = pytest.mark.unit

BENCH = Path(__file__).resolve().parents[2] / "bench" / "drift_rates.py"


def series(values, node="n1", label="triad", better="higher", days=None):
    days = list(range(len(values))) if days is None else days
    times = [f"day{d}" for d in days]
    return drift.Series((node, "check", label, "GB/s", "{}"), node, label, "GB/s", better,
                        list(map(float, days)), list(map(float, values)), times)


def noisy(rng, n, sd=0.015, level=40.0):
    return level * np.exp(rng.normal(0, sd, n))


def test_a_step_is_found_with_its_date_and_size():
    rng = np.random.default_rng(1)
    v = noisy(rng, 60)
    v[42:] *= 0.82
    found, tests = drift.detect([series(v)])
    (t,) = found
    assert t.shape == "step" and t.since == "day42" and t.n_after == 18
    assert t.change == pytest.approx(-0.18, abs=0.01) and t.worse
    assert t.message().startswith("node n1 triad −18% since day42 (18 checks; worse)"[:18])


def test_five_checks_after_a_step_are_enough():
    rng = np.random.default_rng(2)
    v = noisy(rng, 60)
    v[55:] *= 0.82
    (t,) = drift.detect([series(v)])[0]
    assert t.since == "day55" and t.n_after == 5 and "(5 checks; worse)" in t.message()


def test_a_slope_is_found_and_called_a_slope():
    rng = np.random.default_rng(3)
    d = np.arange(60.0)
    v = noisy(rng, 60) * np.exp(np.maximum(0, d - 15) / 7 * math.log(0.99))
    (t,) = drift.detect([series(v)])[0]
    assert t.shape == "slope" and t.per_week == pytest.approx(-0.01, abs=0.004)
    lo, hi = (int(x[3:]) for x in t.since_range)
    assert lo - 1 <= 15 <= hi + 1


def test_a_latency_that_grows_is_worse():
    rng = np.random.default_rng(4)
    v = noisy(rng, 50, 0.03, 0.45)
    v[30:] *= 1.2
    (t,) = drift.detect([series(v, label="pingpong_latency", better="lower")])[0]
    assert t.worse and t.change == pytest.approx(0.2, abs=0.03) and t.since == "day30"


def test_spikes_and_short_series_are_not_drift():
    rng = np.random.default_rng(5)
    many = []
    for i in range(200):
        v = noisy(rng, 60, 0.03)
        spikes = rng.uniform(size=60) < 0.05
        v[spikes] *= rng.uniform(1.1, 2.0, spikes.sum())
        many.append(series(v, node=f"n{i}", better="lower"))
    v = noisy(rng, 60)
    v[-2:] *= 1.5                    # two spikes at the very end: not a change yet
    many.append(series(v, node="end"))
    many.append(series([40, 20, 40, 20, 40], node="short"))     # too short to tell
    found, tests = drift.detect(many)
    assert found == [] and len(tests) == 201


def _busy_end(seed, tail=(0.55, 0.8), sd=0.02, n=126):
    """N independent daily checks (log sd SD) and then TAIL: the last checks, busy."""
    rng = np.random.default_rng(seed)
    v = list(40.0 * np.exp(sd * rng.standard_normal(n)))
    v += [40.0 * f * math.exp(sd * rng.standard_normal()) for f in tail]
    return series(v, node="cn001")


def test_two_busy_checks_at_the_end_are_not_a_drift():
    # issue 50: 126 daily checks and two at x0.55 and x0.8; each clipped to 2.5 sigma, the two
    # weighed most by a hinge at the end made "triad -7.6%/week since 123" in 97 of 200 seeds
    drifted = [s for s in range(200) if drift.detect([_busy_end(s)])[0]]
    assert drifted == [], f"{len(drifted)} of 200 series called a drift"
    assert not any(drift.detect([_busy_end(s, ())])[0] for s in range(200))


@pytest.mark.parametrize("after, least", [(4, 180), (5, 195), (10, 200)])
def test_a_sustained_step_at_the_end_is_still_found(after, least):
    # a 10% step with AFTER checks at the end is found (4 checks: 195 of 200 seeds, 5: 198);
    # 3 are not told from spikes (6 of 200: docs/statistics.md, "Drift")
    found = 0
    for seed in range(200):
        s = _busy_end(seed, (), n=128)
        s.values[-after:] = [0.9 * v for v in s.values[-after:]]
        (t, *_) = drift.detect([s])[0] or [None]
        found += t is not None and t.worse and abs(t.change + 0.1) < 0.05 \
            and abs(t.n_after - after) <= 2
    assert found >= least, found


def test_holm_holds_the_family_not_each_series():
    # each of the last three alone is under 0.05; over the four, only the first is held
    t = [drift.Test(series([1] * 8), p, 4, 0.0, 0.01) for p in (0.001, 0.02, 0.03, 0.04)]
    drift.holm(t, 0.05)
    assert [x.selected for x in t] == [True, False, False, False]
    assert [round(x.p_adjusted, 3) for x in t] == [0.004, 0.06, 0.06, 0.06]


def test_the_null_false_alarm_rate_is_near_alpha():
    """Pure noise (with spikes), 384 series like the bench's, 10 times: a false drift in at most
    two of the 10 families (alpha = 0.05: 0.5 expected; at most 2 fails with probability
    about 0.01)."""
    rng = np.random.default_rng(6)
    families_with_one = 0
    for _ in range(10):
        fam = []
        for i in range(384):
            v = noisy(rng, 57, 0.02)
            spikes = rng.uniform(size=57) < 0.02
            v[spikes] *= rng.uniform(1.1, 2.0, spikes.sum())
            fam.append(series(v, node=f"n{i}", better="lower"))
        families_with_one += bool(drift.detect(fam)[0])
    assert families_with_one <= 2


def _bench():
    spec = importlib.util.spec_from_file_location("drift_rates", BENCH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_bench_simulation_through_check_records():
    """The bench's site (a smaller one): check records as the check writes them, read as
    the store would, the three planted drifts found on their nodes and nothing else."""
    bench = _bench()
    recs, planted = bench.simulate(3, nodes=16, days=60)
    docs = [store_checks.check_doc(r, "sim") for r in recs]
    v = history.view(store_docs.rows_from_docs(docs))
    res, false = bench.judge(v.drifts, planted, 60)
    assert false == []
    assert all(r["found"] and r["dated"] for r in res.values()), res
    assert len(v.tests) == 16 * 6


def test_the_cusum_threshold_holds_its_false_alarms_a_year():
    """Page's CUSUM at the h whose Siegmund rate is 5% a year: 365 standard normal values a
    series, at most 5% of 400 series pass it (the rate drift states per series per year)."""
    from jostle.analysis import cusum
    rng = np.random.default_rng(9)
    h = cusum.threshold(0.05, 365)
    assert cusum.p_year(h, 365) == pytest.approx(0.05, rel=1e-3)
    passed = sum(cusum.path(rng.normal(0, 1, 365)).max() >= h for _ in range(400))
    assert passed <= 20, passed
    # a shift of 2.5 sd passes it within a few values
    z = np.concatenate([rng.normal(0, 1, 100), rng.normal(2.5, 1, 10)])
    assert np.argmax(cusum.path(z) >= h) - 100 < 6


def test_a_10_percent_step_is_found_within_14_daily_looks():
    """Issue 45: a year of daily values (noise 2%, 2% busy checks), a 10% step on a day in the
    second half: looked at every day after it, found (worse, its size) within 14 days in >= 90%
    of 30 series (bench/drift_year.py: the stationary rate over a year of looks)."""
    rng = np.random.default_rng(10)
    found = 0
    for _ in range(30):
        x = rng.normal(0, 0.02, 365)
        busy = rng.uniform(size=365) < 0.02
        x[busy] -= np.log(rng.uniform(1.1, 2.0, busy.sum()))
        at = int(rng.integers(180, 340))
        x[at:] += math.log(0.9)
        v = 40.0 * np.exp(x)
        for n in range(at + 1, at + 15):
            hit = drift.detect([series(v[:n])])[0]
            if hit and hit[0].worse and abs(hit[0].change + 0.1) < 0.05:
                found += 1
                break
    assert found >= 27, found
