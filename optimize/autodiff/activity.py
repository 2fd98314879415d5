"""Activity analysis.

A value is *varied* when it depends differentiably on an active input (forward
propagation), and *useful* when a differentiated output depends differentiably on it
(backward propagation). Only values that are both (*active*) get derivative code. Integer
and boolean values are never active; ops marked non-differentiable in the rule table cut
the dependence (compare, floor, iota, ...). Loops are solved to a fixed point over their
carried values; branch results join over the branches; a manual computation's body
argument and result follow its operands and returned values. Values captured by nested regions
take part like any operand.
"""

from __future__ import annotations

from jaxlib.mlir import ir

from ...ir.manual import MANUAL
from ...ir.regions import TERMINATORS, captured_values, terminator
from ...ir.types import is_inexact_tensor
from .rules import NONDIFF, stops_derivative


def _diff(v) -> bool:
    return is_inexact_tensor(v.type)


class Activity:
    def __init__(self, body: ir.Block, varied_args, useful_rets=None):
        self.varied: set = set()
        self.useful: set = set()
        self._diff_cache: dict = {}
        for a in varied_args:
            if _diff(a):
                self.varied.add(a)
        self._vary_block(body)
        if useful_rets is None:
            self.all_useful = True
        else:
            self.all_useful = False
            for v in useful_rets:
                if self.is_varied(v):
                    self.useful.add(v)
            self._use_block(body)

    # -- queries --------------------------------------------------------------------------------
    def is_varied(self, v) -> bool:
        return v in self.varied

    def is_active(self, v) -> bool:
        return v in self.varied and (self.all_useful or v in self.useful)

    # -- forward propagation --------------------------------------------------------------------
    def _vary_block(self, block: ir.Block) -> None:
        varied = self.varied
        for op in block.operations:
            op = op.operation
            name = op.name
            if name == "stablehlo.while":
                cond = op.regions[0].blocks[0]
                body = op.regions[1].blocks[0]
                n = len(op.operands)
                flags = [op.operands[j] in varied and _diff(op.operands[j]) for j in range(n)]
                while True:
                    for j in range(n):
                        if flags[j]:
                            varied.add(body.arguments[j])
                            varied.add(cond.arguments[j])
                    self._vary_block(body)
                    ret = terminator(body)
                    new = [flags[j] or (ret.operands[j] in varied) for j in range(n)]
                    if new == flags:
                        break
                    flags = new
                for j in range(n):
                    if flags[j]:
                        varied.add(op.results[j])
            elif name in ("stablehlo.if", "stablehlo.case"):
                for region in op.regions:
                    self._vary_block(region.blocks[0])
                for j, r in enumerate(op.results):
                    if _diff(r) and any(terminator(reg.blocks[0]).operands[j] in varied for reg in op.regions):
                        varied.add(r)
            elif name == MANUAL:
                body = op.regions[0].blocks[0]
                for v, a in zip(op.operands, body.arguments):
                    if v in varied and _diff(a):
                        varied.add(a)
                self._vary_block(body)
                for r, v in zip(op.results, terminator(body).operands):
                    if v in varied and _diff(r):
                        varied.add(r)
            elif name in NONDIFF or name in TERMINATORS or stops_derivative(op):
                continue
            else:
                ins = any(v in varied for v in op.operands)
                if not ins and len(op.regions):
                    ins = any(v in varied for v in captured_values(op))
                if ins:
                    for r in op.results:
                        if _diff(r):
                            varied.add(r)

    # -- backward propagation -------------------------------------------------------------------
    def _use_block(self, block: ir.Block) -> None:
        useful, varied = self.useful, self.varied
        for op in reversed(list(block.operations)):
            op = op.operation
            name = op.name
            if name == "stablehlo.while":
                body = op.regions[1].blocks[0]
                n = len(op.operands)
                ret = terminator(body)
                flags = [op.results[j] in useful for j in range(n)]
                while True:
                    for j in range(n):
                        if flags[j] and ret.operands[j] in varied:
                            useful.add(ret.operands[j])
                    self._use_block(body)
                    new = [flags[j] or (body.arguments[j] in useful) for j in range(n)]
                    if new == flags:
                        break
                    flags = new
                for j in range(n):
                    if flags[j] and op.operands[j] in varied:
                        useful.add(op.operands[j])
            elif name in ("stablehlo.if", "stablehlo.case"):
                for region in op.regions:
                    blk = region.blocks[0]
                    ret = terminator(blk)
                    for j, r in enumerate(op.results):
                        if r in useful and ret.operands[j] in varied:
                            useful.add(ret.operands[j])
                    self._use_block(blk)
            elif name == MANUAL:
                body = op.regions[0].blocks[0]
                for r, v in zip(op.results, terminator(body).operands):
                    if r in useful and v in varied:
                        useful.add(v)
                self._use_block(body)
                for v, a in zip(op.operands, body.arguments):
                    if a in useful and v in varied:
                        useful.add(v)
            elif name in NONDIFF or name in TERMINATORS or stops_derivative(op):
                continue
            else:
                if any(r in useful for r in op.results):
                    for v in op.operands:
                        if v in varied:
                            useful.add(v)
                    if len(op.regions):
                        for v in captured_values(op):
                            if v in varied:
                                useful.add(v)
