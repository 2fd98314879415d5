# differential case: {"seed": 34, "kind": "function", "grad": false, "calls": 1, "args": [["x", [12], "float64"], ["A", [8, 3], "float64"]], "init": [], "note": "seed 34 (full), eager: minimized"}
import numpy as np


def prog(x, A):
    v2 = A.reshape(-1)
    v2[0] = 1.0
    total = 0.0
    return total
