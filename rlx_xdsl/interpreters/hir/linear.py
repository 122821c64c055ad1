"""Kernels of the HIR projection blocks (through their lowering, see `lowered`)."""

from rlx_xdsl.dialects.hir.linear import (
    LinearFusedOp,
    LinearOp,
    SharedLinearPairOp,
    SwigluOp,
)
from rlx_xdsl.interpreters.hir.lowered import run_lowered

KERNELS = {
    LinearOp: run_lowered,
    LinearFusedOp: run_lowered,
    SharedLinearPairOp: run_lowered,
    SwigluOp: run_lowered,
}
