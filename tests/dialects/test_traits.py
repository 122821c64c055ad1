"""Every MIR op declares the traits passes read: purity, RLX's AMP precision class,
operand roles, views and in-place writes, region signatures."""

import pytest
from xdsl.dialects.builtin import TensorType, f32, i32, i64
from xdsl.dialects.test import TestOp
from xdsl.traits import Pure, RecursiveMemoryEffect

from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.dialects.mir import ALL_OPS, elementwise, shape
from rlx_xdsl.dialects.mir.attrs import CastConfigAttr
from rlx_xdsl.dialects.traits import (
    Precision,
    PrecisionClass,
    RegionSignatureInterface,
    Role,
    data_operands,
    in_place_operands,
    is_elementwise,
    operand_roles,
    precision_class,
    view_offset,
    view_source,
)

OPS_BY_NAME = {op.name.removeprefix("mir."): op for op in ALL_OPS}

# RLX's `precision::op_kind` table (rlx-compile precision.rs), written out independently.
EXPECTED_CLASS = {
    Precision.COMPUTE: {
        "matmul", "dot_general", "dense_solve", "attention", "conv", "scan", "scan_backward", "custom_fn",
        # backward kernels RLX's table leaves to its Compute fallback
        "rms_norm_backward_input", "rms_norm_backward_gamma", "rms_norm_backward_beta",
        "group_norm_backward_input", "group_norm_backward_gamma", "group_norm_backward_beta",
        "rope_backward", "attention_backward", "conv_backward_input", "conv_backward_weight",
        "cumsum_backward", "gather_backward", "fused_matmul_bias_act",
        "fused_transformer_layer", "fused_matmul_epilogue", "qmatmul", "qconv2d",
        "dequant_matmul", "grouped_matmul", "lora_matmul", "dequant_grouped_matmul", "dequant_moe_weights",
        "fft", "batch_norm_inference", "batched_dense_solve", "log_mel", "log_mel_backward",
        # RLX's fallback too (the rng ops exist only after 0.2.2, where they fall to it as well)
        "conv_transpose_2d", "layer_norm_2d", "rng_uniform", "rng_normal",
        "gaussian_splat_render", "gaussian_splat_prepare", "gaussian_splat_rasterize",
        "gaussian_splat_render_backward",
    },
    Precision.REDUCTION: {
        "layer_norm", "rms_norm", "group_norm", "softmax", "reduce", "cumsum",
        "softmax_cross_entropy_with_logits", "softmax_cross_entropy", "softmax_cross_entropy_backward",
        "selective_scan", "gated_delta_net",
        "layer_norm_backward_input", "layer_norm_backward_gamma", "fused_residual_rms_norm",
        "fused_residual_layer_norm", "sample",
    },
    Precision.ELEMENTWISE: {
        "add", "sub", "mul", "div", "max", "min", "pow", "compare", "where",
        "gelu", "gelu_approx", "silu", "relu", "sigmoid", "tanh", "exp", "log", "sqrt", "rsqrt",
        "neg", "abs", "sin", "cos", "tan", "atan", "round", "log1p", "expm1", "erf",
        "relu_backward", "activation_backward", "fused_swiglu", "elementwise_region", "batch_elementwise_region",
        "quantize", "dequantize", "fake_quantize", "fake_quantize_backward", "fake_quantize_lsq",
        "fake_quantize_lsq_backward_x", "fake_quantize_lsq_backward_scale",
        "conjugate", "complex_norm_sq", "complex_norm_sq_backward",
    },
    Precision.DATA_MOVEMENT: {
        "cast", "reshape", "transpose", "narrow", "concat", "expand", "gather", "scatter_add", "dynamic_update_slice",
        "topk", "rope", "pool", "if", "while", "pool_backward", "stop_gradient",
        "fused_attention_block", "resize_nearest_2x", "axial_rope_2d", "transform_region",
    },
    Precision.BOUNDARY: {"constant", "iota"},
}  # fmt: skip

COMPLEX = {"conjugate", "complex_norm_sq", "complex_norm_sq_backward"}
QUANT = {"quantize", "dequantize", "fake_quantize", "fake_quantize_backward", "fake_quantize_lsq",
         "fake_quantize_lsq_backward_x", "fake_quantize_lsq_backward_scale"}
