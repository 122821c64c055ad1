"""Kernels of the HIR norms (through their lowering, see `lowered`)."""

from rlx_xdsl.dialects.hir.norm import ResidualRmsNormOp, RmsNormOp
from rlx_xdsl.interpreters.hir.lowered import run_lowered

KERNELS = {RmsNormOp: run_lowered, ResidualRmsNormOp: run_lowered}
