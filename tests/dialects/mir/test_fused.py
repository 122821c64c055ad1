"""Fused MIR ops against independent formulas and against the primitive chains they stand for.

Each op is checked twice: against a numpy formula written here (float64, with
a tolerance), and bit for bit against the unfused chain built by hand from
primitive ops, so fused and unfused graphs agree exactly. The unfuse rules
are checked to emit that same chain.
"""

import math
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import TensorType, bf16, f32, i32
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.dialects.mir.fused import (
    FusedAttentionBlockOp,
    FusedMatmulBiasActOp,
    FusedResidualLayerNormOp,
    FusedResidualRmsNormOp,
    FusedSwigluOp,
    FusedTransformerLayerOp,
)
from rlx_xdsl.dialects.traits import Precision, precision_class
from rlx_xdsl.run import run_function
from rlx_xdsl.shapes import DYNAMIC
from rlx_xdsl.testing.expected_errors import expected_error_test
from rlx_xdsl.testing.oracles import run_op
from rlx_xdsl.transforms.unfuse import UnfusePass

RNG = np.random.default_rng(23)
INVALID = Path(__file__).parents[3] / "lit_tests/dialects/mir/invalid-fused.mlir"
D = DYNAMIC


def rand(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def run_graph(build, inputs):
    """Build `f(*inputs)` with `build(b, *args)` returning the outputs, run it."""
    b = GraphBuilder("f")
    args = [b.input(f"in{i}", x.shape, _dtype(x)) for i, x in enumerate(inputs)]
    outs = build(b, *args)
    b.output(*(outs if isinstance(outs, tuple) else (outs,)))
    module = b.module()
    module.verify()
    return run_function(module, "f", inputs)


def _dtype(x):
    return {np.dtype(np.float32): "f32", np.dtype(ml_dtypes.bfloat16): "bf16", np.dtype(np.float16): "f16"}[x.dtype]


def unfused_outputs(build, inputs):
    """Run the graph, then `rlx-unfuse` it and run it again: (fused outputs, unfused outputs, module)."""
    b = GraphBuilder("f")
    args = [b.input(f"in{i}", x.shape, _dtype(x)) for i, x in enumerate(inputs)]
    outs = build(b, *args)
    b.output(*(outs if isinstance(outs, tuple) else (outs,)))
    module = b.module()
    fused = run_function(module, "f", inputs)
    UnfusePass().apply(Context(), module)
    module.verify()
    return fused, run_function(module, "f", inputs), module


def body_ops(module):
    return [op.name for op in module.ops.first.body.block.ops][:-1]


# Independent formulas (float64) -------------------------------------------------------


def gelu_ref(v):
    return v * 0.5 * (1.0 + np.vectorize(math.erf)(v / math.sqrt(2.0)))


def silu_ref(v):
    return v / (1.0 + np.exp(-v))


ACTIVATION_REF = {None: lambda v: v, "gelu": gelu_ref, "silu": silu_ref, "relu": lambda v: np.maximum(v, 0.0)}


def rms_norm_ref(s, gamma, beta, axis, eps):
    axes = tuple(range(axis % s.ndim, s.ndim))
    return s / np.sqrt(np.mean(s * s, axis=axes, keepdims=True) + eps) * gamma + beta


# mir.fused_matmul_bias_act ---------------------------------------------------------------


@pytest.mark.parametrize("activation", [None, "gelu", "silu", "relu"])
@pytest.mark.parametrize(("x_shape", "bias_shape"), [((3, 4), (5,)), ((2, 3, 4), (1, 5)), ((2, 3, 4), ())])
def test_matmul_bias_act_matches_formula(activation, x_shape, bias_shape):
    x, w, bias = rand(*x_shape), rand(4, 5), rand(*bias_shape)
    out = run_op("fused_matmul_bias_act", [x, w, bias], activation=activation)
    expected = ACTIVATION_REF[activation](x.astype(np.float64) @ w + bias)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("activation", [None, "gelu", "silu", "tanh", "abs"])
@pytest.mark.parametrize("dtype", [np.float32, ml_dtypes.bfloat16])
def test_matmul_bias_act_equals_the_chain_it_replaces(activation, dtype):
    x, w, bias = rand(2, 3, 4, dtype=dtype), rand(4, 6, dtype=dtype), rand(6, dtype=dtype)
    (fused,) = run_graph(lambda b, x, w, c: b.fused_matmul_bias_act(x, w, c, activation=activation), [x, w, bias])

    def chain(b, x, w, c):
        value = b.add(b.matmul(x, w), c)
        return getattr(b, activation)(value) if activation else value

    (unfused,) = run_graph(chain, [x, w, bias])
    assert fused.dtype == dtype
    np.testing.assert_array_equal(fused.astype(np.float32), unfused.astype(np.float32))


def test_matmul_bias_act_unfuses_to_matmul_add_activation():
    inputs = [rand(3, 4), rand(4, 2), rand(2)]
    fused, unfused, module = unfused_outputs(
        lambda b, x, w, c: b.fused_matmul_bias_act(x, w, c, activation="silu"), inputs
    )
    assert body_ops(module) == ["mir.matmul", "mir.add", "mir.silu"]
    np.testing.assert_array_equal(fused[0], unfused[0])


def test_matmul_bias_act_infers_dynamic_and_integer_types():
    b = GraphBuilder()
    out = b.fused_matmul_bias_act(b.input("x", [D, 3, 4]), b.input("w", [4, D]), b.input("c", [D]))
    assert out.type == TensorType(f32, [D, 3, D])
    out = b.fused_matmul_bias_act(
        b.input("i", [2, 3], "i32"), b.input("wi", [3, 2], "i32"), b.input("ci", [], "i32"), activation="relu"
    )
    assert out.type == TensorType(i32, [2, 2])


def test_matmul_bias_act_traits():
    assert precision_class(FusedMatmulBiasActOp) is Precision.COMPUTE
    assert FusedMatmulBiasActOp.has_trait(Pure)


# mir.fused_swiglu -------------------------------------------------------------------------


@pytest.mark.parametrize("gate_first", [False, True])
def test_swiglu_matches_formula(gate_first):
    x = rand(2, 3, 8)
    low, high = x[..., :4].astype(np.float64), x[..., 4:].astype(np.float64)
    up, gate = (high, low) if gate_first else (low, high)
    out = run_op("fused_swiglu", [x], gate_first=gate_first)
    assert out.shape == (2, 3, 4)
    np.testing.assert_allclose(out, silu_ref(gate) * up, rtol=1e-5, atol=1e-6)


def test_swiglu_gate_first_swaps_the_halves():
    """Gate 0 makes silu 0 whatever up is: which half is the gate shows in the zeros."""
    x = np.array([[0.0, 0.0, 3.0, 5.0]], np.float32)  # low half is 0
    assert np.all(run_op("fused_swiglu", [x], gate_first=True) == 0.0)
    assert np.all(run_op("fused_swiglu", [x], gate_first=False) == 0.0)  # up = low half = 0
    x = np.array([[1.0, 2.0, 0.0, 0.0]], np.float32)  # high half is 0
    np.testing.assert_allclose(run_op("fused_swiglu", [x], gate_first=True), [[0.0, 0.0]])
    np.testing.assert_allclose(run_op("fused_swiglu", [x], gate_first=False), [[0.0, 0.0]])
    x = np.array([[1.0, 2.0, 3.0, 4.0]], np.float32)
    gate_high = silu_ref(np.array([3.0, 4.0])) * [1.0, 2.0]
    gate_low = silu_ref(np.array([1.0, 2.0])) * [3.0, 4.0]
    np.testing.assert_allclose(run_op("fused_swiglu", [x]), [gate_high], rtol=1e-6)
    np.testing.assert_allclose(run_op("fused_swiglu", [x], gate_first=True), [gate_low], rtol=1e-6)


@pytest.mark.parametrize("gate_first", [False, True])
@pytest.mark.parametrize(("dtype", "cast_to"), [(np.float32, None), (np.float32, "bf16"), (ml_dtypes.bfloat16, "f32")])
def test_swiglu_equals_the_chain_it_replaces(gate_first, dtype, cast_to):
    x = rand(3, 6, dtype=dtype)
    (fused,) = run_graph(lambda b, x: b.fused_swiglu(x, gate_first=gate_first, cast_to=cast_to), [x])

    def chain(b, x):
        low = b.narrow(x, axis=-1, start=0, len=3)
        high = b.narrow(x, axis=-1, start=3, len=3)
        up, gate = (high, low) if gate_first else (low, high)
        value = b.mul(b.silu(gate), up)
        return b.cast(value, cast_to) if cast_to else value

    (unfused,) = run_graph(chain, [x])
    assert fused.dtype == unfused.dtype
    np.testing.assert_array_equal(fused.astype(np.float32), unfused.astype(np.float32))


@pytest.mark.parametrize("gate_first", [False, True])
def test_swiglu_unfuse_honours_gate_first(gate_first):
    fused, unfused, module = unfused_outputs(lambda b, x: b.fused_swiglu(x, gate_first=gate_first), [rand(2, 8)])
    assert body_ops(module) == ["mir.narrow", "mir.narrow", "mir.silu", "mir.mul"]
    silu = next(op for op in module.walk() if op.name == "mir.silu")
    assert silu.operands[0].owner.start.value.data == (0 if gate_first else 4)
    np.testing.assert_array_equal(fused[0], unfused[0])


def test_swiglu_infers_halves_and_cast():
    b = GraphBuilder()
    assert b.fused_swiglu(b.input("x", [2, 8])).type == TensorType(f32, [2, 4])
    assert b.fused_swiglu(b.input("y", [2, D]), cast_to="bf16").type == TensorType(bf16, [2, D])


def test_swiglu_unfuse_rejects_a_dynamic_width():
    b = GraphBuilder("f")
    b.output(b.fused_swiglu(b.input("x", [2, D])))
    module = b.module()
    with pytest.raises(Exception, match="'mir.fused_swiglu' cannot be unfused: the last dim is dynamic"):
        UnfusePass().apply(Context(), module)


def test_swiglu_precision_class_follows_rlx():
    assert precision_class(FusedSwigluOp) is Precision.ELEMENTWISE


# mir.fused_residual_rms_norm ----------------------------------------------------------------


@pytest.mark.parametrize("with_bias", [False, True])
@pytest.mark.parametrize("axis", [-1, 1])
def test_residual_rms_norm_matches_formula(with_bias, axis):
    x, residual = rand(2, 3, 4), rand(2, 3, 4)
    norm_shape = (4,) if axis == -1 else (3, 4)
    gamma, beta, bias = rand(*norm_shape), rand(*norm_shape), rand(4)
    operands = [x, residual, gamma, beta] + ([bias] if with_bias else [])
    out = run_op("fused_residual_rms_norm", operands, axis=axis, eps=1e-6)
    total = x.astype(np.float64) + residual + (bias if with_bias else 0.0)
    np.testing.assert_allclose(out, rms_norm_ref(total, gamma, beta, axis, 1e-6), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("with_bias", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, ml_dtypes.bfloat16])
def test_residual_rms_norm_equals_the_chain_it_replaces(with_bias, dtype):
    inputs = [rand(2, 5, dtype=dtype) for _ in range(2)] + [rand(5, dtype=dtype) for _ in range(3)]

    def fused(b, x, r, g, be, c):
        return b.fused_residual_rms_norm(x, r, g, be, c if with_bias else None, axis=-1, eps=1e-5)

    def chain(b, x, r, g, be, c):
        total = b.add(x, r)
        total = b.add(total, c) if with_bias else total
        return b.rms_norm(total, g, be, axis=-1, eps=1e-5)

    (a,) = run_graph(fused, inputs)
    (u,) = run_graph(chain, inputs)
    assert a.dtype == dtype
    np.testing.assert_array_equal(a.astype(np.float32), u.astype(np.float32))


def test_residual_rms_norm_unfuse_keeps_axis_and_eps():
    inputs = [rand(2, 3, 4), rand(2, 3, 4), rand(4), rand(3, 4), rand(3, 4)]
    fused, unfused, module = unfused_outputs(
        lambda b, x, r, c, g, be: b.fused_residual_rms_norm(x, r, g, be, c, axis=-2, eps=1e-3), inputs
    )
    assert body_ops(module) == ["mir.add", "mir.add", "mir.rms_norm"]
    norm = next(op for op in module.walk() if op.name == "mir.rms_norm")
    assert norm.axis.value.data == -2
    assert norm.eps.value.data == pytest.approx(1e-3)
    np.testing.assert_array_equal(fused[0], unfused[0])


def test_residual_rms_norm_operands_follow_rlx_order():
    b = GraphBuilder()
    x, r, c, g, be = (b.input(n, [4]) for n in "xrcgb")
    op = FusedResidualRmsNormOp(x, r, g, be, c)
    assert list(op.operands) == [x, r, c, g, be]
    assert list(FusedResidualRmsNormOp(x, r, g, be).operands) == [x, r, g, be]
    assert op.bias is c and op.gamma is g and op.beta is be


def test_residual_rms_norm_sum_broadcasts_and_keeps_dynamic_dims():
    b = GraphBuilder()
    out = b.fused_residual_rms_norm(b.input("x", [D, 4]), b.input("r", [3, 1]), b.input("g", [4]), b.input("be", [4]))
    assert out.type == TensorType(f32, [3, 4])


def test_residual_rms_norm_rejects_mixed_dtypes_from_the_builder():
    b = GraphBuilder()
    with pytest.raises(VerifyException, match="'mir.fused_residual_rms_norm' residual element type bf16 differs"):
        b.fused_residual_rms_norm(b.input("x", [4]), b.input("r", [4], "bf16"), b.input("g", [4]), b.input("be", [4]))


def test_residual_rms_norm_precision_class():
    assert precision_class(FusedResidualRmsNormOp) is Precision.REDUCTION


# mir.fused_residual_layer_norm --------------------------------------------------------------


def layer_norm_ref(s, gamma, beta, axis, eps):
    axes = tuple(range(axis % s.ndim, s.ndim))
    centred = s - s.mean(axis=axes, keepdims=True)
    return centred / np.sqrt((centred**2).mean(axis=axes, keepdims=True) + eps) * gamma + beta


@pytest.mark.parametrize("with_bias", [False, True])
def test_residual_layer_norm_matches_formula_and_chain(with_bias):
    x, residual, bias, gamma, beta = rand(3, 6), rand(3, 6), rand(6), rand(6), rand(6)
    operands = [x, residual, gamma, beta] + ([bias] if with_bias else [])
    out = run_op("fused_residual_layer_norm", operands, eps=1e-5)
    total = x.astype(np.float64) + residual + (bias if with_bias else 0.0)
    np.testing.assert_allclose(out, layer_norm_ref(total, gamma, beta, -1, 1e-5), rtol=1e-5, atol=1e-5)

    def chain(b, x, r, g, be, *c):
        total = b.add(x, r)
        return b.layer_norm(b.add(total, c[0]) if c else total, g, be, eps=1e-5)

    (unfused,) = run_graph(chain, operands)
    np.testing.assert_array_equal(out, unfused)
    fused, unfused, module = unfused_outputs(
        lambda b, x, r, g, be, *c: b.fused_residual_layer_norm(x, r, g, be, *c, eps=1e-5), operands
    )
    assert body_ops(module)[-1] == "mir.layer_norm"
    np.testing.assert_array_equal(fused[0], unfused[0])


def test_residual_layer_norm_precision_class():
    assert precision_class(FusedResidualLayerNormOp) is Precision.REDUCTION


# The sum as a second result (both residual norms) ----------------------------------------

NORM_REF = {"rms_norm": rms_norm_ref, "layer_norm": layer_norm_ref}


@pytest.mark.parametrize("norm", ["rms_norm", "layer_norm"])
@pytest.mark.parametrize("with_bias", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, ml_dtypes.bfloat16])
def test_residual_norm_returns_the_sum_when_asked(norm, with_bias, dtype):
    """`keep_sum`: the second result is `x + residual (+ bias)` rounded after each add (numpy
    in the op's dtype), the first is unchanged (the formula in float64)."""
    x, residual, bias, gamma, beta = rand(3, 6, dtype=dtype), rand(1, 6, dtype=dtype), *(
        rand(6, dtype=dtype) for _ in range(3)
    )
    operands = [x, residual, gamma, beta] + ([bias] if with_bias else [])
    normed, total = run_op(f"fused_residual_{norm}", operands, eps=1e-5, keep_sum=True)
    want_sum = (x + residual) + bias if with_bias else x + residual
    assert total.dtype == dtype and total.shape == (3, 6)
    np.testing.assert_array_equal(total.astype(np.float32), want_sum.astype(np.float32))
    want = NORM_REF[norm](want_sum.astype(np.float64), gamma.astype(np.float64), beta.astype(np.float64), -1, 1e-5)
    tolerance = 1e-5 if dtype == np.float32 else 3e-2
    np.testing.assert_allclose(normed.astype(np.float64), want, rtol=tolerance, atol=tolerance)
    alone = run_op(f"fused_residual_{norm}", operands, eps=1e-5)
    np.testing.assert_array_equal(normed.astype(np.float32), alone.astype(np.float32))


