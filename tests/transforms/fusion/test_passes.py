"""Each fusion pass on a hand-built graph: what it produces, where it puts it, what it leaves alone.

Every case runs the graph through the interpreter before and after the pass.
Passes that only move ops around (or fuse them into kernels composed of the
same formulas) must give bit-identical outputs; passes that regroup matmuls
(one wide matmul for several) may differ in the last bits, because BLAS sums
a wider product in another order.
"""

from collections import Counter

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import (
    FileLineColLoc,
    FusedLoc,
    IntAttr,
    ModuleOp,
    StringAttr,
)

from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.run import run_function
from rlx_xdsl.testing.graphgen import inputs_for
from rlx_xdsl.transforms.constant_fold import ConstantFoldPass
from rlx_xdsl.transforms.fusion.attention_block import FuseAttentionBlockPass
from rlx_xdsl.transforms.fusion.control_flow import LowerControlFlowPass
from rlx_xdsl.transforms.fusion.dot_general import LowerDotGeneralPass
from rlx_xdsl.transforms.fusion.elementwise_regions import (
    ClipElementwiseRegionsPass,
    MarkElementwiseRegionsPass,
    UnfuseElementwiseRegionsPass,
)
from rlx_xdsl.transforms.fusion.matmul_bias_act import FuseMatmulBiasActPass
from rlx_xdsl.transforms.fusion.matmul_epilogue import FuseMatmulEpiloguePass
from rlx_xdsl.transforms.fusion.residual_norm import (
    FuseResidualLayerNormPass,
    FuseResidualRmsNormPass,
)
from rlx_xdsl.transforms.fusion.rms_norm_reshape import FuseRmsNormReshapePass
from rlx_xdsl.transforms.fusion.shared_input_matmul import FuseSharedInputMatmulPass
from rlx_xdsl.transforms.fusion.swiglu import FuseSwigluDualMatmulPass, FuseSwigluPass


def body_counts(module: ModuleOp) -> Counter[str]:
    return Counter(op.name for op in module.ops.first.body.block.ops if op.name != "func.return")


def located(module: ModuleOp) -> ModuleOp:
    """Give every top-level op a distinct file location (line = its position), as the parser would."""
    for line, op in enumerate(module.ops.first.body.block.ops, start=1):
        op.location = FileLineColLoc(StringAttr("g.mlir"), IntAttr(line), IntAttr(3))
    return module


def lines_of(location) -> list[int]:
    assert isinstance(location, FusedLoc)
    return [loc.line.data for loc in location.locations.data]


def check(module: ModuleOp, pass_, exact: bool = True) -> list[np.ndarray]:
    """Run `pass_`, verify, and compare interpreter outputs with the original graph's."""
    inputs = inputs_for(module)
    before = run_function(module, None, inputs)
    pass_.apply(Context(), module)
    module.verify()
    after = run_function(module, None, inputs)
    for want, got in zip(before, after, strict=True):
        assert got.dtype == want.dtype and got.shape == want.shape
        if exact:
            np.testing.assert_array_equal(got, want)
        else:
            np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5)
    return after


# rlx-fuse-matmul-bias-act -----------------------------------------------------------------


def matmul_bias(act: str | None, bias_shape=(4,), dtype="f32", extra_use: str | None = None) -> ModuleOp:
    b = GraphBuilder("f")
    x, w, c = b.input("x", [2, 3, 8], dtype), b.param("w", [8, 4], dtype), b.param("b", bias_shape, dtype)
    product = b.matmul(x, w)
    total = b.add(product, c)
    out = getattr(b, act)(total) if act else total
    extra = {"matmul": [product], "add": [total]}.get(extra_use, [])
    b.output(out, *extra)
    return located(b.module())


@pytest.mark.parametrize("act", ["gelu", "silu"])
@pytest.mark.parametrize("dtype", ["f32", "bf16"])
def test_matmul_bias_act_folds_gelu_and_silu(act, dtype):
    module = matmul_bias(act, dtype=dtype)
    check(module, FuseMatmulBiasActPass())
    assert body_counts(module) == Counter({"mir.fused_matmul_bias_act": 1})
    fused = module.ops.first.body.block.first_op
    assert fused.kind == act and lines_of(fused.location) == [1, 2, 3]


