"""`rlx-lower-softmax-cross-entropy`: the lowered graphs compute what the SCE kernels compute,
and their size does not depend on the number of classes."""

import ml_dtypes
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import HealthCheck, given, settings
from xdsl.context import Context

from rlx_xdsl import dtypes
from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.context import parse_module
from rlx_xdsl.dialects.mir import elementwise as ew
from rlx_xdsl.dialects.mir import loss, reduction
from rlx_xdsl.ir.diagnostics import OpError
from rlx_xdsl.run import run_function
from rlx_xdsl.shapes import DYNAMIC
from rlx_xdsl.testing.graphgen import graphs, inputs_for
from rlx_xdsl.transforms.lower_sce import LowerSoftmaxCrossEntropyPass

SCE_OPS = (
    loss.SoftmaxCrossEntropyWithLogitsOp,
    loss.SoftmaxCrossEntropyOp,
    loss.SoftmaxCrossEntropyBackwardOp,
)
RNG = np.random.default_rng(5)


def lower(module):
    LowerSoftmaxCrossEntropyPass().apply(Context(), module)
    module.verify()
    return module


def op_names(module) -> list[str]:
    return [op.name for op in module.walk() if op.name.startswith("mir.")]


def sce_graph(
    n, c, logits_dtype="f32", labels_dtype="f32", *, dynamic_rows=False, column=False, ignore_index=None
):
    """`@f(logits, labels, d_loss, targets) -> (indexed loss, gradient, dense loss)`; labels
    `[N]` or (`column`) `[N, 1]`."""
    b = GraphBuilder("f")
    rows = DYNAMIC if dynamic_rows else n
    x = b.input("logits", [rows, c], logits_dtype)
    labels = b.input("labels", [n, 1] if column else [n], labels_dtype)
    d = b.input("d_loss", [n], logits_dtype)
    t = b.input("targets", [rows, c], logits_dtype)
    b.output(
        b.softmax_cross_entropy_with_logits(x, labels, ignore_index=ignore_index),
        b.softmax_cross_entropy_backward(x, labels, d, ignore_index=ignore_index),
        b.softmax_cross_entropy(x, t),
    )
    return b.module()


def run_before_and_after(module, inputs):
    before = run_function(module, "f", inputs)
    after = run_function(lower(module), "f", inputs)
    assert not any(name in op_names(module) for name in (op.name for op in SCE_OPS))
    return before, after


def assert_outputs_close(before, after, rtol=1e-5, atol=1e-6):
    for want, got in zip(before, after, strict=True):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol, atol=atol)


def sce_inputs(n, c, dtype=np.float32, labels=None, scale=3.0):
    x = (RNG.standard_normal((n, c)) * scale).astype(dtype)
    if labels is None:
        labels = RNG.integers(0, c, n).astype(np.float32)
    d = RNG.standard_normal(n).astype(dtype)
    t = RNG.random((n, c)).astype(dtype)
    return [x, labels, d, (t / t.sum(axis=1, keepdims=True)).astype(dtype)]


# Numerics -----------------------------------------------------------------------------


def test_lowered_graph_matches_the_kernels():
    before, after = run_before_and_after(sce_graph(6, 5), sce_inputs(6, 5))
    assert_outputs_close(before, after)


def test_out_of_range_labels_keep_the_kernel_semantics():
    """Labels outside [0, C) select no class: loss = logsumexp, gradient = softmax * d_loss."""
    labels = np.array([-1, 5, 7, 0, 4, -3], np.int64)
    module = sce_graph(6, 5, labels_dtype="i64")
    before, after = run_before_and_after(module, sce_inputs(6, 5, labels=labels))
    assert_outputs_close(before, after)
    x = sce_inputs(6, 5, labels=labels)[0]  # a fresh draw: check the formula on it too
    (loss_after, *_) = run_function(module, "f", [x, labels, *sce_inputs(6, 5)[2:]])
    lse = np.log(np.exp(x.astype(np.float64)).sum(axis=1))
    np.testing.assert_allclose(loss_after[[0, 1, 2, 5]], lse[[0, 1, 2, 5]], rtol=1e-5)


