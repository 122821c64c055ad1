"""Random valid MIR graphs for property tests (Hypothesis strategies).

    from rlx_xdsl.testing.graphgen import graphs, inputs_for

    @given(graphs(max_ops=12))
    def test_pass_preserves_outputs(module):
        before = run_function(module, None, inputs_for(module))
        ...

A graph is grown one op at a time from a pool of live values. Each MIR op has a
*recipe*: a function `recipe(state, op_name)` that picks compatible operands
from `state` (a `GraphState`: the Hypothesis `draw`, the builder and the pool),
creating new arguments or constants where it can, and emits the op with
`state.emit(...)`. When an operand can only come from the pool and none fits,
`state.need(...)` raises `Decline` and the generator tries another recipe.

Adding an op means adding one recipe decorated with `@recipe("op_name")`. The
tests check that every MIR op has a recipe (`missing_recipes()`) and that every
recipe's op exists (`unavailable_ops()`).

The region ops `mir.if` and `mir.while` get small bodies: chains of
type-preserving elementwise ops over their block arguments. Their predicates
compare a reduction of the data with a constant, so they hold for some inputs
and not for others, and every loop has a `max_iterations` bound.

Shapes stay small (dims 1..4 for new values, rank 0..4) and values tame: new
constants are multiples of 0.25 in [-2, 2], and ops with restricted domains get
guarded operands (`log(abs(x) + 1)`, `x / (abs(y) + 1)`, ...). NaN or inf can
still appear (`exp(exp(x))`); nothing may crash on them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from hypothesis import strategies as st
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Attribute, SSAValue

from rlx_xdsl import dtypes
from rlx_xdsl.builder import GraphBuilder
from rlx_xdsl.builder import element_type as as_element_type
from rlx_xdsl.dialects.mir import OPS_BY_NAME
from rlx_xdsl.graph import random_inputs
from rlx_xdsl.interpreters import find_function
from rlx_xdsl.shapes import ShapeError, broadcast_shapes

MAX_RANK = 4
MAX_DIM = 4
"""Largest dim of a newly created value."""
POOL_MAX_DIM = 8
"""Values with a larger dim (from concat, reshape...) are not reused as operands."""
CAST_TARGETS = ("f32", "f64", "f16", "bf16", "i32")
SKIPPED_OPS = frozenset({"yield"})
"""Ops without a recipe of their own: `mir.yield` ends the bodies the region recipes build."""

Shape = tuple[int, ...]


# Value predicates -------------------------------------------------------------


def shape_of(v: SSAValue) -> Shape:
    assert isinstance(v.type, TensorType)
    return tuple(v.type.get_shape())


def rank(v: SSAValue) -> int:
    return len(shape_of(v))


def element_type(v: SSAValue) -> Attribute:
    assert isinstance(v.type, TensorType)
    return v.type.element_type


def is_float(v: SSAValue) -> bool:
    return dtypes.is_float(element_type(v))


def is_numeric(v: SSAValue) -> bool:
    """Integer or float (not bool, not complex): arithmetic makes sense."""
    return dtypes.dtype_of(element_type(v)).kind in ("int", "uint", "float")


def is_bool(v: SSAValue) -> bool:
    return dtypes.dtype_of(element_type(v)).kind == "bool"


def floats_of_rank(*ranks: int) -> Callable[[SSAValue], bool]:
    return lambda v: is_float(v) and rank(v) in ranks


def float_min_rank(n: int) -> Callable[[SSAValue], bool]:
    return lambda v: is_float(v) and rank(v) >= n


def broadcasts(a: Sequence[int], b: Sequence[int]) -> bool:
    try:
        broadcast_shapes(a, b)
    except ShapeError:
        return False
    return True


def divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


# The generator state ----------------------------------------------------------


class Decline(Exception):
    """A recipe found no compatible operand; the generator picks another op."""


class GraphState:
    """What a recipe works with: Hypothesis draws, the builder and the value pool."""

    def __init__(self, draw, builder: GraphBuilder, max_inputs: int):
        self.draw = draw
        self.builder = builder
        self.max_inputs = max_inputs
        self.pool: list[SSAValue] = []
        """Values recipes may use as operands."""
        self.produced: list[SSAValue] = []
        """Every op result, in program order: the candidates for outputs."""
        self.n_args = 0

    # Drawing ----------------------------------------------------------------

    def integer(self, lo: int, hi: int) -> int:
        return self.draw(st.integers(lo, hi))

    def choice(self, options: Sequence):
        return self.draw(st.sampled_from(list(options)))

    def flag(self) -> bool:
        return self.draw(st.booleans())

    def shape(self, min_rank: int = 0, max_rank: int = MAX_RANK) -> Shape:
        n = self.integer(min_rank, max_rank)
        return tuple(self.integer(1, MAX_DIM) for _ in range(n))

    def axis(self, r: int) -> int:
        """An axis of a rank-`r` value, sometimes spelled negatively."""
        return self.integer(-r, r - 1)

    def rng(self) -> np.random.Generator:
        """A numpy generator seeded by Hypothesis (array data stays shrinkable)."""
        return np.random.default_rng(self.integer(0, 2**32 - 1))

    # The pool ---------------------------------------------------------------

    def candidates(self, accept: Callable[[SSAValue], bool] = lambda v: True) -> list[SSAValue]:
        return [v for v in self.pool if accept(v)]

    def pick(self, accept: Callable[[SSAValue], bool] = lambda v: True) -> SSAValue | None:
        """A pool value satisfying `accept`, or None when there is none."""
        found = self.candidates(accept)
        return self.choice(found) if found else None

    def need(self, accept: Callable[[SSAValue], bool] = lambda v: True) -> SSAValue:
        """A pool value satisfying `accept`; `Decline` when there is none."""
        value = self.pick(accept)
        if value is None:
            raise Decline
        return value

    def need_several(self, accept: Callable[[SSAValue], bool], most: int) -> list[SSAValue]:
        """1 to `most` distinct pool values satisfying `accept`; `Decline` when there is none."""
        found = self.candidates(accept)
        if not found:
            raise Decline
        size = st.integers(0, len(found) - 1)
        chosen = self.draw(st.lists(size, min_size=1, max_size=min(most, len(found)), unique=True))
        return [found[i] for i in chosen]

    def _offer(self, value: SSAValue) -> None:
        """Pool `value` unless it is too big to be a good operand."""
        shape = shape_of(value)
        if len(shape) <= MAX_RANK and all(d <= POOL_MAX_DIM for d in shape):
            self.pool.append(value)

    # Creating operands ------------------------------------------------------

    def new_arg(
        self, shape: Shape, dtype: Attribute | str = "f32", param: bool = False
    ) -> SSAValue | None:
        """A new function input (or parameter), or None once the budget is spent."""
        if self.n_args >= self.max_inputs:
            return None
        self.n_args += 1
        make = self.builder.param if param else self.builder.input
        value = make(f"{'w' if param else 'x'}{self.n_args - 1}", shape, dtype)
        self._offer(value)
        return value

    def constant(self, shape: Shape, dtype: Attribute | str = "f32") -> SSAValue:
        """A tame constant: multiples of 0.25 in [-2, 2] (integers: -2..2, unsigned 0..2; i1: 0/1)."""
        et = as_element_type(dtype)
        kind = dtypes.dtype_of(et).kind
        rng = self.rng()
        if kind == "bool":
            data = rng.integers(0, 2, size=shape).astype(bool)
        elif kind == "float":
            data = rng.integers(-8, 9, size=shape) / 4.0
        else:
            data = rng.integers(0 if kind == "uint" else -2, 3, size=shape)
        return self.emit("constant", data, dtype=et)

    def index_constant(self, shape: Shape, upper: int) -> SSAValue:
        """Valid indices in [0, upper), as integers or as RLX's f32 encoding."""
        data = self.rng().integers(0, upper, size=shape)
        return self.emit("constant", data, dtype=self.choice(("i64", "i32", "f32")))

    def operand(self, shape: Shape, dtype: Attribute | str = "f32", param: bool = False) -> SSAValue:
        """A value of exactly this shape and dtype: from the pool, a new argument or a constant."""
        et = as_element_type(dtype)
        found = self.candidates(lambda v: shape_of(v) == tuple(shape) and element_type(v) == et)
        if found and self.flag():
            return self.choice(found)
        if self.flag():
            arg = self.new_arg(shape, et, param)
            if arg is not None:
                return arg
        return self.constant(shape, et)

    def partner_shape(self, shape: Shape) -> Shape:
        """A random shape that broadcasts with `shape` (fewer, equal or more dims)."""
        new_rank = self.integer(0, max(MAX_RANK, len(shape)))
        aligned = min(new_rank, len(shape))
        lead = tuple(self.integer(1, MAX_DIM) for _ in range(new_rank - aligned))
        return lead + tuple(self.choice((d, 1)) for d in shape[len(shape) - aligned :])

    def partner(self, shape: Shape, accept: Callable[[SSAValue], bool] = is_numeric) -> SSAValue:
        """A value whose shape broadcasts with `shape`: from the pool or new."""
        found = self.candidates(lambda v: accept(v) and broadcasts(shape_of(v), shape))
        if found and self.flag():
            return self.choice(found)
        return self.operand(self.partner_shape(shape))

    def positive(self, v: SSAValue) -> SSAValue:
        """`abs(v) + 1` in v's dtype: >= 1, so log/sqrt/div stay finite."""
        one = self.emit("constant", np.ones(()), dtype=element_type(v))
        return self.emit("add", self.emit("abs", v), one)

    # Emitting ---------------------------------------------------------------

    def emit(self, op_name: str, *operands, **attributes):
        """Build `mir.<op_name>` with the builder; its results join the pool."""
        result = getattr(self.builder, op_name)(*operands, **attributes)
        for value in result if isinstance(result, tuple) else (result,):
            self.produced.append(value)
            self._offer(value)
        return result