def test_matmul_bias_act_leaves_other_activations_outside():
    module = matmul_bias("exp")
    check(module, FuseMatmulBiasActPass())
    assert body_counts(module) == Counter({"mir.fused_matmul_bias_act": 1, "mir.exp": 1})


@pytest.mark.parametrize(
    ("case", "kwargs", "left"),
    [
        ("rank-2 bias", {"bias_shape": (3, 4)}, {"mir.matmul": 1, "mir.add": 1, "mir.gelu": 1}),
        ("returned matmul", {"extra_use": "matmul"}, {"mir.matmul": 1, "mir.add": 1, "mir.gelu": 1}),
        ("returned sum", {"extra_use": "add"}, {"mir.fused_matmul_bias_act": 1, "mir.gelu": 1}),
    ],
)
def test_matmul_bias_act_negative_cases(case, kwargs, left):
    module = matmul_bias("gelu", **kwargs)
    check(module, FuseMatmulBiasActPass())
    assert body_counts(module) == Counter(left)


# rlx-fuse-residual-*-norm ------------------------------------------------------------------


@pytest.mark.parametrize(("norm", "pass_", "fused"), [
    ("layer_norm", FuseResidualLayerNormPass(), "mir.fused_residual_layer_norm"),
    ("rms_norm", FuseResidualRmsNormPass(), "mir.fused_residual_rms_norm"),
])  # fmt: skip
@pytest.mark.parametrize("with_bias", [False, True])
def test_residual_norms_keep_axis_and_take_a_bias(norm, pass_, fused, with_bias):
    b = GraphBuilder("f")
    x, r, bias = b.input("x", [2, 3, 4]), b.input("r", [2, 3, 4]), b.param("c", [4])
    g, be = b.param("g", [3, 4]), b.param("be", [3, 4])
    total = b.add(x, r)
    total = b.add(total, bias) if with_bias else total
    b.output(getattr(b, norm)(total, g, be, axis=1, eps=1e-5))
    module = located(b.module())
    check(module, pass_)
    assert body_counts(module) == Counter({fused: 1})
    op = module.ops.first.body.block.first_op
    assert op.axis.value.data == 1 and (op.bias is not None) == with_bias
    assert lines_of(op.location) == ([1, 2, 3] if with_bias else [1, 2])


def shared_sum(norm: str, users_first: bool, with_bias: bool = False, late_gamma: bool = False) -> ModuleOp:
    """`h = x + r (+ c)` used by a norm and by a `neg` (before or after the norm) and returned."""
    b = GraphBuilder("f")
    x, r, c, g = b.input("x", [2, 4]), b.input("r", [2, 4]), b.param("c", [4]), b.param("g", [4])
    total = b.add(x, r)
    total = b.add(total, c) if with_bias else total
    early = b.neg(total) if users_first else None
    gamma = b.exp(g) if late_gamma else g
    normed = getattr(b, norm)(total, gamma, g)
    b.output(normed, early if users_first else b.neg(total), total)
    return located(b.module())


@pytest.mark.parametrize(("norm", "pass_"), [
    ("layer_norm", FuseResidualLayerNormPass()), ("rms_norm", FuseResidualRmsNormPass()),
])  # fmt: skip
@pytest.mark.parametrize("users_first", [False, True])
@pytest.mark.parametrize("with_bias", [False, True])
def test_residual_norm_of_a_shared_sum_keeps_the_sum(norm, pass_, users_first, with_bias):
    """The add's other users (an op before or after the norm, the return) read the fused op's
    second result; the fused op sits where every one of them can see it."""
    module = shared_sum(norm, users_first, with_bias)
    check(module, pass_)
    ops = list(module.ops.first.body.block.ops)
    fused = ops[0]
    assert fused.name == f"mir.fused_residual_{norm}" and len(fused.results) == 2
    assert (fused.bias is not None) == with_bias
    assert body_counts(module) == Counter({fused.name: 1, "mir.neg": 1})
    neg, ret = ops[1], ops[-1]
    assert neg.operands[0] is fused.sum
    assert list(ret.operands) == [fused.result, neg.result, fused.sum]
    adds = [1, 2] if with_bias else [1]
    norm_line = len(adds) + 1 + (1 if users_first else 0)
    assert lines_of(fused.location) == [*adds, norm_line]


