"""Elementwise ops: `jax.numpy` ufuncs, comparisons, `where`, casts and constants."""

import jax
import jax.numpy as jnp
import numpy as np

from rlx_xdsl.conversions.mir_to_jax.registry import JAX_OPS, one, result_dtype, with_op
from rlx_xdsl.dense import dense_to_numpy
from rlx_xdsl.dialects.base import tensor_type
from rlx_xdsl.dialects.mir import elementwise as ew

JAX_OPS.add(
    ew.ConstantOp, lambda op, **_: (jnp.asarray(np.array(dense_to_numpy(op.value))),)
)
JAX_OPS.add(
    ew.CastOp,
    # complex to real keeps the real part
    with_op(
        lambda op, x: (
            x if np.issubdtype(result_dtype(op), np.complexfloating) else jnp.real(x)
        )
    ),
)
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
for _op, _fn in {
    ew.AddOp: jnp.add, ew.SubOp: jnp.subtract, ew.MulOp: jnp.multiply, ew.DivOp: jnp.divide,
    ew.MaxOp: jnp.maximum, ew.MinOp: jnp.minimum, ew.PowOp: jnp.power,
    ew.ReluOp: jax.nn.relu, ew.SigmoidOp: jax.nn.sigmoid, ew.SiluOp: jax.nn.silu, ew.TanhOp: jnp.tanh,
    ew.ExpOp: jnp.exp, ew.LogOp: jnp.log, ew.NegOp: jnp.negative, ew.SqrtOp: jnp.sqrt,
    ew.GeluOp: lambda x: jax.nn.gelu(x, approximate=False), ew.SinOp: jnp.sin, ew.CosOp: jnp.cos,
    ew.RsqrtOp: jax.lax.rsqrt,
}.items():  # fmt: skip
    JAX_OPS.add(_op, one(_fn))
JAX_OPS.add(
    ew.IotaOp,
    lambda op, **_: (jax.lax.broadcasted_iota(
        result_dtype(op), tensor_type(op.result).get_shape(), op.normalized_dimension()
    ),),
)  # fmt: skip
