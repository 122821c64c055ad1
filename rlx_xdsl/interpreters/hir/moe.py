"""Kernel of `hir.moe_swiglu` (through its lowering, see `lowered`)."""

from rlx_xdsl.dialects.hir.moe import MoeSwigluOp
from rlx_xdsl.interpreters.hir.lowered import run_lowered

KERNELS = {MoeSwigluOp: run_lowered}
