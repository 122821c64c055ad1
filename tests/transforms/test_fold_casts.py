"""`rlx-fold-casts`: what it folds, what it must keep, and that no value ever changes."""

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp

from rlx_xdsl import dtypes, numerics
from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.context import parse_module
from rlx_xdsl.dialects.mir import contraction as ct
from rlx_xdsl.dialects.mir import elementwise as ew
from rlx_xdsl.dialects.mir import shape as sh
from rlx_xdsl.run import run_function
from rlx_xdsl.testing.graphgen import graphs, inputs_for
from rlx_xdsl.testing.loosen import loosen_returned
from rlx_xdsl.transforms.fold_casts import FoldCastsPass


def assert_same_values(got: np.ndarray, want: np.ndarray) -> None:
    """Equal dtypes and values, NaN equal to NaN (ml_dtypes' floats and integers compared
    through f32 and i64, which numpy's NaN test and comparisons read)."""
    assert got.dtype == want.dtype
    if not hasattr(np, got.dtype.name):
        wide = np.float32 if numerics.is_float(got.dtype) else np.int64
        got, want = got.astype(wide), want.astype(wide)
    np.testing.assert_array_equal(got, want)


def fold(module: ModuleOp) -> ModuleOp:
    FoldCastsPass().apply(Context(), module)
    module.verify()
    return module


def body(module: ModuleOp) -> list[str]:
    """The function's ops as text, without the return."""
    return [str(op) for op in module.ops.first.body.block.ops][:-1]


def returned(module: ModuleOp) -> list[str]:
    ret = module.ops.first.body.block.last_op
    return [v.name_hint or str(v.owner.name) for v in ret.operands]


def one_function(ops: str, args: str, results: str, returned_values: str) -> ModuleOp:
    result_types = ", ".join(t.split(":")[1].strip() for t in results.split(","))
    return parse_module(
        f"func.func @f({args}) -> ({result_types}) {{\n{ops}\n"
        f"  func.return {returned_values} : {result_types}\n}}"
    )


def test_identity_cast_is_removed():
    module = fold(parse_module("""
    func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
      %y = mir.cast %x : (tensor<4xf32>) -> tensor<4xf32>
      func.return %y : tensor<4xf32>
    }"""))
    assert body(module) == [] and returned(module) == ["x"]


def test_widen_then_narrow_back_is_the_input_but_narrow_then_widen_rounds():
    module = fold(parse_module("""
    func.func @f(%h: tensor<4xf16>, %x: tensor<4xf32>) -> (tensor<4xf16>, tensor<4xf32>) {
      %wide = mir.cast %h : (tensor<4xf16>) -> tensor<4xf32>
      %back = mir.cast %wide : (tensor<4xf32>) -> tensor<4xf16>
      %narrow = mir.cast %x : (tensor<4xf32>) -> tensor<4xf16>
      %rounded = mir.cast %narrow : (tensor<4xf16>) -> tensor<4xf32>
      func.return %back, %rounded : tensor<4xf16>, tensor<4xf32>
    }"""))
    assert returned(module) == ["h", "rounded"]
    assert len(body(module)) == 2  # the unused widening went with the chain it fed


def test_a_chain_after_an_exact_step_starts_from_the_input_for_float_targets_only():
    module = fold(parse_module("""
    func.func @f(%h: tensor<4xf16>) -> (tensor<4xbf16>, tensor<4xi32>) {
      %wide = mir.cast %h : (tensor<4xf16>) -> tensor<4xf64>
      %b = mir.cast %wide : (tensor<4xf64>) -> tensor<4xbf16>
      %i = mir.cast %wide : (tensor<4xf64>) -> tensor<4xi32>
      func.return %b, %i : tensor<4xbf16>, tensor<4xi32>
    }"""))
    ops = {op.result.name_hint: op for op in module.ops.first.body.block.ops if isinstance(op, ew.CastOp)}
    assert ops["b"].input.name_hint == "h"  # f16 -> bf16 directly: rounds the same value
    assert ops["i"].input.name_hint == "wide"  # integer targets keep their path (NaN/inf)


def test_duplicate_casts_merge_right_after_the_definition():
    module = fold(parse_module("""
    func.func @f(%x: tensor<4xf32>) -> (tensor<4xf16>, tensor<4xf16>) {
      %e = mir.exp %x : (tensor<4xf32>) -> tensor<4xf32>
      %n = mir.neg %e : (tensor<4xf32>) -> tensor<4xf32>
      %a = mir.cast %e : (tensor<4xf32>) -> tensor<4xf16>
      %b = mir.cast %e : (tensor<4xf32>) -> tensor<4xf16>
      func.return %a, %b : tensor<4xf16>, tensor<4xf16>
    }"""))
    ops = list(module.ops.first.body.block.ops)
    assert [op.name for op in ops] == ["mir.exp", "mir.cast", "mir.neg", "func.return"]
    assert returned(module) == ["a", "a"]


def test_blocked_casts_and_unrelated_dead_ops_are_kept():
    text = """
    func.func @f(%x: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
      %s = mir.cast %x config <sf_block = [2, 2]> : (tensor<4x4xf32>) -> tensor<4x4xf32>
      %t = mir.cast %x config <sf_block = [2, 2]> : (tensor<4x4xf32>) -> tensor<4x4xf32>
      %dead = mir.cast %x : (tensor<4x4xf32>) -> tensor<4x4xf16>
      func.return %s, %t : tensor<4x4xf32>, tensor<4x4xf32>
    }"""
    module = parse_module(text)
    before = str(module)
    assert str(fold(module)) == before


