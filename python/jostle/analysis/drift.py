"""Drift: a node's value that moved and stayed moved, found in its own history
(docs/statistics.md, "Drift").

Each series is one node's one metric over time (analysis/history.py makes them), on the log
scale (a change is a ratio). Per series:

  1. its noise, sigma: the MAD of successive differences / sqrt(2) (scaled by 1.4826), which a
     step or a slope barely moves (one difference holds the step; a slope shifts them all by a
     little), floored at SIGMA_FLOOR;
  2. isolated spikes (a check that met a busy node) are pulled back to within C_CLIP sigma of
     the running median of WINDOW points, which follows a step and a slope of 4 values or
     more but not one or two; in the first and last WINDOW // 2 values, where the window
     cannot be centred and a change's split puts its most weight, such a value is replaced
     by the median of the end's others instead (two busy checks at a series' end, each clipped to
     C_CLIP sigma, made a drift of 97 of 200 stationary series of 128 days);
  3. the standardized CUSUM of the cleaned values: for each split tau with at least
     MIN_SEGMENT points on each side, T(tau) = |S(tau) - tau/n S(n)| / (sigma sqrt(tau (n -
     tau) / n)), the two-sample z of the means before and after tau; T = the largest;
  4. its p-value: Student's t tail at T with the degrees of freedom the MAD is worth (its
     efficiency, 0.37, times n - 1), times the number of splits tried (Bonferroni over tau:
     valid whatever the correlation between splits, conservative).

The false alarms are controlled over all the series tested at once by Holm's step-down
(family-wise error rate ALPHA: the chance of one false drift anywhere, over every node and
metric, is at most ALPHA); a selected series is reported when its change is at least
MIN_EFFECT. Then its shape: a step at tau, or a slope from tau on (the one of the two whose
least squares fit is the closer), which gives the date (the first point after the change) and
the size (a step: the ratio of the medians after and before; a slope: its rate per week, and
where it has brought the value by the last point).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .stats import MAD_NORMAL, t_sf
from .. import lazy

np = lazy.module("numpy")

ALPHA = 0.05
MIN_EFFECT = 0.03
MIN_POINTS = 8
MIN_SEGMENT = 3
WINDOW = 7
C_CLIP = 2.5
SIGMA_FLOOR = 0.002       # 0.2%: values all alike (a simulation) would give sigma 0
MAD_EFFICIENCY = 0.37     # the MAD's asymptotic efficiency at the normal
METHOD = ("per node and metric, the standardized CUSUM of the log values (a value beyond "
          f"{C_CLIP:g} sigma of the running median replaced by it, sigma from successive "
          "differences), "
          "Bonferroni over the split, Holm over every series at alpha = {alpha} (family-wise)")


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


def sigma_of(x) -> float:
    """The noise of log values X: MAD of successive differences / sqrt(2), floored."""
    d = np.diff(x)
    if d.size < 2:
        return SIGMA_FLOOR
    s = MAD_NORMAL * float(np.median(np.abs(d - np.median(d)))) / math.sqrt(2)
    return max(s, SIGMA_FLOOR)


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
    """The CUSUM test of one series (its values > 0); p = 1 when too short to tell."""
    x = np.log(np.asarray(s.values, dtype=float))
    n = len(x)
    if n < MIN_POINTS:
        return Test(s, 1.0, n, 0.0, math.nan)
    sigma = sigma_of(x)
    y = cleaned(x, sigma)
    taus = np.arange(MIN_SEGMENT, n - MIN_SEGMENT + 1)
    yc = y - y.mean()
    step = np.abs(np.cumsum(yc)[taus - 1]) / (sigma * np.sqrt(taus * (n - taus) / n))
    # the hinge: flat, then a line from the point before tau on (one column per tau)
    d = np.asarray(s.days, dtype=float)
    h = np.maximum(0.0, d[:, None] - d[taus - 1][None, :])
    h -= h.mean(axis=0)
    norm = np.sqrt((h * h).sum(axis=0))
    with np.errstate(invalid="ignore", divide="ignore"):
        hinge = np.where(norm > 0, np.abs(yc @ h) / (sigma * norm), 0.0)
    t = np.maximum(step, hinge)
    i = int(np.argmax(t))
    df = max(1.0, MAD_EFFICIENCY * (n - 1))
    p = min(1.0, 2 * len(taus) * 2 * t_sf(float(t[i]), df))
    return Test(s, p, int(taus[i]), float(t[i]), sigma)


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
            if abs(t.change) >= min_effect:
                found.append(t)
    found.sort(key=lambda t: (t.p, -abs(t.change)))
    return found, tests