@pytest.mark.parametrize("norm", ["rms_norm", "layer_norm"])
def test_residual_norm_with_the_sum_unfuses_to_the_adds_and_the_norm(norm):
    inputs = [rand(2, 3, 4), rand(2, 3, 4), rand(4), rand(4), rand(4)]

    def build(b, x, r, c, g, be):
        return getattr(b, f"fused_residual_{norm}")(x, r, g, be, c, eps=1e-3, keep_sum=True)

    fused, unfused, module = unfused_outputs(build, inputs)
    assert body_ops(module) == ["mir.add", "mir.add", f"mir.{norm}"]
    ret = module.ops.first.body.block.last_op
    assert [v.owner.name for v in ret.operands] == [f"mir.{norm}", "mir.add"]
    for a, u in zip(fused, unfused, strict=True):
        np.testing.assert_array_equal(a, u)


def test_residual_norm_sum_has_the_broadcast_type():
    b = GraphBuilder()
    op = FusedResidualRmsNormOp(
        b.input("x", [D, 4]), b.input("r", [3, 1]), b.input("g", [4]), b.input("be", [4]), keep_sum=True
    )
    assert op.keeps_sum and [r.type for r in op.results] == [TensorType(f32, [3, 4])] * 2
    assert not FusedResidualRmsNormOp(*op.operands).keeps_sum


