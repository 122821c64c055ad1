"""Widen every floating-point type of a module to f64: graphs for finite-difference checks.

Central differences need float64 to resolve a gradient to 1e-5; the random graph
generator builds f32 (and some f16/bf16) graphs. Widening rewrites what fixes a
float type by itself (arguments, constants, cast targets, iota and rng results, element
type properties such as `fused_swiglu`'s `cast_to`) and re-infers every other
type (`transforms.specialize.set_argument_types`). Integer and `i1` types are kept.
"""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import ComplexType, ModuleOp, TensorType, f64
from xdsl.ir import Attribute
from xdsl.rewriter import Rewriter

from rlx_xdsl import dtypes
from rlx_xdsl.dialects.mir.elementwise import CastOp, ConstantOp, IotaOp
from rlx_xdsl.dialects.mir.quant import DequantizeOp
from rlx_xdsl.dialects.mir.random import RngOperation
from rlx_xdsl.dialects.mir.signal import ComplexNormSqBackwardOp
from rlx_xdsl.ir.dense import dense_to_numpy, numpy_to_dense
from rlx_xdsl.transforms.specialize import set_argument_types


def widens_fully(module: ModuleOp) -> bool:
    """No value of `module` is complex: complex<f32> has no f64 form, so a graph with complex
    values keeps f32 parts (too coarse for central differences) and may not widen at all."""
    return not any(
        isinstance(t := value.type, TensorType) and isinstance(t.element_type, ComplexType)
        for op in module.walk()
        for value in (*op.operands, *op.results)
    )


FIXED_F32_OPS = (DequantizeOp, ComplexNormSqBackwardOp)
"""Ops whose f32 operand or result is f32 by definition (a dequantised value; the real
cotangent that goes with complex<f32>, which has no f64 twin): widening cannot make their
graphs f64, so random graphs to be widened leave them out."""


def widened_type(t: Attribute) -> Attribute:
    """`t` with a floating-point element type replaced by f64."""
    if isinstance(t, TensorType) and dtypes.is_float(t.element_type):
        return TensorType(f64, t.get_shape())
    return t


def widen_to_f64(module: ModuleOp) -> ModuleOp:
    """Rewrite `module` in place so that every float value is f64; returns it."""
    for op in module.walk():
        for name, value in op.properties.items():
            if dtypes.is_float(value):
                op.properties[name] = f64
        if isinstance(op, ConstantOp) and widened_type(op.result.type) != op.result.type:
            op.value = numpy_to_dense(dense_to_numpy(op.value), f64)
            Rewriter.replace_value_with_new_type(op.result, op.value.type)
        elif isinstance(op, CastOp | IotaOp | RngOperation) and widened_type(op.result.type) != op.result.type:
            Rewriter.replace_value_with_new_type(op.result, widened_type(op.result.type))
    functions = [f for f in module.ops if isinstance(f, func.FuncOp)]
    set_argument_types(
        [(f, [widened_type(a.type) for a in f.body.block.args]) for f in functions], "widening to f64"
    )
    return module
