# differential case: {"seed": 6, "kind": "function", "grad": false, "calls": 1, "args": [["x", [16], "float64"], ["A", [4, 10], "float64"], ["iv", [4], "int64"]], "init": [], "note": "seed 6 (full), auto-O0: minimized"}
import numpy as np


def prog(x, A, iv):
    for i in range(69):
        A[i % 4, 7] -= 0.5 * A[(i + 1) % 4, 7] * np.tanh(np.minimum(np.abs(x[(i + 6) % 16] + A[i % 4, (i + 1) % 10]), 2.0))
    total = 0.0
    return total
