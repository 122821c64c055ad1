"""How each HIR block op lowers to MIR: one function per op class, under a policy.

    @LOWERINGS.register(SwigluOp)
    def lower_swiglu(e: Emitter, op: SwigluOp, policy: Policy) -> Sequence[SSAValue]:
        ...  # emit MIR with `e`; return the values replacing op's results

`e` inserts before the block op and locates what it emits at
`NameLoc(<block label>, <the block's location>)`; `rlx-lower-hir` applies the
registered function of every block op it meets. Another dialect's block ops
lower the same way once registered here.

The contract: a lowering reads only its block's operand types, result types and
properties (never an operand's defining op or uses), and builds its ops from the
block's operands. Blocks alike in those expand alike, so the pass reuses one
expansion for all of them (`expansions`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.dialects.builtin import NameLoc, NoneAttr, StringAttr, UnknownLoc
from xdsl.ir import Operation, SSAValue
from xdsl.utils.str_enum import StrEnum

from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.registry import OpRegistry


class Policy(StrEnum):
    """RLX's `FusionPolicy`: how much fusion the lowering performs itself."""

    DIRECT = "direct"
    """Emit RLX's fused MIR ops (`fused_matmul_bias_act`, `fused_swiglu`, ...) where it does."""
    FUSABLE = "fusable"
    """Emit primitive chains that the fusion passes (and autodiff) recognise."""


Lowering = Callable[[Emitter, Operation, Policy], Sequence[SSAValue]]

LOWERINGS: OpRegistry[Lowering] = OpRegistry("HIR lowering")
"""The MIR expansion of each HIR block op, keyed by op class."""


def block_location(op: Operation, label: str) -> NameLoc:
    """`NameLoc(label, op's location)`: where the MIR ops produced from block `op` are."""
    inner = NoneAttr() if isinstance(op.location, UnknownLoc) else op.location
    return NameLoc(StringAttr(label), inner)


def located(op: Operation, location: NameLoc) -> Operation:
    """`op` with an explicit location (the emitter keeps it instead of its own)."""
    op.location = location
    return op
