"""Recipes of the windowed MIR ops over NCHW values: conv and pool."""

from __future__ import annotations

from xdsl.ir import SSAValue

from rlx_xdsl.dialects.mir.conv import ConvOp, PoolOp
from rlx_xdsl.registry import OpClass
from rlx_xdsl.testing.graphgen.recipes import RECIPES
from rlx_xdsl.testing.graphgen.state import GraphState
from rlx_xdsl.testing.graphgen.values import (
    divisors,
    element_type,
    floats_of_rank,
    shape_of,
)


def _window(s: GraphState, size: int, with_dilation: bool) -> tuple[int, int, int, int]:
    """(kernel, stride, padding, dilation) for one spatial dim, output size >= 1."""
    dilation = s.integer(1, 2) if with_dilation else 1
    padding = s.integer(0, 1)
    largest = (size + 2 * padding - 1) // dilation + 1
    kernel = s.integer(1, min(3, largest))
    if not with_dilation:
        # Pooling: a window must hold at least one real cell.
        kernel = max(1, min(kernel, size))
        padding = min(padding, kernel // 2)
    return kernel, s.integer(1, 2), padding, dilation


def _nchw(s: GraphState) -> SSAValue:
    return s.pick(floats_of_rank(4)) or s.operand(s.shape(4, 4))


def conv_operands(s: GraphState) -> tuple[SSAValue, SSAValue, dict]:
    """`(x, w, properties)` of a conv, grouped when the channels allow; w is usually a parameter."""
    x = _nchw(s)
    _, in_channels, height, width = shape_of(x)
    groups = s.choice(divisors(in_channels))
    out_channels = groups * s.integer(1, 2)
    (kh, sh, ph, dh), (kw, sw, pw, dw) = (_window(s, d, True) for d in (height, width))
    w = s.operand((out_channels, in_channels // groups, kh, kw), element_type(x), param=True)
    options = dict(kernel_size=[kh, kw], stride=[sh, sw], padding=[ph, pw], dilation=[dh, dw], groups=groups)
    return x, w, options


@RECIPES.register(ConvOp)
def conv(s: GraphState, op: OpClass) -> None:
    x, w, options = conv_operands(s)
    s.emit(op, x, w, **options)


def pool_options(s: GraphState, x: SSAValue) -> dict:
    """The properties of a max or mean pooling of `x`."""
    (kh, sh, ph, _), (kw, sw, pw, _) = (_window(s, d, False) for d in shape_of(x)[2:])
    kind = s.choice(("max", "mean"))
    return dict(kind=kind, kernel_size=[kh, kw], stride=[sh, sw], padding=[ph, pw])


@RECIPES.register(PoolOp)
def pool(s: GraphState, op: OpClass) -> None:
    x = _nchw(s)
    s.emit(op, x, **pool_options(s, x))
