"""`rlx-canonicalize`: each pattern fires, outputs never change, the walk reaches a fixpoint."""

from collections import Counter
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.context import Context
from xdsl.dialects.builtin import FileLineColLoc, ModuleOp
from xdsl.passes import PassPipeline
from xdsl.pattern_rewriter import PatternRewriteWalker, RewritePattern

from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.context import make_context, parse_module
from rlx_xdsl.dialects.mir import elementwise as ew
from rlx_xdsl.dialects.mir import shape as sh
from rlx_xdsl.dtypes import numpy_dtype
from rlx_xdsl.ir.source import parse_source
from rlx_xdsl.run import run_function
from rlx_xdsl.testing.graphgen import graphs, inputs_for
from rlx_xdsl.testing.identities import kinds_for, wrap
from rlx_xdsl.transforms import canonicalize as canon
from rlx_xdsl.transforms import get_all_passes
from rlx_xdsl.transforms.canonicalize import PATTERNS, CanonicalizePass


def op_counts(module: ModuleOp) -> Counter[str]:
    return Counter(op.name for op in module.walk() if op.name not in ("builtin.module", "func.func"))


def run_pass(module: ModuleOp) -> ModuleOp:
    CanonicalizePass().apply(Context(), module)
    module.verify()
    return module


def assert_same_outputs(before: list[np.ndarray], after: list[np.ndarray]) -> None:
    """Equal values and dtypes; NaNs at the same positions count as equal."""
    assert len(before) == len(after)
    for want, got in zip(before, after):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


# One hand-built graph per pattern -----------------------------------------------------
#
# Each builder returns a module in which its pattern can fire. `CASES` adds the
# kind of op that pattern replaces and the ops the whole pass leaves (besides
# func.return).


def add_of_zero() -> ModuleOp:
    b = GraphBuilder("f")
    x = b.input("x", [2, 3])
    i = b.input("i", [3], "i32")
    b.output(
        b.add(x, b.constant(np.full(3, -0.0))),
        b.add(b.constant(np.full((2, 3), -0.0)), x),  # a non-splat array of zeros
        b.add(b.constant(0, "i32"), i),
    )
    return b.module()


def sub_of_zero() -> ModuleOp:
    b = GraphBuilder("f")
    x = b.input("x", [4])
    b.output(b.sub(x, b.constant(np.zeros(()))))
    return b.module()


def mul_by_one() -> ModuleOp:
    b = GraphBuilder("f")
    x = b.input("x", [2, 2], "bf16")
    b.output(b.mul(b.constant(1.0, "bf16"), x), b.mul(x, b.constant(np.ones((2, 2)), "bf16")))
    return b.module()


def neg_of_neg() -> ModuleOp:
    b = GraphBuilder("f")
    x = b.input("x", [4], "i8")  # -(-(-128)) wraps back to -128
    b.output(b.neg(b.neg(x)))
    return b.module()


def reshape_of_reshape() -> ModuleOp:
    b = GraphBuilder("f")
    x = b.input("x", [2, 3, 4])
    b.output(b.reshape(b.reshape(x, new_shape=[6, 4]), new_shape=[4, -1]))
    return b.module()


def identity_reshape() -> ModuleOp:
    b = GraphBuilder("f")
    x = b.input("x", [2, 3])
    b.output(b.exp(b.reshape(x, new_shape=[-1, 3])))
    return b.module()


def transpose_of_transpose() -> ModuleOp:
    b = GraphBuilder("f")
    x = b.input("x", [2, 3, 4])
    t = b.transpose(x, perm=[2, 0, 1])
    b.output(b.transpose(t, perm=[0, 2, 1]), b.transpose(t, perm=[1, 2, 0]))
    return b.module()


def identity_transpose() -> ModuleOp:
    b = GraphBuilder("f")
    x = b.input("x", [2, 3])
    b.output(b.transpose(x, perm=[0, 1]))
    return b.module()


def identity_cast() -> ModuleOp:
    b = GraphBuilder("f")
    x = b.input("x", [3], "f16")
    b.output(b.cast(x, "f16"))
    return b.module()


def identity_expand() -> ModuleOp:
    b = GraphBuilder("f")
    x = b.input("x", [1, 3])
    b.output(b.expand(x, target_shape=[1, -1]))
    return b.module()


def where_of_constant_condition() -> ModuleOp:
    b = GraphBuilder("f")
    x = b.input("x", [2, 3])
    y = b.input("y", [2, 3])
    b.output(
        b.where(b.constant(True), x, y),
        b.where(b.constant(np.zeros((2, 3), bool)), x, y),  # non-splat, false everywhere
    )
    return b.module()


