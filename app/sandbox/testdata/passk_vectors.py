#!/usr/bin/python3
"""Writes passk_vectors.json: pass@k of Chen et al. (2021) for (n, c, k)
triples, evaluated with numpy in the product form that
openai/human-eval human_eval/evaluation.py (estimate_pass_at_k) uses, and
exactly with math.comb as 1 - C(n-c, k) / C(n, k).

Run with Debian's interpreter and python3-numpy:
    /usr/bin/python3 app/sandbox/testdata/passk_vectors.py > app/sandbox/testdata/passk_vectors.json
"""
import json
import math
from fractions import Fraction

import numpy as np


def numpy_form(n, c, k):
    if n - c < k:
        return 1.0
    factors = 1.0 - k / np.arange(n - c + 1, n + 1)
    return float(1.0 - np.prod(factors))


def exact(n, c, k):
    return float(1 - Fraction(math.comb(n - c, k), math.comb(n, k)))


cases = []
for n in (1, 2, 5, 10, 20, 37, 100):
    for c in sorted({0, 1, 2, n // 3, n // 2, n - 1, n}):
        if c < 0 or c > n:
            continue
        for k in (1, 2, 5, 10, 100):
            if k > n:
                continue
            cases.append({"n": n, "c": c, "k": k, "numpy": numpy_form(n, c, k), "exact": exact(n, c, k)})
print(json.dumps({"generator": "passk_vectors.py", "numpy": np.__version__, "cases": cases}, indent=1))
