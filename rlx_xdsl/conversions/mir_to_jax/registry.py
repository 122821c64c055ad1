"""The `JAX_OPS` registry: one `jax.numpy`/`jax.lax` formula per MIR op class.

A formula is `formula(op, *arrays, run_block=...) -> tuple of results`; region
ops receive `run_block` (a `BlockRunner`) to evaluate their bodies. Formulas
share the helpers here: `one`/`with_op` (cast to the result dtype), `widen`
(f16/bf16 compute in f32 and round once, as the interpreter), `operands_of`
(optional operands by name), `result_dtype`. `jax_function(module, name)`
evaluates `@name` op by op with these formulas, so `jax.jit` of it traces the
function into one XLA computation (the StableHLO export and the XLA backend)
and `jax.vjp`/`jax.jvp`/`jax.vmap` of it are independent oracles for the
project's autodiff and batching passes: the formulas are written from the ops'
documented semantics and share no code with the interpreter's kernels or with
the VJP rules. Formulas branch only on properties, dtypes and static shapes, so
every function traces under `jax.jit`; `tests/conversions/test_mir_to_jax.py`
checks each op case against the interpreter and under `jax.vjp`.

The registry never imports its entries: `layers.load("jax")` imports the group
modules, each registering the formulas of one MIR group.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass

import jax
import jax.numpy as jnp
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, SSAValue

from rlx_xdsl import dtypes, layers
from rlx_xdsl.dialects.base import tensor_type
from rlx_xdsl.dialects.mir import regions
from rlx_xdsl.ir.diagnostics import OpError
from rlx_xdsl.ir.graph import find_function
from rlx_xdsl.registry import OpRegistry

# MIR has f64 and i64 tensors; without x64 JAX would silently narrow them to 32 bits.
jax.config.update("jax_enable_x64", True)

Formula = Callable[..., tuple]
"""`formula(op, *jax_arrays, run_block=...) -> tuple of results`."""

JAX_OPS: OpRegistry[Formula] = OpRegistry("jax formula")

CUDA_KERNELS: ContextVar[bool] = ContextVar("CUDA_KERNELS", default=False)
"""True while tracing for an NVIDIA GPU (`XlaModule(device="gpu")`): a formula may then call
a fused cuDNN kernel that computes the same function (flash attention). Off for the portable
StableHLO export and for the CPU, where the formulas stay the reference ones."""


def result_dtype(op: Operation, index: int = 0):
    """The numpy dtype of `op`'s result `index`."""
    return dtypes.numpy_dtype(tensor_type(op.results[index]).element_type)


def widen(x):
    """`x` in f32 when it is f16/bf16: the interpreter computes those in f32 and rounds once."""
    return x.astype(jnp.float32) if x.dtype in (jnp.float16, jnp.bfloat16) else x


@jax.custom_jvp
def rounded(product):
    """`product` rounded to its dtype before a later add or subtract reads it, as the
    interpreter's separate numpy operations do. XLA's CPU compiler always lets LLVM fuse a
    multiply into the add that reads it (`AllowFPOpFusion::Fast`: `a * b - c * d` becomes
    `fma(a, b, -(c * d))`, the first product unrounded; 0.0 against 5.96e-08 for
    `(1 + 2**-12)**2 - (1 + 2**-11)`). A select on the product (NaN stays NaN), which
    neither XLA nor LLVM folds, keeps the product a separate rounded value; an
    `optimization_barrier` does not (XLA's CPU pipeline removes it before fusion). Its
    derivative is the identity (a NaN cotangent passes, as through the product itself)."""
    return jnp.where(jnp.isnan(product), jnp.asarray(jnp.nan, product.dtype), product)


rounded.defjvp(lambda primals, tangents: (rounded(*primals), tangents[0]))


def over_sqrt(a, b):
    """`a / sqrt(b)` with the quotient correctly rounded, as the interpreter's. XLA's
    algebraic simplifier rewrites `a / sqrt(b)` into `a * rsqrt(b)` and a division by a
    broadcast into a multiplication by the broadcast reciprocal, at every optimisation
    level (each one ulp off on about 40% of f32 inputs): the root, broadcast to the
    quotient's shape and kept a value of its own through `rounded`'s select, is neither."""
    root = jnp.sqrt(jnp.asarray(b))
    return a / rounded(jnp.broadcast_to(root, jnp.broadcast_shapes(jnp.shape(a), root.shape)))


