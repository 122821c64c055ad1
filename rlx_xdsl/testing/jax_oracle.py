"""MIR functions as `jax.numpy` programs: an independent oracle for `rlx-grad`.

`jax_function(module, name)` returns a Python function of jax arrays that
evaluates `@name` op by op with the formula registered for each op class in
`JAX_OPS`; `jax.vjp` of it gives reference gradients. The formulas are written
from the ops' documented semantics with `jax.numpy` / `jax.lax`, sharing no code
with the interpreter's kernels or with the VJP rules. Only the ops of the
composite test graphs (MLP, conv net, LLaMA layer, control flow) are covered;
any other op raises `MissingEntry`.

`jax` is a test-only dependency (the `test` extra); importing this module needs it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

# The test graphs are tiny: XLA's optimisations cost seconds of compile time and save nothing.
os.environ.setdefault(
    "XLA_FLAGS", "--xla_backend_optimization_level=0 --xla_llvm_disable_expensive_passes=true"
)

import jax
import jax.numpy as jnp
import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, SSAValue

from rlx_xdsl import dtypes
from rlx_xdsl.dense import dense_to_numpy
from rlx_xdsl.dialects.base import tensor_type
from rlx_xdsl.dialects.mir import attention as att
from rlx_xdsl.dialects.mir import (
    contraction,
    conv,
    indexing,
    loss,
    norm,
    reduction,
    regions,
    shape,
    signal,
)
from rlx_xdsl.dialects.mir import elementwise as ew
from rlx_xdsl.dialects.mir.attrs import ReduceKind
from rlx_xdsl.interpreters import find_function
from rlx_xdsl.registry import OpRegistry

jax.config.update("jax_enable_x64", True)

Formula = Callable[..., tuple]
"""`formula(op, *jax_arrays, run_block=...) -> tuple of results`."""

JAX_OPS: OpRegistry[Formula] = OpRegistry("jax formula")


def _dtype(op: Operation, index: int = 0):
    return dtypes.numpy_dtype(tensor_type(op.results[index]).element_type)


def _one(fn: Callable) -> Formula:
    """A formula from a function of the operands alone, cast to the op's result dtype."""
    return lambda op, *args, **_: (jnp.asarray(fn(*args)).astype(_dtype(op)),)


def _with_op(fn: Callable) -> Formula:
    """A formula from a function of the op and its operands, cast to the result dtype."""
    return lambda op, *args, **_: (jnp.asarray(fn(op, *args)).astype(_dtype(op)),)


# Elementwise ------------------------------------------------------------------------------

JAX_OPS.add(ew.ConstantOp, lambda op, **_: (jnp.asarray(np.array(dense_to_numpy(op.value))),))
JAX_OPS.add(
    ew.CastOp,
    _with_op(lambda op, x: x if np.issubdtype(_dtype(op), np.complexfloating) else jnp.real(x)),  # complex to real: Re
)
JAX_OPS.add(ew.WhereOp, _one(lambda c, t, f: jnp.where(c.astype(bool), t, f)))
_COMPARE = {
    "eq": jnp.equal,
    "ne": jnp.not_equal,
    "lt": jnp.less,
    "le": jnp.less_equal,
    "gt": jnp.greater,
    "ge": jnp.greater_equal,
}
JAX_OPS.add(ew.CompareOp, lambda op, a, b, **_: (_COMPARE[op.predicate.data.value](a, b),))
for _op, _fn in {
    ew.AddOp: jnp.add, ew.SubOp: jnp.subtract, ew.MulOp: jnp.multiply, ew.DivOp: jnp.divide,
    ew.MaxOp: jnp.maximum, ew.MinOp: jnp.minimum, ew.PowOp: jnp.power,
    ew.ReluOp: jax.nn.relu, ew.SigmoidOp: jax.nn.sigmoid, ew.SiluOp: jax.nn.silu, ew.TanhOp: jnp.tanh,
    ew.ExpOp: jnp.exp, ew.LogOp: jnp.log, ew.NegOp: jnp.negative, ew.SqrtOp: jnp.sqrt,
    ew.GeluOp: lambda x: jax.nn.gelu(x, approximate=False), ew.SinOp: jnp.sin, ew.CosOp: jnp.cos,
}.items():  # fmt: skip
    JAX_OPS.add(_op, _one(_fn))


# Contraction and shape ---------------------------------------------------------------------

JAX_OPS.add(contraction.MatmulOp, _one(jnp.matmul))
JAX_OPS.add(contraction.DenseSolveOp, _one(jnp.linalg.solve))
JAX_OPS.add(
    contraction.BatchedDenseSolveOp,
    _one(lambda a, b: jnp.linalg.solve(a, b[..., None])[..., 0] if b.ndim == 2 else jnp.linalg.solve(a, b)),
)
JAX_OPS.add(shape.ReshapeOp, _with_op(lambda op, x: jnp.reshape(x, tensor_type(op.result).get_shape())))
JAX_OPS.add(shape.TransposeOp, _with_op(lambda op, x: jnp.transpose(x, op.perm.get_values())))
JAX_OPS.add(
    shape.NarrowOp,
    _with_op(lambda op, x: jax.lax.slice_in_dim(
        x, op.start.value.data, op.start.value.data + op.len.value.data, axis=op.axis.value.data % x.ndim
    )),
)  # fmt: skip
JAX_OPS.add(shape.ConcatOp, _with_op(lambda op, *xs: jnp.concatenate(xs, axis=op.axis.value.data)))
JAX_OPS.add(shape.ExpandOp, _with_op(lambda op, x: jnp.broadcast_to(x, tensor_type(op.result).get_shape())))
JAX_OPS.add(
    indexing.GatherOp, _with_op(lambda op, t, i: jnp.take(t, i.astype(jnp.int32), axis=op.axis.value.data))
)

