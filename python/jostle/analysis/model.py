"""The contention model: how one NUMA node's memory is shared between computation and the
network transfer, fitted from a campaign's contention records (docs/model.md has the equations
and their sources).

Per configuration (kernel, stores, ai, where the comm buffers and the compute data live):

    C(n)  = min(n·b, Bc)                 compute alone with n cores per rank (GB/s)
    M(s)                                  comm alone at message size s (GB/s)
    demand: C(n) + γ·M(s) ≤ Cap           → both get what they get alone
    else fractions f_c, f_m served with   f_m / f_c = w   and   f_c·C(n) + γ·f_m·M(s) = Cap
         (each at most 1; the other side then takes what is left)

b, Bc, M, γ, Cap and w are fitted; w is the split rule (1: in proportion to demand, > 1 the
transfer is favoured, < 1 computation is). Uncertainty is a parametric bootstrap over the
records' confidence intervals. The model never measures: it reads records (observations()).
"""

from __future__ import annotations

import functools
import math
import time

from ..errors import UsageError
from .. import lazy
np = lazy.module("numpy")
pd = lazy.module("pandas")

VERSION = 1
GB = 1e9
# Below this a message is latency-bound (Swartvagher 2021, fig. 3: the network starts to
# suffer from 64 KiB); its bandwidth is not the memory's to share and is left out of the fit.
BANDWIDTH_BOUND = 64 << 10
KEY = ["kernel", "stores", "ai", "comm_mem", "compute_mem"]
MIN_REL = 0.005           # a CI narrower than 0.5% is not believed (noise of the machine)
DRAWS = 200               # bootstrap fits
ONE_NODE = "not identifiable on this machine: one NUMA node"


class NotIdentifiable(Exception):
    """What the records cannot tell; the message says why."""


# ---------------------------------------------------------------- records → observations


@functools.cache
def _w_grid():
    """The weights w the fit tries: 1e-3 to 1e3, log-spaced (made on first use: numpy is)."""
    return np.exp(np.linspace(math.log(1e-3), math.log(1e3), 1201))

def _placement(run, role, numa_nodes, nic_numa):
    """'near' or 'far' (the NIC's NUMA node or not) of ROLE's memory, as bound (read back)."""
    if numa_nodes <= 1:
        return "near"         # one node: everything is on the NIC's node
    b = (run.meta.get("binding") or {}).get("0") or {}
    got = b.get(role)
    got = got[0] if isinstance(got, list) and got else got
    node = (got or {}).get("mem_numa")
    if node is None or nic_numa is None:
        return "unknown"
    return "near" if node == nic_numa else "far"


def machine_of(run) -> dict:
    m = run.meta.get("machine") or {}
    return {"cpu": m.get("cpu"), "cores": m.get("cores"), "numa_nodes": m.get("numa_nodes") or 1,
            "nics": m.get("nics") or [], "hosts": sorted(set(run.hosts)),
            "mpi": (run.meta.get("mpi") or {}).get("library"),
            "topology": m.get("topology")}


def _nic_numa(run):
    want = (run.meta.get("options") or {}).get("nic")
    for n in (run.meta.get("machine") or {}).get("nics") or []:
        if n.get("numa") is not None and (want is None or n.get("name") == want):
            return n["numa"]
    return None


