"""`rlx-vmap`: a function mapped over a batch, as an IR-to-IR rewrite.

`rlx-vmap{func=f batched=x,y size=N}` adds `@f_vmap`, taking `@f`'s arguments with
a leading batch axis of size N on `x` and `y` (the others, parameters for
instance, shared by every example) and returning every result of `@f` with a
leading batch axis: `f_vmap(X)[i] == f(X[i])` (JAX's `vmap` with `in_axes=0` on
the named arguments, `None` on the others, and `out_axes=0`).

The pass walks `@f`'s ops in order. An op none of whose operands is batched is
copied as it is (nothing is broadcast that need not be); any other op goes to its
batching rule (`BATCH_RULES`, one per op class, in `rules/mir/<group>.py`), which
emits the batched computation. An op without a rule, or whose rule cannot handle
it, is an error located at the op: nothing is silently unrolled. A result that
does not depend on a batched argument is broadcast to the batch at the end.

`@f` itself is left unchanged. Running the pass again with the same options
leaves the module as it is; with other options it is a located error at the
existing `@f_vmap`. After `rlx-grad{func=loss}`, `rlx-vmap{func=loss_grad
batched=x,y}` gives per-example gradients.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint
from xdsl.traits import SymbolTable

from rlx_xdsl import layers
from rlx_xdsl.batching.emit import MAPPED_OVER_BATCH, batched_type, materialize
from rlx_xdsl.batching.registry import BATCH_RULES, BatchArgs, Unsupported
from rlx_xdsl.dialects.base import types_compatible
from rlx_xdsl.ir.diagnostics import OpError
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.ir.graph import argument_names
from rlx_xdsl.ir.printer import print_ir
from rlx_xdsl.ir.suggest import did_you_mean
from rlx_xdsl.transforms.statistics import Statistic

BATCH_RULES_USED = Statistic("num-batch-rules", "Number of batching rules applied")
OPS_COPIED = Statistic("num-unbatched-ops", "Number of ops copied unbatched (no batched operand)")


def resolve_batched(function: func.FuncOp, batched: Sequence[str]) -> list[int]:
    """Argument indices named by `batched` (`rlx.name`, `argN`, the SSA name or a position)."""
    names = argument_names(function)
    hints = [a.name_hint for a in function.body.block.args]
    if not batched:
        raise OpError(function, "'rlx-vmap' batched= names no argument: name the arguments to batch")
    indices = []
    for spec in batched:
        if spec.isdigit() and int(spec) < len(names):
            index = int(spec)
        elif spec in names:
            index = names.index(spec)
        elif spec in hints:  # the SSA name of the argument in the text (`%x`)
            index = hints.index(spec)
        else:
            raise OpError(
                function,
                f"'rlx-vmap' @{function.sym_name.data} has no argument '{spec}' (its arguments: "
                f"{', '.join(names) or 'none'}; positions 0..{len(names) - 1}){did_you_mean(spec, names)}",
            )
        if not isinstance(function.body.block.args[index].type, TensorType):
            raise OpError(function, f"'rlx-vmap' argument '{spec}' is not a tensor")
        if index not in indices:
            indices.append(index)
    return indices


@dataclass
class Batcher:
    """The walk over one function: each original value's new value and whether it is batched."""

    size: int
    block: Block
    values: dict[SSAValue, tuple[SSAValue, bool]] = field(default_factory=dict[SSAValue, tuple[SSAValue, bool]])

    def emitter(self, op: Operation) -> Emitter:
        return Emitter(Builder(InsertPoint.at_end(self.block)), op.location)

    def visit(self, op: Operation) -> None:
        operands = [self.values[v] for v in op.operands]
        if not any(b for _, b in operands):
            copy = op.clone(value_mapper={v: new for v, (new, _) in zip(op.operands, operands)})
            self.block.add_op(copy)
            self.values.update((r, (c, False)) for r, c in zip(op.results, copy.results, strict=True))
            OPS_COPIED.add()
            return
        rule = BATCH_RULES.lookup(op)
        if rule is None:
            raise OpError(op, f"'rlx-vmap' no batching rule for '{op.name}'")
        args = BatchArgs(self.size, [v for v, _ in operands], [b for _, b in operands])
        try:
            results = rule(self.emitter(op), op, args)
        except Unsupported as error:
            raise OpError(op, f"'rlx-vmap' cannot batch '{op.name}': {error}") from error
        BATCH_RULES_USED.add()
        if len(results) != len(op.results):
            raise OpError(op, f"'rlx-vmap' the batching rule of '{op.name}' returned {len(results)} results "
                          f"for {len(op.results)}")  # fmt: skip
        for index, (result, (value, is_batched)) in enumerate(zip(op.results, results, strict=True)):
            expected = batched_type(result.type, self.size) if is_batched else result.type
            if not types_compatible(value.type, expected):
                raise OpError(op, f"'rlx-vmap' the batching rule of '{op.name}' returned {value.type} for "
                              f"result #{index}, expected {expected}")  # fmt: skip
            if value.name_hint is None and result.name_hint is not None:
                value.name_hint = result.name_hint
            self.values[result] = (value, is_batched)


