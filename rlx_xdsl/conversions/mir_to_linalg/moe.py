"""Lowering of the MIR mixture-of-experts and LoRA ops through their expansions:
`lora_matmul` by its `rlx-unfuse` rule, `grouped_matmul` as `gather` and a batched
`matmul`, `dequant_grouped_matmul` (int8 schemes) as per-expert `dequant_matmul`s of the identity feeding
`grouped_matmul` (`unfuse_rules/moe.py`); the walk lowers the rest."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import SSAValue

from rlx_xdsl.conversions.mir_to_linalg.lowering import LOWERINGS, Lowering, by_expansion
from rlx_xdsl.diagnostics import OpError
from rlx_xdsl.dialects.mir.moe import DequantGroupedMatmulOp, DequantMoeWeightsOp, GroupedMatmulOp, LoraMatmulOp
from rlx_xdsl.transforms.unfuse_rules.moe import (
    expand_dequant_grouped_matmul,
    expand_dequant_moe_weights,
    expand_grouped_matmul,
    unfuse_lora_matmul,
)

LOWERINGS.add(LoraMatmulOp, by_expansion(unfuse_lora_matmul))
LOWERINGS.add(GroupedMatmulOp, by_expansion(expand_grouped_matmul))


@LOWERINGS.register(DequantGroupedMatmulOp)
def lower_dequant_grouped_matmul(lw: Lowering, op: DequantGroupedMatmulOp) -> Sequence[SSAValue]:
    """The int8 schemes through their expansion. Codes stored as ui8 (int4, fp8, nvfp4) are
    signless by the time the walk reaches the op, which the expansion's `dequant_matmul`
    refuses: they are a located error for now."""
    if lw.operand_dtype(1).kind == "uint":
        raise OpError(op, f"'{op.name}' scheme {op.quant_scheme()} (ui8 codes) has no linalg lowering yet")
    return by_expansion(expand_dequant_grouped_matmul)(lw, op)


@LOWERINGS.register(DequantMoeWeightsOp)
def lower_dequant_moe_weights(lw: Lowering, op: DequantMoeWeightsOp) -> Sequence[SSAValue]:
    """As `dequant_grouped_matmul`: the int8 schemes through their expansion."""
    if lw.operand_dtype(0).kind == "uint":
        raise OpError(op, f"'{op.name}' scheme {op.quant_scheme()} (ui8 codes) has no linalg lowering yet")
    return by_expansion(expand_dequant_moe_weights)(lw, op)
