"""Kernel counts and bytes moved: how much work fusion saved, as other ML compilers report it.

A *kernel* is an op of the function body that a backend launches: not a
constant, not a view (`ViewOf`: reshape, same-dtype cast, contiguous narrow),
and not an op whose operands depend only on parameters and constants (a
weight concat is computed once, when the weights are loaded). An op with a
region (`mir.elementwise_region`, a fused epilogue) is one kernel.
*Bytes moved* sums, over the kernels, the bytes of their operands and results:
what a kernel reads from and writes to memory (XLA's "bytes accessed").
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.traits import ConstantLike, IsTerminator

from rlx_xdsl import dtypes
from rlx_xdsl.dialects.traits import view_source
from rlx_xdsl.ir.graph import graph_args


def tensor_bytes(value: SSAValue) -> int:
    """The bytes of a statically shaped tensor value (0 for anything else)."""
    t = value.type
    if not isinstance(t, TensorType) or any(d < 0 for d in t.get_shape()):
        return 0
    return math.prod(t.get_shape()) * dtypes.dtype_of(t.element_type).nbytes


def _weight_only(function: func.FuncOp) -> set[SSAValue]:
    """Values computed from parameters and constants alone."""
    args = function.body.block.args
    known: set[SSAValue] = {args[arg.index] for arg in graph_args(function) if arg.is_param}
    for op in function.body.block.ops:
        if op.has_trait(ConstantLike) or (op.operands and all(v in known for v in op.operands)):
            known.update(op.results)
    return known


def kernels(function: func.FuncOp) -> list[Operation]:
    """The ops of `function`'s body that count as kernels (see the module docstring)."""
    weights = _weight_only(function)
    return [
        op
        for op in function.body.block.ops
        if not op.has_trait(IsTerminator)
        and not op.has_trait(ConstantLike)
        and view_source(op) is None
        and not (op.results and all(r in weights for r in op.results))
    ]


@dataclass(frozen=True)
class KernelStats:
    kernels: int
    bytes_moved: int


def kernel_stats(root: ModuleOp | func.FuncOp) -> KernelStats:
    """Kernel count and bytes moved of every function in `root`."""
    functions = [root] if isinstance(root, func.FuncOp) else [op for op in root.walk() if isinstance(op, func.FuncOp)]
    count = moved = 0
    for function in functions:
        for op in kernels(function):
            count += 1
            moved += sum(tensor_bytes(v) for v in (*op.operands, *op.results))
    return KernelStats(count, moved)
