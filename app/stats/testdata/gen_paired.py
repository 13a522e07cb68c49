#!/usr/bin/python3
"""Reference vectors for app/stats/paired.go.

Run with Debian's packages (python3-statsmodels 0.13.5, python3-scipy 1.10.1,
python3-numpy 1.24.2):

    /usr/bin/python3 app/stats/testdata/gen_paired.py

mcnemar.tsv: b, c, statistic, p from statsmodels' mcnemar(table, exact=True)
for b+c < 25 and mcnemar(table, exact=False, correction=False) otherwise.

bootstrap.json: paired bootstrap cases. The resample indices are drawn with
numpy's default_rng(12345).choice(n, size=(R, n), replace=True), as
sacreBLEU's paired_bs draws them; the expected difference interval and p
follow sacreBLEU's _paired_bs_test and _compute_p_value for a metric that is
the mean of per-item scores (sacreBLEU is not packaged in Debian, so its
formulas are written out here): d = |mean(a) - mean(b)|, s = |a*_r - b*_r|
per resample, p = (#{s - mean(s) > d} + 1) / (R + 1); the interval is the
sorted resampled differences a*_r - b*_r at index R // 40 and R - R // 40 - 1
(sacreBLEU's estimate_ci order statistics).
"""
import json
import os

import numpy as np
from statsmodels.stats.contingency_tables import mcnemar

here = os.path.dirname(os.path.abspath(__file__))

with open(os.path.join(here, "mcnemar.tsv"), "w") as f:
    f.write("b\tc\tstatistic\tp\n")
    pairs = [(0, 0), (0, 1), (1, 0), (3, 3), (2, 9), (9, 2), (0, 24), (12, 12), (5, 19),
             (0, 25), (12, 13), (13, 12), (20, 30), (101, 121), (59, 33), (70, 59), (400, 350), (1000, 1100)]
    for b, c in pairs:
        exact = b + c < 25
        r = mcnemar([[0, b], [c, 0]], exact=exact, correction=False)
        f.write("%d\t%d\t%.17g\t%.17g\n" % (b, c, float(r.statistic), float(r.pvalue)))

cases = []
gen = np.random.default_rng(7)
specs = [
    ("binary, A better", (gen.random(30) < 0.8).astype(float), (gen.random(30) < 0.4).astype(float), 200),
    ("partial credit, close", np.round(gen.random(25), 2), np.round(gen.random(25), 2), 300),
    ("identical", np.array([0.5, 0.25, 1.0, 0.0, 0.75]), np.array([0.5, 0.25, 1.0, 0.0, 0.75]), 100),
]
for name, a, b, R in specs:
    n = len(a)
    rng = np.random.default_rng(12345)
    idx = rng.choice(n, size=(R, n), replace=True)
    sa, sb = a[idx].mean(axis=1), b[idx].mean(axis=1)
    diffs = np.sort(sa - sb)
    lo = R // 40
    d = abs(a.mean() - b.mean())
    s = np.abs(sa - sb)
    stats = s - s.mean()
    p = (np.sum(stats > d).item() + 1) / (R + 1)
    cases.append({"name": name, "a": a.tolist(), "b": b.tolist(), "resamples": R,
                  "indices": idx.tolist(), "mean": float(a.mean() - b.mean()),
                  "lo": float(diffs[lo]), "hi": float(diffs[R - lo - 1]), "p": float(p)})
with open(os.path.join(here, "bootstrap.json"), "w") as f:
    json.dump(cases, f)
