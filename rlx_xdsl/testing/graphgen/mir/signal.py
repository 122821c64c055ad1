"""Recipes of the complex and signal MIR ops.

Complex values stay out of the pool (other recipes expect real operands): the
complex ops read a real value cast to complex<f32> and the recipe pools only the
real `complex_norm_sq` that ends each chain. `fft` uses RLX's real layout.
"""

from __future__ import annotations

from xdsl.dialects.builtin import f32
from xdsl.ir import SSAValue

from rlx_xdsl import dtypes
from rlx_xdsl.dialects.mir.elementwise import CastOp
from rlx_xdsl.dialects.mir.signal import (
    ComplexNormSqBackwardOp,
    ComplexNormSqOp,
    ConjugateOp,
    FftOp,
    LogMelBackwardOp,
    LogMelOp,
)
from rlx_xdsl.registry import OpClass
from rlx_xdsl.testing.graphgen.recipes import RECIPES
from rlx_xdsl.testing.graphgen.state import MAX_DIM, GraphState
from rlx_xdsl.testing.graphgen.values import element_type, float_min_rank, shape_of


def _complex(s: GraphState) -> SSAValue:
    """A real f32 value (pool or new) cast to complex<f32>, not pooled."""
    x = s.pick(lambda v: element_type(v) == f32) or s.operand(s.shape())
    return s.builder.emit(CastOp(x, dtypes.dtype_named("complex<f32>").element_type))


def _norm_sq(s: GraphState, z: SSAValue) -> None:
    s.emit(ComplexNormSqOp, z)


@RECIPES.register(ConjugateOp)
def conjugate(s: GraphState, op: OpClass) -> None:
    _norm_sq(s, s.builder.emit(ConjugateOp(_complex(s))))


@RECIPES.register(ComplexNormSqOp)
def complex_norm_sq(s: GraphState, op: OpClass) -> None:
    _norm_sq(s, _complex(s))


@RECIPES.register(ComplexNormSqBackwardOp)
def complex_norm_sq_backward(s: GraphState, op: OpClass) -> None:
    z = _complex(s)
    g = s.operand(shape_of(z), "f32")
    _norm_sq(s, s.builder.emit(ComplexNormSqBackwardOp(z, g)))


@RECIPES.register(FftOp)
def fft(s: GraphState, op: OpClass) -> None:
    """On a float value whose last dim is even (RLX's real layout), or a new one."""
    x = s.pick(lambda v: float_min_rank(1)(v) and shape_of(v)[-1] % 2 == 0)
    if x is None:
        shape = s.shape(1)
        x = s.operand((*shape[:-1], 2 * shape[-1]))
    s.emit(op, x, inverse=s.flag(), norm=s.choice(["backward", "forward", "ortho"]))


@RECIPES.register(LogMelOp, LogMelBackwardOp)
def log_mel(s: GraphState, op: OpClass) -> None:
    """Frames `[..., F]` from the pool or new, filters `[F, M]` (usually a parameter);
    negative mel energies are clamped to eps like silence."""
    spectrum = s.pick(float_min_rank(1)) or s.operand(s.shape(1))
    *frames, bins = shape_of(spectrum)
    et = element_type(spectrum)
    filters = s.operand((bins, s.integer(1, MAX_DIM)), et, param=s.flag())
    eps = s.choice([1e-10, 1e-3])
    if op is LogMelOp:
        s.emit(op, spectrum, filters, eps=eps)
    else:
        dy = s.operand((*frames, shape_of(filters)[1]), et)
        s.emit(op, spectrum, filters, dy, eps=eps)