def concat_of_one() -> ModuleOp:
    b = GraphBuilder("f")
    x = b.input("x", [2, 3])
    b.output(b.concat(x, axis=-1))
    return b.module()


def attention_of_repeated_kv() -> ModuleOp:
    """GQA's repeat_kv (4 query heads over 2 KV heads) of k and v before attention."""
    q, kv, one = "tensor<1x4x3x8xf32>", "tensor<1x2x3x8xf32>", "tensor<1x1x3x8xf32>"
    lines = []
    for name in ("k", "v"):
        for j in range(2):
            lines.append(f"%{name}{j} = mir.narrow %{name} axis = 1 start = {j} len = 1 : ({kv}) -> {one}")
        lines.append(f"%{name}r = mir.concat %{name}0, %{name}0, %{name}1, %{name}1 axis = 1 : ({', '.join([one] * 4)}) -> {q}")
    lines.append(f"%o = mir.attention %q, %kr, %vr num_heads = 4 head_dim = 8 mask_kind = causal : ({q}, {q}, {q}) -> {q}")
    body = "\n  ".join(lines)
    return parse_module(f"func.func @f(%q: {q}, %k: {kv}, %v: {kv}) -> {q} {{\n  {body}\n  func.return %o : {q}\n}}")


CASES: dict[type[RewritePattern], tuple[Callable[[], ModuleOp], str, dict[str, int]]] = {
    canon.AddOfZero: (add_of_zero, "mir.add", {}),
    canon.SubOfZero: (sub_of_zero, "mir.sub", {}),
    canon.MulByOne: (mul_by_one, "mir.mul", {}),
    canon.NegOfNeg: (neg_of_neg, "mir.neg", {}),
    canon.ReshapeOfReshape: (reshape_of_reshape, "mir.reshape", {"mir.reshape": 1}),
    canon.IdentityReshape: (identity_reshape, "mir.reshape", {"mir.exp": 1}),
    # [2, 0, 1] then [0, 2, 1] is [2, 1, 0]; then [1, 2, 0] is the identity.
    canon.TransposeOfTranspose: (transpose_of_transpose, "mir.transpose", {"mir.transpose": 1}),
    canon.IdentityTranspose: (identity_transpose, "mir.transpose", {}),
    canon.IdentityCast: (identity_cast, "mir.cast", {}),
    canon.IdentityExpand: (identity_expand, "mir.expand", {}),
    canon.WhereOfConstantCondition: (where_of_constant_condition, "mir.where", {}),
    canon.ConcatOfOne: (concat_of_one, "mir.concat", {}),
    canon.AttentionOfRepeatedKv: (attention_of_repeated_kv, "mir.attention", {"mir.attention": 1}),
}


def test_every_pattern_has_a_case():
    assert set(CASES) == {type(p) for p in PATTERNS}
    assert len(PATTERNS) == len(CASES)


@pytest.mark.parametrize("pattern", PATTERNS, ids=lambda p: type(p).__name__)
def test_each_pattern_fires_on_its_own_and_keeps_outputs(pattern: RewritePattern):
    build, root, _ = CASES[type(pattern)]
    module = build()
    module.verify()
    inputs = inputs_for(module)
    expected = run_function(module, None, inputs)
    roots = [op for op in module.walk() if op.name == root]

    assert PatternRewriteWalker(pattern).rewrite_module(module)
    module.verify()
    assert any(op.parent is None for op in roots)  # replaced: folded, or merged into a new op
    assert_same_outputs(expected, run_function(module, None, inputs))


@pytest.mark.parametrize("pattern", PATTERNS, ids=lambda p: type(p).__name__)
def test_the_pass_folds_each_case_completely(pattern: RewritePattern):
    """The whole pass also erases the constants and inner ops the folds leave unused."""
    build, _, left = CASES[type(pattern)]
    module = build()
    inputs = inputs_for(module)
    expected = run_function(module, None, inputs)
    assert op_counts(run_pass(module)) == Counter({**left, "func.return": 1})
    assert_same_outputs(expected, run_function(module, None, inputs))


def test_merged_ops_keep_the_location_of_the_op_they_replace():
    module, _ = parse_source(
        make_context(),
        """
func.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %t = mir.transpose %x perm = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %r = mir.reshape %t new_shape = [6] : (tensor<3x2xf32>) -> tensor<6xf32>
  %s = mir.reshape %r new_shape = [2, 3] : (tensor<6xf32>) -> tensor<2x3xf32>
  func.return %s : tensor<2x3xf32>
}""",
        "canon.mlir",
    )
    run_pass(module)
    merged = [op for op in module.walk() if op.name == "mir.reshape"]
    assert len(merged) == 1
    assert merged[0].operands[0].owner.name == "mir.transpose"
    location = merged[0].location
    assert isinstance(location, FileLineColLoc)
    assert (location.filename.data, location.line.data, location.column.data) == ("canon.mlir", 5, 3)


