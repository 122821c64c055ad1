"""HIR attention blocks: `attention` and `rope`, in MIR's `[B, H, S, D]` head layout.

Both lower one-to-one to their MIR ops under either policy; they exist so a
model written in HIR needs no MIR escape hatch for them, and so the MIR ops they
produce carry the block's label. Their rules are MIR's
(`mir.attention.AttentionOperation`, `RopeOperation`): RLX's HIR attention sets
neither a score scale nor a soft-cap, so neither does `hir.attention`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import I64, IntegerAttr, TensorType
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure

from rlx_xdsl.dialects.base import FUNCTIONAL, i64_attr
from rlx_xdsl.dialects.hir.base import HirOperation, label_attributes
from rlx_xdsl.dialects.mir.attention import (
    AttentionOperation,
    MaskKind,
    MaskKindAttr,
    RopeOperation,
)
from rlx_xdsl.dialects.traits import COMPUTE, DATA_MOVEMENT, OperandRoles, Role
from rlx_xdsl.shapes import tensor


@irdl_op_definition
class AttentionOp(AttentionOperation, HirOperation):
    """Scaled dot-product attention `softmax(mask(q k^T / sqrt(head_dim))) v` (`HirOp::Attention`).

    q is `[B, H, Sq, D]`, k and v `[B, Hkv, Sk, D]`; the mask operand is present
    exactly for the `custom` and `bias` kinds. Lowers to `mir.attention`.
    """

    name = "hir.attention"
    q = operand_def(TensorType)
    k = operand_def(TensorType)
    v = operand_def(TensorType)
    mask = opt_operand_def(TensorType)
    num_heads = prop_def(IntegerAttr[I64])
    head_dim = prop_def(IntegerAttr[I64])
    mask_kind = prop_def(MaskKindAttr)
    window = opt_prop_def(IntegerAttr[I64])
    result = result_def(TensorType)
    traits = traits_def(Pure(), COMPUTE, OperandRoles.of(mask=Role.MASK))
    assembly_format = (
        "$q `,` $k `,` $v (`,` $mask^)? `num_heads` `=` $num_heads `head_dim` `=` $head_dim "
        "`mask_kind` `=` $mask_kind (`window` `=` $window^)? " + FUNCTIONAL
    )
    DEFAULT_LABEL: ClassVar[str] = "attention"

    def __init__(
        self,
        q: SSAValue,
        k: SSAValue,
        v: SSAValue,
        mask: SSAValue | None = None,
        *,
        num_heads: int,
        head_dim: int,
        mask_kind: str | MaskKind = MaskKind.NONE,
        window: int | None = None,
        label: str | None = None,
    ):
        super().__init__(
            operands=[q, k, v, mask],
            properties={
                "num_heads": i64_attr(num_heads),
                "head_dim": i64_attr(head_dim),
                "mask_kind": MaskKindAttr(MaskKind(mask_kind)),
                "window": None if window is None else i64_attr(window),
            },
            attributes=label_attributes(label),
        )

    @property
    def attn_logit_softcap(self) -> None:
        """RLX's HIR attention has no logit soft-cap (the shared checks ask)."""
        return None

    def infer_result_types(self) -> Sequence[Attribute]:
        q = self.check_operands()
        batch, _, sq, _ = q.get_shape()
        return [tensor(q.element_type, (batch, self.num_heads.value.data, sq, self.head_dim.value.data))]


@irdl_op_definition
class RopeOp(RopeOperation, HirOperation):
    """Rotary position embedding of the first `n_rot` dims of each head (`HirOp::RoPE`).

    NeoX pairing as `mir.rope`, to which it lowers: x is `[..., S, head_dim]` and
    cos, sin broadcast to `[..., S, n_rot / 2]`.
    """

    name = "hir.rope"
    x = operand_def(TensorType)
    cos = operand_def(TensorType)
    sin = operand_def(TensorType)
    head_dim = prop_def(IntegerAttr[I64])
    n_rot = prop_def(IntegerAttr[I64])
    result = result_def(TensorType)
    traits = traits_def(Pure(), DATA_MOVEMENT)
    assembly_format = "$x `,` $cos `,` $sin `head_dim` `=` $head_dim `n_rot` `=` $n_rot " + FUNCTIONAL
    DEFAULT_LABEL: ClassVar[str] = "rope"

    def __init__(
        self,
        x: SSAValue,
        cos: SSAValue,
        sin: SSAValue,
        *,
        head_dim: int,
        n_rot: int | None = None,
        label: str | None = None,
    ):
        super().__init__(
            operands=[x, cos, sin],
            properties={
                "head_dim": i64_attr(head_dim),
                "n_rot": i64_attr(head_dim if n_rot is None else n_rot),
            },
            attributes=label_attributes(label),
        )

    def infer_result_types(self) -> Sequence[Attribute]:
        return [self.check_rotated(self.x, "x")]


OPS = [AttentionOp, RopeOp]