def test_neg_inf_logits_of_unselected_classes_stay_finite():
    """A `-inf` logit whose class the label or target does not select: the kernels give a
    finite loss, and so must the lowered graph (`0 * -inf` in the weighted sum was NaN)."""
    inputs = sce_inputs(4, 5, labels=np.array([0, 2, 4, 1], np.float32))
    x, _, _, t = inputs
    x[[0, 1, 2, 3], [1, 4, 0, 3]] = -np.inf
    t[:] = np.eye(5, dtype=np.float32)[[0, 2, 4, 1]]  # targets on finite logits only
    before, after = run_before_and_after(sce_graph(4, 5), inputs)
    assert all(np.isfinite(out).all() for out in before)
    assert all(np.isfinite(out).all() for out in after)
    assert_outputs_close(before, after)


def test_nan_labels_select_no_class_as_in_the_kernel():
    """The cast to i64 makes NaN 0; the lowering keeps it out of every class."""
    labels = np.array([np.nan, 1.0, np.nan, 3.0], np.float32)
    before, after = run_before_and_after(sce_graph(4, 5), sce_inputs(4, 5, labels=labels))
    assert_outputs_close(before, after)
    before, after = run_before_and_after(
        sce_graph(4, 5, ignore_index=-1), sce_inputs(4, 5, labels=labels)
    )  # the id NaN gets must not be the ignored one either
    assert before[0][0] != 0
    assert_outputs_close(before, after)


@pytest.mark.parametrize("labels_dtype", ["f32", "i64", "ui8"])
def test_column_labels_lower_like_row_labels(labels_dtype):
    labels = np.array([[0], [3], [4], [1]], dtypes.dtype_named(labels_dtype).numpy)
    inputs = sce_inputs(4, 5, labels=labels)
    before, after = run_before_and_after(sce_graph(4, 5, labels_dtype=labels_dtype, column=True), inputs)
    assert_outputs_close(before, after)
    row_labels = [inputs[0], labels[:, 0], *inputs[2:]]
    rows = run_function(sce_graph(4, 5, labels_dtype=labels_dtype), "f", row_labels)
    assert_outputs_close(rows, after)


