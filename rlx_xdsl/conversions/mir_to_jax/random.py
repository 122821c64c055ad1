"""Random numbers and sampling, bit-exact with the interpreter.

MIR's generator is counter-based (Philox-4x64-10, Salmon et al., SC 2011; the bit
layout is `rlx_xdsl.dialects.mir.random`'s docstring), so it is a pure function of the
seed, the offset and the element's position and can be reproduced here with `uint64`
arithmetic: each 64x64 -> 128-bit product is built from 32-bit halves. Floats come
from the words as the op docs say, in f64, rounded once to the result dtype.
"""

import jax
import jax.numpy as jnp
import numpy as np

from rlx_xdsl.conversions.mir_to_jax.elementwise import convert
from rlx_xdsl.conversions.mir_to_jax.registry import JAX_OPS, operands_of, result_dtype
from rlx_xdsl.dialects.base import tensor_type
from rlx_xdsl.dialects.mir import random as rnd

MULTIPLIERS = (0xD2E7470EE14C6C93, 0xCA5A826395121157)
WEYL = (0x9E3779B97F4A7C15, 0xBB67AE8584CAA73B)
MASK64 = (1 << 64) - 1


def _wide_product(a: int, b):
    """`(high, low)` 64-bit words of the 128-bit product of the constant `a` and `b` (uint64)."""
    half = jnp.uint64(32)
    low32 = jnp.uint64(0xFFFFFFFF)
    a0, a1 = jnp.uint64(a & 0xFFFFFFFF), jnp.uint64(a >> 32)
    b0, b1 = b & low32, b >> half
    p00, p01, p10, p11 = a0 * b0, a0 * b1, a1 * b0, a1 * b1
    carry = (p00 >> half) + (p01 & low32) + (p10 & low32)
    return p11 + (p01 >> half) + (p10 >> half) + (carry >> half), (p00 & low32) | (carry << half)


def philox(counter, seed: int) -> list:
    """The four uint64 words of Philox-4x64-10 for counters `(c, 0, 0, 0)` and key `(seed, 0)`."""
    zero = jnp.zeros_like(counter)
    x0, x1, x2, x3 = counter, zero, zero, zero
    key = [seed & MASK64, 0]
    for round_ in range(10):
        if round_:
            key = [(k + w) & MASK64 for k, w in zip(key, WEYL)]
        hi0, lo0 = _wide_product(MULTIPLIERS[0], x0)
        hi1, lo1 = _wide_product(MULTIPLIERS[1], x2)
        x0, x1, x2, x3 = hi1 ^ x1 ^ jnp.uint64(key[0]), lo1, hi0 ^ x3 ^ jnp.uint64(key[1]), lo0
    return [x0, x1, x2, x3]


def uniforms(seed: int, offset, n: int, words: int = 1) -> list:
    """Uniform f64s on [0, 1), `(w >> 11) * 2^-53`, of the blocks of counters `offset * n + i`."""
    base = jnp.uint64(0) if offset is None else jnp.reshape(offset, ()).astype(jnp.int64).astype(jnp.uint64)
    counter = base * jnp.uint64(n) + jnp.arange(n, dtype=jnp.uint64)
    return [(w >> jnp.uint64(11)).astype(jnp.float64) * 2.0**-53 for w in philox(counter, seed)[:words]]


def _draws(op, arrays, words: int):
    get = operands_of(op, arrays)
    shape = tensor_type(op.result).get_shape()
    n = int(np.prod(shape, dtype=np.int64))
    return shape, uniforms(op.seed.value.data, get(op.offset), n, words)


def _rng_uniform(op: rnd.RngUniformOp, *arrays, **_):
    shape, (u,) = _draws(op, arrays, 1)
    low, high = op.low.value.data, op.high.value.data
    return (convert((low + (high - low) * u).reshape(shape), result_dtype(op)),)


def _rng_normal(op: rnd.RngNormalOp, *arrays, **_):
    """Box-Muller's cosine branch on words 0 and 1."""
    shape, (u0, u1) = _draws(op, arrays, 2)
    z = jnp.sqrt(-2.0 * jnp.log1p(-u0)) * jnp.cos(2.0 * jnp.pi * u1)
    return (convert((op.mean.value.data + op.std.value.data * z).reshape(shape), result_dtype(op)),)


def _sample(op: rnd.SampleOp, *arrays, **_):
    """Temperature, top-k (ties: lower index first), softmax (+inf ids share the row), top-p,
    then the inverse CDF at u; -1 for a row with a NaN or all -inf."""
    get = operands_of(op, arrays)
    logits = get(op.logits).astype(jnp.float64)
    temperature = op.temperature.value.data
    z = logits / (temperature or 1.0)
    no_distribution = ~(jnp.max(z, axis=-1) > -jnp.inf)  # a NaN or all -inf: id -1
    if temperature == 0:
        return (jnp.where(no_distribution, -1, jnp.argmax(logits, axis=-1)).astype(jnp.int64),)
    rows, vocab = z.shape
    top_k, top_p = op.top_k.value.data, op.top_p.value.data
    iota = jax.lax.broadcasted_iota(jnp.int64, z.shape, 1)
    _, order = jax.lax.sort((-z, iota), num_keys=2)  # by value descending, then index
    rank = jnp.zeros_like(order).at[jnp.arange(rows)[:, None], order].set(iota)
    kept = rank < top_k if top_k > 0 else jnp.ones(z.shape, bool)
    masked = jnp.where(kept, z, -jnp.inf)
    peak = jnp.max(masked, axis=-1, keepdims=True)
    p = jnp.where(jnp.isposinf(peak), jnp.isposinf(masked), jnp.exp(masked - peak))  # +inf: the limit
    p = p / jnp.sum(p, axis=-1, keepdims=True)
    if top_p < 1:
        ranked = jnp.take_along_axis(p, order, axis=-1)
        before = jnp.cumsum(ranked, axis=-1) - ranked
        kept_p = jnp.take_along_axis(before < top_p, rank, axis=-1)
        p = jnp.where(kept_p, p, 0.0)
        p = p / jnp.sum(p, axis=-1, keepdims=True)
    (u,) = uniforms(op.seed.value.data, get(op.offset), rows)
    chosen = jnp.sum(jnp.cumsum(p, axis=-1) <= u[:, None], axis=-1)
    last_kept = vocab - 1 - jnp.argmax((p > 0)[:, ::-1], axis=-1)  # if rounding leaves no id above u
    return (jnp.where(no_distribution, -1, jnp.minimum(chosen, last_kept)).astype(jnp.int64),)


JAX_OPS.add(rnd.RngUniformOp, _rng_uniform)
JAX_OPS.add(rnd.RngNormalOp, _rng_normal)
JAX_OPS.add(rnd.SampleOp, _sample)
