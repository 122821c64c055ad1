"""`rlx-quantize-weights{scheme=… block-size=… ops=…}`: weight-only quantisation for
inference (beyond RLX).

Each `mir.matmul` whose weight (rhs) is a 2-D `rlx.param` argument becomes a
`mir.dequant_matmul`, and the parameter is replaced in the signature by its quantised
parameters `<name>.q`, `<name>.scale`, `<name>.zp` (GGUF schemes: `<name>.q` only),
typed as `rlx_xdsl.formats.quantpack.pack` produces them (the helper that packs the weight
arrays). A weight `[N, K]` read through `mir.transpose perm = [1, 0]` (a PyTorch
`nn.Linear`'s `x @ w.T`, as the importer writes it) is quantised as the `[K, N]` matrix
the matmul reads: its parameters are `pack(w.T)` and the transpose goes. An lhs of rank
> 2 is flattened to `[-1, K]` and the result reshaped back. `ops` restricts the pass to
the named parameters (default: every eligible one); a name no function has as a
parameter is an error. A parameter read by anything else than such matmuls is left
alone (a note says so when `ops` names it); one the scheme cannot pack (K not a multiple
of the block) is an error at its first matmul. A run that quantises nothing says so in a
note (and `num-quantized-weights` is 0 under `--mlir-pass-statistics`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, ModuleOp, StringAttr, TensorType, UnitAttr
from xdsl.ir import BlockArgument, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.utils.exceptions import PassFailedException

from rlx_xdsl import dtypes
from rlx_xdsl.dialects.mir.contraction import MatmulOp
from rlx_xdsl.dialects.mir.quant import QuantScheme
from rlx_xdsl.dialects.mir.shape import TransposeOp
from rlx_xdsl.formats.quantpack import check_block_size, pack
from rlx_xdsl.ir.diagnostics import OpError, note
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.ir.graph import NAME_ATTR, PARAM_ATTR, argument_name, is_param
from rlx_xdsl.ir.suggest import did_you_mean
from rlx_xdsl.shapes import DYNAMIC
from rlx_xdsl.transforms.rewriting import apply_patterns
from rlx_xdsl.transforms.statistics import Statistic

QUANTIZED_WEIGHTS = Statistic("num-quantized-weights", "Number of weights quantised")
TRANSPOSED_WEIGHTS = Statistic("num-transposed-weights", "Number of quantised weights read through mir.transpose")


class QuantizeWeightsError(OpError, PassFailedException):
    """A located `rlx-quantize-weights` error."""


@dataclass(frozen=True)
class Weight:
    """A parameter the pass can quantise: the matmuls reading it as their rhs, directly or
    (`transposes` not empty) through `mir.transpose perm = [1, 0]` of a `[N, K]` weight."""

    matmuls: list[MatmulOp]
    transposes: list[TransposeOp]
    shape: tuple[int, int]
    """`[K, N]`, the matrix the matmuls read (and `pack` packs)."""


def eligible_weight(arg: BlockArgument) -> Weight | None:
    """`arg` as a `Weight`: a static 2-D value whose uses are all matmul weights, or all
    transposes whose uses are (so a value is packed one way only); else None."""
    t = arg.type
    if not (isinstance(t, TensorType) and t.get_num_dims() == 2 and DYNAMIC not in t.get_shape()):
        return None
    users = [use.operation for use in arg.uses]
    transposes = [op for op in users if isinstance(op, TransposeOp) and op.perm.get_values() == (1, 0)]
    if transposes and len(transposes) < len(users):
        return None
    read: list[SSAValue] = [op.result for op in transposes] if transposes else [arg]
    matmuls = [use.operation for value in read for use in value.uses]
    if not matmuls or any(not _reads_as_weight(op, value) for value in read for op in (u.operation for u in value.uses)):
        return None
    if any(sum(d == DYNAMIC for d in op.lhs.type.get_shape()[:-1]) > 1 for op in matmuls):
        return None  # flattening the lhs needs all but one of its leading dims
    k, n = t.get_shape()
    return Weight(matmuls, transposes, (n, k) if transposes else (k, n))


def _reads_as_weight(op, value: SSAValue) -> bool:
    return isinstance(op, MatmulOp) and op.rhs is value and op.lhs is not value


def packed_types(shape: tuple[int, int], scheme: QuantScheme, block_size: int | None) -> dict[str, TensorType]:
    """The quantised parameters' types, from packing zeros of the `[K, N]` weight's shape."""
    arrays = pack(np.zeros(shape, np.float32), scheme, block_size)
    return {key: TensorType(dtypes.dtype_of_numpy(a.dtype).element_type, a.shape) for key, a in arrays.items()}


@dataclass
class QuantizeWeights(RewritePattern):
    scheme: QuantScheme
    block_size: int | None
    names: frozenset[str] | None
    quantized: set[str] = field(default_factory=set)
    """The names of the parameters quantised so far."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, function: func.FuncOp, rewriter: PatternRewriter) -> None:
        block = function.body.block
        plan = []  # every weight is checked before anything changes
        for index, arg in enumerate(block.args):
            name = argument_name(function, index)
            if not is_param(function, index) or (self.names is not None and name not in self.names):
                continue
            weight = eligible_weight(arg)
            if weight is None:
                continue
            try:
                plan.append((index, name, weight, packed_types(weight.shape, self.scheme, self.block_size)))
            except ValueError as error:
                raise QuantizeWeightsError(weight.matmuls[0], f"'rlx-quantize-weights' cannot pack '{name}': {error}")
        if not plan:
            return
        attrs = [dict(a.data) for a in function.arg_attrs.data] if function.arg_attrs else [{} for _ in block.args]
        for index, name, weight, types in reversed(plan):
            arg = block.args[index]
            new_args = [block.insert_arg(t, index + 1 + i) for i, t in enumerate(types.values())]
            for new_arg, key in zip(new_args, types):
                new_arg.name_hint = f"{arg.name_hint or 'w'}_{key}"
            for matmul in weight.matmuls:
                self.rewrite_matmul(matmul, new_args, rewriter)
            for transpose in weight.transposes:
                rewriter.erase(transpose)
            block.erase_arg(arg)
            self.quantized.add(name)
            QUANTIZED_WEIGHTS.add()
            TRANSPOSED_WEIGHTS.add(1 if weight.transposes else 0)
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

    STATISTICS = (QUANTIZED_WEIGHTS, TRANSPOSED_WEIGHTS)

    scheme: str = field(default="int8_block", metadata={"syntax": "SCHEME"})
    block_size: int = field(default=32, metadata={"syntax": "N", "range": (1, 2**63 - 1)})  # GGUF Q4_0/Q8_0 and common int8/int4 blocks
    ops: tuple[str, ...] = field(default=(), metadata={"syntax": "PARAM,..."})

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        try:
            scheme = QuantScheme(self.scheme)
        except ValueError:
            known = ", ".join(s.value for s in QuantScheme)
            raise PassFailedException(f"unknown scheme '{self.scheme}' (known: {known})") from None
        try:
            check_block_size(scheme, self.block_size if scheme.has_block_size else None)
        except ValueError as error:
            raise PassFailedException(f"'rlx-quantize-weights' block-size={self.block_size}: {error}") from None
        functions = [f for f in op.walk() if isinstance(f, func.FuncOp)]
        params = {argument_name(f, i) for f in functions for i in range(len(f.args)) if is_param(f, i)}
        unknown = [name for name in self.ops if name not in params]
        if unknown:
            raise QuantizeWeightsError(
                functions[0] if functions else op,
                f"'rlx-quantize-weights' ops={','.join(self.ops)}: no function has a parameter "
                f"{', '.join(repr(u) for u in unknown)} (parameters: {', '.join(sorted(params)) or 'none'})"
                f"{did_you_mean(unknown[0], params)}",
            )
        pattern = QuantizeWeights(scheme, self.block_size if scheme.has_block_size else None,
                                  frozenset(self.ops) if self.ops else None)  # fmt: skip
        apply_patterns(op, pattern)
        where = functions[0] if functions else op
        for name in self.ops:
            if name not in pattern.quantized:
                note(where, f"'rlx-quantize-weights' leaves '{name}' alone: {NOT_ELIGIBLE}")
        if not pattern.quantized and not self.ops:
            note(where, f"'rlx-quantize-weights' quantised nothing: no parameter is {ELIGIBLE}")


ELIGIBLE = "a static 2-D weight read only as a mir.matmul's rhs (directly or through mir.transpose perm = [1, 0])"
NOT_ELIGIBLE = f"it is not {ELIGIBLE}"
