# differential case: {"seed": 700086, "kind": "function", "grad": false, "calls": 1, "args": [["x", [5], "float64"]], "init": [], "note": "seed 700086 (small), every traced mode: minimized by hand; both branches of a traced if wrote their host values into the NumPy array (both writes applied, whichever side the condition took)"}
import numpy as np


def prog(x):
    y = np.zeros(4)
    if x[0] > 0.3:
        y[1] = 2.0
    else:
        y[2] += 3.0
        y *= -0.5
    total = 0.0 + np.sum(y * np.arange(1.0, 5.0)) * 0.5 + np.sum(x) * 0.25
    return total
