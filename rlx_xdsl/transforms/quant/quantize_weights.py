"""`rlx-quantize-weights{scheme=… block-size=… ops=…}`: weight-only quantisation for
inference (beyond RLX).

Each `mir.matmul` whose weight (rhs) is a 2-D `rlx.param` argument becomes a
`mir.dequant_matmul`, and the parameter is replaced in the signature by its quantised
parameters `<name>.q`, `<name>.scale`, `<name>.zp` (GGUF schemes: `<name>.q` only),
typed as `rlx_xdsl.quantpack.pack` produces them (the helper that packs the weight
arrays). An lhs of rank > 2 is flattened to `[-1, K]` and the result reshaped back.
`ops` restricts the pass to the named parameters (default: every eligible one). A
parameter read by anything else than such matmuls is left alone; one the scheme cannot
pack (K not a multiple of the block) is an error at its first matmul.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, ModuleOp, StringAttr, TensorType, UnitAttr
from xdsl.ir import BlockArgument
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.utils.exceptions import PassFailedException

from rlx_xdsl import dtypes
from rlx_xdsl.diagnostics import OpError
from rlx_xdsl.dialects.mir.contraction import MatmulOp
from rlx_xdsl.dialects.mir.quant import QuantScheme
from rlx_xdsl.emitter import Emitter
from rlx_xdsl.graph import NAME_ATTR, PARAM_ATTR, argument_name, is_param
from rlx_xdsl.quantpack import pack
from rlx_xdsl.shapes import DYNAMIC
from rlx_xdsl.transforms.rewriting import apply_patterns
from rlx_xdsl.transforms.statistics import pattern_statistic


class QuantizeWeightsError(OpError, PassFailedException):
    """A located `rlx-quantize-weights` error."""


def eligible_matmuls(arg: BlockArgument) -> list[MatmulOp] | None:
    """The matmuls reading `arg` as their static 2-D weight, if they are all its uses."""
    t = arg.type
    if not (isinstance(t, TensorType) and t.get_num_dims() == 2 and DYNAMIC not in t.get_shape()):
        return None
    users = [use.operation for use in arg.uses]
    if not users or any(not (isinstance(op, MatmulOp) and op.rhs is arg and op.lhs is not arg) for op in users):
        return None
    if any(sum(d == DYNAMIC for d in op.lhs.type.get_shape()[:-1]) > 1 for op in users):
        return None  # flattening the lhs needs all but one of its leading dims
    return users


def packed_types(arg: BlockArgument, scheme: QuantScheme, block_size: int | None) -> dict[str, TensorType]:
    """The quantised parameters' types, from packing zeros of the weight's shape."""
    arrays = pack(np.zeros(arg.type.get_shape(), np.float32), scheme, block_size)
    return {key: TensorType(dtypes.dtype_of_numpy(a.dtype).element_type, a.shape) for key, a in arrays.items()}


@dataclass
class QuantizeWeights(RewritePattern):
    scheme: QuantScheme
    block_size: int | None
    names: frozenset[str] | None

    @op_type_rewrite_pattern
    def match_and_rewrite(self, function: func.FuncOp, rewriter: PatternRewriter) -> None:
        block = function.body.block
        plan = []  # every weight is checked before anything changes
        for index, arg in enumerate(block.args):
            name = argument_name(function, index)
            if not is_param(function, index) or (self.names is not None and name not in self.names):
                continue
            users = eligible_matmuls(arg)
            if users is None:
                continue
            try:
                plan.append((index, name, users, packed_types(arg, self.scheme, self.block_size)))
            except ValueError as error:
                raise QuantizeWeightsError(users[0], f"'rlx-quantize-weights' cannot pack '{name}': {error}")
        if not plan:
            return
        attrs = [dict(a.data) for a in function.arg_attrs.data] if function.arg_attrs else [{} for _ in block.args]
        for index, name, users, types in reversed(plan):
            arg = block.args[index]
            new_args = [block.insert_arg(t, index + 1 + i) for i, t in enumerate(types.values())]
            for new_arg, key in zip(new_args, types):
                new_arg.name_hint = f"{arg.name_hint or 'w'}_{key}"
            for matmul in users:
                self.rewrite_matmul(matmul, new_args, rewriter)
            block.erase_arg(arg)
            attrs[index : index + 1] = [{NAME_ATTR: StringAttr(f"{name}.{key}"), PARAM_ATTR: UnitAttr()} for key in types]
        function.arg_attrs = ArrayAttr([DictionaryAttr(a) for a in attrs])
        function.update_function_type()

    def rewrite_matmul(self, matmul: MatmulOp, params, rewriter: PatternRewriter) -> None:
        e = Emitter.replacing(matmul, rewriter)
        lhs = matmul.lhs
        *lead, k = lhs.type.get_shape()
        rows = lhs if not lead[:-1] else e.mir.reshape(lhs, new_shape=[-1, k])
        y = e.mir.dequant_matmul(rows, *params, scheme=self.scheme, block_size=self.block_size)
        if lead[:-1]:
            n = y.type.get_shape()[1]
            y = e.mir.reshape(y, new_shape=[-1 if d == DYNAMIC else d for d in lead] + [n])
        e.replace(matmul, y)


@dataclass(frozen=True)
class QuantizeWeightsPass(ModulePass):
    """Replace f32 matmul weights by quantised parameters read by `mir.dequant_matmul`."""

    name = "rlx-quantize-weights"

    STATISTICS = (pattern_statistic(QuantizeWeights),)

    scheme: str = field(default="int8_block", metadata={"syntax": "SCHEME"})
    block_size: int = field(default=32, metadata={"syntax": "N", "range": (1, 2**63 - 1)})  # GGUF Q4_0/Q8_0 and common int8/int4 blocks
    ops: tuple[str, ...] = field(default=(), metadata={"syntax": "PARAM,..."})

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        try:
            scheme = QuantScheme(self.scheme)
        except ValueError:
            known = ", ".join(s.value for s in QuantScheme)
            raise PassFailedException(f"unknown scheme '{self.scheme}' (known: {known})") from None
        pattern = QuantizeWeights(scheme, self.block_size if scheme.has_block_size else None,
                                  frozenset(self.ops) if self.ops else None)  # fmt: skip
        apply_patterns(op, pattern)