# The recipes -------------------------------------------------------------------

Recipe = Callable[[GraphState, str], None]
RECIPES: dict[str, Recipe] = {}


def recipe(*op_names: str) -> Callable[[Recipe], Recipe]:
    """Register a recipe for one op or a family of ops that share it."""

    def register(fn: Recipe) -> Recipe:
        for name in op_names:
            RECIPES[name] = fn
        return fn

    return register


@recipe("constant")
def _constant(s: GraphState, op: str) -> None:
    s.constant(s.shape())


@recipe("cast")
def _cast(s: GraphState, op: str) -> None:
    x = s.need()
    current = dtypes.dtype_of(element_type(x)).name
    s.emit("cast", x, s.choice([t for t in CAST_TARGETS if t != current]))


@recipe("compare")
def _compare(s: GraphState, op: str) -> None:
    lhs = s.need(is_numeric)
    rhs = s.partner(shape_of(lhs))
    s.emit("compare", lhs, rhs, predicate=s.choice(("eq", "ne", "lt", "le", "gt", "ge")))


@recipe("where")
def _where(s: GraphState, op: str) -> None:
    cond = s.pick(is_bool)
    if cond is None:
        x = s.need(is_numeric)
        cond = s.emit("compare", x, s.constant(()), predicate="gt")
    shape = shape_of(cond)
    on_true = s.partner(shape)
    on_false = s.partner(broadcast_shapes(shape, shape_of(on_true)))
    s.emit("where", cond, on_true, on_false)