NOT_FOLDABLE = {
    "broadcasting zero": """
func.func @f(%x: tensor<3xf32>) -> tensor<2x3xf32> {
  %z = mir.constant dense<-0.0> : tensor<2x3xf32>
  %y = mir.add %x, %z : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}""",
    "promoting one": """
func.func @f(%x: tensor<3xi32>) -> tensor<3xf64> {
  %o = mir.constant dense<1.0> : tensor<f32>
  %y = mir.mul %x, %o : (tensor<3xi32>, tensor<f32>) -> tensor<3xf64>
  func.return %y : tensor<3xf64>
}""",
    "zero that may broadcast a ? dim": """
func.func @f(%x: tensor<?xf32>) -> tensor<?xf32> {
  %z = mir.constant dense<-0.0> : tensor<3xf32>
  %y = mir.add %x, %z : (tensor<?xf32>, tensor<3xf32>) -> tensor<?xf32>
  func.return %y : tensor<?xf32>
}""",
    "swap of equal dims": """
func.func @f(%x: tensor<3x3xf32>) -> tensor<3x3xf32> {
  %y = mir.transpose %x perm = [1, 0] : (tensor<3x3xf32>) -> tensor<3x3xf32>
  func.return %y : tensor<3x3xf32>
}""",
    "mixed condition": """
func.func @f(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf32> {
  %c = mir.constant dense<[true, false]> : tensor<2xi1>
  %y = mir.where %c, %a, %b : (tensor<2xi1>, tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}""",
}


# IEEE 754 special values, against numpy --------------------------------------------
#
# Each fold must give, bit for bit in the sign, what numpy computes for the op it
# removes: a zero with the wrong sign (`x + 0.0` at x = -0.0) is kept, not folded.

SPECIAL = [-0.0, 0.0, np.inf, -np.inf, np.nan, -1.5, 2.0]

IEEE_CASES = {
    # name: (op, constant, constant on the left, folds)
    "x + -0.0": ("add", -0.0, False, True),
    "-0.0 + x": ("add", -0.0, True, True),
    "x + 0.0": ("add", 0.0, False, False),
    "0.0 + x": ("add", 0.0, True, False),
    "x - 0.0": ("sub", 0.0, False, True),
    "x - -0.0": ("sub", -0.0, False, False),
    "0.0 - x": ("sub", 0.0, True, False),
    "x * 1": ("mul", 1.0, False, True),
    "1 * x": ("mul", 1.0, True, True),
}


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
@pytest.mark.parametrize("case", IEEE_CASES.values(), ids=IEEE_CASES.keys())
def test_folds_are_exact_on_signed_zeros_nan_and_infinities(case, dtype: str):
    kind, number, constant_first, folds = case
    b = GraphBuilder("f")
    x = b.input("x", [len(SPECIAL)], dtype)
    c = b.constant(number, dtype)
    b.output(getattr(b, kind)(c, x) if constant_first else getattr(b, kind)(x, c))
    module = b.module()
    values = np.array(SPECIAL, np.float32)
    want = {"add": np.add, "sub": np.subtract, "mul": np.multiply}[kind](
        *((np.float32(number), values) if constant_first else (values, np.float32(number)))
    )
    assert canon.canonicalize(module) == folds
    (got,) = run_function(module, "f", [values.astype(numpy_dtype(x.type.element_type))])
    got = got.astype(np.float32)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


def test_complex_folds_are_exact():
    """`z + (-0-0j)` folds; `z * (1+0j)` does not: numpy gives `(inf+0j) * (1+0j) = inf+nanj`."""
    b = GraphBuilder("f")
    z = b.input("z", [3], "complex<f32>")
    b.output(b.add(z, b.constant(complex(-0.0, -0.0), "complex<f32>")), b.mul(z, b.constant(1, "complex<f32>")))
    module = b.module()
    assert canon.canonicalize(module)
    assert [op.name for op in module.walk()].count("mir.mul") == 1
    assert [op.name for op in module.walk()].count("mir.add") == 0
    values = np.array([complex(np.inf, 0), complex(-0.0, -0.0), complex(1, np.nan)], np.complex64)
    with np.errstate(invalid="ignore"):
        want = [values + np.complex64(complex(-0.0, -0.0)), values * np.complex64(1)]
    for got, expected in zip(run_function(module, "f", [values]), want):
        for part in ("real", "imag"):
            np.testing.assert_array_equal(getattr(got, part), getattr(expected, part))
            np.testing.assert_array_equal(np.signbit(getattr(got, part)), np.signbit(getattr(expected, part)))