def vmap_function(function: func.FuncOp, name: str, indices: Sequence[int], size: int) -> func.FuncOp:
    """A new function `name`: `function` mapped over a leading batch axis on `indices`."""
    layers.load("batching")
    old = function.body.block
    types = [batched_type(a.type, size) if i in indices else a.type for i, a in enumerate(old.args)]
    block = Block(arg_types=types)
    batcher = Batcher(size, block)
    for i, (arg, new) in enumerate(zip(old.args, block.args, strict=True)):
        new.name_hint = arg.name_hint
        batcher.values[arg] = (new, i in indices)
    returned = old.last_op
    assert isinstance(returned, func.ReturnOp)
    for op in old.ops:
        if op is not returned:
            batcher.visit(op)
    e = Emitter(Builder(InsertPoint.at_end(block)), returned.location)
    outputs = []
    for v in returned.arguments:
        new, is_batched = batcher.values[v]
        outputs.append(new if is_batched else materialize(e, new, size))
    ret = func.ReturnOp(*outputs)
    ret.location = returned.location
    block.add_op(ret)
    new_function = func.FuncOp(name, ([a.type for a in block.args], [v.type for v in outputs]), Region(block))
    new_function.arg_attrs = function.arg_attrs
    new_function.location = function.location
    return new_function


def build_vmap(module: ModuleOp, name: str, batched: Sequence[str], size: int) -> func.FuncOp:
    """Add `@<name>_vmap` to `module` (see the module docstring) and return it."""
    function = SymbolTable.lookup_symbol(module, name)
    if not isinstance(function, func.FuncOp):
        functions = [op.sym_name.data for op in module.ops if isinstance(op, func.FuncOp)]
        raise OpError(
            module,
            f"'rlx-vmap' no function named @{name} (functions: "
            f"{', '.join('@' + f for f in functions) or 'none'}){did_you_mean(name, functions)}",
        )
    if size < 1:
        raise OpError(function, f"'rlx-vmap' size must be at least 1, got {size}")
    indices = resolve_batched(function, batched)
    vmap_name = f"{name}_vmap"
    made = vmap_function(function, vmap_name, indices, size)
    existing = SymbolTable.lookup_symbol(module, vmap_name)
    if existing is not None:
        if print_ir(existing) == print_ir(made):
            made.erase()
            assert isinstance(existing, func.FuncOp)
            return existing  # the same options again: nothing to do
        raise OpError(
            existing,
            f"'rlx-vmap' cannot add @{vmap_name}: the symbol already exists and differs "
            f"(another batch size or batched arguments: {_signature(existing)} here, "
            f"{_signature(made)} asked)",
        )
    module.body.block.insert_op_after(made, function)
    return made


def _signature(function: Operation) -> str:
    assert isinstance(function, func.FuncOp)
    return f"({', '.join(str(t) for t in function.function_type.inputs)})"


@dataclass(frozen=True)
class VmapPass(ModulePass):
    """Add `@FUNC_vmap`: `@FUNC` mapped over a leading batch axis of size `size`.

    `rlx-vmap{func=f batched=x,y size=8}`: `batched` names the arguments that get
    the batch axis (by rlx.name, `argN` or position); the other arguments (the
    parameters) are shared by every example. Every result of `@FUNC_vmap` has the
    batch axis in front: `f_vmap(X)[i] == f(X[i])`, as `jax.vmap`. Each op is
    batched by its rule (elementwise ops broadcast, axis attributes shift by one,
    matmuls use their batch dims, fixed-rank ops such as convolution fold the batch
    into their own batch dim, `mir.scan`/`mir.if`/`mir.while` batch their bodies, kernels
    with a body such as `mir.elementwise_region` batch as their unfuse rules' primitive
    ops); an op without a rule is an error at the op. After `rlx-grad`, it gives per-example gradients.
    """

    name = "rlx-vmap"
    STATISTICS = (BATCH_RULES_USED, OPS_COPIED, MAPPED_OVER_BATCH)

    func: str = field(metadata={"syntax": "NAME", "example": "loss"})
    batched: tuple[str | int, ...] = field(default=(), metadata={"syntax": "NAME|POSITION,...", "example": "x"})
    size: int = field(default=2, metadata={"syntax": "N", "example": "8", "range": (1, 2**63 - 1)})

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        build_vmap(op, self.func, [str(b) for b in self.batched], self.size)