def _unary_recipe(accept: Callable[[SSAValue], bool], guard: bool = False) -> Recipe:
    """One operand from the pool; with `guard`, it is made >= 1 first (`abs(x) + 1`)."""

    def build(s: GraphState, op: str) -> None:
        x = s.need(accept)
        s.emit(op, s.positive(x) if guard else x)

    return build


def _binary_recipe(guard_rhs: bool = False) -> Recipe:
    """A numeric lhs from the pool and a broadcast-compatible rhs (>= 1 with `guard_rhs`)."""

    def build(s: GraphState, op: str) -> None:
        lhs = s.need(is_numeric)
        rhs = s.partner(shape_of(lhs))
        s.emit(op, lhs, s.positive(rhs) if guard_rhs else rhs)

    return build


recipe("add", "sub", "mul", "max", "min")(_binary_recipe())
recipe("div")(_binary_recipe(guard_rhs=True))
recipe(
    "gelu", "gelu_approx", "silu", "sigmoid", "tanh", "exp",
    "sin", "cos", "tan", "atan", "round",
)(_unary_recipe(is_float))  # fmt: skip
recipe("log", "sqrt", "rsqrt")(_unary_recipe(is_float, guard=True))
recipe("relu", "neg", "abs")(_unary_recipe(is_numeric))


