# differential case: {"seed": 21213, "kind": "class", "grad": false, "calls": 3, "args": [["x", [12], "float64"], ["A", [6, 10], "float64"], ["out", [12], "float64"], ["u", [14], "float64"]], "init": [["w", [12], "float64"]], "note": "seed 21213 (full): mismatch in all compiled modes (self.count, self.total changed at trace time in both branches of a traced early return); now a clear ConcretizationError"}
import numpy as np


class Scaler3:
    def __init__(self, s):
        self.s = s

    def apply(self, v):
        return v * self.s + 1.0


class Model:
    def __init__(self, w):
        self.total = np.zeros(12)
        self.w = w
        self.count = 0

    def step(self, x, A, out, u):
        self.count += 1
        self.total += self.count * 0.1
        red1 = A.max(axis=0) - A.min(axis=0)
        if np.max(A[4]) > 0.5:
            return 0.0 + np.sum(red1) * 0.5, x * 2.0
        sc4 = Scaler3(0.25)
        sh2 = sc4.apply(out)
        sc4.s = x[7]
        sh2 = sh2 + sc4.apply(x)
        if np.sum(x[:12]) > -0.4:
            out[7] = 0.3
        else:
            out[7] += np.sum(x[:8])
        y5 = out[:8] * 1.0
        self.count += 1
        self.total += self.count * 0.1
        A[2:4, :6] += x[:6]
        sl6 = x[0] * 0.0
        for i in range(5):
            sl6 = 0.5 * sl6 + np.max(x[:i + 1]) - np.min(x[i:])
        self.total += u[2:]
        ng7 = x[-1] + A[-1, -2]
        for i in range(21):
            ng7 = 0.5 * ng7 + x[-(i % 12) - 1] * A[-1 - i % 6, -1]
        total = 0.0 + np.sum(red1) * 1.0 + np.sum(sh2) * 0.5 + np.sum(y5) * 1.0 + np.sum(sl6) * 0.5 + np.sum(ng7) * -0.25 + np.sum(self.total) * -0.25
        return total, x