def accumulator(x):
    """The `preferred_element_type` of a product of f16/bf16 operands: f32, as `widen` would
    give, but the GPU's tensor cores then multiply the narrow values themselves (products of
    two bf16 or f16 numbers are exact in f32), instead of f32 matmuls on widened copies."""
    return jnp.float32 if x.dtype in (jnp.float16, jnp.bfloat16) else None


def narrow_product(x):
    """The `preferred_element_type` of a product of two `x.dtype` operands whose result is
    rounded to `x.dtype` (a matmul, a dot_general, a linear layer): `x.dtype` itself, so XLA
    writes the f16/bf16 result directly instead of an f32 one and a separate convert (half
    the bytes). The numbers are the interpreter's "accumulate in f32, round once": cuBLAS
    accumulates f16/bf16 GEMMs in f32, and XLA's CPU widens the operands to an f32 dot
    (at the backend's `highest` precision). Use `accumulator` where the f32 product is
    used unrounded (attention scores)."""
    return x.dtype if x.dtype in (jnp.float16, jnp.bfloat16) else None


def narrow_precision(x):
    """The `precision` of a product of f16/bf16 operands: `DEFAULT`, written into the dot so
    the backend's `highest` (there for f32 products, which XLA would otherwise run in TF32 on
    NVIDIA GPUs) does not apply to it. The numbers are the same, since the product of two
    f16/bf16 values is exact in f32 and cuBLAS accumulates in f32 either way; but at `highest`
    XLA's GPU compiler widens the narrow operands to f32 first, and turns a matrix-vector
    product (a decode step's every matmul) into an f32 multiply-and-reduce kernel instead of a
    bf16 GEMM. `None` (the backend's precision) for other dtypes."""
    return jax.lax.Precision.DEFAULT if x.dtype in (jnp.float16, jnp.bfloat16) else None


def operands_of(op: Operation, arrays: Sequence) -> Callable:
    """`get(operand)`: the array of one of `op`'s operands (None for an absent optional one)."""
    values = dict(zip(op.operands, arrays, strict=True))
    return lambda operand: None if operand is None else values[operand]


def one(fn: Callable) -> Formula:
    """A formula from a function of the operands alone, cast to the op's result dtype."""
    return lambda op, *args, **_: (jnp.asarray(fn(*args)).astype(result_dtype(op)),)


def with_op(fn: Callable) -> Formula:
    """A formula from a function of the op and its operands, cast to the result dtype."""
    return lambda op, *args, **_: (jnp.asarray(fn(op, *args)).astype(result_dtype(op)),)


@dataclass(frozen=True)
class BlockRunner:
    """Evaluates blocks with the formulas; region formulas receive it as `run_block`.

    `custom_rule` says which body JAX differentiates a `mir.custom_fn` through when it
    has both: its `vjp` body (`jax.custom_vjp`, the reverse-mode oracle) or its `jvp` body
    (`jax.custom_jvp`, for `jax.jvp`; JAX refuses forward mode through a `custom_vjp`).
    """

    custom_rule: str = "vjp"

    def __call__(self, block: Block, args: Sequence) -> tuple:
        """Evaluate `block` on `args`; return what its terminator passes on."""
        values: dict[SSAValue, object] = dict(zip(block.args, args, strict=True))
        for op in block.ops:
            operands = [values[v] for v in op.operands]
            if op is block.last_op and (
                isinstance(op, func.ReturnOp) or isinstance(op, regions.YieldOp)
            ):
                return tuple(operands)
            formula = JAX_OPS[op]
            extra = {"run_block": self} if op.regions else {}
            results = formula(op, *operands, **extra)
            values.update(zip(op.results, results, strict=True))
        raise AssertionError("block without a terminator")


run_block = BlockRunner()


def jax_function(module: ModuleOp, name: str, *, custom_rule: str = "vjp") -> Callable[..., tuple]:
    """`f(*arrays) -> outputs`: `@name` evaluated with jax.numpy (traceable and differentiable).

    `custom_rule="jvp"` differentiates `mir.custom_fn`s that have both rules through their
    jvp body (pass it for `jax.jvp`); see `BlockRunner`.
    """
    layers.load("jax")
    block = find_function(module, name).body.block
    for op in block.walk():
        narrow = dtypes.interpreter_only_value(op)
        if narrow is not None:
            raise OpError(op, f"'{op.name}': {narrow} has no JAX lowering (interpreter only)")
    runner = BlockRunner(custom_rule)
    return lambda *arrays: runner(block, arrays)
