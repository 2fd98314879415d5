# differential case: {"seed": 321, "kind": "function", "grad": false, "calls": 1, "args": [["x", [8], "float64"], ["A", [9, 5], "float64"], ["out", [8], "float64"]], "init": [], "note": "seed 321 (full), auto-O0: minimized"}
import numpy as np


def prog(x, A, out):
    v1 = x[3:5]
    v1[:] = 0.9
    total = 0.0
    return total, x + 0.0