# mir.fused_attention_block -----------------------------------------------------------------


def rotate_ref(x, cos, sin, n_rot):
    """NeoX RoPE written out per dim pair: dim i pairs with i + n_rot/2."""
    out = x.copy()
    half = n_rot // 2
    for i in range(half):
        a, b = x[..., i], x[..., i + half]
        out[..., i] = a * cos[..., i] - b * sin[..., i]
        out[..., i + half] = b * cos[..., i] + a * sin[..., i]
    return out


def attention_ref(q, k, v, causal, keep=None):
    """Softmax attention per head; `keep[b, key]` drops keys (custom mask)."""
    d = q.shape[-1]
    scores = np.einsum("bhqd,bhkd->bhqk", q, k) / math.sqrt(d)
    if causal:
        sq, sk = scores.shape[-2:]
        scores = np.where(np.tril(np.ones((sq, sk)), k=sk - sq) > 0, scores, -np.inf)
    if keep is not None:
        scores = np.where(keep[:, None, None, :] >= 0.5, scores, -np.inf)
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights /= weights.sum(axis=-1, keepdims=True)
    return np.einsum("bhqk,bhkd->bhqd", weights, v)


def attention_block_ref(hidden, qkv_w, out_w, heads, kv_heads, head_dim, *, causal=False, keep=None,
                        qkv_bias=0.0, out_bias=0.0, cos=None, sin=None, n_rot=None):  # fmt: skip
    """Projections, per-head split, optional rope, grouped-query attention, merge, projection (float64)."""
    batch, seq, _ = hidden.shape
    qkv = hidden.astype(np.float64) @ qkv_w + qkv_bias
    sizes = [heads * head_dim, kv_heads * head_dim, kv_heads * head_dim]
    parts = np.split(qkv, np.cumsum(sizes)[:-1], axis=-1)
    q, k, v = (p.reshape(batch, seq, -1, head_dim).transpose(0, 2, 1, 3) for p in parts)
    if cos is not None:
        q, k = rotate_ref(q, cos, sin, n_rot), rotate_ref(k, cos, sin, n_rot)
    group = [h * kv_heads // heads for h in range(heads)]  # query head h reads kv head h // (H / Hkv)
    out = attention_ref(q, k[:, group], v[:, group], causal, keep)
    return out.transpose(0, 2, 1, 3).reshape(batch, seq, heads * head_dim) @ out_w + out_bias


def test_attention_block_gqa_rope_causal_matches_formula():
    b_, s_, h_, hkv, d = 2, 5, 4, 2, 4
    hidden, qkv_w, out_w = rand(b_, s_, 12), rand(12, (h_ + 2 * hkv) * d), rand(h_ * d, 6)
    qkv_bias, cos, sin = rand((h_ + 2 * hkv) * d), rand(s_, 1), rand(s_, 1)
    b = GraphBuilder("f")
    args = [b.input(n, x.shape) for n, x in zip("hwobcs", (hidden, qkv_w, out_w, qkv_bias, cos, sin))]
    h, w, o, bias, c, s = args
    b.output(b.fused_attention_block(
        h, w, o, None, bias, None, c, s, num_heads=h_, num_kv_heads=hkv, head_dim=d, mask_kind="causal", n_rot=2
    ))  # fmt: skip
    (out,) = run_function(b.module(), "f", [hidden, qkv_w, out_w, qkv_bias, cos, sin])
    expected = attention_block_ref(
        hidden, qkv_w, out_w, h_, hkv, d, causal=True, qkv_bias=qkv_bias, cos=cos, sin=sin, n_rot=2
    )
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-5)


