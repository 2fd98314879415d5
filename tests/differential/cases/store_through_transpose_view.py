# differential case: {"seed": 335, "kind": "function", "grad": false, "calls": 1, "args": [["x", [6], "float64"], ["A", [3, 10], "float64"]], "init": [], "note": "seed 335 (full), auto-O0: minimized"}
import numpy as np


def prog(x, A):
    rw2 = np.sum(A[0])
    A.T[7, 0] = -7.0
    total = 0.0
    return total, rw2
