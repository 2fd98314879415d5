# differential case: {"seed": 262, "kind": "function", "grad": false, "calls": 1, "args": [["x", [9], "float64"], ["A", [9, 10], "float64"], ["out", [9], "float64"]], "init": [], "note": "seed 262 (full), auto-O0: minimized"}
import numpy as np


def prog(x, A, out):
    for i in range(45):
        x[1:-1] += 0.25 * (x[:-2] - 2.0 * x[1:-1] + x[2:])
    dot1 = A.T @ x[:9]
    total = 0.0
    return total, dot1
