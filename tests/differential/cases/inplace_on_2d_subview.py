# differential case: {"seed": 439, "kind": "function", "grad": false, "calls": 1, "args": [["x", [10], "float64"], ["A", [8, 7], "float64"]], "init": [], "note": "seed 439 (full), auto-O0: minimized"}
import numpy as np


def prog(x, A):
    v1 = A[1:, :2]
    v1 += 1.0
    total = 0.0
    return total
