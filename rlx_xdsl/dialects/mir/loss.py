"""MIR softmax cross-entropy ops: indexed and dense forward losses, and the indexed backward.

All three take logits `[N, C]` (rank 2, as RLX's kernels) and compute per row;
the caller reduces the `[N]` loss (RLX follows them with a Mean). Class indices
may be integers or, as RLX encodes them, floats (truncated toward zero), shaped
`[N]` or `[N, 1]` (RLX reshapes the latter; here both are accepted as they are).

The indexed ops take PyTorch's `ignore_index` (`torch.nn.functional.cross_entropy`):
a row whose label equals it has loss 0 and gradient 0. The ops give per-row losses,
PyTorch's `reduction="none"`; PyTorch's `reduction="mean"` divides the sum by the
number of rows that are not ignored, so a caller computing that mean divides by
`sum(labels != ignore_index)`, not by N.

They compute in f32 for f16/bf16 logits (else in the logits' dtype) and round
once. A loss is finite whenever its row's largest logit is finite and the logits
it selects are finite: other classes' `-inf` logits contribute nothing. A row
holding NaN or `+inf`, or only `-inf`, gives NaN.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import I64, IntegerAttr, TensorType
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, opt_prop_def, result_def, traits_def
from xdsl.traits import Pure

from rlx_xdsl.dialects.base import (
    FUNCTIONAL,
    RlxOperation,
    i64_attr,
    refine_dim,
    require,
    require_float,
    require_index_type,
    require_rank,
    require_same_element_type,
    tensor_type,
)
from rlx_xdsl.dialects.traits import REDUCTION, OperandRoles, Role
from rlx_xdsl.shapes import DYNAMIC, dims_match, fmt_dim, fmt_shape, tensor


class CrossEntropyOperation(RlxOperation):
    """The operand checks shared by the three cross-entropy ops."""

    def check_logits(self, logits: SSAValue) -> TensorType:
        """Logits are a float `[N, C]` tensor."""
        t = tensor_type(logits)
        require_rank(self, t, 2, "logits")
        require_float(self, t, "logits")
        return t

    def check_rows(self, n: int, vector: SSAValue, what: str) -> int:
        """Check `vector` is `[N]` for the logits' N; return N (static if either side knows it)."""
        t = tensor_type(vector)
        require_rank(self, t, 1, what)
        m = t.get_shape()[0]
        require(dims_match(n, m), self, lambda: f"{what} has {fmt_dim(m)} rows but logits has {fmt_dim(n)}")
        return refine_dim(n, m)

    def check_labels(self, n: int, labels: SSAValue) -> int:
        """Labels are `[N]` or `[N, 1]` class indices of an integer or float dtype; return N."""
        t = tensor_type(labels)
        require_index_type(self, t, "labels")
        shape = t.get_shape()
        require(
            len(shape) in (1, 2) and (len(shape) == 1 or dims_match(shape[1], 1)),
            self,
            lambda: f"labels must have shape [N] or [N, 1], got {fmt_shape(shape)}",
        )
        m = shape[0]
        require(dims_match(n, m), self, lambda: f"labels has {fmt_dim(m)} rows but logits has {fmt_dim(n)}")
        return refine_dim(n, m)

    def check_logits_dtype(self, logits: TensorType, value: SSAValue, what: str) -> None:
        """Dense targets and the incoming gradient share the logits' dtype (the op computes in it)."""
        require_same_element_type(
            self,
            logits,
            {what: tensor_type(value)},
            "{what} element type {actual} does not match logits element type {expected}",
        )


class IndexedCrossEntropyOperation(CrossEntropyOperation):
    """The two ops taking class-index labels (and an optional `ignore_index` property)."""

    def ignored_label(self) -> int | None:
        """The label whose rows are ignored, None when the op has no `ignore_index`."""
        attr = self.properties.get("ignore_index")
        return None if attr is None else attr.value.data

    def index_bound(self, operand: SSAValue) -> int | None:
        """Labels select one of the logits' classes (the last dim)."""
        if operand is not self.operands[1]:
            return None
        classes = tensor_type(self.operands[0]).get_shape()[-1]
        return None if classes == DYNAMIC else classes


def _ignore_index_prop(ignore_index: int | None) -> dict[str, Attribute | None]:
    return {"ignore_index": None if ignore_index is None else i64_attr(ignore_index)}


IGNORE_INDEX = "(`ignore_index` `=` $ignore_index^)? "
"""The optional `ignore_index = K` clause of the indexed ops' syntax."""