def observations(runs) -> pd.DataFrame:
    """One row per measured bandwidth of the contention runs: compute (aggregate
    compute_throughput) and comm (bandwidth), alone and together, in GB/s, with `rel` the
    relative sd from the 95% CI of the median (of the per-sweep distribution for compute, whose
    aggregate has one sample per phase)."""
    rows = []
    for r in runs:
        if r.benchmark != "contention" or r.points.empty or "phase" not in r.points:
            continue
        mach = machine_of(r)
        nic = _nic_numa(r)
        place = {"comm_mem": _placement(r, "comm", mach["numa_nodes"], nic),
                 "compute_mem": _placement(r, "compute", mach["numa_nodes"], nic)}
        df = r.points
        for (params, d) in df.groupby([c for c in r.param_names if c != "rep"], dropna=False):
            p = dict(zip([c for c in r.param_names if c != "rep"], params))
            by = {m: g for m, g in d.groupby("metric")}
            base = {"run": r.name, "kernel": p.get("kernel"), "stores": p.get("stores", "normal"),
                    "ai": float(p.get("ai") or 0), "cores": int(p.get("compute_cores", 0)),
                    "size": int(p.get("size", 0)), **place,
                    "phase": "together" if p.get("phase") == "together" else "alone"}
            if "compute_throughput" in by and base["cores"] > 0:
                spread = by.get("compute_bandwidth", by["compute_throughput"])
                rows.append({**base, "side": "compute", **_value(by["compute_throughput"], spread)})
            if "bandwidth" in by:
                rows.append({**base, "side": "comm", **_value(by["bandwidth"], by["bandwidth"])})
    df = pd.DataFrame(rows)
    if not df.empty:
        # A run without compute threads records ai 0: it belongs to its placement's kernel.
        same = ["kernel", "stores", "comm_mem", "compute_mem"]
        ai = df[df.cores > 0].groupby(same)["ai"].agg(lambda a: a.iloc[0] if a.nunique() == 1
                                                       else math.nan)
        for k, v in ai.items():
            m = (df.cores == 0) & (df[same] == pd.Series(dict(zip(same, k)))).all(axis=1)
            if v == v:
                df.loc[m, "ai"] = v
        # Repeated measurements of one quantity alone (comm in every run, compute at every
        # size) scatter more than one CI says on a busy machine: that scatter is a floor.
        al = df.phase == "alone"
        one = df[al].assign(q=np.where(df[al].side == "comm", df[al]["size"], df[al].cores))
        sd = one.groupby([*KEY, "side", "q"], dropna=False).value.transform(
            lambda v: v.std(ddof=1) / v.mean() if len(v) > 1 else 0.0)
        df.loc[al, "rel"] = np.maximum(df.loc[al, "rel"], sd.fillna(0.0))
    return df


def _scale(unit) -> float:
    return {"GB/s": 1.0, "MB/s": 1e-3, "B/s": 1e-9}.get(unit, math.nan)


def _value(vals, spread) -> dict:
    """Median over repetitions, in GB/s; rel from the CI of SPREAD (half-width / 1.96)."""
    k = _scale(vals.unit.iloc[0])
    v = float(vals["median"].median()) * k
    hw = ((spread.ci95_hi - spread.ci95_lo) / 2 / spread["median"]).replace([np.inf], np.nan)
    rel = float(hw.max()) / 1.96 if hw.notna().any() else MIN_REL
    return {"value": v, "rel": max(rel, MIN_REL), "lo": v * (1 - 1.96 * rel),
            "hi": v * (1 + 1.96 * rel)}


# ---------------------------------------------------------------- the fit

def fit_alone_compute(n, y, rel) -> dict:
    """C(n) = min(n·b, Bc) by weighted least squares; the plateau is kept only when it lowers
    chi² by more than its cost (AIC: 2 per parameter). Bc is None when it was not reached."""
    n, y, wt = np.asarray(n, float), np.asarray(y, float), 1 / (np.asarray(y) * rel) ** 2
    if len(n) == 0:
        raise NotIdentifiable("no compute-alone point: run compute with ≥ 1 core")
    best = None
    for cut in sorted(set(n)):
        lin, flat = n <= cut, n > cut
        b = float((wt[lin] * n[lin] * y[lin]).sum() / (wt[lin] * n[lin] ** 2).sum())
        bc = float((wt[flat] * y[flat]).sum() / wt[flat].sum()) if flat.any() else None
        if bc is not None and bc > b * n[flat].min():
            continue          # not a plateau: the line is already below it there
        pred = np.minimum(n * b, bc if bc is not None else np.inf)
        aic = float((wt * (pred - y) ** 2).sum()) + 2 * (2 if bc is not None else 1)
        if best is None or aic < best[0]:
            best = (aic, b, bc)
    return {"b": best[1], "Bc": best[2]}


def compute_alone(p, n) -> float:
    return min(n * p["b"], p["Bc"] if p["Bc"] is not None else math.inf)


def share(p, dc, m):
    """(compute, comm) bandwidths together, from their demands alone DC and M (GB/s)."""
    g, cap, w = p["gamma"], p["Cap"], p["w"]
    if cap is None or dc + g * m <= cap:
        return dc, m
    fc = cap / (dc + w * g * m)
    fm = w * fc
    if fm > 1:
        fm, fc = 1.0, max(cap - g * m, 0.0) / dc
    elif fc > 1:
        fc, fm = 1.0, max(cap - dc, 0.0) / (g * m)
    return fc * dc, fm * m