"""AMP-elementwise (RLX) but not fusable element by element: their scales are per-op
properties or per-channel statistics over the whole tensor."""
REGION_KERNELS = {"elementwise_region", "batch_elementwise_region"}
ELEMENTWISE = (EXPECTED_CLASS[Precision.ELEMENTWISE] | {"cast"}) - {"fused_swiglu"} - REGION_KERNELS - QUANT - COMPLEX
"""Ops with the `Elementwise` trait: the AMP elementwise class, plus cast, minus fused_swiglu
(each output element reads two input elements), the region kernels (kernels, not steps
fusion would fuse again) and the complex ops (no elementwise body computes on complex<f32>,
and complex_norm_sq's result is half its operand's size, so it cannot write in place)."""
TERMINATORS = {"yield"}


def test_table_covers_every_op():
    classified = set().union(*EXPECTED_CLASS.values())
    assert classified | TERMINATORS == set(OPS_BY_NAME)


@pytest.mark.parametrize("name", sorted(set(OPS_BY_NAME) - TERMINATORS))
def test_precision_class_matches_rlx(name):
    op = OPS_BY_NAME[name]
    assert len(op.get_traits_of_type(PrecisionClass)) == 1
    expected = next(cls for cls, names in EXPECTED_CLASS.items() if name in names)
    assert precision_class(op) is expected


@pytest.mark.parametrize("op", ALL_OPS, ids=lambda op: op.name)
def test_ops_are_pure_or_pure_when_their_bodies_are(op):
    if op.has_trait(RecursiveMemoryEffect):
        assert op.name in (
            "mir.if", "mir.while", "mir.scan", "mir.scan_backward", "mir.custom_fn",
            "mir.elementwise_region", "mir.fused_matmul_epilogue", "mir.batch_elementwise_region",
        )  # fmt: skip
    else:
        assert op.has_trait(Pure)


@pytest.mark.parametrize("name", sorted(OPS_BY_NAME))
def test_elementwise_trait(name):
    assert is_elementwise(OPS_BY_NAME[name]) == (name in ELEMENTWISE)


# Operand roles --------------------------------------------------------------------


def _op(value):
    """The op that produced `value` (the builder returns results)."""
    return value.owner if not isinstance(value, tuple) else value[0].owner


def test_roles_of_index_label_predicate_and_mask_operands():
    b = GraphBuilder()
    table, logits = b.input("t", [5, 3]), b.input("l", [2, 5])
    ids, labels = b.input("i", [4], "i64"), b.input("y", [2], "f32")
    gather = _op(b.mir.gather(table, ids, axis=0))
    sce = _op(b.mir.softmax_cross_entropy_with_logits(logits, labels))
    cond = b.mir.compare(table, table, "lt")
    where = _op(b.mir.where(cond, table, table))
    assert operand_roles(gather) == [Role.DATA, Role.INDEX]
    assert operand_roles(sce) == [Role.DATA, Role.LABEL]
    assert operand_roles(where) == [Role.PREDICATE, Role.DATA, Role.DATA]
    assert data_operands(where) == [1, 2]


def test_optional_and_variadic_operands_get_their_definitions_role():
    b = GraphBuilder()
    q = b.input("q", [1, 2, 3, 4])
    mask = b.input("m", [1, 3])
    with_mask = _op(b.mir.attention(q, q, q, mask, num_heads=2, head_dim=4, mask_kind="custom"))
    without = _op(b.mir.attention(q, q, q, num_heads=2, head_dim=4))
    assert operand_roles(with_mask) == [Role.DATA] * 3 + [Role.MASK]
    assert operand_roles(without) == [Role.DATA] * 3
    concat = _op(b.mir.concat(q, q, q, axis=0))
    assert operand_roles(concat) == [Role.DATA] * 3


def test_foreign_ops_are_all_data():
    t = TensorType(f32, [2])
    a = TestOp(result_types=[t])
    user = TestOp(operands=[a.results[0], a.results[0]], result_types=[t])
    assert operand_roles(user) == [Role.DATA, Role.DATA]


