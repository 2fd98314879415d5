# differential case: {"seed": 660018, "kind": "function", "grad": false, "calls": 1, "args": [["x", [14], "float64"]], "init": [], "note": "seed 660018 (full), keep-O0: minimized by hand; a loop kept as a loop updated a NumPy array held by an attribute through a second name: the attribute kept its zeros (now the clear error; unrolled: NumPy's answer)"}
import types

import numpy as np


def prog(x):
    hold = types.SimpleNamespace(w=np.zeros(12))
    al = hold.w
    for i in range(1):
        al -= np.cos(x[1:13]) * 0.5
    total = 0.0 + np.sum(hold.w + 0.0) * 0.5
    return total