@irdl_op_definition
class SoftmaxCrossEntropyWithLogitsOp(IndexedCrossEntropyOperation):
    """Per-row loss `logsumexp(logits[n]) - logits[n, labels[n]]` for class-index labels.

    A label outside `[0, C)` (or NaN) selects no class, so its row's loss is the
    bare logsumexp (as a one-hot built by comparing labels with each class gives).
    A row whose label (truncated, for float labels) equals `ignore_index` has loss 0
    (PyTorch's `cross_entropy(..., ignore_index=K, reduction="none")`); PyTorch's
    `"mean"` is the sum of these losses over the number of rows not ignored.
    """

    name = "mir.softmax_cross_entropy_with_logits"
    logits = operand_def(TensorType)
    labels = operand_def(TensorType)
    result = result_def(TensorType)
    ignore_index = opt_prop_def(IntegerAttr[I64])
    traits = traits_def(Pure(), REDUCTION, OperandRoles.of(labels=Role.LABEL))
    assembly_format = "$logits `,` $labels " + IGNORE_INDEX + FUNCTIONAL

    def __init__(self, logits: SSAValue, labels: SSAValue, *, ignore_index: int | None = None):
        super().__init__(operands=[logits, labels], properties=_ignore_index_prop(ignore_index))

    def infer_result_types(self) -> Sequence[Attribute]:
        logits = self.check_logits(self.logits)
        n = self.check_labels(logits.get_shape()[0], self.labels)
        return [tensor(logits.element_type, [n])]


@irdl_op_definition
class SoftmaxCrossEntropyOp(CrossEntropyOperation):
    """Per-row loss `logsumexp(logits[n]) - sum_c targets[n, c] * logits[n, c]` for soft labels.

    `targets` has the logits' shape and dtype (usually one probability distribution per row).
    Classes whose target is 0 contribute nothing, even where their logit is `-inf`.
    """

    name = "mir.softmax_cross_entropy"
    logits = operand_def(TensorType)
    targets = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), REDUCTION)
    assembly_format = "$logits `,` $targets " + FUNCTIONAL

    def __init__(self, logits: SSAValue, targets: SSAValue):
        super().__init__(operands=[logits, targets])

    def infer_result_types(self) -> Sequence[Attribute]:
        logits = self.check_logits(self.logits)
        targets = tensor_type(self.targets)
        shape, target_shape = logits.get_shape(), targets.get_shape()
        require(
            len(target_shape) == 2 and all(map(dims_match, shape, target_shape)),
            self,
            lambda: f"targets shape {fmt_shape(target_shape)} does not match logits shape "
            f"{fmt_shape(shape)}",
        )
        self.check_logits_dtype(logits, self.targets, "targets")
        n = refine_dim(shape[0], target_shape[0])
        return [tensor(logits.element_type, [n])]


@irdl_op_definition
class SoftmaxCrossEntropyBackwardOp(IndexedCrossEntropyOperation):
    """Gradient of the indexed loss: `(softmax(logits) - one_hot(labels)) * d_loss[:, None]`.

    The softmax is recomputed from the logits (RLX saves nothing from the forward).
    Rows whose label equals `ignore_index` get a zero gradient, whatever their `d_loss`.
    """

    name = "mir.softmax_cross_entropy_backward"
    logits = operand_def(TensorType)
    labels = operand_def(TensorType)
    d_loss = operand_def(TensorType)
    result = result_def(TensorType)
    ignore_index = opt_prop_def(IntegerAttr[I64])
    traits = traits_def(Pure(), REDUCTION, OperandRoles.of(labels=Role.LABEL))
    assembly_format = "$logits `,` $labels `,` $d_loss " + IGNORE_INDEX + FUNCTIONAL

    def __init__(
        self, logits: SSAValue, labels: SSAValue, d_loss: SSAValue, *, ignore_index: int | None = None
    ):
        super().__init__(operands=[logits, labels, d_loss], properties=_ignore_index_prop(ignore_index))

    def infer_result_types(self) -> Sequence[Attribute]:
        logits = self.check_logits(self.logits)
        n = self.check_labels(logits.get_shape()[0], self.labels)
        n = self.check_rows(n, self.d_loss, "d_loss")
        self.check_logits_dtype(logits, self.d_loss, "d_loss")
        return [tensor(logits.element_type, [n, logits.get_shape()[1]])]


OPS = [SoftmaxCrossEntropyWithLogitsOp, SoftmaxCrossEntropyOp, SoftmaxCrossEntropyBackwardOp]
ATTRIBUTES: list[type] = []
