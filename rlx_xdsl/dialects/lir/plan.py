"""`lir.plan`: the memory plan of the function it opens, proved by its verifier."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import func
from xdsl.dialects.builtin import I64, IntegerAttr, StringAttr
from xdsl.ir import Attribute
from xdsl.irdl import irdl_op_definition, opt_prop_def, prop_def, traits_def
from xdsl.traits import HasParent

from rlx_xdsl.dialects.base import RlxOperation, i64_attr, require, require_non_negative
from rlx_xdsl.dialects.lir.proof import prove


@irdl_op_definition
class PlanOp(RlxOperation):
    """The memory plan of the enclosing `func.func`, which it opens.

    The function runs on one arena of `arena_bytes` bytes; every value says where
    it lives in it (`lir.slot`: a slot, a view of its root, or external) and every
    op its phase (`lir.phase`). `naive_bytes` is what the buffers take with no
    reuse, `lower_bound_bytes` the most bytes live at one step (no plan can do
    better); `strategy` names the allocator that made the plan. The verifier
    proves the plan against the function (`dialects/lir/proof.py`): slots aligned and inside
    the arena, views inside their root, no bytes shared by buffers live at the
    same step (except an allowed in-place write), and the figures.

    Not `Pure`: an op without results that is pure would be erased as dead.
    """

    name = "lir.plan"
    arena_bytes = prop_def(IntegerAttr[I64])
    naive_bytes = prop_def(IntegerAttr[I64])
    lower_bound_bytes = prop_def(IntegerAttr[I64])
    alignment = prop_def(IntegerAttr[I64])
    strategy = opt_prop_def(StringAttr)
    traits = traits_def(HasParent(func.FuncOp))
    assembly_format = (
        "`arena_bytes` `=` $arena_bytes `naive_bytes` `=` $naive_bytes "
        "`lower_bound_bytes` `=` $lower_bound_bytes `alignment` `=` $alignment "
        "(`strategy` `=` $strategy^)? attr-dict"
    )

    def __init__(
        self,
        *,
        arena_bytes: int,
        naive_bytes: int,
        lower_bound_bytes: int,
        alignment: int,
        strategy: str | None = None,
    ):
        super().__init__(
            properties={
                "arena_bytes": i64_attr(arena_bytes),
                "naive_bytes": i64_attr(naive_bytes),
                "lower_bound_bytes": i64_attr(lower_bound_bytes),
                "alignment": i64_attr(alignment),
                "strategy": StringAttr(strategy) if strategy is not None else None,
            }
        )

    def check_attributes(self) -> None:
        alignment = self.alignment.value.data
        require(
            alignment >= 1 and alignment & (alignment - 1) == 0,
            self,
            lambda: f"alignment must be a power of two, got {alignment}",
        )
        require_non_negative(
            self,
            arena_bytes=self.arena_bytes.value.data,
            naive_bytes=self.naive_bytes.value.data,
            lower_bound_bytes=self.lower_bound_bytes.value.data,
        )

    def infer_result_types(self) -> Sequence[Attribute]:
        return []

    def verify_(self) -> None:
        super().verify_()
        prove(self)


OPS = [PlanOp]
