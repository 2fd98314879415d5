# differential case: {"seed": 25, "kind": "function", "grad": false, "calls": 1, "args": [["x", [10], "float64"], ["A", [3, 6], "float64"], ["iv", [6], "int64"], ["u", [10], "float64"]], "init": [], "note": "seed 25 (full), unroll-O0: minimized"}
import numpy as np


def prog(x, A, iv, u):
    for row in A:
        row += 1.0
    total = 0.0
    return total, x + 0.0
