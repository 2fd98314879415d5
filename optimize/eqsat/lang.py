"""The term language of the e-graph: one egglog constructor per modelled StableHLO op kind.

Every node carries its result type as data, ``(TT dtype shape)`` (a ``Ty``), as its last
argument, so rules can read and check shapes and dtypes and build the types of the nodes
they create. Attributes are plain data too (strings, ``i64``, ``IVec`` = ``(Vec i64)``).
Values the e-graph does not model (function arguments, results of opaque ops, values from
earlier segments) are ``(Leaf id ty)``. ``Slot`` is an unextractable helper used to load a
segment: slot ``k`` is the value numbered ``k`` by the encoder.

Kinds of argument: ``i64``, ``String``, ``Op`` (a child term), ``IVec`` (a vector of
``i64``) and ``Ty`` (the node's result type, always last).
"""

from __future__ import annotations

from ...ir import kernels as K
from ...ir.opinfo import OPS
from ..exactness import EXACT, FAST_MATH

# constructor name -> argument sorts (the last one is always the result type "Ty")
CTORS: dict[str, tuple[str, ...]] = {
    "Leaf": ("i64", "Ty"),  # external value number
    "SplatF": ("String", "Ty"),  # float splat constant; value as repr(float)
    "SplatI": ("i64", "Ty"),  # signless-integer / bool splat constant
    "Dense": ("i64", "Ty"),  # any other constant (id into the encoder's attribute table)
    "Iota": ("i64", "Ty"),  # iota dimension
    "Un": ("String", "Op", "Ty"),  # unary elementwise op by name
    "Bin": ("String", "Op", "Op", "Ty"),  # binary elementwise op by name
    "Cmp": ("String", "String", "Op", "Op", "Ty"),  # direction, compare type ("" if absent)
    "Sel": ("Op", "Op", "Op", "Ty"),  # select(pred, on_true, on_false)
    "Clamp": ("Op", "Op", "Op", "Ty"),  # clamp(min, x, max)
    "Cvt": ("Op", "Ty"),  # convert
    "Bcast": ("Op", "IVec", "Ty"),  # broadcast_in_dim(x, dims)
    "Reshape": ("Op", "Ty"),
    "Transpose": ("Op", "IVec", "Ty"),  # permutation
    "Reverse": ("Op", "IVec", "Ty"),  # dimensions
    "Slice": ("Op", "IVec", "IVec", "IVec", "Ty"),  # start, limit, strides
    "Concat": ("Op", "Op", "i64", "Ty"),  # binary concatenate along dim (n-ary = nested)
    "Pad": ("Op", "Op", "IVec", "IVec", "IVec", "Ty"),  # x, value, low, high, interior
    "Dot": ("Op", "Op", "IVec", "IVec", "IVec", "IVec", "Ty"),  # lhs/rhs batch, lhs/rhs contract
    "Reduce": ("String", "Op", "Op", "IVec", "Ty"),  # kind, x, init, dims
}

# the elementwise ops the language models, and their facts: from the op table
UNARY = {i.short for i in OPS.values() if i.kernel is not None and i.arity == 1}
BINARY = {i.short for i in OPS.values() if i.kernel is not None and i.arity == 2}
TRANSCENDENTAL = {i.short for i in OPS.values() if i.transcendental and i.kernel is not None}
COMMUTATIVE = tuple(o for o in K.BINARY if OPS["stablehlo." + o].commutative)
REDUCE_KINDS = {i.short for i in OPS.values() if i.reducible}

FLOAT_DTYPES = ("f16", "bf16", "f32", "f64")
INT_DTYPES = ("i1", "i8", "i16", "i32", "i64")  # signless integers (splat values as i64)
UINT_DTYPES = ("ui8", "ui16", "ui32", "ui64")
DTYPES = FLOAT_DTYPES + INT_DTYPES + UINT_DTYPES
DTYPE_BYTES = {"f16": 2, "bf16": 2, "f32": 4, "f64": 8, "i1": 1, "i8": 1, "i16": 2, "i32": 4,
               "i64": 8, "ui8": 1, "ui16": 2, "ui32": 4, "ui64": 8}

