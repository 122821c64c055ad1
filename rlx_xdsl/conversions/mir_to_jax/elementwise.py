"""Elementwise ops: `jax.numpy` ufuncs, comparisons, `where`, casts, constants and iota."""

import jax
import jax.numpy as jnp
import numpy as np

from rlx_xdsl.conversions.mir_to_jax.registry import JAX_OPS, one, result_dtype, widen, with_op
from rlx_xdsl.dense import dense_to_numpy
from rlx_xdsl.dialects.base import like_at_run_time, tensor_type
from rlx_xdsl.dialects.mir import elementwise as ew
from rlx_xdsl.dialects.mir.attrs import Activation
from rlx_xdsl.shapes import sized_like

JAX_OPS.add(
    ew.ConstantOp, lambda op, **_: (jnp.asarray(np.array(dense_to_numpy(op.value))),)
)
JAX_OPS.add(
    ew.IotaOp,
    lambda op, like=None, **_: (
        jax.lax.broadcasted_iota(
            jnp.int64, sized_like(tensor_type(op.result).get_shape(), *like_at_run_time(op, like)), op.normalized_dimension()
        ).astype(result_dtype(op)),
    ),
)


def convert(x, dtype):
    """`x` as `dtype` by MIR's cast rules: anything to i1 is "nonzero"; complex to real
    keeps the real part; float to integer truncates and saturates, NaN giving 0."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return x != 0
    if jnp.iscomplexobj(x) and dtype.kind != "c":
        x = jnp.real(x)
    if dtype.kind in "iu" and jnp.issubdtype(x.dtype, jnp.floating):
        info = np.iinfo(dtype)
        t = jnp.trunc(x.astype(jnp.float64))
        low, high = t < info.min, t >= float(info.max) + 1.0
        inside = jnp.where(jnp.isnan(t) | low | high, 0.0, t).astype(dtype)
        return jnp.where(high, info.max, jnp.where(low, info.min, inside)).astype(dtype)
    return x.astype(dtype)


JAX_OPS.add(ew.CastOp, lambda op, x, **_: (convert(x, result_dtype(op)),))
JAX_OPS.add(ew.WhereOp, one(lambda c, t, f: jnp.where(c.astype(bool), t, f)))
_COMPARE = {
    "eq": jnp.equal,
    "ne": jnp.not_equal,
    "lt": jnp.less,
    "le": jnp.less_equal,
    "gt": jnp.greater,
    "ge": jnp.greater_equal,
}
JAX_OPS.add(
    ew.CompareOp, lambda op, a, b, **_: (_COMPARE[op.predicate.data.value](a, b),)
)


def _binary(fn):
    """Float results compute in the result dtype (i32 * f32 -> f64 is exact in f64)."""

    def formula(op, a, b):
        dtype = result_dtype(op)
        if np.issubdtype(dtype, np.inexact) and dtype not in (jnp.float16, jnp.bfloat16):
            a, b = a.astype(dtype), b.astype(dtype)
        return fn(a, b)

    return with_op(formula)


for _op, _fn in {
    ew.AddOp: jnp.add, ew.SubOp: jnp.subtract, ew.MulOp: jnp.multiply, ew.DivOp: jnp.divide,
    ew.MaxOp: jnp.maximum, ew.MinOp: jnp.minimum, ew.PowOp: jnp.power,
}.items():  # fmt: skip
    JAX_OPS.add(_op, _binary(_fn))


def round_half_away(x):
    """Halves away from zero, exactly: `trunc(x) + sign(x)` where `|x - trunc(x)| >= 0.5`."""
    if not jnp.issubdtype(x.dtype, jnp.floating):
        return x
    t = jnp.trunc(x)
    return jnp.where(jnp.abs(x - t) >= 0.5, t + jnp.sign(x), t)


ACTIVATIONS = {
    Activation.RELU: jax.nn.relu, Activation.SIGMOID: jax.nn.sigmoid, Activation.SILU: jax.nn.silu,
    Activation.TANH: jnp.tanh, Activation.EXP: jnp.exp, Activation.LOG: jnp.log,
    Activation.NEG: jnp.negative, Activation.SQRT: jnp.sqrt, Activation.RSQRT: jax.lax.rsqrt,
    Activation.GELU: lambda x: jax.nn.gelu(x, approximate=False),
    Activation.GELU_APPROX: lambda x: jax.nn.gelu(x, approximate=True),
    Activation.SIN: jnp.sin, Activation.COS: jnp.cos, Activation.TAN: jnp.tan, Activation.ATAN: jnp.arctan,
    Activation.ABS: jnp.abs, Activation.ROUND: round_half_away,
    Activation.LOG1P: jnp.log1p, Activation.EXPM1: jnp.expm1,
    Activation.ERF: jax.lax.erf,
}  # fmt: skip
"""Each activation kind's function (shared with the fused and backward ops)."""


def activation(kind: Activation | None, x):
    """`kind` applied to `x` (the identity for None), f16/bf16 computed in f32."""
    return x if kind is None else ACTIVATIONS[Activation(kind)](widen(x))


for _kind in Activation:
    JAX_OPS.add(ew.activation_op(_kind), one(ACTIVATIONS[_kind]))
