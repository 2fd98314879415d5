# differential case: {"seed": 433, "kind": "function", "grad": true, "calls": 1, "args": [["x", [7], "float64"], ["A", [10, 4], "float64"]], "init": [], "note": "seed 433 (full), keep-O0: minimized"}
import numpy as np


def prog(x, A):
    acc3 = []
    for i in range(1):
        acc3.append(np.maximum(np.sin(x[i % 7]), -0.8))
    arr2 = np.array(acc3)
    total = 0.0 + np.sum(arr2) * -0.25
    return total
