# differential case: {"seed": 1307861, "kind": "function", "grad": false, "calls": 1, "args": [["x", [11], "float64"], ["A", [3, 6], "float64"]], "init": [], "note": "the 69-step loop makes values of ~1e10 that a cosine reads: NumPy's own result moves by 1.5e-5 with inputs one ulp away, and reactant's sums (in another order) differed by 2.1e-5 (seed 1307861 of the long run: a mismatch at rtol=atol=1e-9 in every mode, eager included)"}
import types

import numpy as np


def prog(x, A):
    sl1 = x[0] * 0.0
    for i in range(3):
        sl1 = sl1 + np.sum(x[i:i + 2]) * -1.25
    x[8:] -= A[0, :3]
    red2 = x.min() + np.mean(A)
    for i in range(69):
        t3 = (np.sqrt(np.abs(np.tanh(x[(i + 2) % 11] + A[i % 3, (i + 1) % 6])) + 1.0)) / (1.0 + x[5] * x[5])
        x[i % 11] = ((t3) + np.sum(x[:11]) * 0.5) * np.tanh(x[5])
    A[0, 0] = x[9]
    rw4 = np.sum(A[0])
    s5 = x[6:7] * 0.0
    for i in range(19):
        s5 = 0.5 * s5 + np.tanh((np.cos((x[i % 11:i % 11 + 1]) * np.tanh(x[5:6]))) + 0.5)
    total = 0.0 + np.sum(sl1) * -0.25 + np.sum(red2) * 1.0 + np.sum(rw4) * 0.5 + np.sum(s5) * 0.5
    return total, s5