@recipe("pow")
def _pow(s: GraphState, op: str) -> None:
    """`pow(abs(a) + 1, tanh(b))`: a positive base and an exponent in (-1, 1)."""
    base = s.need(is_float)
    exponent = s.partner(shape_of(base), accept=is_float)
    s.emit("pow", s.positive(base), s.emit("tanh", exponent))


# Linear algebra --------------------------------------------------------------


@recipe("matmul")
def _matmul(s: GraphState, op: str) -> None:
    a = s.need(float_min_rank(2))
    k, batch = shape_of(a)[-1], shape_of(a)[:-2]

    def fits(v: SSAValue) -> bool:
        vs = shape_of(v)
        return (
            float_min_rank(2)(v)
            and vs[-2] == k
            and element_type(v) == element_type(a)
            and broadcasts(vs[:-2], batch)
        )

    b = s.pick(fits) if s.flag() else None
    if b is None:
        b = s.operand((k, s.integer(1, MAX_DIM)), element_type(a), param=True)
    s.emit("matmul", a, b)


@recipe("dot_general")
def _dot_general(s: GraphState, op: str) -> None:
    a = s.need(float_min_rank(1))
    a_shape = shape_of(a)
    ra = len(a_shape)
    n_batch = s.integer(0, min(1, ra - 1))
    n_contract = s.integer(1, min(2, ra - n_batch))
    lhs_order = s.draw(st.permutations(range(ra)))
    lhs_batch = list(lhs_order[:n_batch])
    lhs_contracting = list(lhs_order[n_batch : n_batch + n_contract])
    # Keep the rhs rank and the result rank (batch + lhs free + rhs free) within MAX_RANK.
    room = min(MAX_RANK - (ra - n_contract), MAX_RANK - n_batch - n_contract)
    n_free = s.integer(0, min(2, room))
    rb = n_batch + n_contract + n_free
    rhs_order = s.draw(st.permutations(range(rb)))
    rhs_batch = list(rhs_order[:n_batch])
    rhs_contracting = list(rhs_order[n_batch : n_batch + n_contract])
    b_shape = [s.integer(1, MAX_DIM) for _ in range(rb)]
    for lhs_axis, rhs_axis in zip(lhs_batch + lhs_contracting, rhs_batch + rhs_contracting):
        b_shape[rhs_axis] = a_shape[lhs_axis]
    b = s.operand(tuple(b_shape), element_type(a), param=True)
    s.emit(
        "dot_general", a, b,
        lhs_contracting=lhs_contracting, rhs_contracting=rhs_contracting,
        lhs_batch=lhs_batch, rhs_batch=rhs_batch,
    )  # fmt: skip


@recipe("dense_solve")
def _dense_solve(s: GraphState, op: str) -> None:
    """A = tanh(m) + (n+1)·I is strictly diagonally dominant, so never singular.

    (|tanh| <= 1 even for infinite m; a NaN in m only propagates into the result.)
    """
    rhs = s.pick(floats_of_rank(1, 2))
    if rhs is None:
        n = s.integer(1, MAX_DIM)
        rhs = s.operand((n,) if s.flag() else (n, s.integer(1, MAX_DIM)))
    n, et = shape_of(rhs)[0], element_type(rhs)
    m = s.operand((n, n), et)
    diagonal = s.emit("constant", np.eye(n) * (n + 1), dtype=et)
    a = s.emit("add", s.emit("tanh", m), diagonal)
    s.emit("dense_solve", a, rhs)


# Shape ops -------------------------------------------------------------------


def _factor_shape(s: GraphState, n: int) -> list[int]:
    """A random shape with `n` elements (prime factors dealt into 0..4 dims)."""
    factors, p, rest = [], 2, n
    while rest > 1:
        while rest % p == 0:
            factors.append(p)
            rest //= p
        p += 1
    dims = [1] * s.integer(0 if n == 1 else 1, MAX_RANK)
    for f in factors:
        dims[s.integer(0, len(dims) - 1)] *= f
    return dims


@recipe("reshape")
def _reshape(s: GraphState, op: str) -> None:
    x = s.need()
    n = int(np.prod(shape_of(x), dtype=np.int64))
    new_shape = _factor_shape(s, n)
    if new_shape and s.flag():
        new_shape[s.integer(0, len(new_shape) - 1)] = -1
    s.emit("reshape", x, new_shape=new_shape)