def _contended(tog, p, comm):
    """Together points where either side lost more than its noise against the model alone."""
    out = []
    for (n, s), d in tog.groupby(["cores", "size"]):
        sides = dict(zip(d.side, zip(d.value, d.rel)))
        if "compute" not in sides or "comm" not in sides or s not in comm:
            continue
        dc, m = compute_alone(p, n), comm[s]
        (xc, rc), (xm, rm) = sides["compute"], sides["comm"]
        if min(xc / dc, xm / m) < 1 - max(0.02, 2 * math.hypot(rc, rm)):
            out.append((n, s, dc, m, xc, xm, rc, rm))
    return out


def _line(xc, xm, sc, sm):
    """Cap and γ of the saturated points' line xc + γ·xm = Cap, both sides noisy (Deming /
    effective-variance regression: plain least squares would bias γ towards 0)."""
    def best(gs):
        wt = 1 / (sc ** 2 + gs[:, None] ** 2 * sm ** 2)
        y = xc + gs[:, None] * xm
        cap = (wt * y).sum(1) / wt.sum(1)
        k = int(np.argmin((wt * (y - cap[:, None]) ** 2).sum(1)))
        return gs[k], cap[k]
    A = np.stack([np.ones_like(xm), -xm], 1) / sc[:, None]
    g0 = max(float(np.linalg.lstsq(A, xc / sc, rcond=None)[0][1]), 0.0)
    grid = np.linspace(0, 3 * g0 + 1, 3001)
    g, _ = best(grid)
    step = grid[1] - grid[0]
    g, cap = best(np.linspace(max(g - step, 0), g + step, 201))
    return float(cap), float(g)


def _split(dc, m, g, cap, w):
    """share() for arrays: DC, M of the points (1-D) against every split W (1-D)."""
    w = w[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):   # the branches not taken may divide by 0
        return _split_fractions(dc, m, g, cap, w)


def _split_fractions(dc, m, g, cap, w):
    fc = cap / (dc + w * g * m)
    fm = w * fc
    over_m, over_c = fm > 1, fc > 1
    fc = np.where(over_m, np.maximum(cap - g * m, 0) / dc, np.where(over_c, 1.0, fc))
    fm = np.where(over_m, 1.0, np.where(over_c, np.maximum(cap - dc, 0) / (g * m), fm))
    under = dc + g * m <= cap
    return np.where(under, dc, fc * dc), np.where(under, m, fm * m)


def fit_group(obs: pd.DataFrame) -> dict:
    """Parameters of one configuration from its observations (values in GB/s)."""
    al, tog = obs[obs.phase == "alone"], obs[obs.phase == "together"]
    c = al[al.side == "compute"]
    p = fit_alone_compute(c.cores, c.value, c.rel)
    comm = {}
    for s, d in al[(al.side == "comm") & (al["size"] >= BANDWIDTH_BOUND)].groupby("size"):
        wt = 1 / (d.value * d.rel) ** 2
        comm[int(s)] = float((wt * d.value).sum() / wt.sum())
    p["M"] = comm
    pts = _contended(tog[tog["size"] >= BANDWIDTH_BOUND], p, comm)
    p.update(gamma=None, Cap=None, w=None)
    if not pts or (len(pts) < 2 and p["Bc"] is None):
        p["why"] = (f"{len(pts)} together point(s) show contention; the split needs ≥ 2, or 1 "
                    "and compute saturating alone (more cores or message sizes together)")
        return p
    _, _, dc, m, xc, xm, rc, rm = map(np.array, zip(*pts))
    if len(pts) >= 2 and np.ptp(xm) > 0:
        cap, gamma = _line(xc, xm, xc * rc, xm * rm)
    elif p["Bc"] is not None:
        # One point of the line: its other end is what computation alone saturates at.
        cap = p["Bc"]
        gamma = float(np.mean((cap - xc) / xm))
    else:
        p["why"] = "the comm bandwidth together did not vary: γ and Cap cannot be told apart"
        return p
    p.update(gamma=max(float(gamma), 0.0), Cap=float(cap))
    # The split: w minimising the relative error of both sides over the contended points.
    pc, pm = _split(dc, m, p["gamma"], p["Cap"], _w_grid())
    err = (((pc - xc) / (xc * rc)) ** 2 + ((pm - xm) / (xm * rm)) ** 2).sum(1)
    p["w"] = float(_w_grid()[int(np.argmin(err))])
    return p


