# differential case: {"seed": 22209, "kind": "function", "grad": true, "calls": 1, "args": [["A", [7, 7], "float64"]], "init": [], "note": "seed 22209 (full), auto-O2 and grad: InvalidModuleError after 'patterns' (while_licm hoisted A[0,:1]*A[0,:1] but left the product in the loop: an MLIR Operation's hash changes when its operands are rewired); the loop of the program"}
import numpy as np


def prog(A):
    s5 = np.zeros(1)
    for i in range(44):
        s5 = -0.5 * s5 + np.tanh((((A[0, :1] * (i * 0.1)) / (1.0 + A[0, :1] * A[0, :1])) + np.linspace(-1.25, 0.9, 1) * 0.5) * np.tanh(np.linspace(-1.25, 0.25, 1)))
    return np.sum(s5)
