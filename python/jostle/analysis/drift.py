"""Drift: a node's value that moved and stayed moved, found in its own history
(docs/statistics.md, "Drift").

Each series is one node's one metric over time (analysis/history.py makes them), on the log
scale (a change is a ratio). Per series:

  1. its noise, sigma: the MAD of successive differences / sqrt(2) (scaled by 1.4826), which a
     step or a slope barely moves (one difference holds the step; a slope shifts them all by a
     little), floored at SIGMA_FLOOR;
  2. isolated spikes (a check that met a busy node): the first cusum.START values (the
     CUSUM's reference) are pulled back to within C_CLIP sigma of the running median of
     WINDOW points around them (from the first cusum.START + WINDOW values alone); each later value to within C_CLIP sigma_t of the median of
     the WINDOW values before it (sigma_t from the values before it: what the look on that
     day saw, the same at every later look); in the last WINDOW // 2 values a value beyond
     C_CLIP sigma of the end's median is replaced by it (two busy checks at a series' end,
     each clipped to C_CLIP sigma, made a drift of 97 of 200 stationary series of 128 days);
  3. the sequential test (analysis/cusum.py): Page's two-sided CUSUM of the cleaned values,
     each standardized against the mean of those before it and a sigma learned from them (at
     its upper bound); its p is the chance that a stationary
     series, looked at every day for a year of values as dense as its own, passes the height
     its path reached. A daily `jostle history` over a year is one test per series, not one a
     day: the path of the values already seen does not change (each day tested anew, 39-49%
     of stationary daily series drifted within a year: issue 45).

The false alarms are controlled over all the series tested at once by Holm's step-down
(family-wise error rate ALPHA a year: the chance of one false drift anywhere, over every node
and metric, within a year of daily looks, is at most ALPHA); a selected series is reported
when its change is at least MIN_EFFECT. Then its shape: a step at tau, or a slope from tau on (the one of the two whose
least squares fit is the closer), which gives the date (the first point after the change) and
the size (a step: the ratio of the medians after and before; a slope: its rate per week, and
where it has brought the value by the last point).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from . import cusum
from .stats import MAD_NORMAL, chi2_quantile
from .. import lazy

np = lazy.module("numpy")

ALPHA = 0.05
MIN_EFFECT = 0.03
MIN_SEGMENT = 3
WINDOW = 7
C_CLIP = 2.5
MIN_POINTS = cusum.START + WINDOW   # the CUSUM's reference, cleaned alone
SIGMA_FLOOR = 0.002       # 0.2%: values all alike (a simulation) would give sigma 0
SIGMA_CONFIDENCE = 0.90
METHOD = ("per node and metric, Page's CUSUM of the log values, each against the mean of "
          f"those before it (a value beyond {C_CLIP:g} sigma of the running median replaced by "
          "it, sigma from successive differences), its false alarms per year of looks, "
          "Holm over every series at alpha = {alpha} a year (family-wise)")


@dataclass
class Series:
    """One node's values of one metric, in time order (days: float days since the epoch)."""
    key: tuple
    node: str
    label: str
    unit: str
    better: str           # "higher" or "lower"
    days: list
    values: list
    times: list = field(default_factory=list)   # the values' times, as given (shown)
    cls: str = ""
    rows: list = field(default_factory=list)    # what each value came from (store rows)
    lo: list = field(default_factory=list)      # each value's 95% interval, where known
    hi: list = field(default_factory=list)