_REDUCERS = {
    ReduceKind.SUM: jnp.sum,
    ReduceKind.MEAN: jnp.mean,
    ReduceKind.MAX: jnp.max,
    ReduceKind.MIN: jnp.min,
    ReduceKind.PROD: jnp.prod,
}
JAX_OPS.add(
    reduction.ReduceOp,
    _with_op(
        lambda op, x: _REDUCERS[op.kind.data](x, axis=op.normalized_axes(), keepdims=op.keep_dim is not None)
    ),
)
JAX_OPS.add(reduction.SoftmaxOp, _with_op(lambda op, x: jax.nn.softmax(x, axis=op.axis.value.data)))


def _batch_norm_inference(op: norm.BatchNormInferenceOp, x, gamma, beta, mean, var):
    c = (-1,) + (1,) * (x.ndim - 2)
    r = jax.lax.rsqrt(var.reshape(c) + op.eps.value.data)
    return (x - mean.reshape(c)) * r * gamma.reshape(c) + beta.reshape(c)


JAX_OPS.add(norm.BatchNormInferenceOp, _with_op(_batch_norm_inference))


# Complex values and signal ops ---------------------------------------------------------------


def _fft(op: signal.FftOp, x):
    transform = jnp.fft.ifft if op.is_inverse else jnp.fft.fft
    norm = str(op.norm_kind)
    if jnp.iscomplexobj(x):
        return transform(x, axis=-1, norm=norm)
    pairs = x.reshape(*x.shape[:-1], -1, 2)
    z = transform(pairs[..., 0] + 1j * pairs[..., 1], axis=-1, norm=norm)
    return jnp.stack([jnp.real(z), jnp.imag(z)], axis=-1).reshape(x.shape)


JAX_OPS.add(signal.ConjugateOp, _one(jnp.conj))
JAX_OPS.add(signal.ComplexNormSqOp, _one(lambda z: jnp.real(z) ** 2 + jnp.imag(z) ** 2))
JAX_OPS.add(signal.ComplexNormSqBackwardOp, _one(lambda z, g: 2 * g * jnp.conj(z)))
JAX_OPS.add(signal.FftOp, _with_op(_fft))
JAX_OPS.add(
    signal.LogMelOp,
    _with_op(lambda op, s, w: jnp.log10(jnp.maximum(jnp.matmul(s, w), op.eps.value.data))),
)


# Norms, attention, rope -----------------------------------------------------------------------


def _rms_norm(op: norm.RmsNormOp, x, gamma, beta):
    axes = tuple(range(op.normalized_axis(), x.ndim))
    return x * jax.lax.rsqrt(jnp.mean(x * x, axis=axes, keepdims=True) + op.eps.value.data) * gamma + beta


def _layer_norm(op: norm.LayerNormOp, x, gamma, beta):
    axes = tuple(range(op.normalized_axis(), x.ndim))
    mean = jnp.mean(x, axis=axes, keepdims=True)
    var = jnp.var(x, axis=axes, keepdims=True)
    return (x - mean) / jnp.sqrt(var + op.eps.value.data) * gamma + beta


JAX_OPS.add(norm.RmsNormOp, _with_op(_rms_norm))
JAX_OPS.add(norm.LayerNormOp, _with_op(_layer_norm))


def _rope(op: att.RopeOp, x, cos, sin):
    half = op.n_rot.value.data // 2
    a, b = x[..., :half], x[..., half : 2 * half]
    return jnp.concatenate([a * cos - b * sin, b * cos + a * sin, x[..., 2 * half :]], axis=-1)


def _attention(op: att.AttentionOp, q, k, v, mask=None):
    """Causal / unmasked attention with grouped KV heads, as `jax.nn.dot_product_attention` defines it."""
    if op.kind not in (att.MaskKind.NONE, att.MaskKind.CAUSAL) or op.attn_logit_softcap is not None:
        raise NotImplementedError(f"jax oracle: attention with mask {op.kind} or a soft-cap")
    # jax.nn.dot_product_attention takes [B, S, H, D] and aligns a causal mask at the top-left,
    # which equals MIR's bottom-right alignment for Sq == Sk.
    assert q.shape[2] == k.shape[2] or op.kind == att.MaskKind.NONE
    out = jax.nn.dot_product_attention(
        jnp.swapaxes(q, 1, 2), jnp.swapaxes(k, 1, 2), jnp.swapaxes(v, 1, 2),
        scale=op.scale(), is_causal=op.kind == att.MaskKind.CAUSAL,
    )  # fmt: skip
    return jnp.swapaxes(out, 1, 2)


