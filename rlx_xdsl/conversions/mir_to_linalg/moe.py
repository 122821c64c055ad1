"""Lowering of the MIR mixture-of-experts and LoRA ops through their expansions:
`lora_matmul` by its `rlx-unfuse` rule, `grouped_matmul` as `gather` and a batched
`matmul` (`unfuse_rules/moe.py`); the walk lowers the primitives."""

from __future__ import annotations

from rlx_xdsl.conversions.mir_to_linalg.lowering import LOWERINGS, by_expansion
from rlx_xdsl.dialects.mir.moe import GroupedMatmulOp, LoraMatmulOp
from rlx_xdsl.transforms.unfuse_rules.moe import expand_grouped_matmul, unfuse_lora_matmul

LOWERINGS.add(LoraMatmulOp, by_expansion(unfuse_lora_matmul))
LOWERINGS.add(GroupedMatmulOp, by_expansion(expand_grouped_matmul))
