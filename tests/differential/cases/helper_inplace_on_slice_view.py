# differential case: {"seed": 213, "kind": "function", "grad": false, "calls": 1, "args": [["x", [6], "float64"], ["A", [9, 6], "float64"], ["out", [6], "float64"], ["iv", [7], "int64"]], "init": [], "note": "seed 213 (full), auto-O0: minimized"}
import numpy as np


def helper3(v, c):
    v += c


def prog(x, A, out, iv):
    h4 = helper3(x[1:4], 0.1)
    total = 0.0
    return total