@dataclass
class Test:
    """A series' test: its p-value, the split, and its shape once selected."""
    series: Series
    p: float
    tau: int              # the first index after the change
    statistic: float
    sigma: float
    p_adjusted: float = math.nan
    selected: bool = False
    shape: str = ""       # "step" or "slope"
    change: float = math.nan      # relative: -0.18 for -18%
    per_week: float = math.nan    # a slope's relative rate per week
    since: object = None          # the time of the first point after the change
    since_range: tuple = (None, None)   # the earliest and latest the data allow
    n_after: int = 0
    alarmed: object = None        # the time its CUSUM passed the family's threshold
    path: object = None           # the CUSUM's height at each value from cusum.START

    @property
    def worse(self) -> bool:
        return (self.change < 0) == (self.series.better == "higher")

    def message(self) -> str:
        """`node c3 triad −18% since 2026-11-20 (5 checks; worse)`."""
        s = self.series
        lo, hi = (_day(t) for t in self.since_range)
        when = f"since {_day(self.since)}" + (f" (between {lo} and {hi})" if lo != hi else "")
        what = (f"{_pct(self.change, 0)} {when}" if self.shape == "step" else
                f"{_pct(self.per_week, 1)}/week {when}, {_pct(self.change, 0)} by the last")
        kind = "check" if s.key and len(s.key) > 1 and s.key[1] == "check" else "run"
        return (f"node {s.node} {s.label} {what} ({self.n_after} {kind}"
                f"{'' if self.n_after == 1 else 's'}; {'worse' if self.worse else 'better'})")

    def to_dict(self) -> dict:
        s = self.series

        def num(x, digits=4):
            return None if x is None or not math.isfinite(x) else round(float(x), digits)
        return {"node": s.node, "class": s.cls or None, "series": s.label, "unit": s.unit,
                "key": list(map(str, s.key)), "shape": self.shape, "since": _day(self.since),
                "since_range": [_day(t) for t in self.since_range],
                "change": num(self.change), "per_week": num(self.per_week),
                "points_after": self.n_after, "points": len(s.values), "worse": self.worse,
                "p": self.p, "p_holm": self.p_adjusted, "message": self.message()}


def _pct(x, digits) -> str:
    """+20%, −18% (a minus sign, as the issue's messages and a page print it)."""
    return f"{x:+.{digits}%}".replace("-", "−")


def _day(t) -> str:
    return str(t)[:10] if t is not None else "?"


def running_median(x, w=WINDOW):
    """The median of the W points around each point; the first and last W // 2 points take
    the median of the first and last W points (a window never shrinks at an end, where two
    spikes among three would be their own median)."""
    n = len(x)
    if n <= w:
        return np.full(n, float(np.median(x)))
    m = np.median(np.lib.stride_tricks.sliding_window_view(x, w), axis=1)
    h = w // 2
    return np.concatenate([np.full(h, m[0]), m, np.full(w - 1 - h, m[-1])])


def median(a) -> float:
    """np.median of a 1-D float array A, as a partition: a series' test takes tens of
    thousands of medians of a few dozen values, where np.median's checks cost more than the
    work (detect on a family of 384 series of 57 days: 1.26 s -> 0.65 s). NaN anywhere:
    np.median's NaN."""
    n = a.size
    k = n // 2
    p = np.partition(a, (k - 1, k) if n % 2 == 0 and n else k)
    m = float(p[k]) if n % 2 else 0.5 * (float(p[k - 1]) + float(p[k]))
    return m if m == m and not math.isnan(float(p[-1])) else float(np.median(a))


def sigma_of(x) -> float:
    """The noise of log values X: MAD of successive differences / sqrt(2), floored."""
    d = np.diff(x)
    if d.size < 2:
        return SIGMA_FLOOR
    s = MAD_NORMAL * median(np.abs(d - median(d))) / math.sqrt(2)
    return max(s, SIGMA_FLOOR)


def sigma_upper(y) -> float:
    """The noise of cleaned log values Y (the standard deviation of their successive
    differences / sqrt 2: the clipping bounds what a spike or a step puts in it) at the upper
    end of its one-sided SIGMA_CONFIDENCE interval: a CUSUM standardized by a sigma learned
    from few values passes its threshold too often (the MAD of 19 differences was a third of
    the truth in one series of 200, and made a drift)."""
    d = np.diff(y)
    if d.size < 3:
        return SIGMA_FLOOR
    df = d.size - 1
    s = max(float(np.std(d, ddof=1)) / math.sqrt(2), SIGMA_FLOOR)
    return s * math.sqrt(df / chi2_quantile(1 - SIGMA_CONFIDENCE, df))


