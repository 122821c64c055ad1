"""`rlx-constant-fold`: ops whose operands are all constants become constants.

RLX's `ConstantFolding` reads every constant as f32 bytes, folds Gelu with a
formula that is neither exact nor the standard approximation, folds binaries
only between equal-length operands and never folds compares. This pass
evaluates the op with the interpreter's own kernel (`interpreters.run_kernel`),
so every dtype, exact Gelu, NumPy broadcasting and compares fold to exactly
what the op computes at run time.

Any pure op without regions that has a kernel folds (constants are created
through `rlx_xdsl.ir.dense`; a uniform result is stored as a splat), unless its
results would hold more than `max-elements` elements in total (0: no limit),
which keeps a fold from turning a small constant into a large one. An op
whose kernel fails on its constants (an out-of-range gather index) is left
for run time to report. Folded-away constants are left for `rlx-dce`, as in RLX.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern
from xdsl.traits import ConstantLike, Pure

from rlx_xdsl.dialects.mir.elementwise import ConstantOp
from rlx_xdsl.interpreters import KERNELS, run_kernel
from rlx_xdsl.ir.dense import dense_to_numpy, numpy_to_dense
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.shapes import is_static
from rlx_xdsl.transforms.rewriting import apply_patterns
from rlx_xdsl.transforms.statistics import pattern_statistic


def result_elements(op: Operation) -> int | None:
    """The total element count of `op`'s results, or None when one is not a static tensor."""
    total = 0
    for result in op.results:
        t = result.type
        if not isinstance(t, TensorType) or not is_static(t.get_shape()):
            return None
        total += math.prod(t.get_shape())
    return total


class FoldConstantOperands(RewritePattern):
    """A pure op whose operands are all `mir.constant`s becomes one constant per result."""

    def __init__(self, max_elements: int):
        self.max_elements = max_elements

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if op.regions or op.has_trait(ConstantLike) or not op.has_trait(Pure) or op not in KERNELS:
            return
        constants = [v.owner for v in op.operands]
        if not constants or not all(isinstance(c, ConstantOp) for c in constants):
            return
        size = result_elements(op)
        if size is None or (self.max_elements and size > self.max_elements):
            return
        try:
            values = run_kernel(op, [dense_to_numpy(c.value) for c in constants])
        except Exception:
            return
        e = Emitter.replacing(op, rewriter)
        folded = [
            e.emit(ConstantOp(numpy_to_dense(value, result.type.element_type)))
            for value, result in zip(values, op.results)
        ]
        e.replace(op, *folded)


@dataclass(frozen=True)
class ConstantFoldPass(ModulePass):
    """Replace ops whose operands are all constants by the constants the interpreter's kernels compute.

    Correct for every dtype (RLX folds everything as f32), exact gelu, broadcasting binaries, compares.
    max-elements bounds the folded results' size (0: unbounded).
    """

    name = "rlx-constant-fold"
    STATISTICS = (pattern_statistic(FoldConstantOperands),)

    max_elements: int = 1 << 16

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        # One forward sweep folds whole chains: a folded op's users come later and see constants.
        apply_patterns(op, FoldConstantOperands(self.max_elements))
