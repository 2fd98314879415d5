# differential case: {"seed": 32, "kind": "function", "grad": false, "calls": 1, "args": [["x", [5], "float64"], ["A", [6, 5], "float64"], ["out", [5], "float64"]], "init": [], "note": "seed 32 (full), auto-O0: minimized"}
import numpy as np


def helper2(v, c):
    v[1:] = v[1:] * c


def prog(x, A, out):
    if x[0] > A[4, 1]:
        out[2] = 0.3
    else:
        pass
    h3 = helper2(out, 0.5)
    total = 0.0
    return total
