# differential case: {"seed": 297, "kind": "function", "grad": false, "calls": 1, "args": [["x", [12], "float64"], ["A", [8, 9], "float64"], ["out", [12], "float64"], ["iv", [3], "int64"], ["u", [6], "float64"]], "init": [], "note": "seed 297 (full), auto-O0: minimized"}
import numpy as np


def prog(x, A, out, iv, u):
    buf1 = np.ones((8, 9))
    if np.max(A[5]) > 0.5:
        return 0.0 + np.sum(buf1) * 0.5
    A[:, :3] *= 1.5
    total = np.sum(A)
    return total