# rule sets: the analyses, and the rewrites by exactness tag (``optimize.exactness``): a
# ruleset is named after its tag, so a rule's text says whether it is exact
ANA = "ana"
RULESETS = (ANA, EXACT, FAST_MATH)

MAX_RANK = 6  # rank-specialised rules are generated up to this rank
MAX_VEC = 8  # longest attribute vector the loader accepts


def _decl(name: str, sorts: tuple[str, ...]) -> str:
    return f"({name} {' '.join(sorts)})"


def prelude() -> list[str]:
    """The declarations every e-graph starts with (one command per list entry)."""
    cmds = [
        "(sort IVec (Vec i64))",
        "(datatype Ty (TT String IVec))",
        "(with-dynamic-cost (datatype Op\n  "
        + "\n  ".join(_decl(n, s) for n, s in CTORS.items())
        + "))",
        "(constructor Slot (i64) Op :unextractable)",
        "(function tyof (Op) Ty :no-merge)",
        "(function numel (Ty) i64 :no-merge)",
        "(function ucost (String) i64 :no-merge)",
        "(function bcost (String) i64 :no-merge)",
        "(relation isfloat (String))",
        "(relation isint (String))",
        "(relation commutative (String))",
        "(relation is-zero (Op))",
        "(relation is-pzero (Op))",
        "(relation is-nzero (Op))",
        "(relation is-one (Op))",
        "(relation is-eye (Op))",
        "(relation iota-along (Op i64))",
        "(relation diag-of (Op Op))",
        # loader tables (filled from TSV files, see encode.py)
        "(function VecId (i64) IVec :no-merge)",
        "(function TyId (i64) Ty :no-merge)",
        "(relation InTy (i64 String i64))",
    ]
    for n in range(MAX_VEC + 1):
        cmds.append(f"(relation InVec{n} ({' '.join(['i64'] * (n + 1))}))")
    for name, sorts in CTORS.items():
        cols = ["i64"] + ["String" if s == "String" else "i64" for s in sorts]
        cmds.append(f"(relation In{name} ({' '.join(cols)}))")
    for r in ("load",) + RULESETS:
        cmds.append(f"(ruleset {r})")
    for d in FLOAT_DTYPES:
        cmds.append(f'(isfloat "{d}")')
    for d in INT_DTYPES + UINT_DTYPES:
        cmds.append(f'(isint "{d}")')
    for o in COMMUTATIVE:
        cmds.append(f'(commutative "{o}")')
    cmds += _load_rules()
    return cmds


def _load_rules() -> list[str]:
    rules = []
    for n in range(MAX_VEC + 1):
        xs = [f"x{i}" for i in range(n)]
        rules.append(
            f"(rule ((InVec{n} k {' '.join(xs)})) ((set (VecId k) (vec-of {' '.join(xs)}))) :ruleset load)"
        )
    rules.append("(rule ((InTy k d v) (= s (VecId v))) ((set (TyId k) (TT d s))) :ruleset load)")
    for name, sorts in CTORS.items():
        cols, facts, args = ["slot"], [], []
        for i, s in enumerate(sorts):
            c = f"a{i}"
            cols.append(c)
            if s == "Op":
                args.append(f"(Slot {c})")
            elif s == "IVec":
                facts.append(f"(= v{i} (VecId {c}))")
                args.append(f"v{i}")
            elif s == "Ty":
                facts.append(f"(= t{i} (TyId {c}))")
                args.append(f"t{i}")
            else:
                args.append(c)
        q = f"(In{name} {' '.join(cols)}) " + " ".join(facts)
        rules.append(f"(rule ({q}) ((union (Slot slot) ({name} {' '.join(args)}))) :ruleset load)")
    return rules
