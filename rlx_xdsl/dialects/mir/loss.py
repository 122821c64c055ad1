"""MIR softmax cross-entropy ops: indexed and dense forward losses, and the indexed backward.

All three take logits `[N, C]` (rank 2, as RLX's kernels) and compute per row;
the caller reduces the `[N]` loss (RLX follows them with a Mean). Class indices
may be integers or, as RLX encodes them, floats (truncated toward zero).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, result_def, traits_def
from xdsl.traits import Pure

from rlx_xdsl import dtypes
from rlx_xdsl.dialects.base import (
    RlxOperation,
    dims_match,
    require,
    require_float,
    require_rank,
    tensor_type,
)
from rlx_xdsl.dialects.traits import REDUCTION
from rlx_xdsl.shapes import DYNAMIC, fmt_shape, tensor

_FUNCTIONAL = "attr-dict `:` functional-type(operands, results)"


def check_logits(op: RlxOperation, logits: SSAValue) -> TensorType:
    """Logits are a float `[N, C]` tensor."""
    t = tensor_type(logits)
    require_rank(op, t, 2, "logits")
    require_float(op, t, "logits")
    return t


def fmt_dim(d: int) -> str:
    return "?" if d == DYNAMIC else str(d)


def check_rows(op: RlxOperation, n: int, vector: SSAValue, what: str) -> int:
    """Check `vector` is `[N]` for the logits' N; return N (static if either side knows it)."""
    t = tensor_type(vector)
    require_rank(op, t, 1, what)
    m = t.get_shape()[0]
    require(dims_match(n, m), op, f"{what} has {fmt_dim(m)} rows but logits has {fmt_dim(n)}")
    return m if n == DYNAMIC else n


def check_labels(op: RlxOperation, n: int, labels: SSAValue) -> int:
    """Labels are `[N]` class indices of an integer or float dtype; return N."""
    element = tensor_type(labels).element_type
    require(
        dtypes.dtype_of(element).kind in ("int", "uint", "float"),
        op,
        f"labels must have an integer or floating-point element type, got {element}",
    )
    return check_rows(op, n, labels, "labels")


def check_same_element_type(op: RlxOperation, logits: TensorType, value: SSAValue, what: str) -> None:
    """Dense targets and the incoming gradient share the logits' dtype (the op computes in it)."""
    element = tensor_type(value).element_type
    require(
        element == logits.element_type,
        op,
        f"{what} element type {element} does not match logits element type "
        f"{logits.element_type}",
    )


@irdl_op_definition
class SoftmaxCrossEntropyWithLogitsOp(RlxOperation):
    """Per-row loss `logsumexp(logits[n]) - logits[n, labels[n]]` for class-index labels.

    A label outside `[0, C)` selects no class, so its row's loss is the bare
    logsumexp (as a one-hot built by comparing labels with each class gives).
    """

    name = "mir.softmax_cross_entropy_with_logits"
    logits = operand_def(TensorType)
    labels = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), REDUCTION)
    assembly_format = "$logits `,` $labels " + _FUNCTIONAL

    def __init__(self, logits: SSAValue, labels: SSAValue):
        super().__init__(operands=[logits, labels])

    def infer_result_types(self) -> Sequence[Attribute]:
        logits = check_logits(self, self.logits)
        n = check_labels(self, logits.get_shape()[0], self.labels)
        return [tensor(logits.element_type, [n])]


@irdl_op_definition
class SoftmaxCrossEntropyOp(RlxOperation):
    """Per-row loss `logsumexp(logits[n]) - sum_c targets[n, c] * logits[n, c]` for soft labels.

    `targets` has the logits' shape and dtype (usually one probability distribution per row).
    """

    name = "mir.softmax_cross_entropy"
    logits = operand_def(TensorType)
    targets = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), REDUCTION)
    assembly_format = "$logits `,` $targets " + _FUNCTIONAL

    def __init__(self, logits: SSAValue, targets: SSAValue):
        super().__init__(operands=[logits, targets])

    def infer_result_types(self) -> Sequence[Attribute]:
        logits = check_logits(self, self.logits)
        targets = tensor_type(self.targets)
        shape, target_shape = logits.get_shape(), targets.get_shape()
        require(
            len(target_shape) == 2 and all(map(dims_match, shape, target_shape)),
            self,
            f"targets shape {fmt_shape(target_shape)} does not match logits shape "
            f"{fmt_shape(shape)}",
        )
        check_same_element_type(self, logits, self.targets, "targets")
        n = shape[0] if shape[0] != DYNAMIC else target_shape[0]
        return [tensor(logits.element_type, [n])]


@irdl_op_definition
class SoftmaxCrossEntropyBackwardOp(RlxOperation):
    """Gradient of the indexed loss: `(softmax(logits) - one_hot(labels)) * d_loss[:, None]`.

    The softmax is recomputed from the logits (RLX saves nothing from the forward).
    """

    name = "mir.softmax_cross_entropy_backward"
    logits = operand_def(TensorType)
    labels = operand_def(TensorType)
    d_loss = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), REDUCTION)
    assembly_format = "$logits `,` $labels `,` $d_loss " + _FUNCTIONAL

    def __init__(self, logits: SSAValue, labels: SSAValue, d_loss: SSAValue):
        super().__init__(operands=[logits, labels, d_loss])

    def infer_result_types(self) -> Sequence[Attribute]:
        logits = check_logits(self, self.logits)
        n = check_labels(self, logits.get_shape()[0], self.labels)
        n = check_rows(self, n, self.d_loss, "d_loss")
        check_same_element_type(self, logits, self.d_loss, "d_loss")
        return [tensor(logits.element_type, [n, logits.get_shape()[1]])]


OPS = [SoftmaxCrossEntropyWithLogitsOp, SoftmaxCrossEntropyOp, SoftmaxCrossEntropyBackwardOp]
ATTRIBUTES: list[type] = []
