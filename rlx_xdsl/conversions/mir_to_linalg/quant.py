"""Lowering of MIR quantisation to `linalg.generic`s, computing as the interpreter does.

quantize / dequantize: a per-tensor scale and zero point are scalar constants in the
body; per channel, they are `tensor<Cxf32>` constants read through a map projecting the
loops onto `axis`. The fake quantisations read their per-channel operands (state, learned
scale) the same way; `max|x|` (per_batch, ema) and LSQ's scale gradient are reductions
over the dims other than `axis`. qmatmul and qconv2d centre their operands in f64 (exact
for 8-bit integers), emit a `mir.matmul` / `mir.conv` that the same walk lowers, and
requantise.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects import arith, math, tensor
from xdsl.dialects.builtin import f16, f32, i16, i32
from xdsl.ir import SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap

from rlx_xdsl import dtypes
from rlx_xdsl.conversions.mir_to_linalg.lowering import LOWERINGS, Lowering
from rlx_xdsl.conversions.mir_to_linalg.scalars import F32, Scalars, accumulator
from rlx_xdsl.conversions.mir_to_linalg.tensors import PARALLEL, identity, loops
from rlx_xdsl.dialects.mir import quant
from rlx_xdsl.dtypes import DType
from rlx_xdsl.formats import quantformats
from rlx_xdsl.ir.dense import numpy_to_dense


def _affine_generic(lw: Lowering, op: quant.AffineQuantOperation, body) -> SSAValue:
    """A generic over x's elements; `body(s, x, scale, zero_point)` gets each element's
    scale and zero point as f32 scalars."""
    x = op.x
    rank = x.type.get_num_dims()
    dims = lw.dims(x)
    axis = op.channel_axis(x.type)
    inputs = [(x, identity(rank))]
    if axis is not None:
        for values in (op.scale_list(), op.zero_point_list()):
            table = lw.emit(arith.ConstantOp(numpy_to_dense(np.asarray(values, np.float32), f32)))
            inputs.append((table, loops(rank, [axis])))

    def element(s: Scalars, v: SSAValue, *rest: SSAValue) -> SSAValue:
        if axis is None:
            scale = s.constant(op.scale_list()[0], F32)
            zero = s.constant(op.zero_point_list()[0], F32)
        else:
            scale, zero = rest[0], rest[1]
        return body(s, v, scale, zero)

    init = lw.empty(dims, lw.result_dtype())
    return lw.generic(inputs, [(init, identity(rank))], [PARALLEL] * rank, element)[0]


@LOWERINGS.register(quant.QuantizeOp)
def lower_quantize(lw: Lowering, op: quant.QuantizeOp) -> Sequence[SSAValue]:
    """`clamp(roundeven(x / scale) + zero, lo, hi)`; NaN becomes the zero point (as the kernel)."""
    src, dst = lw.operand_dtype(0), lw.result_dtype()
    lo, hi = quant.INT_RANGES[op.storage_name()]

    def body(s: Scalars, v: SSAValue, scale: SSAValue, zero: SSAValue) -> SSAValue:
        v = s.cast(v, src, F32)
        q = s.add(s.emit(math.RoundEvenOp(s.div(v, scale, F32))), zero, F32)
        q = s.select(s.is_nan(v), zero, q)
        q = s.min(s.max(q, s.constant(lo, F32), F32), s.constant(hi, F32), F32)
        return s.cast(q, F32, dst)

    return [_affine_generic(lw, op, body)]


@LOWERINGS.register(quant.DequantizeOp)
def lower_dequantize(lw: Lowering, op: quant.DequantizeOp) -> Sequence[SSAValue]:
    """`(x - zero) * scale` in f32."""
    src = lw.operand_dtype(0)

    def body(s: Scalars, v: SSAValue, scale: SSAValue, zero: SSAValue) -> SSAValue:
        return s.mul(s.sub(s.cast(v, src, F32), zero, F32), scale, F32)

    return [_affine_generic(lw, op, body)]


# Fake quantisation ---------------------------------------------------------------------


class RangeLowering:
    """What the fake-quantisation rules share: x's loops, per-channel operand maps, the
    grid and the computing dtype (x's accumulator)."""

    def __init__(self, lw: Lowering, op: quant.RangeQuantOperation):
        self.lw, self.op = lw, op
        self.dt = lw.operand_dtype(0)
        self.acc = accumulator(self.dt)
        self.rank = op.x.type.get_num_dims()
        self.dims = lw.dims(op.x)
        self.axis = op.channel_axis()
        self.qmin, self.qmax = op.grid()

    def channel_map(self, value: SSAValue):
        """The map reading a `[C]`/`[]`/`[1]` operand (or statistic) at x's loops."""
        if value.type.get_num_dims() == 0:
            return loops(self.rank, [])
        return loops(self.rank, [self.axis])  # axis None: a [1] operand read at index 0

    def kept(self) -> list[int]:
        return [] if self.axis is None else [self.axis]

    def reduced(self) -> list[int]:
        return [a for a in range(self.rank) if a != self.axis]

    def amax(self) -> SSAValue:
        """`max|x|` per channel (`[C]`) or per tensor (`[]`), in the accumulator dtype."""
        acc, dt = self.acc, self.dt

        def body(s: Scalars, v: SSAValue, total: SSAValue) -> SSAValue:
            return s.max(total, s.abs(s.cast(v, dt, acc), acc), acc)

        return self.lw.reduce([(self.op.x, identity(self.rank))], self.dims, self.reduced(), acc, 0, body)

    def elementwise(self, full: Sequence[SSAValue], channel: Sequence[SSAValue], body) -> SSAValue:
        """A generic over x's loops reading `full` (x's shape: x, dy) elementwise and
        `channel` values per channel; the result has x's type."""
        maps = [(v, identity(self.rank)) for v in full] + [(v, self.channel_map(v)) for v in channel]
        init = self.lw.empty(self.dims, self.dt)
        return self.lw.generic(maps, [(init, identity(self.rank))], [PARALLEL] * self.rank, body)[0]

    def grid_value(self, s: Scalars, v: SSAValue, step: SSAValue) -> tuple[SSAValue, SSAValue]:
        """`(x * (1 / step), its rounding half to even)`."""
        acc = self.acc
        scaled = s.mul(v, s.div(s.constant(1.0, acc), step, acc), acc)
        return scaled, s.emit(math.RoundEvenOp(scaled))

    def clamp(self, s: Scalars, q: SSAValue) -> SSAValue:
        acc = self.acc
        return s.min(s.max(q, s.constant(self.qmin, acc), acc), s.constant(self.qmax, acc), acc)

    def in_grid(self, s: Scalars, q: SSAValue) -> SSAValue:
        acc = self.acc
        low = s.compare("ge", q, s.constant(self.qmin, acc), acc)
        high = s.compare("le", q, s.constant(self.qmax, acc), acc)
        return s.emit(arith.AndIOp(low, high))

    def indicator(self, s: Scalars, flag: SSAValue) -> SSAValue:
        return s.select(flag, s.constant(1.0, self.acc), s.constant(0.0, self.acc))


class SteLowering(RangeLowering):
    """fake_quantize and its backward: the range operand(s) and the step from them."""

    def range_inputs(self) -> list[SSAValue]:
        """The per-channel values the body reads to rebuild `r`: the batch's `max|x|`
        (per_batch, ema) and the state (ema, fixed)."""
        mode = self.op.mode()
        values = [] if mode is quant.ScaleMode.FIXED else [self.amax()]
        return values + ([] if mode is quant.ScaleMode.PER_BATCH else [self.op.state])

    def range_and_step(self, s: Scalars, stats: Sequence[SSAValue]) -> tuple[SSAValue, SSAValue]:
        """`(r, s)` from the elements of `range_inputs` (a zero range taken as qmax)."""
        acc, mode = self.acc, self.op.mode()
        state_dt = self.lw.operand_dtype(len(self.op.operands) - 1)
        if mode is quant.ScaleMode.PER_BATCH:
            r = stats[0]
        elif mode is quant.ScaleMode.FIXED:
            r = s.cast(stats[0], state_dt, acc)
        else:
            decay = float(self.op.decay.value.data)
            keep = float(np.float32(1) - np.float32(decay)) if acc.name != "f64" else 1 - decay
            r = s.add(
                s.mul(s.constant(decay, acc), s.cast(stats[1], state_dt, acc), acc),
                s.mul(s.constant(keep, acc), stats[0], acc),
                acc,
            )
        qmax = s.constant(self.qmax, acc)
        r = s.select(s.compare("gt", r, s.constant(0.0, acc), acc), r, qmax)
        return r, s.div(r, qmax, acc)


@LOWERINGS.register(quant.FakeQuantizeOp)
def lower_fake_quantize(lw: Lowering, op: quant.FakeQuantizeOp) -> Sequence[SSAValue]:
    ql = SteLowering(lw, op)

    def body(s: Scalars, v: SSAValue, *rest: SSAValue) -> SSAValue:
        *stats, _ = rest
        _, step = ql.range_and_step(s, stats)
        _, q = ql.grid_value(s, s.cast(v, ql.dt, ql.acc), step)
        return s.cast(s.mul(ql.clamp(s, q), step, ql.acc), ql.acc, ql.dt)

    return [ql.elementwise([op.x], ql.range_inputs(), body)]


@LOWERINGS.register(quant.FakeQuantizeBackwardOp)
def lower_fake_quantize_backward(lw: Lowering, op: quant.FakeQuantizeBackwardOp) -> Sequence[SSAValue]:
    ql = SteLowering(lw, op)
    acc, ste = ql.acc, op.ste.data

    def derivative(s: Scalars, x: SSAValue, stats: Sequence[SSAValue]) -> SSAValue:
        r, step = ql.range_and_step(s, stats)
        if ste is quant.SteKind.IDENTITY:
            return s.constant(1.0, acc)
        if ste is quant.SteKind.CLIPPED_IDENTITY:
            return ql.indicator(s, ql.in_grid(s, ql.grid_value(s, x, step)[1]))
        if ste is quant.SteKind.HARD_TANH:
            return ql.indicator(s, s.compare("le", s.abs(x, acc), r, acc))
        t = s.tanh(s.div(x, r, acc))
        return s.sub(s.constant(1.0, acc), s.mul(t, t, acc), acc)

    def body(s: Scalars, v: SSAValue, dy: SSAValue, *rest: SSAValue) -> SSAValue:
        *stats, _ = rest
        x = s.cast(v, ql.dt, acc)
        return s.cast(s.mul(s.cast(dy, ql.dt, acc), derivative(s, x, stats), acc), acc, ql.dt)

    return [ql.elementwise([op.x, op.dy], ql.range_inputs(), body)]


# LSQ -----------------------------------------------------------------------------------


@LOWERINGS.register(quant.FakeQuantizeLsqOp)
def lower_fake_quantize_lsq(lw: Lowering, op: quant.FakeQuantizeLsqOp) -> Sequence[SSAValue]:
    ql = RangeLowering(lw, op)
    scale_dt = lw.operand_dtype(1)

    def body(s: Scalars, v: SSAValue, scale: SSAValue, _: SSAValue) -> SSAValue:
        step = s.cast(scale, scale_dt, ql.acc)
        _, q = ql.grid_value(s, s.cast(v, ql.dt, ql.acc), step)
        return s.cast(s.mul(ql.clamp(s, q), step, ql.acc), ql.acc, ql.dt)

    return [ql.elementwise([op.x], [op.scale], body)]


@LOWERINGS.register(quant.FakeQuantizeLsqBackwardXOp)
def lower_lsq_backward_x(lw: Lowering, op: quant.FakeQuantizeLsqBackwardXOp) -> Sequence[SSAValue]:
    ql = RangeLowering(lw, op)
    scale_dt, acc = lw.operand_dtype(1), ql.acc

    def body(s: Scalars, v: SSAValue, dy: SSAValue, scale: SSAValue, _: SSAValue) -> SSAValue:
        _, q = ql.grid_value(s, s.cast(v, ql.dt, acc), s.cast(scale, scale_dt, acc))
        return s.cast(s.mul(s.cast(dy, ql.dt, acc), ql.indicator(s, ql.in_grid(s, q)), acc), acc, ql.dt)

    return [ql.elementwise([op.x, op.dy], [op.scale], body)]


@LOWERINGS.register(quant.FakeQuantizeLsqBackwardScaleOp)
def lower_lsq_backward_scale(lw: Lowering, op: quant.FakeQuantizeLsqBackwardScaleOp) -> Sequence[SSAValue]:
    """`g * sum(dy * e)` over the non-channel dims (a reduction), then `g` and the scale's shape."""
    ql = RangeLowering(lw, op)
    scale_dt, acc, rank = lw.operand_dtype(1), ql.acc, ql.rank
    acc_qmin, acc_qmax = ql.qmin, ql.qmax

    def body(s: Scalars, v: SSAValue, scale: SSAValue, dy: SSAValue, total: SSAValue) -> SSAValue:
        scaled, q = ql.grid_value(s, s.cast(v, ql.dt, acc), s.cast(scale, scale_dt, acc))
        below = s.compare("lt", q, s.constant(acc_qmin, acc), acc)
        above = s.compare("gt", q, s.constant(acc_qmax, acc), acc)
        e = s.select(below, s.constant(acc_qmin, acc), s.select(above, s.constant(acc_qmax, acc), s.sub(q, scaled, acc)))
        return s.add(total, s.mul(s.cast(dy, ql.dt, acc), e, acc), acc)

    inputs = [(op.x, identity(rank)), (op.scale, ql.channel_map(op.scale)), (op.dy, identity(rank))]
    total = lw.reduce(inputs, ql.dims, ql.reduced(), acc, 0, body)
    per_step = lw.product([ql.dims[a] for a in ql.reduced()])

    def scaled(s: Scalars, t: SSAValue, _: SSAValue) -> SSAValue:
        n = s.mul(s.count(per_step, acc), s.constant(ql.qmax, acc), acc)
        g = s.div(s.constant(1.0, acc), s.sqrt(n), acc)
        return s.cast(s.mul(t, g, acc), acc, lw.result_dtype())

    out = lw.map_elements([total], lw.dims(total), lw.result_dtype(), scaled)
    return [lw.reshape(out, lw.dims(op.scale))]


# Integer matmul and convolution ---------------------------------------------------------

F64 = dtypes.dtype_named("f64")


def _centred_f64(lw: Lowering, value: SSAValue, index: int, zero_point: int) -> SSAValue:
    """`value - zero_point` as f64 (exact), read with the operand's MIR dtype (ui8 stays unsigned)."""
    src = lw.operand_dtype(index)

    def body(s: Scalars, v: SSAValue, _: SSAValue) -> SSAValue:
        return s.sub(s.cast(v, src, F64), s.constant(zero_point, F64), F64)

    return lw.map_elements([value], lw.dims(value), F64, body)


def _requantised(lw: Lowering, op: quant.IntegerContractionOperation, acc: SSAValue, channel_axis: int) -> SSAValue:
    """`clamp(roundeven((acc + bias) * mult) + out_zp)` over `acc` (f64), bias read along `channel_axis`."""
    rank = acc.type.get_num_dims()
    lo, hi = quant.INT_RANGES[op.out_storage()]
    mult = float(np.float32(op.mult.value.data))
    out_zp, dst, bias_dt = op.out_zp.value.data, lw.result_dtype(), lw.operand_dtype(2)

    def body(s: Scalars, a: SSAValue, b: SSAValue, _: SSAValue) -> SSAValue:
        total = s.add(a, s.cast(b, bias_dt, F64), F64)
        q = s.emit(math.RoundEvenOp(s.add(s.mul(total, s.constant(mult, F64), F64), s.constant(out_zp, F64), F64)))
        q = s.min(s.max(q, s.constant(lo, F64), F64), s.constant(hi, F64), F64)
        return s.cast(q, F64, dst)

    init = lw.empty(lw.dims(acc), dst)
    inputs = [(acc, identity(rank)), (op.bias, loops(rank, [channel_axis]))]
    return lw.generic(inputs, [(init, identity(rank))], [PARALLEL] * rank, body)[0]


@LOWERINGS.register(quant.QMatmulOp)
def lower_qmatmul(lw: Lowering, op: quant.QMatmulOp) -> Sequence[SSAValue]:
    """The centred operands in f64 (exact integers), a `mir.matmul` the same walk lowers,
    then the requantisation."""
    x = _centred_f64(lw, op.x, 0, op.x_zp.value.data)
    w = _centred_f64(lw, op.w, 1, op.w_zp.value.data)
    acc = lw.e.mir.matmul(x, w)
    return [_requantised(lw, op, acc, acc.type.get_num_dims() - 1)]


@LOWERINGS.register(quant.QConv2dOp)
def lower_qconv2d(lw: Lowering, op: quant.QConv2dOp) -> Sequence[SSAValue]:
    """As qmatmul, through a `mir.conv` on the centred f64 operands (its zero padding is
    the zero point)."""
    x = _centred_f64(lw, op.x, 0, op.x_zp.value.data)
    w = _centred_f64(lw, op.w, 1, op.w_zp.value.data)
    acc = lw.e.mir.conv(
        x,
        w,
        kernel_size=op.pair("kernel_size"),
        stride=op.pair("stride"),
        padding=op.pair("padding"),
        dilation=op.pair("dilation"),
        groups=op.groups.value.data,
    )
    return [_requantised(lw, op, acc, 1)]


# Weight-only quantised matmul -------------------------------------------------------------

I32 = dtypes.dtype_named("i32")
I8 = dtypes.dtype_named("i8")
U8 = dtypes.dtype_named("ui8")
F16 = dtypes.dtype_named("f16")


class CodeTable:
    """A format's decode table as a `tensor<Cxf32>` constant, read with `tensor.extract`;
    its few non-finite codes (fp8 NaN/inf) are selected in the body."""

    def __init__(self, lw: Lowering, fmt: str):
        values, self.special = quantformats.finite_table(fmt)
        self.tensor = lw.emit(arith.ConstantOp(numpy_to_dense(values, f32)))

    def decode(self, s: Scalars, code: SSAValue) -> SSAValue:
        """The f32 value of `code` (an i32 scalar in [0, C))."""
        value = s.emit(tensor.ExtractOp(self.tensor, [s.to_index(code, I32)], f32))
        for special, meaning in self.special.items():
            value = s.select(s.compare("eq", code, s.constant(special, I32), I32), s.constant(meaning, F32), value)
        return value


@dataclass(frozen=True)
class QuantWeights:
    """The quantised operands of one weight `W [K, N]` as the decoders read them:
    `dequant_matmul`'s, or the expert ops' with the experts folded into the rows."""

    scheme: quant.QuantScheme
    block: int | None
    w_q: SSAValue
    scale: SSAValue | None
    zp: SSAValue | None
    dtypes: tuple[DType, DType | None, DType | None]
    """w_q's, scale's and zp's MIR dtypes (ui8 codes are signless in the lowered IR)."""
    k: int
    """K (GGUF: the values in a row of packed bytes)."""


def _byte(s: Scalars, v: SSAValue, dt) -> SSAValue:
    """An i8/ui8 element as its unsigned code in i32."""
    return s.emit(arith.AndIOp(s.cast(v, dt, I32), s.constant(0xFF, I32)))


def _nibble(s: Scalars, byte: SSAValue, high: SSAValue) -> SSAValue:
    """The low (`high` = 0) or high (1) nibble of a byte code, by the loop index `high`."""
    shift = s.mul(s.emit(arith.IndexCastOp(high, i32)), s.constant(4, I32), I32)
    return s.emit(arith.AndIOp(s.emit(arith.ShRUIOp(byte, shift)), s.constant(0xF, I32)))


def _dequantized_weights(lw: Lowering, op: QuantWeights, acc) -> SSAValue:
    """`W [K, N]` in `acc` (x's accumulator): a generic over the blocks of K (then collapsed to K)."""
    Scheme = quant.QuantScheme
    scheme, block = op.scheme, op.block
    n = lw.dim(op.w_q, 1)
    w_dt, s_dt, z_dt = op.dtypes
    if scheme in (Scheme.FP8_E4M3, Scheme.FP8_E5M2):
        table = CodeTable(lw, "e4m3fn" if scheme is Scheme.FP8_E4M3 else "e5m2")
        scale_map = loops(2, [None] if op.scale.type.get_shape()[0] == 1 and n != 1 else [1])

        def fp8(s: Scalars, w: SSAValue, scale: SSAValue, _: SSAValue) -> SSAValue:
            return s.mul(s.cast(table.decode(s, _byte(s, w, w_dt)), F32, acc), s.cast(scale, s_dt, acc), acc)

        init = lw.empty([lw.dim(op.w_q, 0), n], acc)
        inputs = [(op.w_q, identity(2)), (op.scale, scale_map)]
        return lw.generic(inputs, [(init, identity(2))], [PARALLEL] * 2, fp8)[0]
    rows = lw.dim(op.w_q, 0)  # K, or K/2 bytes: static whenever the weights are
    if scheme.packs_nibbles:
        # loops: (kb, j, p, n) with k = (kb * B/2 + j) * 2 + p
        half = block // 2
        blocks = lw.quotient(rows, half)
        w = lw.expand(op.w_q, [[0, 1], [2]], [blocks, half, n])
        out_dims = [blocks, half, 2, n]
        nvfp4 = scheme is Scheme.NVFP4_BLOCK
        values = CodeTable(lw, "e2m1" if nvfp4 else "int4")
        scales = CodeTable(lw, "e4m3fn") if nvfp4 else None
        inputs = [(w, loops(4, [0, 1, 3])), (op.scale, loops(4, [0, 3])), (op.zp, loops(4, [None]))]

        def packed(s: Scalars, byte: SSAValue, scale: SSAValue, zp: SSAValue, _: SSAValue) -> SSAValue:
            value = s.cast(values.decode(s, _nibble(s, _byte(s, byte, w_dt), s.loop_index(2))), F32, acc)
            if scales is None:
                return s.mul(value, s.cast(scale, s_dt, acc), acc)
            block_scale = s.cast(scales.decode(s, _byte(s, scale, s_dt)), F32, acc)
            return s.mul(s.mul(value, block_scale, acc), s.cast(zp, z_dt, acc), acc)

        init = lw.empty(out_dims, acc)
        out = lw.generic(inputs, [(init, identity(4))], [PARALLEL] * 4, packed)[0]
        return lw.collapse(out, [[0, 1, 2], [3]])
    # int8 blocks: loops (kb, j, n) with k = kb * B + j
    blocks = lw.quotient(rows, block)
    w = lw.expand(op.w_q, [[0, 1], [2]], [blocks, block, n])
    asym = scheme is Scheme.INT8_BLOCK_ASYM
    zp_map = loops(3, [0, 2]) if asym else loops(3, [None])
    inputs = [(w, identity(3)), (op.scale, loops(3, [0, 2])), (op.zp, zp_map)]

    def int8(s: Scalars, v: SSAValue, scale: SSAValue, zp: SSAValue, _: SSAValue) -> SSAValue:
        value = s.cast(v, w_dt, acc)
        if asym:
            value = s.sub(value, s.cast(zp, z_dt, acc), acc)
        return s.mul(value, s.cast(scale, s_dt, acc), acc)

    init = lw.empty([blocks, block, n], acc)
    out = lw.generic(inputs, [(init, identity(3))], [PARALLEL] * 3, int8)[0]
    return lw.collapse(out, [[0, 1], [2]])


def _f16_scale(s: Scalars, low: SSAValue, high: SSAValue, acc) -> SSAValue:
    """The little-endian f16 in two bytes, in `acc`."""
    bits = s.emit(arith.OrIOp(_byte(s, low, U8), s.emit(arith.ShLIOp(_byte(s, high, U8), s.constant(8, I32)))))
    half = s.emit(arith.BitcastOp(s.emit(arith.TruncIOp(bits, i16)), f16))
    return s.cast(half, F16, acc)


def _shifted(s: Scalars, byte: SSAValue, shift: SSAValue, mask: int) -> SSAValue:
    """`(byte >> shift) & mask` for an i8/ui8 byte and an i32 shift."""
    return s.emit(arith.AndIOp(s.emit(arith.ShRUIOp(_byte(s, byte, U8), shift)), s.constant(mask, I32)))


def _loop(s: Scalars, dim: int, times: int) -> SSAValue:
    """`times * linalg.index(dim)` as i32."""
    return s.mul(s.emit(arith.IndexCastOp(s.loop_index(dim), i32)), s.constant(times, I32), I32)


def _q6_k_weights(lw: Lowering, op: QuantWeights, acc, n, blocks: int, row: int) -> SSAValue:
    """Q6_K: loops (n, b, h, s, u, t3, t4), value `e = 128 h + 64 s + 32 u + 16 t3 + t4`
    of block b (the layout in `mir.dequant_matmul`'s doc)."""
    d = AffineExpr.dimension
    start = d(0) * row + d(1) * 210
    h, sh, u, t3, t4 = (d(i) for i in range(2, 7))

    def at(offset: AffineExpr) -> AffineMap:
        return AffineMap(7, 0, (offset,))

    inputs = [
        (op.w_q, at(start + h * 64 + u * 32 + t3 * 16 + t4)),  # ql
        (op.w_q, at(start + 128 + h * 32 + t3 * 16 + t4)),  # qh
        (op.w_q, at(start + 192 + h * 8 + sh * 4 + u * 2 + t3)),  # sub-block scale
        (op.w_q, at(start + 208)),
        (op.w_q, at(start + 209)),
    ]

    def body(s: Scalars, ql, qh, scale, low, high, _) -> SSAValue:
        nibble = _shifted(s, ql, _loop(s, 3, 4), 0x0F)
        top = _shifted(s, qh, s.add(_loop(s, 3, 4), _loop(s, 4, 2), I32), 0x03)
        q = s.sub(s.emit(arith.OrIOp(nibble, s.emit(arith.ShLIOp(top, s.constant(4, I32))))), s.constant(32, I32), I32)
        step = s.mul(_f16_scale(s, low, high, acc), s.cast(scale, I8, acc), acc)
        return s.mul(step, s.cast(q, I32, acc), acc)

    dims = [n, blocks, 2, 2, 2, 2, 16]
    init = lw.empty(dims, acc)
    out = lw.generic(inputs, [(init, identity(7))], [PARALLEL] * 7, body)[0]
    return lw.collapse(out, [[0], [1, 2, 3, 4, 5, 6]])


def _q4_k_weights(lw: Lowering, op: QuantWeights, acc, n, blocks: int, row: int) -> SSAValue:
    """Q4_K: loops (n, b, i1, i0, p, t), sub-block `j = 4 i1 + 2 i0 + p`, value `32 j + t`;
    Q5_K also reads bit j of `qh[t]` (its `qs` start 32 bytes later).

    Three scale bytes serve both halves: `A = S[j mod 4]`, `B = S[j + 4]` and
    `C = S[4 + j mod 4]`; j < 4 (i1 = 0) takes `sc = A & 63, m = C & 63`, j >= 4 takes
    `sc = (B & 15) | (A >> 6) << 4, m = (B >> 4) | (C >> 6) << 4` (C is then S[j])."""
    five = op.scheme is quant.QuantScheme.GGUF_Q5_K
    d = AffineExpr.dimension
    start = d(0) * row + d(1) * (176 if five else 144)
    i1, i0, p, t = (d(k) for k in range(2, 6))
    scales = start + 4 + i0 * 2 + p

    def at(offset: AffineExpr) -> AffineMap:
        return AffineMap(6, 0, (offset,))

    inputs = [
        (op.w_q, at(start)), (op.w_q, at(start + 1)), (op.w_q, at(start + 2)), (op.w_q, at(start + 3)),
        (op.w_q, at(start + (48 if five else 16) + i1 * 64 + i0 * 32 + t)),  # qs
        (op.w_q, at(scales)), (op.w_q, at(scales + i1 * 4 + 4)), (op.w_q, at(scales + 4)),  # A, B, C
        (op.w_q, at(start + 16 + t)),  # qh (Q5_K)
    ]  # fmt: skip

    def body(s: Scalars, d0, d1, m0, m1, qs, a, b, c, qh, _) -> SSAValue:
        four, six = s.constant(4, I32), s.constant(6, I32)
        a_, b_, c_ = (_byte(s, v, U8) for v in (a, b, c))

        def high_bits(v):  # (v >> 6) << 4
            return s.emit(arith.ShLIOp(s.emit(arith.ShRUIOp(v, six)), four))

        low = s.compare("eq", s.emit(arith.IndexCastOp(s.loop_index(2), i32)), s.constant(0, I32), I32)
        sc = s.select(
            low,
            s.emit(arith.AndIOp(a_, s.constant(63, I32))),
            s.emit(arith.OrIOp(s.emit(arith.AndIOp(b_, s.constant(15, I32))), high_bits(a_))),
        )
        m = s.select(
            low,
            s.emit(arith.AndIOp(c_, s.constant(63, I32))),
            s.emit(arith.OrIOp(s.emit(arith.ShRUIOp(b_, four)), high_bits(c_))),
        )
        q = _shifted(s, qs, _loop(s, 4, 4), 0x0F)
        if five:
            j = s.add(s.add(_loop(s, 2, 4), _loop(s, 3, 2), I32), _loop(s, 4, 1), I32)
            q = s.emit(arith.OrIOp(q, s.emit(arith.ShLIOp(_shifted(s, qh, j, 0x01), four))))
        scaled = s.mul(s.mul(_f16_scale(s, d0, d1, acc), s.cast(sc, I32, acc), acc), s.cast(q, I32, acc), acc)
        return s.sub(scaled, s.mul(_f16_scale(s, m0, m1, acc), s.cast(m, I32, acc), acc), acc)

    dims = [n, blocks, 2, 2, 2, 32]
    init = lw.empty(dims, acc)
    out = lw.generic(inputs, [(init, identity(6))], [PARALLEL] * 6, body)[0]
    return lw.collapse(out, [[0], [1, 2, 3, 4, 5]])


def _q2_k_weights(lw: Lowering, op: QuantWeights, acc, n, blocks: int, row: int) -> SSAValue:
    """Q2_K: loops (n, b, h, s, t1, t0), value `e = 128 h + 32 s + 16 t1 + t0`, sub-block
    `e / 16 = 8 h + 2 s + t1`."""
    d = AffineExpr.dimension
    start = d(0) * row + d(1) * 84
    h, sh, t1, t0 = (d(k) for k in range(2, 6))

    def at(offset: AffineExpr) -> AffineMap:
        return AffineMap(6, 0, (offset,))

    inputs = [
        (op.w_q, at(start + 16 + h * 32 + t1 * 16 + t0)),  # qs
        (op.w_q, at(start + h * 8 + sh * 2 + t1)),  # scale | min << 4
        (op.w_q, at(start + 80)), (op.w_q, at(start + 81)), (op.w_q, at(start + 82)), (op.w_q, at(start + 83)),
    ]  # fmt: skip

    def body(s: Scalars, qs, sm, d0, d1, m0, m1, _) -> SSAValue:
        q = _shifted(s, qs, _loop(s, 3, 2), 0x03)
        scale = s.emit(arith.AndIOp(_byte(s, sm, U8), s.constant(15, I32)))
        least = s.emit(arith.ShRUIOp(_byte(s, sm, U8), s.constant(4, I32)))
        step = s.mul(_f16_scale(s, d0, d1, acc), s.cast(scale, I32, acc), acc)
        low = s.mul(_f16_scale(s, m0, m1, acc), s.cast(least, I32, acc), acc)
        return s.sub(s.mul(step, s.cast(q, I32, acc), acc), low, acc)

    init = lw.empty([n, blocks, 2, 4, 2, 16], acc)
    out = lw.generic(inputs, [(init, identity(6))], [PARALLEL] * 6, body)[0]
    return lw.collapse(out, [[0], [1, 2, 3, 4, 5]])


def _q3_k_weights(lw: Lowering, op: QuantWeights, acc, n, blocks: int, row: int) -> SSAValue:
    """Q3_K: loops (n, b, h, s1, s0, t1, t0), value `e = 128 h + 32 (2 s1 + s0) + 16 t1 + t0`,
    sub-block `k = 8 h + 4 s1 + 2 s0 + t1` (so `k % 8`, `k / 8`, `k % 4`, `k / 4` are loops)."""
    d = AffineExpr.dimension
    start = d(0) * row + d(1) * 110
    h, s1, s0, t1, t0 = (d(k) for k in range(2, 7))

    def at(offset: AffineExpr) -> AffineMap:
        return AffineMap(7, 0, (offset,))

    inputs = [
        (op.w_q, at(start + 32 + h * 32 + t1 * 16 + t0)),  # qs
        (op.w_q, at(start + t1 * 16 + t0)),  # hmask
        (op.w_q, at(start + 96 + s1 * 4 + s0 * 2 + t1)),  # S[k % 8]
        (op.w_q, at(start + 104 + s0 * 2 + t1)),  # S[8 + k % 4]
        (op.w_q, at(start + 108)), (op.w_q, at(start + 109)),
    ]  # fmt: skip

    def body(s: Scalars, qs, hmask, low, high, d0, d1, _) -> SSAValue:
        shift = s.add(_loop(s, 3, 4), _loop(s, 4, 2), I32)  # 2 (2 s1 + s0)
        code = _shifted(s, qs, shift, 0x03)
        bit = _shifted(s, hmask, s.add(s.add(_loop(s, 2, 4), _loop(s, 3, 2), I32), _loop(s, 4, 1), I32), 0x01)
        q = s.sub(code, s.mul(s.sub(s.constant(1, I32), bit, I32), s.constant(4, I32), I32), I32)
        scale_low = _shifted(s, low, _loop(s, 2, 4), 0x0F)
        scale_high = _shifted(s, high, s.add(_loop(s, 2, 4), _loop(s, 3, 2), I32), 0x03)  # 2 (2 h + s1)
        scale = s.sub(s.emit(arith.OrIOp(scale_low, s.emit(arith.ShLIOp(scale_high, s.constant(4, I32))))),
                      s.constant(32, I32), I32)  # fmt: skip
        step = s.mul(_f16_scale(s, d0, d1, acc), s.cast(scale, I32, acc), acc)
        return s.mul(step, s.cast(q, I32, acc), acc)

    init = lw.empty([n, blocks, 2, 2, 2, 2, 16], acc)
    out = lw.generic(inputs, [(init, identity(7))], [PARALLEL] * 7, body)[0]
    return lw.collapse(out, [[0], [1, 2, 3, 4, 5, 6]])


def _q8_k_weights(lw: Lowering, op: QuantWeights, acc, n, blocks: int, row: int) -> SSAValue:
    """Q8_K: loops (n, b, e); a little-endian f32 `d` in the block's first four bytes."""
    d = AffineExpr.dimension
    start = d(0) * row + d(1) * 292
    inputs = [(op.w_q, AffineMap(3, 0, (start + i,))) for i in range(4)]
    inputs.append((op.w_q, AffineMap(3, 0, (start + 4 + d(2),))))

    def body(s: Scalars, b0, b1, b2, b3, q, _) -> SSAValue:
        bits = _byte(s, b0, U8)
        for i, b in enumerate((b1, b2, b3), start=1):
            bits = s.emit(arith.OrIOp(bits, s.emit(arith.ShLIOp(_byte(s, b, U8), s.constant(8 * i, I32)))))
        scale = s.cast(s.emit(arith.BitcastOp(bits, f32)), F32, acc)
        return s.mul(scale, s.cast(q, I8, acc), acc)

    init = lw.empty([n, blocks, 256], acc)
    out = lw.generic(inputs, [(init, identity(3))], [PARALLEL] * 3, body)[0]
    return lw.collapse(out, [[0], [1, 2]])


def _gguf_weights(lw: Lowering, op: QuantWeights, acc) -> SSAValue:
    """`W [N, K]` from the packed bytes: a generic over (row, block, value) reading each
    byte at its affine offset `row * R + block * B + ...` in the 1-D packed tensor."""
    scheme = op.scheme
    values, size = quant.GGUF_BLOCKS[scheme]
    k = op.k
    row = k // values * size
    n, blocks = lw.quotient(lw.dim(op.w_q, 0), row), k // values
    if scheme is quant.QuantScheme.GGUF_Q6_K:
        return _q6_k_weights(lw, op, acc, n, blocks, row)
    if scheme in (quant.QuantScheme.GGUF_Q4_K, quant.QuantScheme.GGUF_Q5_K):
        return _q4_k_weights(lw, op, acc, n, blocks, row)
    if scheme is quant.QuantScheme.GGUF_Q2_K:
        return _q2_k_weights(lw, op, acc, n, blocks, row)
    if scheme is quant.QuantScheme.GGUF_Q3_K:
        return _q3_k_weights(lw, op, acc, n, blocks, row)
    if scheme is quant.QuantScheme.GGUF_Q8_K:
        return _q8_k_weights(lw, op, acc, n, blocks, row)
    d = AffineExpr.dimension
    start = d(0) * row + d(1) * size

    def at(offset: AffineExpr) -> AffineMap:
        return AffineMap(4, 0, (offset,))

    # loops (n, b, h, i): value h * 16 + i of block b of row n (Q8_0: h * 16 + i indexes the i8s)
    code = start + 2 + d(3) + (d(2) * 16 if scheme is quant.QuantScheme.GGUF_Q8_0 else 0)
    inputs = [(op.w_q, at(start)), (op.w_q, at(start + 1)), (op.w_q, at(code))]
    q8 = scheme is quant.QuantScheme.GGUF_Q8_0

    def body(s: Scalars, low: SSAValue, high: SSAValue, byte: SSAValue, _: SSAValue) -> SSAValue:
        if q8:
            q = s.cast(byte, I8, acc)  # the byte's bits as a signed i8
        else:
            nibble = _nibble(s, _byte(s, byte, U8), s.loop_index(2))
            q = s.cast(s.sub(nibble, s.constant(8, I32), I32), I32, acc)
        return s.mul(_f16_scale(s, low, high, acc), q, acc)

    dims = [n, blocks, 2, 16]
    init = lw.empty(dims, acc)
    out = lw.generic(inputs, [(init, identity(4))], [PARALLEL] * 4, body)[0]
    return lw.collapse(out, [[0], [1, 2, 3]])


def decoded_weights(lw: Lowering, q: QuantWeights, acc: DType) -> SSAValue:
    """`W [K, N]` in `acc`, however `q.scheme` stores it (GGUF's `[N, K]` rows transposed
    by a `mir.transpose`, which the same walk lowers)."""
    if q.scheme.is_gguf:
        return lw.e.mir.transpose(_gguf_weights(lw, q, acc), perm=[1, 0])
    return _dequantized_weights(lw, q, acc)


@LOWERINGS.register(quant.DequantMatmulOp)
def lower_dequant_matmul(lw: Lowering, op: quant.DequantMatmulOp) -> Sequence[SSAValue]:
    """Decode W in x's accumulator dtype, then a `mir.matmul` in it (the same walk lowers
    it), rounded to x's dtype."""
    acc = accumulator(lw.operand_dtype(0))
    x = lw.convert(op.x, lw.operand_dtype(0), acc)
    gguf = op.quant_scheme().is_gguf
    q = QuantWeights(
        op.quant_scheme(), op.block(), op.w_q, None if gguf else op.scale, None if gguf else op.zp,
        (lw.operand_dtype(1), None, None) if gguf else (lw.operand_dtype(1), lw.operand_dtype(2), lw.operand_dtype(3)),
        op.x.type.get_shape()[1],
    )  # fmt: skip
    y = lw.e.mir.matmul(x, decoded_weights(lw, q, acc))
    return [lw.convert(y, acc, lw.result_dtype())]
