"""Kernel of `hir.depthwise_conv1d_causal` (through its lowering, see `lowered`)."""

from rlx_xdsl.dialects.hir.conv import DepthwiseConv1dCausalOp
from rlx_xdsl.interpreters.hir.lowered import run_lowered

KERNELS = {DepthwiseConv1dCausalOp: run_lowered}