def test_attention_block_custom_mask_and_biases_match_formula():
    hidden, qkv_w, out_w = rand(2, 3, 8), rand(8, 24), rand(8, 8)
    keep = np.array([[1, 0, 1], [1, 1, 0]], np.float32)
    qkv_bias, out_bias = rand(24), rand(8)
    out = run_op(
        "fused_attention_block", [hidden, qkv_w, out_w, keep, qkv_bias, out_bias],
        num_heads=2, head_dim=4, mask_kind="custom",
    )  # fmt: skip
    expected = attention_block_ref(hidden, qkv_w, out_w, 2, 2, 4, keep=keep, qkv_bias=qkv_bias, out_bias=out_bias)
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-5)


def test_attention_block_unfuses_to_its_chain_with_equal_values():
    hidden, qkv_w, out_w, cos, sin = rand(2, 5, 16), rand(16, 32), rand(16, 16), rand(5, 4), rand(5, 4)

    def build(b, h, w, o, c, s):
        return b.fused_attention_block(
            h, w, o, None, None, None, c, s, num_heads=2, num_kv_heads=1, head_dim=8, mask_kind="causal"
        )

    fused, unfused, module = unfused_outputs(build, [hidden, qkv_w, out_w, cos, sin])
    ops = body_ops(module)
    assert ops.count("mir.matmul") == 2 and ops.count("mir.narrow") == 3 and ops.count("mir.rope") == 2
    assert ops.count("mir.attention") == 1
    np.testing.assert_array_equal(fused[0], unfused[0])