# Views and in-place writes ----------------------------------------------------------


def test_reshape_is_always_a_view():
    b = GraphBuilder()
    x = b.input("x", [2, 6])
    r = _op(b.mir.reshape(x, new_shape=[3, 4]))
    assert view_source(r) is x and view_offset(r) == 0


def test_cast_is_a_view_only_when_it_keeps_the_dtype():
    b = GraphBuilder()
    x = b.input("x", [2, 3])
    same = _op(b.emit(elementwise.CastOp(x, f32)))
    other = _op(b.mir.cast(x, "i32"))
    blocked = _op(b.emit(elementwise.CastOp(x, f32, CastConfigAttr([1, 3]))))
    assert view_source(same) is x
    assert view_source(other) is None
    assert view_source(blocked) is None  # rescales blocks of its input: a new buffer


@pytest.mark.parametrize(
    ("shape_", "axis", "start", "is_view", "offset"),
    [([6, 4], 0, 2, True, 8), ([1, 6, 4], 1, 3, True, 12), ([2, 6, 4], 1, 3, False, 0), ([6, 4], 1, 1, False, 0)],
)
def test_narrow_is_a_view_when_it_selects_a_contiguous_run(shape_, axis, start, is_view, offset):
    b = GraphBuilder()
    x = b.input("x", shape_)
    n = _op(b.mir.narrow(x, axis=axis, start=start, len=1))
    assert (view_source(n) is x) == is_view
    assert view_offset(n) == offset


def test_other_ops_are_never_views():
    b = GraphBuilder()
    x = b.input("x", [2, 3])
    assert view_source(_op(b.mir.transpose(x, perm=[1, 0]))) is None
    assert view_source(_op(b.mir.exp(x))) is None


def test_elementwise_ops_may_overwrite_a_same_sized_operand():
    b = GraphBuilder()
    x, row = b.input("x", [2, 3]), b.input("r", [3])
    y = b.input("y", [2, 3])
    assert in_place_operands(_op(b.mir.add(x, row))) == [0]  # the broadcast row is too small
    assert in_place_operands(_op(b.mir.mul(x, y))) == [0, 1]
    assert in_place_operands(_op(b.mir.cast(x, i32))) == [0]  # i32 and f32 are both 4 bytes
    assert in_place_operands(_op(b.mir.cast(x, i64))) == []  # 8-byte results need a bigger buffer
    assert in_place_operands(_op(b.mir.matmul(x, b.mir.transpose(x, perm=[1, 0])))) == []


@pytest.mark.parametrize("op", ALL_OPS, ids=lambda op: op.name)
def test_elementwise_ops_write_in_place_and_no_others(op):
    from rlx_xdsl.dialects.traits import WritesInPlace

    assert op.has_trait(WritesInPlace) == is_elementwise(op)


def test_view_traits_are_declared_on_reshape_cast_narrow_and_stop_gradient_only():
    from rlx_xdsl.dialects.mir.backward import StopGradientOp
    from rlx_xdsl.dialects.traits import ViewOf

    views = {op for op in ALL_OPS if op.has_trait(ViewOf)}
    assert views == {shape.ReshapeOp, shape.NarrowOp, elementwise.CastOp, StopGradientOp}


# Region signatures ---------------------------------------------------------------------


def test_region_ops_state_their_block_argument_types():
    b = GraphBuilder()
    x = b.input("x", [2])
    pred = b.mir.constant([1], "i1")
    result = b.if_(pred, [x], lambda rb, v: rb.mir.exp(v), lambda rb, v: rb.mir.neg(v))
    op = _op(result)
    assert isinstance(op, RegionSignatureInterface)
    for region in op.regions:
        assert list(op.region_arg_types(region)) == [x.type]


def test_every_activation_kind_names_its_op():
    from rlx_xdsl.dialects.mir.attrs import Activation
    from rlx_xdsl.dialects.mir.elementwise import ACTIVATION_OPS, activation_op

    assert {op.KIND for op in ACTIVATION_OPS} == set(Activation)
    for kind in Activation:
        assert activation_op(kind).name == f"mir.{kind.value}"
