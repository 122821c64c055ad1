"""The `hir` dialect: RLX's block ops, which state fusion intent and lower to MIR.

A model author writes a decoder as a dozen block ops (`hir.linear`,
`hir.swiglu`, `hir.llama_decoder_block`, ...) in an ordinary `func.func`; MIR
ops may appear beside them (RLX's `HirOp::Mir` escape hatch is simply a MIR op).
`rlx-lower-hir` expands every block into MIR. Ops are grouped by concept, one
module per group (`layers.HIR_GROUPS`); each exports `OPS`, gathered here into the `HIR` dialect.
"""

from xdsl.ir import Dialect

from rlx_xdsl import layers
from rlx_xdsl.ir.emitter import OpNamespace, register_namespace

GROUPS = layers.load("hir-dialect")
"""The group modules, in `layers.HIR_GROUPS` order."""

ALL_OPS = [op for group in GROUPS for op in group.OPS]

HIR = Dialect("hir", ALL_OPS, [])
register_namespace("hir", lambda emitter: OpNamespace(emitter, HIR))