@pytest.mark.parametrize(
    ("labels", "labels_dtype", "ignore_index", "column"),
    [
        ([0, -100, 2, -100], "i64", -100, False),
        ([1, 3, 3, 0], "i32", 3, True),
        ([4.5, 0.0, -0.5, 2.0], "f32", 0, False),  # -0.5 truncates to 0: ignored too
    ],
)
def test_ignore_index_lowered_matches_torch(labels, labels_dtype, ignore_index, column):
    """Ignored rows: loss 0 and gradient 0 after lowering, as `F.cross_entropy(ignore_index=K)`."""
    labels = np.array(labels, dtypes.dtype_named(labels_dtype).numpy)
    if column:
        labels = labels.reshape(-1, 1)
    inputs = sce_inputs(4, 5, labels=labels)
    module = sce_graph(4, 5, labels_dtype=labels_dtype, column=column, ignore_index=ignore_index)
    before, after = run_before_and_after(module, inputs)
    assert_outputs_close(before, after)
    x, _, d, _ = inputs
    logits = torch.from_numpy(x).requires_grad_()
    ids = torch.from_numpy(np.trunc(labels.reshape(-1).astype(np.float64)).astype(np.int64))
    per_row = F.cross_entropy(logits, ids, reduction="none", ignore_index=ignore_index)
    (per_row * torch.from_numpy(d)).sum().backward()
    np.testing.assert_allclose(after[0], per_row.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(after[1], logits.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_float_labels_truncate_toward_zero():
    labels = np.array([0.9, 4.99, 2.5, 2.0, 1.2, -0.5], np.float32)  # -0.5 truncates to class 0
    before, after = run_before_and_after(sce_graph(6, 5), sce_inputs(6, 5, labels=labels))
    assert_outputs_close(before, after)


@pytest.mark.parametrize("label_dtype", ["i32", "i64", "ui8", "ui32", "f64", "bf16"])
def test_every_label_dtype(label_dtype):
    labels = RNG.integers(0, 5, 4).astype(dtypes.dtype_named(label_dtype).numpy)
    before, after = run_before_and_after(
        sce_graph(4, 5, labels_dtype=label_dtype), sce_inputs(4, 5, labels=labels)
    )
    assert_outputs_close(before, after)


def test_large_logits_stay_finite():
    """The max is subtracted before exp: logits near 1e4 do not overflow f32."""
    inputs = sce_inputs(6, 5)
    inputs[0] = (inputs[0] + np.float32(1e4)).astype(np.float32)
    before, after = run_before_and_after(sce_graph(6, 5), inputs)
    assert all(np.isfinite(out).all() for out in after)
    assert_outputs_close(before, after, atol=1e-3)


def test_dense_targets_that_do_not_sum_to_one_follow_the_definition():
    inputs = sce_inputs(5, 4)
    inputs[3] = (RNG.random((5, 4)) * 3).astype(np.float32)
    before, after = run_before_and_after(sce_graph(5, 4), inputs)
    assert_outputs_close(before, after, atol=1e-5)


@pytest.mark.parametrize(
    ("dtype", "tol"), [(np.float16, 1e-2), (ml_dtypes.bfloat16, 6e-2), (np.float64, 1e-12)]
)
def test_low_and_high_precision(dtype, tol):
    name = {np.float16: "f16", ml_dtypes.bfloat16: "bf16", np.float64: "f64"}[dtype]
    before, after = run_before_and_after(sce_graph(6, 5, name), sce_inputs(6, 5, dtype=dtype, scale=1.0))
    assert_outputs_close(before, after, rtol=tol, atol=tol)


def test_dynamic_rows_are_lowered_and_keep_every_result_type():
    module = sce_graph(4, 5, dynamic_rows=True)
    types = [str(t) for t in module.ops.first.function_type.outputs]
    before, after = run_before_and_after(module, sce_inputs(4, 5))
    assert [str(t) for t in module.ops.first.function_type.outputs] == types
    assert_outputs_close(before, after)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs(max_ops=8, ops=[*SCE_OPS, ew.ExpOp, ew.AddOp, ew.MulOp, reduction.SoftmaxOp]))
def test_random_graphs_compute_the_same_after_lowering(module):
    inputs = inputs_for(module)
    before = run_function(module, None, inputs)
    after = run_function(lower(module), None, inputs)
    assert not any(isinstance(op, SCE_OPS) for op in module.walk())
    for want, got in zip(before, after, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5, equal_nan=True)


# Graph size ------------------------------------------------------------------------------


def lowered_text(classes: int) -> str:
    module = sce_graph(3, classes)
    return str(lower(module))


def test_lowered_size_does_not_depend_on_the_class_count():
    """C = 4 and C = 50,000 lower to the same ops; the texts differ only in how C is spelled."""
    small, large = lowered_text(4), lowered_text(50_000)
    assert op_names(parse_module(small)) == op_names(parse_module(large))
    assert len(op_names(parse_module(large))) == 54  # the 3 SCE ops of `sce_graph`
    assert large.replace("50000", "4") == small
    assert len(large) - len(small) == large.count("50000") * (len("50000") - len("4"))


def test_one_hot_is_one_comparison_with_an_iota_ramp():
    module = lower(sce_graph(3, 50_000, labels_dtype="i64"))
    names = op_names(module)
    assert names.count("mir.iota") == 2  # one per indexed op
    assert names.count("mir.compare") == 3  # the two one-hots, the dense targets != 0
    assert "mir.concat" not in names


def test_a_dynamic_class_count_is_reported_at_the_op():
    b = GraphBuilder("f")
    x = b.input("logits", [3, DYNAMIC])
    labels = b.input("labels", [3], "i64")
    b.output(b.softmax_cross_entropy_with_logits(x, labels))
    module = b.module()
    with pytest.raises(OpError, match="logits \\[3, \\?\\] have a dynamic class count") as info:
        lower(module)
    assert info.value.op.name == "mir.softmax_cross_entropy_with_logits"


def test_dense_loss_with_a_dynamic_class_count_lowers():
    b = GraphBuilder("f")
    x = b.input("logits", [3, DYNAMIC])
    b.output(b.softmax_cross_entropy(x, x))
    module = b.module()
    data = RNG.standard_normal((3, 4)).astype(np.float32)
    before = run_function(module, "f", [data])
    after = run_function(lower(module), "f", [data])
    assert_outputs_close(before, after)