def predict_point(p, cores, size, phase="together"):
    """(compute, comm) in GB/s at CORES and SIZE; NotIdentifiable when the records cannot say."""
    dc = compute_alone(p, cores) if cores > 0 else 0.0
    m = p["M"].get(int(size)) if size >= BANDWIDTH_BOUND else None
    if m is None and size >= BANDWIDTH_BOUND:
        raise NotIdentifiable(f"size {size}: comm alone not measured; measured: "
                              f"{', '.join(map(str, sorted(p['M']))) or 'none'}")
    if phase == "alone":
        return dc, m
    if cores == 0 or m is None:
        return dc, m            # no compute, or a latency-bound message: nothing to share
    if p["Cap"] is None:
        raise NotIdentifiable(f"together: {p.get('why', 'no contended point')}")
    return share(p, dc, m)


def _draw(obs, rng):
    """The observations with each value redrawn within its CI (the bootstrap's resample)."""
    o = obs.copy()
    o["value"] = o.value * np.exp(rng.standard_normal(len(o)) * o.rel)   # stays > 0
    return o


def _stat(xs) -> dict:
    xs = np.array([x for x in xs if x is not None and math.isfinite(x)], float)
    if not len(xs):
        return {"sd": None, "ci95": None}
    return {"sd": float(xs.std(ddof=1)) if len(xs) > 1 else None,
            "ci95": [float(np.percentile(xs, 2.5)), float(np.percentile(xs, 97.5))]}


NAMES = {"b": "compute GB/s per core, alone (linear part)",
         "Bc": "compute GB/s at saturation, alone (None: not reached)",
         "gamma": "memory bytes the transfer draws per byte sent",
         "Cap": "GB/s the memory serves to both when saturated (compute + γ·comm)",
         "w": "split rule: served fraction of comm / of compute (1: proportional to demand)"}


def fit(obs: pd.DataFrame, draws=DRAWS, seed=0) -> list:
    """One entry per configuration: the parameters, their bootstrap uncertainty, the draws."""
    out = []
    rng = np.random.default_rng(seed)
    for key, g in obs.groupby(KEY, dropna=False):
        try:
            p = fit_group(g)
        except NotIdentifiable as e:
            out.append({**dict(zip(KEY, key)), "points": len(g), "identifiable": False,
                        "reason": str(e)})
            continue
        boot = []
        for _ in range(draws):
            try:
                boot.append(fit_group(_draw(g, rng)))
            except NotIdentifiable:
                pass
        params = {}
        for k in NAMES:
            params[k] = {"value": p[k], "what": NAMES[k],
                         **(_stat([q[k] for q in boot]) if p[k] is not None else
                            {"identifiable": False, "reason": p.get("why") if k != "Bc" else
                             "compute did not saturate over the measured cores"})}
        params["M"] = {str(s): {"value": v, "what": "comm GB/s alone",
                                **_stat([q["M"].get(s) for q in boot])} for s, v in p["M"].items()}
        out.append({**dict(zip(KEY, key)), "points": len(g), "runs": sorted(set(g.run)),
                    "cores": sorted(int(x) for x in set(g.cores)),
                    "sizes": sorted(int(x) for x in set(g["size"])),
                    "parameters": params, "raw": p,
                    "draws": [{k: q[k] for k in ("b", "Bc", "gamma", "Cap", "w", "M")} for q in boot]})
    return out


def document(runs, campaign, draws=DRAWS) -> dict:
    """The model as JSON: configurations, machine, campaign, and what cannot be identified."""
    obs = observations(runs)
    if obs.empty:
        raise UsageError(f"campaign '{campaign}' holds no contention run; allowed: a directory "
                         "made by `jostle model calibrate` or `jostle contention fig1`")
    con = [r for r in runs if r.benchmark == "contention"]
    mach = machine_of(con[0])
    limits = []
    if mach["numa_nodes"] <= 1:
        limits += [{"what": "comm-mem far", "reason": ONE_NODE},
                   {"what": "compute-mem far", "reason": ONE_NODE},
                   {"what": "NIC locality gain", "reason": ONE_NODE}]
    if any("oversubscribed" in r.caveats for r in con):
        limits.append({"what": "memory bandwidth", "reason": "runs oversubscribed (more bound "
                       "threads than cores): together, threads also share cores, so the split "
                       "measures CPU time as much as memory"})
    return {"model": "jostle contention model", "version": VERSION, "campaign": campaign,
            "fitted": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "unit": "GB/s (1e9 B/s)",
            "equations": "docs/model.md", "machine": mach, "runs": sorted(set(obs.run)),
            "configurations": fit(obs, draws), "not_identifiable": limits}


