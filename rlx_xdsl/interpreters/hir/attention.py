"""Kernels of `hir.attention` and `hir.rope` (through their lowering, see `lowered`)."""

from rlx_xdsl.dialects.hir.attention import AttentionOp, RopeOp
from rlx_xdsl.interpreters.hir.lowered import run_lowered

KERNELS = {AttentionOp: run_lowered, RopeOp: run_lowered}