@recipe("transpose")
def _transpose(s: GraphState, op: str) -> None:
    x = s.need(lambda v: rank(v) >= 1)
    s.emit("transpose", x, perm=list(s.draw(st.permutations(range(rank(x))))))


@recipe("narrow")
def _narrow(s: GraphState, op: str) -> None:
    x = s.need(lambda v: rank(v) >= 1)
    axis = s.axis(rank(x))
    dim = shape_of(x)[axis]
    start = s.integer(0, dim - 1)
    s.emit("narrow", x, axis=axis, start=start, len=s.integer(1, dim - start))


@recipe("concat")
def _concat(s: GraphState, op: str) -> None:
    x = s.need(lambda v: rank(v) >= 1)
    shape, et = shape_of(x), element_type(x)
    axis = s.axis(len(shape))
    pos = axis % len(shape)

    def fits(v: SSAValue) -> bool:
        vs = shape_of(v)
        return element_type(v) == et and len(vs) == len(shape) and all(
            a == b for i, (a, b) in enumerate(zip(vs, shape)) if i != pos
        )

    pieces = [x]
    for _ in range(s.integer(0, 2)):
        found = s.pick(fits) if s.flag() else None
        if found is None:
            piece_shape = shape[:pos] + (s.integer(1, MAX_DIM),) + shape[pos + 1 :]
            found = s.operand(piece_shape, et)
        pieces.append(found)
    s.emit("concat", *pieces, axis=axis)


@recipe("expand")
def _expand(s: GraphState, op: str) -> None:
    x = s.need()
    shape = shape_of(x)
    lead = [s.integer(1, MAX_DIM) for _ in range(s.integer(0, MAX_RANK - len(shape)))]
    tail = []
    for d in shape:
        if s.flag():
            tail.append(-1)  # keep the input dim
        else:
            tail.append(s.integer(1, MAX_DIM) if d == 1 else d)
    s.emit("expand", x, target_shape=lead + tail)


# Indexing --------------------------------------------------------------------


@recipe("gather")
def _gather(s: GraphState, op: str) -> None:
    table = s.need(lambda v: rank(v) >= 1)
    shape = shape_of(table)
    axis = s.integer(0, len(shape) - 1)
    index_shape = s.shape(0, min(2, MAX_RANK + 1 - len(shape)))
    indices = s.index_constant(index_shape, shape[axis])
    s.emit("gather", table, indices, axis=axis)


@recipe("scatter_add")
def _scatter_add(s: GraphState, op: str) -> None:
    updates = s.need(lambda v: is_float(v) and rank(v) >= 1)
    dim_size = s.integer(1, MAX_DIM)
    indices = s.index_constant((shape_of(updates)[0],), dim_size)
    s.emit("scatter_add", updates, indices, dim_size=dim_size)


# Reductions and normalisation ------------------------------------------------


@recipe("reduce")
def _reduce(s: GraphState, op: str) -> None:
    x = s.need(float_min_rank(1))
    r = rank(x)
    chosen = s.draw(st.permutations(range(r)))[: s.integer(1, r)]
    axes = [a - r if s.flag() else a for a in chosen]
    kind = s.choice(("sum", "mean", "max", "min", "prod"))
    s.emit("reduce", x, kind=kind, axes=axes, keep_dim=s.flag())


@recipe("softmax")
def _softmax(s: GraphState, op: str) -> None:
    x = s.need(float_min_rank(1))
    s.emit("softmax", x, axis=s.axis(rank(x)))


@recipe("cumsum")
def _cumsum(s: GraphState, op: str) -> None:
    x = s.need(float_min_rank(1))
    s.emit("cumsum", x, axis=s.axis(rank(x)), exclusive=s.flag())


@recipe("topk")
def _topk(s: GraphState, op: str) -> None:
    x = s.need(float_min_rank(1))
    s.emit("topk", x, k=s.integer(1, shape_of(x)[-1]))