def test_residual_norm_waits_for_gamma_defined_after_an_early_user():
    """A user of the sum before the norm and gamma computed after the add: no place sees both."""
    module = shared_sum("rms_norm", users_first=True, late_gamma=True)
    check(module, FuseResidualRmsNormPass())
    assert "mir.fused_residual_rms_norm" not in body_counts(module)


def test_residual_norm_with_a_late_gamma_and_late_users_fuses_at_the_norm():
    module = shared_sum("rms_norm", users_first=False, late_gamma=True)
    check(module, FuseResidualRmsNormPass())
    assert body_counts(module)["mir.fused_residual_rms_norm"] == 1


# rlx-fuse-rms-norm-reshape --------------------------------------------------------------------


def test_rms_norm_reshape_moves_the_flatten_before_the_norm():
    b = GraphBuilder("f")
    x, g = b.input("x", [2, 3, 8]), b.param("g", [8])
    b.output(b.reshape(b.rms_norm(x, g, g), new_shape=[6, 8]))
    module = b.module()
    check(module, FuseRmsNormReshapePass())
    ops = list(module.ops.first.body.block.ops)
    assert [op.name for op in ops[:2]] == ["mir.reshape", "mir.rms_norm"]
    assert ops[1].results[0].type.get_shape() == (6, 8)


# SwiGLU fusions ---------------------------------------------------------------------------


def swiglu_ffn(gate_first: bool) -> ModuleOp:
    b = GraphBuilder("f")
    x, w_up, w_gate = b.input("x", [3, 8]), b.param("w_up", [8, 5]), b.param("w_gate", [8, 5])
    if gate_first:
        gate, up = b.matmul(x, w_gate), b.matmul(x, w_up)
    else:
        up, gate = b.matmul(x, w_up), b.matmul(x, w_gate)
    b.output(b.mul(b.silu(gate), up))
    return located(b.module())


def test_swiglu_dual_matmul_fuses_up_then_gate():
    module = swiglu_ffn(gate_first=False)
    check(module, FuseSwigluDualMatmulPass(), exact=False)
    assert body_counts(module) == Counter({"mir.concat": 1, "mir.matmul": 1, "mir.fused_swiglu": 1})
    swiglu = next(op for op in module.walk() if op.name == "mir.fused_swiglu")
    assert not swiglu.is_gate_first and lines_of(swiglu.location) == [1, 2, 3, 4]


def test_gate_first_pair_goes_through_shared_input_and_split_swiglu():
    module = swiglu_ffn(gate_first=True)
    check(module, FuseSwigluDualMatmulPass())
    assert "mir.fused_swiglu" not in body_counts(module)
    check(module, FuseSharedInputMatmulPass(), exact=False)
    assert body_counts(module)["mir.narrow"] == 2
    check(module, FuseSwigluPass())
    swiglu = next(op for op in module.walk() if op.name == "mir.fused_swiglu")
    assert swiglu.is_gate_first
    assert body_counts(module) == Counter({"mir.concat": 1, "mir.matmul": 1, "mir.fused_swiglu": 1})


@pytest.mark.parametrize(("gate_start", "gate_first"), [(4, False), (0, True)])
def test_split_swiglu_reads_which_half_is_the_gate(gate_start, gate_first):
    b = GraphBuilder("f")
    cat = b.input("cat", [3, 8])
    gate = b.narrow(cat, axis=-1, start=gate_start, len=4)
    up = b.narrow(cat, axis=1, start=4 - gate_start, len=4)
    b.output(b.mul(up, b.silu(gate)))
    module = b.module()
    check(module, FuseSwigluPass())
    assert body_counts(module) == Counter({"mir.fused_swiglu": 1})
    assert module.ops.first.body.block.first_op.is_gate_first == gate_first


# rlx-fuse-shared-input-matmul --------------------------------------------------------------