def test_attention_block_with_dynamic_batch_and_seq_runs_and_unfuses_after_specialising():
    from rlx_xdsl.transforms.specialize import SpecializeShapesPass

    b = GraphBuilder("f")
    h, w, o = b.input("h", [D, D, 8]), b.param("w", [8, 24]), b.param("o", [8, 8])
    b.output(b.fused_attention_block(h, w, o, num_heads=2, head_dim=4, mask_kind="causal"))
    module = b.module()
    inputs = [rand(2, 3, 8), rand(8, 24), rand(8, 8)]
    (out,) = run_function(module, "f", inputs)
    expected = attention_block_ref(inputs[0], inputs[1], inputs[2], 2, 2, 4, causal=True)
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-5)
    with pytest.raises(Exception, match="cannot be expanded while batch and seq are both dynamic"):
        UnfusePass().apply(Context(), module.clone())
    SpecializeShapesPass(shapes=("h=2x3x8",)).apply(Context(), module)
    UnfusePass().apply(Context(), module)
    module.verify()
    np.testing.assert_array_equal(run_function(module, "f", inputs)[0], out)


def test_attention_block_traits():
    assert precision_class(FusedAttentionBlockOp) is Precision.DATA_MOVEMENT  # RLX's table


# mir.fused_transformer_layer ---------------------------------------------------------------


