# differential case: {"seed": 144, "kind": "function", "grad": false, "calls": 1, "args": [["x", [11], "float64"], ["A", [3, 10], "float64"], ["out", [11], "float64"], ["u", [12], "float64"]], "init": [], "note": "seed 144 (full), auto-O0: minimized"}
import numpy as np


def prog(x, A, out, u):
    v1 = A[:, 3]
    A[1, 3] = 3.0
    total = 0.0 + np.sum(v1) * 1.0
    return total, x