JAX_OPS.add(att.RopeOp, _with_op(_rope))
JAX_OPS.add(att.AttentionOp, _with_op(_attention))


# Convolution, pooling, loss ------------------------------------------------------------------


def _conv(op: conv.ConvOp, x, w):
    pads = [(p, p) for p in op.pair("padding")]
    return jax.lax.conv_general_dilated(
        x, w, window_strides=op.pair("stride"), padding=pads, rhs_dilation=op.pair("dilation"),
        feature_group_count=op.groups.value.data, dimension_numbers=("NCHW", "OIHW", "NCHW"),
    )  # fmt: skip


def _pool(op: conv.PoolOp, x):
    window = (1, 1, *op.pair("kernel_size"))
    strides = (1, 1, *op.pair("stride"))
    pads = ((0, 0), (0, 0), *((p, p) for p in op.pair("padding")))
    if op.kind.data == ReduceKind.MAX:
        return jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, window, strides, pads)
    total = jax.lax.reduce_window(x, 0.0, jax.lax.add, window, strides, pads)
    count = jax.lax.reduce_window(jnp.ones_like(x), 0.0, jax.lax.add, window, strides, pads)
    return total / count  # padded cells are not counted


def _sce_with_logits(op, logits, labels):
    """Labels `[N]` or `[N, 1]`; rows labelled `ignore_index` give 0 (and no gradient)."""
    ids = labels.reshape(-1).astype(jnp.int32)
    onehot = jax.nn.one_hot(ids, logits.shape[1], dtype=logits.dtype)
    loss = jax.nn.logsumexp(logits, axis=1) - jnp.sum(onehot * logits, axis=1)
    ignore = op.ignored_label()
    return loss if ignore is None else jnp.where(ids == ignore, jnp.zeros_like(loss), loss)


JAX_OPS.add(conv.ConvOp, _with_op(_conv))
JAX_OPS.add(conv.PoolOp, _with_op(_pool))
JAX_OPS.add(loss.SoftmaxCrossEntropyWithLogitsOp, _with_op(_sce_with_logits))


# Regions ----------------------------------------------------------------------------------------


def _if(op: regions.IfOp, pred, *captures, run_block):
    """`lax.cond` on the one-element predicate (nonzero is true)."""
    return tuple(
        jax.lax.cond(
            jnp.reshape(pred, ()) != 0,
            lambda cs: run_block(op.then_region.block, cs),
            lambda cs: run_block(op.else_region.block, cs),
            tuple(captures),
        )
    )


def _while(op: regions.WhileOp, *init, run_block):
    """At most `max_iterations` steps; once the condition fails the values stay as they are."""
    carried, running = tuple(init), jnp.asarray(True)
    for _ in range(op.iteration_limit):
        (cond,) = run_block(op.cond_region.block, carried)
        running = running & (jnp.reshape(cond, ()) != 0)
        stepped = run_block(op.body_region.block, carried)
        carried = tuple(jnp.where(running, s, c) for s, c in zip(stepped, carried))
    return carried


JAX_OPS.add(regions.IfOp, _if)
JAX_OPS.add(regions.WhileOp, _while)


# Running a function ---------------------------------------------------------------------------


def run_block(block: Block, args: Sequence) -> tuple:
    """Evaluate `block` on `args` with the JAX formulas; return what its terminator passes on."""
    values: dict[SSAValue, object] = dict(zip(block.args, args, strict=True))
    for op in block.ops:
        operands = [values[v] for v in op.operands]
        if op is block.last_op and (isinstance(op, func.ReturnOp) or isinstance(op, regions.YieldOp)):
            return tuple(operands)
        formula = JAX_OPS[op]
        extra = {"run_block": run_block} if op.regions else {}
        results = formula(op, *operands, **extra)
        values.update(zip(op.results, results, strict=True))
    raise AssertionError("block without a terminator")


def jax_function(module: ModuleOp, name: str) -> Callable[..., tuple]:
    """`f(*arrays) -> outputs`: `@name` evaluated with jax.numpy (differentiable by jax)."""
    block = find_function(module, name).body.block
    return lambda *arrays: run_block(block, arrays)


def jax_vjp(module: ModuleOp, name: str, inputs: Sequence[np.ndarray], wrt: Sequence[int], cotangent):
    """`@name`'s first output, and JAX's gradients of it with respect to `inputs[wrt]`
    seeded by `cotangent`."""
    f = jax_function(module, name)

    def loss(*chosen):
        args = list(map(jnp.asarray, inputs))
        for index, value in zip(wrt, chosen):
            args[index] = value
        return f(*args)[0]

    def value_and_gradients(seed, *chosen):
        value, pullback = jax.vjp(loss, *chosen)
        return value, pullback(seed)

    # One compiled computation: eager jax compiles every primitive separately (much slower).
    value, gradients = jax.jit(value_and_gradients)(
        jnp.asarray(cotangent), *(jnp.asarray(inputs[i]) for i in wrt)
    )
    return np.asarray(value), [np.asarray(g) for g in gradients]
