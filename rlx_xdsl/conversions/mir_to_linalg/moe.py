"""Lowering of the MIR mixture-of-experts and LoRA ops: `lora_matmul` by its `rlx-unfuse`
rule, `grouped_matmul` as one reduction reading each row's expert weight in its body.

The quantised expert ops decode `W [E, K, N]` with `dequant_matmul`'s decoders
(`mir_to_linalg/quant.py`), every scheme: the experts fold into the rows, since blocks
run along K inside one expert (`[E, rows, N]` codes read as `[E·rows, N]`, GGUF's
`[E, N, R]` bytes as `E·N` rows), and the decoded `[E·K, N]` unfolds again; fp8, whose
scale is per expert, decodes each expert's slice. `dequant_grouped_matmul` then runs
`mir.grouped_matmul` in x's accumulation dtype and rounds to x's dtype, as its kernel.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith, tensor
from xdsl.ir import SSAValue

from rlx_xdsl.conversions.mir_to_linalg.lowering import (
    LOWERINGS,
    Lowering,
    by_expansion,
)
from rlx_xdsl.conversions.mir_to_linalg.quant import QuantWeights, decoded_weights
from rlx_xdsl.conversions.mir_to_linalg.scalars import Scalars, accumulator
from rlx_xdsl.conversions.mir_to_linalg.tensors import element_type, loops
from rlx_xdsl.dialects.mir.moe import (
    DequantGroupedMatmulOp,
    DequantMoeWeightsOp,
    ExpertQuantOperation,
    GroupedMatmulOp,
    LoraMatmulOp,
)
from rlx_xdsl.dialects.mir.quant import QuantScheme
from rlx_xdsl.dtypes import DType
from rlx_xdsl.ir.diagnostics import OpError
from rlx_xdsl.shapes import DYNAMIC
from rlx_xdsl.transforms.unfuse_rules.moe import unfuse_lora_matmul

LOWERINGS.add(LoraMatmulOp, by_expansion(unfuse_lora_matmul))


@LOWERINGS.register(GroupedMatmulOp)
def lower_grouped_matmul(lw: Lowering, op: GroupedMatmulOp) -> Sequence[SSAValue]:
    """`y[m, n] = Σ_k x[m, k] · w[expert[m], k, n]`: one reduction over (m, n, k) whose body
    reads row m's expert weight (`tensor.extract`, the id clamped as `gather` clamps): no
    `[M, K, N]` gather of per-row weights, and the multiply-adds of the rows only (a sort by
    expert needs data-dependent segment sizes, which static loops cannot state). Each dot
    product sums over K in order, as `linalg.matmul` does."""
    m, k = lw.dims(op.x)
    n = lw.dim(op.w, 2)
    dt, id_dtype = lw.result_dtype(), lw.operand_dtype(2)
    acc = accumulator(dt)
    last = lw.emit(arith.SubiOp(lw.index_value(lw.dim(op.w, 0)), lw.s.index_constant(1)))

    def body(s: Scalars, x: SSAValue, id_: SSAValue, total: SSAValue) -> SSAValue:
        row = s.to_index(id_, id_dtype)
        row = s.emit(arith.MaxSIOp(s.emit(arith.MinSIOp(row, last)), s.index_constant(0)))
        w = s.emit(tensor.ExtractOp(op.w, [row, s.loop_index(2), s.loop_index(1)], element_type(op.w)))
        return s.add(total, s.mul(s.cast(x, dt, acc), s.cast(w, dt, acc), acc), acc)

    inputs = [(op.x, loops(3, [0, 2])), (op.expert, loops(3, [0]))]
    return [lw.convert(lw.reduce(inputs, [m, n, k], [2], acc, 0, body), acc, dt)]


FP8 = (QuantScheme.FP8_E4M3, QuantScheme.FP8_E5M2)


def expert_weights(lw: Lowering, op: ExpertQuantOperation, first: int, k: int, acc: DType) -> SSAValue:
    """`W [E, K, N]` in `acc`; `first` is the index of `w_q` among the op's operands."""
    scheme = op.quant_scheme()
    experts = op.w_q.type.get_shape()[0]
    if DYNAMIC in (experts, k):
        raise OpError(op, f"'{op.name}' needs a static expert count and K to lower")
    types = tuple(lw.operand_dtype(first + i) for i in range(3))
    shared_zp = op.zp.type.get_num_dims() == 1
    if scheme in FP8:
        decoded = [
            lw.e.mir.reshape(decoded_weights(lw, QuantWeights(scheme, None, lw.e.mir.reshape(
                lw.e.mir.narrow(op.w_q, axis=0, start=e, len=1), new_shape=[k, -1]), lw.e.mir.reshape(
                lw.e.mir.narrow(op.scale, axis=0, start=e, len=1), new_shape=[-1]), op.zp, types, k), acc),
                new_shape=[1, k, -1])
            for e in range(experts)
        ]  # fmt: skip
        return decoded[0] if experts == 1 else lw.e.mir.concat(*decoded, axis=0)
    if scheme.is_gguf:
        rows = lw.e.mir.reshape(op.w_q, new_shape=[-1])  # E·N rows of K values
        flat = decoded_weights(lw, QuantWeights(scheme, None, rows, None, None, types, k), acc)  # [K, E·N]
        return lw.e.mir.transpose(lw.e.mir.reshape(flat, new_shape=[k, experts, -1]), perm=[1, 0, 2])
    folded = [lw.collapse(v, [[0, 1], [2]]) for v in (op.w_q, op.scale)]
    zp = op.zp if shared_zp else lw.collapse(op.zp, [[0, 1], [2]])
    flat = decoded_weights(lw, QuantWeights(scheme, op.block(), *folded, zp, types, experts * k), acc)
    return lw.e.mir.reshape(flat, new_shape=[experts, k, -1])


@LOWERINGS.register(DequantGroupedMatmulOp)
def lower_dequant_grouped_matmul(lw: Lowering, op: DequantGroupedMatmulOp) -> Sequence[SSAValue]:
    """The decoded experts, a `mir.grouped_matmul` in x's accumulator, rounded to x's dtype."""
    acc = accumulator(lw.operand_dtype(0))
    x = lw.convert(op.x, lw.operand_dtype(0), acc)
    weights = expert_weights(lw, op, 1, op.x.type.get_shape()[1], acc)
    return [lw.convert(lw.e.mir.grouped_matmul(x, weights, op.expert), acc, lw.result_dtype())]


@LOWERINGS.register(DequantMoeWeightsOp)
def lower_dequant_moe_weights(lw: Lowering, op: DequantMoeWeightsOp) -> Sequence[SSAValue]:
    """The decoded experts in the result's accumulator, rounded to its dtype."""
    acc = accumulator(lw.result_dtype())
    weights = expert_weights(lw, op, 0, op.result.type.get_shape()[1], acc)
    return [lw.convert(weights, acc, lw.result_dtype())]
