# differential case: {"seed": 181, "kind": "class", "grad": false, "calls": 3, "args": [["x", [13], "float64"], ["A", [4, 3], "float64"], ["out", [13], "float64"], ["iv", [4], "int64"]], "init": [["w", [13], "float64"]], "note": "seed 181 (full), auto-O0: minimized"}
import numpy as np


class Model:
    def __init__(self, w):
        self.count = 0

    def step(self, x, A, out, iv):
        self.count += 1
        total = np.sum(x) * self.count
        return total
