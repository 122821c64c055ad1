"""StableHLO of a MIR function, produced by JAX's own lowering of its `JAX_OPS` translation.

`check_exportable` first walks the function: an op without a formula (or an HIR
block op, which `rlx-lower-hir` expands into MIR first) and an argument XLA
cannot take (a `?` dimension: XLA compiles static shapes) are `OpError`s at the
offending op, so the tools report them as `file:line:col: error:`; nothing is
traced before the whole function is known to be exportable.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType

from rlx_xdsl import dtypes
from rlx_xdsl.ir.diagnostics import OpError
from rlx_xdsl.ir.graph import argument_name, find_function
from rlx_xdsl.shapes import is_static

INSTALL_HINT = "pip install -e '.[xla]'"


class XlaUnavailable(RuntimeError):
    """JAX (the XLA backend's compiler) is not installed."""


def require_jax():
    """The `jax` module, or `XlaUnavailable` saying how to install it."""
    try:
        import jax
    except ImportError:
        raise XlaUnavailable(f"the XLA backend needs JAX: {INSTALL_HINT}") from None
    return jax


def check_exportable(f: func.FuncOp, static: bool = True) -> None:
    """Raise an `OpError` at the first op or argument of `f` that XLA cannot take
    (with `static=False`, `?` dims are allowed: `XlaModule` specializes them per call)."""
    from rlx_xdsl import layers
    from rlx_xdsl.conversions.mir_to_jax import JAX_OPS
    from rlx_xdsl.dialects.hir.base import HirOperation
    from rlx_xdsl.dialects.mir.regions import YieldOp

    name = f"@{f.sym_name.data}"
    if not f.body.blocks:
        raise OpError(f, f"{name} is a declaration without a body: nothing to export")
    for index, arg in enumerate(f.body.block.args):
        t = arg.type
        what = f"argument #{index} ('{argument_name(f, index)}') of {name}"
        if not (isinstance(t, TensorType) and dtypes.is_supported(t.element_type)):
            raise OpError(f, f"{what} has type {t}; the XLA backend takes tensors of RLX's dtypes")
        if static and not is_static(t.get_shape()):
            raise OpError(
                f,
                f"{what} has dynamic type {t}; XLA compiles static shapes: "
                "give its dims with rlx-specialize{shapes=...} first (XlaModule specializes per call)",
            )
    layers.load("jax")
    for op in f.walk():
        if op is f or (isinstance(op, func.ReturnOp | YieldOp) and op is op.parent_block().last_op):
            continue
        if isinstance(op, HirOperation):
            raise OpError(op, f"'{op.name}' is an HIR op: run rlx-lower-hir first to export it to StableHLO")
        if JAX_OPS.lookup(op) is None:
            raise OpError(op, f"'{op.name}' cannot be exported to StableHLO: it has no JAX translation (JAX_OPS)")


def abstract_args(f: func.FuncOp) -> list:
    """A `jax.ShapeDtypeStruct` per argument of `f` (static shapes: `check_exportable` first)."""
    jax = require_jax()
    return [
        jax.ShapeDtypeStruct(tuple(a.type.get_shape()), dtypes.numpy_dtype(a.type.element_type))
        for a in f.body.block.args
    ]


def matmul_precision(tf32: bool) -> AbstractContextManager[None]:
    """f32 products at full precision, or in TF32 when asked: the precision is written
    into each dot and convolution of the traced program, so the text says which."""
    return require_jax().default_matmul_precision("tensorfloat32" if tf32 else "highest")


def traced(module: ModuleOp, f: func.FuncOp) -> Callable[..., tuple]:
    """`f` as a JAX function of its arguments (exportable functions only), named after `f`:
    the StableHLO module is `@jit_<name>` (IREE's module of it too)."""
    from rlx_xdsl.conversions.mir_to_jax import jax_function

    fn = jax_function(module, f.sym_name.data)

    def program(*arrays):
        return fn(*arrays)

    program.__name__ = program.__qualname__ = f.sym_name.data
    return program


def to_stablehlo(module: ModuleOp, function: str | None = None, tf32: bool = False) -> str:
    """The StableHLO module (text) of `@function` (the first function when None).

    Its entry point is `@main`, taking the arguments in order and returning the
    results as a tuple. Sharding attributes are checked but not applied: the text
    is the one-device program (`XlaModule(...).stablehlo()` has the partitioned one's
    input). HIR block ops are expanded into MIR first, on a copy (`without_hir`), as
    `rlx-run --backend=xla` runs them. Unexportable ops are `OpError`s; no JAX is
    `XlaUnavailable`.
    """
    from rlx_xdsl.backends.iree import without_hir
    from rlx_xdsl.ir.sharding import read_layout

    jax = require_jax()
    module = without_hir(module)
    f = find_function(module, function)
    check_exportable(f)
    read_layout(module, f)
    with matmul_precision(tf32):
        return jax.jit(traced(module, f)).lower(*abstract_args(f)).as_text()