# ---------------------------------------------------------------- using a fitted model

def configuration(doc, kernel=None, comm_mem="near", compute_mem="near", stores=None, ai=None):
    one = doc["machine"]["numa_nodes"] <= 1
    for side, v in (("comm-mem", comm_mem), ("compute-mem", compute_mem)):
        if v == "far" and one:
            raise NotIdentifiable(f"{side} far: {ONE_NODE}")
    cands = [c for c in doc["configurations"] if "raw" in c
             if (kernel is None or c["kernel"] == kernel) and c["comm_mem"] == comm_mem
             and c["compute_mem"] == compute_mem and (stores is None or c["stores"] == stores)
             and (ai is None or math.isclose(c["ai"], ai))]
    if not cands:
        have = sorted({f"{c['kernel']} comm-mem {c['comm_mem']} compute-mem {c['compute_mem']}"
                       for c in doc["configurations"]})
        raise NotIdentifiable(f"kernel {kernel} with comm-mem {comm_mem}, compute-mem "
                              f"{compute_mem}: not measured in this campaign; measured: "
                              + "; ".join(have))
    return cands[0]


def _ints(p) -> dict:
    """Parameters as fitted: JSON made the sizes of M strings."""
    return {**p, "M": {int(k): v for k, v in p["M"].items()}}


def predict(cfg, cores, size) -> dict:
    """Compute and comm bandwidth together at CORES and SIZE, with the bootstrap's 95% range."""
    raw = _ints(cfg["raw"])
    c, m = predict_point(raw, cores, size)
    ca, ma = predict_point(raw, cores, size, "alone")
    samples = []
    for q in map(_ints, cfg["draws"]):
        try:
            samples.append(predict_point(q, cores, size))
        except NotIdentifiable:
            pass
    out = {"cores": cores, "size": size}
    for i, (name, v, alone) in enumerate((("compute", c, ca), ("comm", m, ma))):
        xs = [s[i] for s in samples if s[i] is not None]
        out[name] = {"together_GBps": v, "alone_GBps": alone,
                     "ci95": [float(np.percentile(xs, 2.5)), float(np.percentile(xs, 97.5))]
                     if xs and v is not None else None,
                     "loss": (1 - v / alone) if v is not None and alone else None}
    return out


def check(obs: pd.DataFrame) -> pd.DataFrame:
    """Leave one out: every measured point predicted by the model fitted without it."""
    rows = []
    for key, g in obs.groupby(KEY, dropna=False):
        for i in g.index:
            o = g.loc[i]
            if o.side == "comm" and o["size"] < BANDWIDTH_BOUND:
                continue       # latency-bound: outside the model (module docstring)
            pred, why = math.nan, ""
            try:
                p = fit_group(g.drop(index=i))
                c, m = predict_point(p, int(o.cores), int(o["size"]), o.phase)
                pred = c if o.side == "compute" else m
                if pred is None:
                    pred, why = math.nan, "no other measurement of it"
            except NotIdentifiable as e:
                why = str(e)
            rows.append({**dict(zip(KEY, key)), "run": o.run, "phase": o.phase, "side": o.side,
                         "cores": int(o.cores), "size": int(o["size"]), "measured": o.value,
                         "lo": o.lo, "hi": o.hi, "predicted": pred,
                         "error": (pred - o.value) / o.value if pred == pred else math.nan,
                         "why": why})
    return pd.DataFrame(rows)


def errors(table: pd.DataFrame) -> dict:
    e = table.error.abs().dropna()
    return {"points": int(len(table)), "predicted": int(len(e)),
            "mean_abs_error": float(e.mean()) if len(e) else None,
            "max_abs_error": float(e.max()) if len(e) else None}
