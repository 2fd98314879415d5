# differential case: {"seed": 670000, "kind": "function", "grad": false, "calls": 1, "args": [["x", [8], "float64"]], "init": [], "note": "seed 670000 (full), keep-O0: minimized by hand; a loop kept as a loop whose body updated a NumPy array attribute with NumPy values applied the update once, not 7 times (now the clear error; unrolled: NumPy's answer)"}
import types

import numpy as np


def prog(x):
    hold = types.SimpleNamespace(w=np.zeros(4))
    for i in range(7):
        hold.w += np.sin(np.linspace(2.0, 1.5, 4)) * -0.5
    cv = hold.w + 0.0
    total = 0.0 + np.sum(cv) * -0.25 + np.sum(x) * 0.5
    return total
