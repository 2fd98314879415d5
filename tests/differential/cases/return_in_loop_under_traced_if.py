# differential case: {"seed": 100308, "kind": "function", "grad": true, "calls": 1, "args": [["x", [4], "float64"], ["A", [5, 6], "float64"]], "init": [], "note": "seed 100308 (full): a return inside a for loop under a traced if was a ConcretizationError in every mode; now lifted to a flag (autograph._lift_loop_returns)"}
import numpy as np


def prog(x, A):
    t1 = np.abs(x[1])
    cnt2 = t1 * 0.0
    while t1 < 3.5:
        t1 = t1 + 0.5 + np.abs(x[0])
        cnt2 = cnt2 + 1.0
    ng3 = x[-1] + A[-1, -2]
    for i in range(16):
        ng3 = 0.5 * ng3 + x[-(i % 4) - 1] * A[-1 - i % 5, -1]
    red4 = np.sum(A, axis=0)
    for i in range(6):
        if x[i % 4] > 1.5:
            return 0.0 + np.sum(t1) * -0.25 + np.sum(cnt2) * 1.0 + np.sum(ng3) * -0.25 + np.sum(red4) * -0.25
    ng5 = x[-1] + A[-1, -2]
    for i in range(25):
        ng5 = 0.5 * ng5 + x[-(i % 4) - 1] * A[-1 - i % 5, -1]
    total = 0.0 + np.sum(t1) * 1.0 + np.sum(cnt2) * -0.25 + np.sum(ng3) * 1.0 + np.sum(red4) * 0.5 + np.sum(ng5) * 0.5
    return total