def test_shared_input_matmuls_become_one_matmul_and_narrows():
    b = GraphBuilder("f")
    x = b.input("x", [2, 3, 8])
    outs = [b.matmul(x, b.param(f"w{i}", [8, n])) for i, n in enumerate((4, 2, 2))]
    b.output(*outs)
    module = located(b.module())
    check(module, FuseSharedInputMatmulPass(), exact=False)
    assert body_counts(module) == Counter({"mir.concat": 1, "mir.matmul": 1, "mir.narrow": 3})
    starts = [op.start.value.data for op in module.walk() if op.name == "mir.narrow"]
    assert starts == [0, 4, 6]


# rlx-fuse-attention-block -----------------------------------------------------------------


def llama_attention(extra_use: bool = False) -> ModuleOp:
    """LLaMA's attention: separate q/k/v matmuls, rope, grouped-query repeat_kv, causal attention."""
    b = GraphBuilder("f")
    heads, kv_heads, dim = 4, 2, 4
    h = b.input("h", [2, 3, 16])
    cos, sin = b.input("cos", [3, 2]), b.input("sin", [3, 2])

    def split(x, n):
        return b.transpose(b.reshape(x, new_shape=[2, 3, n, dim]), perm=[0, 2, 1, 3])

    def repeat(x):
        singles = [b.narrow(x, axis=1, start=j, len=1) for j in range(kv_heads)]
        return b.concat(*[s for s in singles for _ in range(heads // kv_heads)], axis=1)

    q = b.rope(split(b.matmul(h, b.param("wq", [16, 16])), heads), cos, sin, head_dim=dim, n_rot=dim)
    k = b.rope(split(b.matmul(h, b.param("wk", [16, 8])), kv_heads), cos, sin, head_dim=dim, n_rot=dim)
    v = split(b.matmul(h, b.param("wv", [16, 8])), kv_heads)
    a = b.attention(q, repeat(k), repeat(v), num_heads=heads, head_dim=dim, mask_kind="causal")
    merged = b.reshape(b.transpose(a, perm=[0, 2, 1, 3]), new_shape=[2, 3, 16])
    out = b.matmul(merged, b.param("wo", [16, 16]))
    b.output(out, a) if extra_use else b.output(out)
    return b.module()


def test_attention_block_fuses_llama_attention_with_gqa():
    module = llama_attention()
    check(module, FuseAttentionBlockPass(), exact=False)
    assert body_counts(module) == Counter({"mir.concat": 1, "mir.fused_attention_block": 1})
    block = next(op for op in module.walk() if op.name == "mir.fused_attention_block")
    assert block.num_kv_heads.value.data == 2 and block.has_rope


def test_attention_block_with_a_second_consumer_is_left():
    module = llama_attention(extra_use=True)
    check(module, FuseAttentionBlockPass())
    assert "mir.fused_attention_block" not in body_counts(module)


# rlx-fuse-matmul-epilogue ------------------------------------------------------------------


def test_matmul_epilogue_folds_the_single_consumer_chain():
    b = GraphBuilder("f")
    x, w, c, r = b.input("x", [3, 8]), b.param("w", [8, 4]), b.param("c", [4]), b.input("r", [3, 4])
    b.output(b.mul(b.add(b.gelu(b.add(b.matmul(x, w), c)), r), b.constant(0.5)))
    module = located(b.module())
    check(module, FuseMatmulEpiloguePass())
    counts = body_counts(module)
    assert counts == Counter({"mir.fused_matmul_epilogue": 1, "mir.constant": 1})
    epilogue = next(op for op in module.walk() if op.name == "mir.fused_matmul_epilogue")
    assert [op.name for op in epilogue.body.block.ops] == ["mir.add", "mir.gelu", "mir.add", "mir.mul", "mir.yield"]


# Elementwise regions ----------------------------------------------------------------------


def chain_graph() -> ModuleOp:
    b = GraphBuilder("f")
    x, y, z = b.input("x", [4, 8]), b.input("y", [4, 1]), b.input("z", [8])
    t = b.add(x, y)
    b.output(b.relu(b.mul(t, z)), b.exp(b.neg(b.sin(x))))
    return b.module()


def test_mark_then_unfuse_restores_the_ops():
    module = chain_graph()
    original = body_counts(module)
    check(module, MarkElementwiseRegionsPass())
    assert body_counts(module) == Counter({"mir.elementwise_region": 2})
    check(module, UnfuseElementwiseRegionsPass())
    assert body_counts(module) == original


def test_caps_split_chains_and_clip_unfuses_only_regions_over_them():
    module = chain_graph()
    check(module, MarkElementwiseRegionsPass(max_steps=2, max_inputs=0))
    regions = [op for op in module.walk() if op.name == "mir.elementwise_region"]
    assert sorted(r.steps for r in regions) == [2, 2]
    module = chain_graph()
    check(module, MarkElementwiseRegionsPass(max_steps=0, max_inputs=2))
    regions = [op for op in module.walk() if op.name == "mir.elementwise_region"]
    assert all(len(r.inputs) <= 2 for r in regions)
    module = chain_graph()
    check(module, MarkElementwiseRegionsPass(max_steps=0, max_inputs=0))
    check(module, ClipElementwiseRegionsPass(max_steps=3, max_inputs=2))
    regions = [op for op in module.walk() if op.name == "mir.elementwise_region"]
    assert [r.steps for r in regions] == [3] and len(regions[0].inputs) == 1


# Lowerings ---------------------------------------------------------------------------------


def test_lower_control_flow_keeps_every_result():
    b = GraphBuilder("f")
    p, a, c = b.input("p", [1], "i1"), b.input("a", [3]), b.input("c", [2])
    r = b.if_(p, [a, c], lambda rb, u, v: (rb.neg(u), rb.exp(v)), lambda rb, u, v: (u, rb.abs(v)))
    loop = b.while_([a, c], lambda rb, u, v: rb.compare(rb.reduce(u, kind="sum", axes=[0]), rb.constant(3.0), "lt"),
                    lambda rb, u, v: (rb.add(u, rb.constant(1.0)), rb.mul(v, v)), max_iterations=3)  # fmt: skip
    b.output(*r, *loop)
    module = b.module()
    for pred in (np.array([True]), np.array([False])):
        inputs = [pred, np.array([0.5, -1.0, 2.0], np.float32), np.array([1.5, -0.5], np.float32)]
        want = run_function(module, None, inputs)
        lowered = module.clone()
        LowerControlFlowPass().apply(Context(), lowered)
        lowered.verify()
        assert not {"mir.if", "mir.while"} & set(body_counts(lowered))
        for w, g in zip(want, run_function(lowered, None, inputs), strict=True):
            np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize(
    ("a_shape", "b_shape", "dims"),
    [
        ((3, 4), (4, 5), ([1], [0], [], [])),
        ((4, 3), (5, 4), ([0], [1], [], [])),
        ((3, 2, 4, 5), (4, 5, 2, 6), ([2, 3], [0, 1], [1], [2])),
        ((2, 3, 4, 5), (3, 2, 5), ([3], [2], [0, 1], [1, 0])),
        ((3,), (4,), ([], [], [], [])),
        ((4,), (4,), ([0], [0], [], [])),
    ],
)
def test_lower_dot_general_to_matmul(a_shape, b_shape, dims):
    b = GraphBuilder("f")
    lc, rc, lb, rb = dims
    out = b.dot_general(b.input("a", a_shape), b.input("b", b_shape),
                        lhs_contracting=lc, rhs_contracting=rc, lhs_batch=lb, rhs_batch=rb)  # fmt: skip
    b.output(out)
    module = b.module()
    check(module, LowerDotGeneralPass(), exact=False)
    counts = body_counts(module)
    assert counts["mir.matmul"] == 1 and "mir.dot_general" not in counts


def test_constant_fold_folds_chains_of_any_dtype():
    b = GraphBuilder("f")
    x = b.input("x", [2])
    c = b.add(b.constant(np.array([1, 2], np.int8)), b.constant(np.int8(127)))
    b.output(b.add(x, b.cast(b.gelu(b.cast(c, "f32")), "f32")))
    module = b.module()
    out = check(module, ConstantFoldPass())
    counts = body_counts(module)
    assert counts["mir.add"] == 1 and "mir.gelu" not in counts and "mir.cast" not in counts
    assert np.isfinite(out[0]).all()