@pytest.mark.parametrize("text", NOT_FOLDABLE.values(), ids=NOT_FOLDABLE.keys())
def test_ops_that_do_work_are_kept(text: str):
    module = parse_module(text)
    module.verify()
    before = str(module)
    assert not canon.canonicalize(module)
    assert str(module) == before


def test_a_rejected_candidate_leaves_no_use_behind():
    """The merged reshape would infer ?x2 instead of 4x2: it is not inserted, nor left using %x."""
    module = parse_module("""
func.func @f(%x: tensor<?x4xf32>) -> tensor<4x2xf32> {
  %flat = mir.reshape %x new_shape = [8] : (tensor<?x4xf32>) -> tensor<8xf32>
  %pairs = mir.reshape %flat new_shape = [-1, 2] : (tensor<8xf32>) -> tensor<4x2xf32>
  func.return %pairs : tensor<4x2xf32>
}""")
    x = module.ops.first.body.block.args[0]
    assert not canon.canonicalize(module)
    assert [use.operation.name for use in x.uses] == ["mir.reshape"]


def test_the_pass_is_registered_and_parses_from_a_pipeline():
    assert get_all_passes()["rlx-canonicalize"]() is CanonicalizePass
    pipeline = PassPipeline.parse_spec(get_all_passes(), "rlx-canonicalize")
    assert isinstance(pipeline.passes[0], CanonicalizePass)


# Random graphs ----------------------------------------------------------------------


@st.composite
def graphs_with_identities(draw, max_ops: int = 10, ops=None, most_wrapped: int = 4):
    """A random graph whose values are wrapped in 0..`most_wrapped` chains that compute nothing."""
    module = draw(graphs(max_ops=max_ops, ops=ops))
    block = module.ops.first.body.block
    values = [*block.args, *(r for op in block.ops for r in op.results)]
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    wrapped = 0
    for value in draw(st.lists(st.sampled_from(values), max_size=most_wrapped)):
        wrap(value, draw(st.sampled_from(kinds_for(value))), rng)
        wrapped += 1
    module.verify()
    return module, wrapped


def check_pass_on(module: ModuleOp, wrapped: int) -> None:
    inputs = inputs_for(module)
    expected = run_function(module, None, inputs)
    n_before = sum(op_counts(module).values())
    changed = canon.canonicalize(module)
    module.verify()
    assert_same_outputs(expected, run_function(module, None, inputs))
    assert sum(op_counts(module).values()) <= n_before  # patterns never add ops
    if wrapped:
        assert changed
    text = str(module)
    assert not canon.canonicalize(module)  # a fixpoint: nothing left to fold
    assert str(module) == text


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs_with_identities(max_ops=12))
def test_random_graphs_keep_their_outputs(case):
    check_pass_on(*case)


SHAPE_AND_ARITHMETIC_OPS = (
    ew.ConstantOp, ew.AddOp, ew.SubOp, ew.MulOp, ew.NegOp, ew.ExpOp, ew.CastOp, ew.WhereOp, ew.CompareOp,
    sh.ReshapeOp, sh.TransposeOp, sh.ExpandOp, sh.ConcatOp, sh.NarrowOp,
)  # fmt: skip


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs_with_identities(max_ops=12, ops=SHAPE_AND_ARITHMETIC_OPS))
def test_random_shape_op_graphs_keep_their_outputs(case):
    """Graphs of the ops the patterns match, where stacked reshapes and transposes arise by themselves."""
    check_pass_on(*case)


def test_a_merged_reshape_keeps_the_outer_reshapes_like():
    """`reshape(reshape(x, [-1]), [?, ?, 4] like ids)` is one reshape of x sized by `ids`:
    the merge keeps the sizes read at run time (the same values at two sizes)."""
    module = parse_module("""
func.func @f(%x: tensor<?x4xf32>, %ids: tensor<?x?xi64>) -> tensor<?x?x4xf32> {
  %flat = mir.reshape %x new_shape = [-1] : (tensor<?x4xf32>) -> tensor<?xf32>
  %r = mir.reshape %flat new_shape = [-1, -1, 4] like %ids like_dims = [0, 1, -1] : (tensor<?xf32>, tensor<?x?xi64>) -> tensor<?x?x4xf32>
  func.return %r : tensor<?x?x4xf32>
}""")
    run_pass(module)
    (merged,) = [op for op in module.walk() if op.name == "mir.reshape"]
    assert merged.like is not None and merged.like_dims.get_values() == (0, 1, -1)
    for batch, length in ((1, 3), (2, 2)):
        x = np.arange(batch * length * 4, dtype=np.float32).reshape(-1, 4)
        (got,) = run_function(module, "f", [x, np.zeros((batch, length), np.int64)])
        np.testing.assert_array_equal(got, x.reshape(batch, length, 4))
