"""Kernel of `hir.llama_decoder_block` (through its lowering, see `lowered`)."""

from rlx_xdsl.dialects.hir.blocks import LlamaDecoderBlockOp
from rlx_xdsl.interpreters.hir.lowered import run_lowered

KERNELS = {LlamaDecoderBlockOp: run_lowered}