@recipe("layer_norm", "rms_norm")
def _last_axes_norm(s: GraphState, op: str) -> None:
    x = s.need(float_min_rank(1))
    axis = s.axis(rank(x))
    normalized, et = shape_of(x)[axis:], element_type(x)
    gamma = s.operand(normalized, et, param=True)
    beta = s.operand(normalized, et, param=True)
    s.emit(op, x, gamma, beta, axis=axis, eps=s.choice((1e-5, 1e-6)))


@recipe("group_norm")
def _group_norm(s: GraphState, op: str) -> None:
    x = s.pick(float_min_rank(3))
    if x is None:
        x = s.operand(s.shape(3, MAX_RANK))
    channels, et = shape_of(x)[1], element_type(x)
    gamma = s.operand((channels,), et, param=True)
    beta = s.operand((channels,), et, param=True)
    s.emit(op, x, gamma, beta, num_groups=s.choice(divisors(channels)), eps=1e-5)


# Attention, rope, convolution, pooling -----------------------------------------


@recipe("attention")
def _attention(s: GraphState, op: str) -> None:
    q = s.pick(floats_of_rank(4))
    if q is None:
        q = s.operand(s.shape(4, 4))
    batch, heads, q_len, head_dim = shape_of(q)
    et = element_type(q)
    kv_heads = s.choice(divisors(heads))
    kv_len = s.integer(1, MAX_DIM)
    k = s.operand((batch, kv_heads, kv_len, head_dim), et)
    v = s.operand((batch, kv_heads, kv_len, head_dim), et)
    mask_kind = s.choice(("none", "causal", "sliding_window", "custom", "bias"))
    options: dict[str, object] = {"num_heads": heads, "head_dim": head_dim, "mask_kind": mask_kind}
    mask = None
    if mask_kind == "sliding_window":
        options["window"] = s.integer(1, MAX_DIM)
    elif mask_kind == "custom":
        keep = s.rng().integers(0, 2, size=(batch, kv_len)).astype(np.float64)
        mask = s.emit("constant", keep, dtype=et)
    elif mask_kind == "bias":
        mask = s.operand(s.choice([(q_len, kv_len), (batch, 1, q_len, kv_len)]), et)
    if s.flag():
        options["score_scale"] = s.choice((0.25, 0.5, 1.0))
    if s.flag():
        options["attn_logit_softcap"] = s.choice((5.0, 30.0))
    s.emit("attention", q, k, v, mask, **options)