def test_folding_is_a_fixpoint():
    module = parse_module("""
    func.func @f(%x: tensor<4xi8>) -> tensor<4xi8> {
      %a = mir.cast %x : (tensor<4xi8>) -> tensor<4xi16>
      %b = mir.cast %a : (tensor<4xi16>) -> tensor<4xf32>
      %c = mir.cast %b : (tensor<4xf32>) -> tensor<4xf64>
      %d = mir.cast %c : (tensor<4xf64>) -> tensor<4xi8>
      func.return %d : tensor<4xi8>
    }""")
    fold(module)
    assert body(module) == [] and returned(module) == ["x"]
    once = str(module)
    assert str(fold(module)) == once


# No value ever changes -------------------------------------------------------------------

SAMPLES = {
    "bool": np.array([True, False]),
    "int": np.array([0, 1, -1, 2, 127, -128, 255, 256, 257, 2049, 32767, -32768, 65535, 2**24 + 1,
                     2**31 - 1, -(2**31), 2**53 + 1, -(2**62)], np.int64),  # fmt: skip
    "float": np.array([0.0, -0.0, 1.0, -1.5, 1 / 3, 0.1, 257.0, -129.7, 2049.0, 65504.0, 7e4, 3.0e38,
                       1e-8, 1e-40, 6e-8, np.inf, -np.inf, np.nan, 2.0**31, -(2.0**63), 1e300]),  # fmt: skip
}


def samples_of(dtype: dtypes.DType) -> np.ndarray:
    """Special values of `dtype`: extremes, signed zeros, subnormals, infinities, NaN, wrap-arounds."""
    floats = SAMPLES["float"]
    with np.errstate(all="ignore"):
        if dtype.kind == "complex":
            return (floats + 1j * floats[::-1]).astype(dtype.numpy)
        source = SAMPLES["bool" if dtype.kind == "bool" else "int" if dtype.is_integer else "float"]
        return source.astype(dtype.numpy)


@pytest.mark.filterwarnings("ignore::numpy.exceptions.ComplexWarning")
@pytest.mark.parametrize("source", [d.name for d in dtypes.DTYPES])
def test_every_two_cast_chain_folds_to_the_same_values(source):
    """From `source`, `cast(cast(x -> B) -> C)` for every B holding `source` exactly (the
    chains the pass shortens) and every C; and, to show the others are kept, every other B
    and C but the interpreter-only narrow dtypes. Run before and after folding."""
    a = dtypes.dtype_named(source)
    x = samples_of(a)
    b = GraphBuilder("f")
    arg = b.input("x", x.shape, a.element_type)
    wide = [d for d in dtypes.DTYPES if d.name not in dtypes.INTERPRETER_ONLY]
    chains = [
        (mid.element_type, to.element_type)
        for mid in dtypes.DTYPES
        for to in (dtypes.DTYPES if dtypes.converts_exactly(a.element_type, mid.element_type) else wide)
        if mid in wide or dtypes.converts_exactly(a.element_type, mid.element_type)
    ]
    b.output(*(b.cast(b.cast(arg, mid), to) for mid, to in chains))
    module = b.module()
    with np.errstate(all="ignore"):
        before = run_function(module, "f", [x])
        fold(module)
        after = run_function(module, "f", [x])
    remaining = sum(1 for op in module.walk() if isinstance(op, ew.CastOp))
    assert remaining < 2 * len(chains)  # something was folded
    for want, got in zip(before, after, strict=True):
        assert_same_values(got, want)


@pytest.mark.filterwarnings("ignore::numpy.exceptions.ComplexWarning")
def test_exact_conversions():
    """The table `converts_exactly` gives, against numpy round trips on every sample."""
    for a in dtypes.DTYPES:
        for b in dtypes.DTYPES:
            if not dtypes.converts_exactly(a.element_type, b.element_type):
                continue
            x = samples_of(a)
            assert_same_values(_astype(_astype(x, b.numpy), a.numpy), x)
    assert not dtypes.converts_exactly(ml_dtypes_bf16(), dtypes.dtype_named("f16").element_type)
    assert dtypes.converts_exactly(dtypes.dtype_named("i8").element_type, ml_dtypes_bf16())


def _astype(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """numpy's conversion; ml_dtypes converts its 2- and 4-bit integers only to and from wide ones."""
    if not (numerics.is_float(x.dtype) or numerics.is_float(dtype)) and x.dtype.kind != "c":
        return x.astype(np.int64).astype(dtype)
    return x.astype(dtype)


def ml_dtypes_bf16():
    return dtypes.dtype_of_numpy(np.dtype(ml_dtypes.bfloat16)).element_type


CAST_HEAVY = [
    ew.CastOp, ew.ConstantOp, ew.AddOp, ew.NegOp, ew.SiluOp, ew.CompareOp, ew.WhereOp, ct.MatmulOp, sh.ReshapeOp,
]  # fmt: skip


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs(max_ops=14, ops=CAST_HEAVY), st.booleans())
def test_random_graphs_compute_the_same_values_after_folding(module, loosen):
    """Also with returned values declared `?` (casts then change declared shapes): the types stay valid."""
    if loosen:
        loosen_returned(module)
    signature = module.ops.first.function_type
    inputs = inputs_for(module)
    with np.errstate(all="ignore"):
        before = run_function(module, None, inputs)
        fold(module)
        after = run_function(module, None, inputs)
    assert module.ops.first.function_type == signature
    for want, got in zip(before, after, strict=True):
        assert_same_values(got, want)
