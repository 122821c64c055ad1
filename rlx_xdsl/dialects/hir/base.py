"""What every HIR block op shares: its label, operand-count diagnostics and float operands.

A block op states *intent* ("a SwiGLU feed-forward", "a linear layer with a bias and
GELU") and `rlx-lower-hir` expands it into MIR. Every MIR op it produces is located
at `NameLoc(label, <the block op's location>)`, so diagnostics and reports can name
the block. The label is the op's `rlx.label` attribute when set, else the op's
`DEFAULT_LABEL` (RLX's `default_hir_block_label`: `"linear"`, `"swiglu_ffn"`, ...).

RLX's lowering fails with `WrongInputCount`/`MissingBias` on malformed blocks; here
the verifier rejects them first, naming the op, the operands it expects and the
ones that are missing (`HirOperation.verify`), before IRDL's generic count check.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

from xdsl.dialects.builtin import StringAttr, TensorType
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import OptionalDef
from xdsl.utils.exceptions import VerifyException

from rlx_xdsl.dialects.base import (
    RlxOperation,
    require,
    require_float,
    require_min_rank,
    require_rank,
    require_same_element_type,
    tensor_type,
)
from rlx_xdsl.shapes import DYNAMIC, dims_match, fmt_dim, fmt_shape

LABEL_ATTR = "rlx.label"
"""The discardable attribute naming a block (`{rlx.label = "layers.0.ffn"}`)."""


def label_attributes(label: str | None) -> dict[str, Attribute]:
    """The `attributes=` of a block op constructor given an optional label."""
    return {} if label is None else {LABEL_ATTR: StringAttr(label)}


class HirOperation(RlxOperation):
    """Common behaviour of HIR block ops (methods only; each op declares its own definitions)."""

    DEFAULT_LABEL: ClassVar[str]
    """The block label when `rlx.label` is absent (RLX's `default_hir_block_label`)."""

    def block_label(self) -> str:
        """`rlx.label` when set, else the op's default label."""
        label = self.attributes.get(LABEL_ATTR)
        return label.data if isinstance(label, StringAttr) else self.DEFAULT_LABEL

    def verify(self, verify_nested_ops: bool = True) -> None:
        self._check_operand_count()
        label = self.attributes.get(LABEL_ATTR)
        if label is not None and not isinstance(label, StringAttr):
            raise VerifyException(f"'{self.name}' attribute {LABEL_ATTR} must be a string, got {label}")
        super().verify(verify_nested_ops)

    def _check_operand_count(self) -> None:
        """RLX's `WrongInputCount`/`MissingBias`, with the operand names spelled out."""
        definitions = type(self).get_irdl_definition().operands
        required = [name for name, d in definitions if not isinstance(d, OptionalDef)]
        optional = [name for name, d in definitions if isinstance(d, OptionalDef)]
        got = len(self.operands)
        if len(required) <= got <= len(definitions):
            return
        expected = f"{len(required)} operands ({', '.join(required)})"
        if optional:
            expected += f" or {len(definitions)} with {', '.join(optional)}"
        message = f"'{self.name}' expects {expected}, got {got}"
        if got < len(required):
            message += f": missing {', '.join(required[got:])}"
        raise VerifyException(message)


# Checks shared by the block ops ---------------------------------------------------


def float_operands(op: RlxOperation, values: Mapping[str, SSAValue]) -> dict[str, TensorType]:
    """The operands' tensor types; all floating point and of one element type.

    HIR blocks are float layers (AMP casts a block's operands together), so a
    dtype mix is a mistake, never an implicit promotion.
    """
    types = {name: tensor_type(v) for name, v in values.items()}
    first_name, first = next(iter(types.items()))
    require_float(op, first, first_name)
    require_same_element_type(
        op,
        first,
        {name: t for name, t in types.items() if name != first_name},
        f"{{what}} element type {{actual}} differs from {first_name}'s {{expected}}",
    )
    return types


def projection(op: RlxOperation, x: TensorType, w: TensorType, what: str, x_what: str = "x") -> list[int]:
    """The shape of `x @ w` for activations `x[..., K]` and a weight matrix `w[K, N]`."""
    require_min_rank(op, x, 2, x_what)
    require_rank(op, w, 2, what)
    k_x, (k_w, n) = x.get_shape()[-1], w.get_shape()
    require(
        dims_match(k_x, k_w),
        op,
        lambda: f"{what} has {fmt_dim(k_w)} rows but {x_what} has {fmt_dim(k_x)} features",
    )
    return [*x.get_shape()[:-1], n]


def require_shape(op: RlxOperation, t: TensorType, expected: Sequence[int], what: str) -> None:
    """`t` has exactly the rank of `expected` and each dim may equal the expected one."""
    shape = t.get_shape()
    require(
        len(shape) == len(expected) and all(map(dims_match, shape, expected)),
        op,
        lambda: f"{what} shape {fmt_shape(shape)} must be {fmt_shape(expected)}",
    )


def require_one_dynamic(op: RlxOperation, shape: Sequence[int], what: str) -> None:
    """At most one of the leading (batch, sequence) dims of `shape` may be `?`.

    The lowering splits and merges these dims with `mir.reshape`, whose
    `new_shape` can leave only one dim (`-1`) to be inferred.
    """
    require(
        list(shape[:2]).count(DYNAMIC) <= 1,
        op,
        lambda: f"{what} shape {fmt_shape(shape)} may have at most one dynamic dim among batch and "
        "sequence (the lowering reshapes with one -1)",
    )