def cleaned(x, sigma):
    """X with each value pulled to within C_CLIP sigma of its running median; in the first and
    last WINDOW // 2 values, one beyond C_CLIP sigma of the end's own median (_end_median) is
    replaced by it instead: a change of fewer than 4 values at an end is not told from spikes,
    and a split or a hinge at an end weighs its last values the most (two busy checks at the
    end of 128, each clipped to 2.5 sigma, were a drift in 97 of 200 series)."""
    m = running_median(x, WINDOW)
    y = np.clip(x, m - C_CLIP * sigma, m + C_CLIP * sigma)
    h = min(WINDOW // 2, len(x) // 2)
    if len(x) < 2 * WINDOW or h < 1:
        return y
    for idx in (np.arange(h), np.arange(len(x) - h, len(x))):
        window = x[:WINDOW] if idx[0] == 0 else x[-WINDOW:]
        c = _end_median(window, sigma)
        far = np.abs(x[idx] - c) > C_CLIP * sigma
        y[idx[far]] = c
    return y


def _end_median(w, sigma) -> float:
    """The median of the WINDOW values W at an end without its spikes: the value farthest
    from the median of those left, while beyond C_CLIP sigma of it, left out, at most
    WINDOW // 2 of them (4 values or more that agree are a change, never spikes)."""
    w = list(w)
    for _ in range(WINDOW // 2):
        c = float(np.median(w))
        i = int(np.argmax(np.abs(np.asarray(w) - c)))
        if abs(w[i] - c) <= C_CLIP * sigma:
            break
        w.pop(i)
    return float(np.median(w))


def test_series(s: Series) -> Test:
    """The sequential test of one series (its values > 0); p = 1 when too short to tell."""
    x = np.log(np.asarray(s.values, dtype=float))
    n = len(x)
    if n < MIN_POINTS:
        return Test(s, 1.0, n, 0.0, math.nan)
    sigma = sigma_of(x)
    y = causal_cleaned(x, cusum.trailing(x, sigma_of), sigma)
    # a sigma learned from the values before each one, at its upper bound
    c = cusum.path(cusum.standardized(y, cusum.trailing(y, sigma_upper)))
    i = int(np.argmax(c))
    return Test(s, cusum.p_year(float(c[i]), per_year(s)), cusum.START + i, float(c[i]), sigma,
                path=c)


def causal_cleaned(x, sigmas, sigma):
    """X with each value from cusum.START pulled to within C_CLIP SIGMAS[t] of the median of
    the WINDOW values before it (what a look on that day saw: the same at every later look),
    the first cusum.START (the CUSUM's reference) and the last WINDOW // 2 as cleaned() treats
    them (SIGMA: the series')."""
    y = np.array(x, dtype=float)
    head = x[:cusum.START + WINDOW]     # the reference, its spikes out: what every look sees
    y[:cusum.START] = cleaned(head, sigma_of(head))[:cusum.START]
    for t in range(cusum.START, len(x)):
        m = median(x[max(0, t - WINDOW):t])
        y[t] = min(max(x[t], m - C_CLIP * sigmas[t]), m + C_CLIP * sigmas[t])
    h = min(WINDOW // 2, len(x) // 2)
    if len(x) >= 2 * WINDOW and h >= 1:
        idx = np.arange(len(x) - h, len(x))
        c = _end_median(x[-WINDOW:], sigma)
        y[idx] = np.where(np.abs(x[idx] - c) > C_CLIP * sigma, c, y[idx])   # clipped too
    return y


def per_year(s: Series) -> float:
    """Values a year at the density of S (daily when it spans less than a day)."""
    span = float(s.days[-1] - s.days[0]) if len(s.days) > 1 else 0.0
    return 365.25 * ((len(s.days) - 1) / span if span >= 1 else 1.0)


def holm(tests, alpha=ALPHA):
    """Holm's step-down over TESTS (sets p_adjusted and selected)."""
    order = sorted(range(len(tests)), key=lambda i: tests[i].p)
    m, running, going = len(tests), 0.0, True
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * tests[i].p))
        tests[i].p_adjusted = running
        going = going and tests[i].p <= alpha / (m - rank)
        tests[i].selected = going


def _fits(x, d) -> tuple:
    """(splits, RSS of a step at each, RSS of a hinge at each, the hinge's slopes)."""
    n = len(x)
    taus = np.arange(MIN_SEGMENT, n - MIN_SEGMENT + 1)
    step, hinge, slopes = [], [], []
    for tau in taus:
        a, b = x[:tau], x[tau:]
        step.append(float(((a - a.mean()) ** 2).sum() + ((b - b.mean()) ** 2).sum()))
        # flat until the last point before tau, then a line
        A = np.column_stack([np.ones(n), np.maximum(0.0, d - d[tau - 1])])
        coef, *_ = np.linalg.lstsq(A, x, rcond=None)
        hinge.append(float(((A @ coef - x) ** 2).sum()))
        slopes.append(float(coef[1]))
    return taus, np.array(step), np.array(hinge), np.array(slopes)


def shape(test: Test):
    """Step or slope (the one whose least squares fit is the closer), the date, the size of a
    selected series' change, and the range of dates the data allow: the splits whose fit is
    within chi-square(1, 0.95) = 3.84 residual variances of the best (profile likelihood),
    for a slope's knee chi-square(1, 0.99) = 6.63 (at 0.95 the knee's range held the day
    planted in 35 of 40 of bench/drift_rates.py's slopes, at 0.99 in 38 of 40)."""
    s = test.series
    x = cleaned(np.log(np.asarray(s.values, dtype=float)), test.sigma)
    d = np.asarray(s.days, dtype=float)
    n = len(x)
    taus, step, hinge, slopes = _fits(x, d)
    kind = "step" if step.min() <= hinge.min() else "slope"
    rss = step if kind == "step" else hinge
    i = int(np.argmin(rss))
    tau = int(taus[i])
    var = max(float(rss[i]) / max(1, n - 3), 1e-12)
    near = taus[rss <= rss[i] + (3.84 if kind == "step" else 6.63) * var]
    times = s.times if s.times else list(d)
    test.shape, test.tau, test.n_after = kind, tau, n - tau
    test.since = times[tau]
    test.since_range = (times[int(near.min())], times[int(near.max())])
    if kind == "step":
        test.change = math.exp(float(np.median(x[tau:]) - np.median(x[:tau]))) - 1
    else:
        b = float(slopes[i])
        test.per_week = math.exp(7 * b) - 1
        test.change = math.exp(b * (d[-1] - d[tau - 1])) - 1


def detect(series, alpha=ALPHA, min_effect=MIN_EFFECT) -> tuple:
    """(drifts: the selected tests whose change is at least MIN_EFFECT, strongest first;
    every test, the series too short to tell left out)."""
    tests = [test_series(s) for s in series]
    tests = [t for t in tests if len(t.series.values) >= MIN_POINTS]
    holm(tests, alpha)
    found = []
    for t in tests:
        if t.selected:
            shape(t)
            h = cusum.threshold(alpha / len(tests), per_year(t.series))
            first = int(np.argmax(t.path >= min(h, t.statistic)))
            times = t.series.times or t.series.days
            t.alarmed = times[cusum.START + first]
            if abs(t.change) >= min_effect:
                found.append(t)
    found.sort(key=lambda t: (t.p, -abs(t.change)))
    return found, tests