def test_transformer_layer_matches_formula_and_chain():
    e, inner = 8, 12
    hidden = rand(2, 4, e)
    weights = [rand(e, 3 * e), rand(e, e), rand(e), rand(e), rand(e, inner), rand(inner, e), rand(e), rand(e)]
    biases = [rand(3 * e), rand(e), rand(inner), rand(e)]
    b = GraphBuilder("f")
    args = [b.input(f"a{i}", x.shape) for i, x in enumerate([hidden, *weights, *biases])]
    b.output(b.fused_transformer_layer(
        *args[:9], None, *args[9:], num_heads=2, head_dim=4, activation="gelu", eps1=1e-5, eps2=1e-6,
        mask_kind="causal",
    ))  # fmt: skip
    module = b.module()
    inputs = [hidden, *weights, *biases]
    (out,) = run_function(module, "f", inputs)
    qkv_w, out_w, g1, b1, up_w, down_w, g2, b2 = weights
    attn = attention_block_ref(hidden, qkv_w, out_w, 2, 2, 4, causal=True, qkv_bias=biases[0], out_bias=biases[1])
    h = layer_norm_ref(hidden + attn, g1, b1, -1, 1e-5)
    ffn = gelu_ref(h @ up_w + biases[2]) @ down_w + biases[3]
    np.testing.assert_allclose(out, layer_norm_ref(h + ffn, g2, b2, -1, 1e-6), rtol=1e-4, atol=1e-4)

    UnfusePass().apply(Context(), module)
    module.verify()
    assert "mir.fused_transformer_layer" not in str(module)
    assert body_ops(module).count("mir.layer_norm") == 2
    np.testing.assert_array_equal(run_function(module, "f", inputs)[0], out)


def test_transformer_layer_traits():
    assert precision_class(FusedTransformerLayerOp) is Precision.COMPUTE


test_invalid_lit_chunk_reports_its_expected_error = expected_error_test(INVALID)