@recipe("rope")
def _rope(s: GraphState, op: str) -> None:
    x = s.pick(lambda v: is_float(v) and rank(v) >= 2 and shape_of(v)[-1] % 2 == 0)
    if x is None:
        x = s.operand(s.shape(2, 3) + (s.choice((2, 4)),))
    seq, head_dim = shape_of(x)[-2:]
    n_rot = s.choice(range(2, head_dim + 1, 2))
    et = element_type(x)
    cos = s.operand((seq, n_rot // 2), et)
    sin = s.operand((seq, n_rot // 2), et)
    s.emit("rope", x, cos, sin, head_dim=head_dim, n_rot=n_rot)


def _window(s: GraphState, size: int, with_dilation: bool) -> tuple[int, int, int, int]:
    """(kernel, stride, padding, dilation) for one spatial dim, output size >= 1."""
    dilation = s.integer(1, 2) if with_dilation else 1
    padding = s.integer(0, 1)
    largest = (size + 2 * padding - 1) // dilation + 1
    kernel = s.integer(1, min(3, largest))
    if not with_dilation:
        # Pooling: a window must hold at least one real cell.
        kernel = max(1, min(kernel, size))
        padding = min(padding, kernel // 2)
    return kernel, s.integer(1, 2), padding, dilation


def _nchw(s: GraphState) -> SSAValue:
    return s.pick(floats_of_rank(4)) or s.operand(s.shape(4, 4))


@recipe("conv")
def _conv(s: GraphState, op: str) -> None:
    x = _nchw(s)
    _, in_channels, height, width = shape_of(x)
    groups = s.choice(divisors(in_channels))
    out_channels = groups * s.integer(1, 2)
    (kh, sh, ph, dh), (kw, sw, pw, dw) = (_window(s, d, True) for d in (height, width))
    w = s.operand((out_channels, in_channels // groups, kh, kw), element_type(x), param=True)
    s.emit(
        "conv", x, w,
        kernel_size=[kh, kw], stride=[sh, sw], padding=[ph, pw], dilation=[dh, dw], groups=groups,
    )  # fmt: skip


@recipe("pool")
def _pool(s: GraphState, op: str) -> None:
    x = _nchw(s)
    (kh, sh, ph, _), (kw, sw, pw, _) = (_window(s, d, False) for d in shape_of(x)[2:])
    kind = s.choice(("max", "mean"))
    s.emit("pool", x, kind=kind, kernel_size=[kh, kw], stride=[sh, sw], padding=[ph, pw])


# Losses ----------------------------------------------------------------------


def _logits(s: GraphState) -> SSAValue:
    return s.pick(floats_of_rank(2)) or s.operand(s.shape(2, 2))


@recipe("softmax_cross_entropy_with_logits")
def _sce_indexed(s: GraphState, op: str) -> None:
    logits = _logits(s)
    n, c = shape_of(logits)
    s.emit(op, logits, s.index_constant((n,), c))


@recipe("softmax_cross_entropy")
def _sce_dense(s: GraphState, op: str) -> None:
    logits = _logits(s)
    s.emit(op, logits, s.operand(shape_of(logits), element_type(logits)))


@recipe("softmax_cross_entropy_backward")
def _sce_backward(s: GraphState, op: str) -> None:
    logits = _logits(s)
    n, c = shape_of(logits)
    d_loss = s.operand((n,), element_type(logits))
    s.emit(op, logits, s.index_constant((n,), c), d_loss)


# Region ops ------------------------------------------------------------------
#
# `GraphBuilder.if_`/`while_` call a body function with a region builder `rb` and
# the region's block arguments. Values built with `rb` live inside the region, so
# they never join the pool.
#
# Each yielded value is computed from one block argument alone, through ops that
# keep its type exactly, and a `mir.if` computes the same slot from the same
# capture in both branches. Then the yielded types follow the argument types
# even after some dims are made `?` (the shape-specialisation tests do that),
# while `mir.if`/`mir.while` require yielded types equal to each other and to
# the carried types. Mixing two block arguments could break that equality.

Emit = Callable[..., SSAValue]

FLOAT_UNARY = ("neg", "abs", "relu", "tanh", "sin", "sigmoid")
INTEGER_UNARY = ("neg", "abs", "relu")
BINARY = ("add", "sub", "mul", "max", "min")


def _region_emit(rb: GraphBuilder) -> Emit:
    """`GraphState.emit` for a region body: `rb.<op_name>(...)`, kept out of the pool."""
    return lambda op_name, *operands, **attributes: getattr(rb, op_name)(*operands, **attributes)


def _one_element(v: SSAValue) -> bool:
    return all(d == 1 for d in shape_of(v))


def _small_scalar(s: GraphState, emit: Emit, like: SSAValue) -> SSAValue:
    """A rank-0 constant of `like`'s dtype: it broadcasts without changing any shape."""
    value = s.choice((-1.0, -0.5, 0.0, 0.5, 2.0) if is_float(like) else (-1, 0, 1, 2))
    return emit("constant", np.asarray(value), dtype=element_type(like))


def _threshold_predicate(s: GraphState, emit: Emit, x: SSAValue) -> SSAValue:
    """`reduce(x) <cmp> c` as a one-element i1 tensor: true for some data, false for other."""
    if rank(x) > 0:
        kind = s.choice(("sum", "max", "mean"))
        x = emit("reduce", x, kind=kind, axes=list(range(rank(x))), keep_dim=s.flag())
    return emit("compare", x, _small_scalar(s, emit, x), predicate=s.choice(("gt", "ge", "lt", "le")))


def _elementwise_chain(s: GraphState, emit: Emit, x: SSAValue) -> SSAValue:
    """`x` through 0-2 elementwise ops that keep its type (binary ones with `x` or a scalar)."""
    for _ in range(s.integer(0, 2) if is_numeric(x) else 0):
        op = s.choice((FLOAT_UNARY if is_float(x) else INTEGER_UNARY) + BINARY)
        if op in BINARY:
            x = emit(op, x, x if s.flag() else _small_scalar(s, emit, x))
        else:
            x = emit(op, x)
    return x


def _body(s: GraphState, sources: Sequence[int]) -> Callable[..., tuple[SSAValue, ...]]:
    """A region body yielding `chain(args[i])` for each i in `sources` (fresh draws per call)."""

    def build(rb: GraphBuilder, *args: SSAValue) -> tuple[SSAValue, ...]:
        return tuple(_elementwise_chain(s, _region_emit(rb), args[i]) for i in sources)

    return build


@recipe("if")
def _if(s: GraphState, op: str) -> None:
    """Captures 1-3 pool values; both branches yield values computed from the same captures."""
    captures = s.need_several(lambda v: True, 3)
    pred = s.pick(lambda v: _one_element(v) and (is_bool(v) or is_numeric(v)))
    if pred is None or s.flag():
        pred = _threshold_predicate(s, s.emit, s.need(is_numeric))
    index = st.integers(0, len(captures) - 1)
    body = _body(s, s.draw(st.lists(index, min_size=1, max_size=len(captures))))
    s.emit("if_", pred, captures, body, body)


@recipe("while")
def _while(s: GraphState, op: str) -> None:
    """Carries 1-2 numeric values; the condition watches one of them; at most 1-4 iterations."""
    carried = s.need_several(is_numeric, 2)
    watched = s.integer(0, len(carried) - 1)

    def cond(rb: GraphBuilder, *args: SSAValue) -> SSAValue:
        return _threshold_predicate(s, _region_emit(rb), args[watched])

    body = _body(s, range(len(carried)))
    s.emit("while_", carried, cond, body, max_iterations=s.integer(1, 4))


# Coverage bookkeeping ----------------------------------------------------------


def missing_recipes() -> list[str]:
    """MIR ops the generator cannot build yet (`SKIPPED_OPS` excepted)."""
    return sorted(set(OPS_BY_NAME) - set(RECIPES) - SKIPPED_OPS)


def unavailable_ops() -> list[str]:
    """Recipes whose op is not (yet) defined in the mir dialect."""
    return sorted(set(RECIPES) - set(OPS_BY_NAME))


def available_ops() -> list[str]:
    """Ops the generator can use right now."""
    return sorted(set(RECIPES) & set(OPS_BY_NAME))


def _resolve_ops(ops: Sequence[str] | None) -> list[str]:
    if ops is None:
        return available_ops()
    unknown = sorted(set(ops) - set(RECIPES))
    if unknown:
        raise ValueError(f"no graphgen recipe for: {', '.join(unknown)}")
    absent = sorted(set(ops) - set(OPS_BY_NAME))
    if absent:
        raise ValueError(f"ops not defined in the mir dialect yet: {', '.join(absent)}")
    return sorted(set(ops))


# Strategies ------------------------------------------------------------------


def graphs(
    max_ops: int = 10,
    ops: Sequence[str] | None = None,
    *,
    max_inputs: int = 4,
    max_outputs: int = 3,
) -> st.SearchStrategy[ModuleOp]:
    """Modules holding one valid function `@main` built from up to `max_ops` recipe steps.

    `ops` restricts the recipes (default: every op that exists). A step may emit
    helper ops too (constants, `abs`/`add` guards), so the op count can exceed
    `max_ops`. Some values stay unused, which gives dead code to passes.
    """
    names = _resolve_ops(ops)
    if not names:
        raise ValueError("no ops to generate graphs from")

    @st.composite
    def build(draw) -> ModuleOp:
        state = GraphState(draw, GraphBuilder("main"), max_inputs)
        for _ in range(state.integer(1, min(2, max_inputs))):
            state.new_arg(state.shape())
        steps = state.integer(1, max_ops)
        done = 0
        for _ in range(4 * steps):  # bounded: recipes may keep declining
            if done == steps:
                break
            name = state.choice(names)
            try:
                RECIPES[name](state, name)
                done += 1
            except Decline:
                pass
        candidates = state.produced or state.pool
        chosen = draw(
            st.lists(
                st.integers(0, len(candidates) - 1),
                min_size=1,
                max_size=min(max_outputs, len(candidates)),
                unique=True,
            )
        )
        state.builder.output(*(candidates[i] for i in chosen))
        return state.builder.module()

    return build()


def inputs_for(module: ModuleOp, seed: int = 0, function: str | None = None) -> list[np.ndarray]:
    """Deterministic random arguments for a generated (or any static) function."""
    return random_inputs(find_function(module, function), seed)
