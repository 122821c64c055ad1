"""`rlx-specialize`: bind dynamic argument dims to static sizes, then re-infer types.

This is RLX's compile-then-specialise flow (`CompileResult::specialize`): a graph
is written once with `?` dims and specialised per call shape. Binding a dim
changes an argument type; every op's result type is then re-derived, in program
order, from the op's own type inference (`RlxOperation.refresh_result_types`),
region arguments take the types their op states for them
(`RegionSignatureInterface`, as `mir.if`/`mir.while` declare), and finally the function type is rebuilt from
the arguments and `func.return`.

Bindings are `NAME=DIMS` with DIMS like `2x128`; a `?` keeps that dim as it is.
NAME is the argument's `rlx.name`, else its position `argN`. The pass is all or
nothing: when a binding is rejected the IR is left exactly as it was.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp, TensorType
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import PassFailedException, VerifyException

from rlx_xdsl.dialects.base import RlxOperation
from rlx_xdsl.dialects.traits import RegionSignatureInterface
from rlx_xdsl.ir.diagnostics import OpError
from rlx_xdsl.ir.graph import argument_names
from rlx_xdsl.shapes import DYNAMIC
from rlx_xdsl.transforms.pipeline import ReportsChanges
from rlx_xdsl.transforms.statistics import Statistic

BOUND = Statistic("num-args-specialized", "Number of function arguments given static dims")


class SpecializeError(OpError, PassFailedException):
    """A rejected specialisation, located at `op` (rlx-opt reports FILE:LINE:COL there)."""

    def __init__(self, message: str, op: Operation):
        super().__init__(op, message)


def _malformed(message: str) -> PassFailedException:
    """An error in the pass options themselves: there is no op to point at."""
    return PassFailedException(message)


# Bindings --------------------------------------------------------------------


@dataclass(frozen=True)
class Binding:
    """One `NAME=DIMS` option; None in `dims` stands for `?` (keep that dim)."""

    name: str
    dims: tuple[int | None, ...]

    def __str__(self) -> str:
        return f"{self.name}=" + "x".join("?" if d is None else str(d) for d in self.dims)


def _parse_dim(text: str, binding: str) -> int | None:
    if text == "?":
        return None
    if not text.isdigit():
        raise _malformed(
            f"malformed binding '{binding}': dimension '{text}' is not a non-negative integer or '?'"
        )
    return int(text)


def parse_binding(text: str) -> Binding:
    """`x=2x128` -> Binding("x", (2, 128)); `x=?x4` -> Binding("x", (None, 4))."""
    name, equals, dims = text.partition("=")
    if not (equals and name and dims):
        raise _malformed(f"malformed binding '{text}': expected NAME=DIMS, e.g. x=2x128 or x=?x4")
    return Binding(name, tuple(_parse_dim(d, text) for d in dims.split("x")))


def parse_bindings(specs: str | Iterable[str]) -> dict[str, Binding]:
    """Bindings by argument name; each option value may hold several, comma-separated."""
    if isinstance(specs, str):
        specs = (specs,)
    bindings: dict[str, Binding] = {}
    for spec in specs:
        for piece in (p.strip() for p in spec.split(",")):
            if not piece:
                continue
            binding = parse_binding(piece)
            if binding.name in bindings:
                raise _malformed(f"argument '{binding.name}' is bound twice")
            bindings[binding.name] = binding
    return bindings


# Which argument gets which type ------------------------------------------------


def bound_type(function: func.FuncOp, arg_name: str, old: Attribute, binding: Binding) -> TensorType:
    """`old` with `binding` applied, after checking its rank and static dims."""
    where = f"argument '{arg_name}' of @{function.sym_name.data}"
    if not isinstance(old, TensorType):
        raise SpecializeError(f"{where} has type {old}, not a ranked tensor", function)
    shape = old.get_shape()
    if len(binding.dims) != len(shape):
        raise SpecializeError(
            f"binding {binding} has rank {len(binding.dims)} but {where} has type {old} "
            f"(rank {len(shape)})",
            function,
        )
    for axis, (current, wanted) in enumerate(zip(shape, binding.dims)):
        if wanted is not None and current not in (DYNAMIC, wanted):
            raise SpecializeError(
                f"binding {binding} sets dimension {axis} of {where} to {wanted}, "
                f"but it is statically {current} ({old})",
                function,
            )
    new_shape = [current if wanted is None else wanted for current, wanted in zip(shape, binding.dims)]
    return TensorType(old.element_type, new_shape)


def bound_argument_types(function: func.FuncOp, bindings: dict[str, Binding]) -> list[Attribute]:
    """The function's argument types with every binding that names one of them applied."""
    return [
        bound_type(function, name, arg.type, bindings[name]) if name in bindings else arg.type
        for name, arg in zip(argument_names(function), function.body.block.args)
    ]


def _select_functions(module: ModuleOp, name: str | None) -> list[func.FuncOp]:
    functions = [op for op in module.walk() if isinstance(op, func.FuncOp) and not op.is_declaration]
    if name is None:
        return functions
    chosen = [f for f in functions if f.sym_name.data == name]
    if not chosen:
        raise SpecializeError(f"no function named '{name}'", module)
    return chosen


def _check_names_known(
    module: ModuleOp, functions: Sequence[func.FuncOp], bindings: dict[str, Binding]
) -> None:
    known = {name for f in functions for name in argument_names(f)}
    unknown = next((name for name in bindings if name not in known), None)
    if unknown is None:
        return
    message = f"unknown argument '{unknown}': "
    if len(functions) == 1:
        (f,) = functions
        listed = ", ".join(argument_names(f)) or "none"
        raise SpecializeError(message + f"@{f.sym_name.data} has arguments {listed}", f)
    raise SpecializeError(message + "no function has an argument of that name", module)


# Re-inference --------------------------------------------------------------------


class _TypeJournal:
    """Every type change made so far, so that a failed specialisation can be undone."""

    def __init__(self) -> None:
        self._args: list[tuple[Block, int, Attribute]] = []
        self._results: list[tuple[Operation, list[Attribute]]] = []
        self._signatures: list[tuple[func.FuncOp, FunctionType]] = []
        self._retyped: set[SSAValue] = set()

    def set_arg_type(self, block: Block, index: int, new_type: Attribute) -> None:
        old = block.args[index].type
        if old != new_type:
            self._args.append((block, index, old))
            self._retyped.add(Rewriter.replace_value_with_new_type(block.args[index], new_type))

    def refresh(self, op: RlxOperation) -> None:
        old = [result.type for result in op.results]
        if op.refresh_result_types():
            self._results.append((op, old))
            self._retyped.update(op.results)

    def changed_any(self) -> bool:
        """Whether any argument or result got a new type (the signatures follow them)."""
        return bool(self._args or self._results)

    def retyped_any(self, values: Sequence[SSAValue]) -> bool:
        """Whether any of `values` got a new type so far."""
        return any(v in self._retyped for v in values)

    def update_signature(self, function: func.FuncOp) -> None:
        self._signatures.append((function, function.function_type))
        function.update_function_type()

    def undo(self) -> None:
        for function, signature in reversed(self._signatures):
            function.function_type = signature
        for op, types in reversed(self._results):
            for result, old in zip(op.results, types):
                if result.type != old:
                    Rewriter.replace_value_with_new_type(result, old)
        for block, index, old in reversed(self._args):
            Rewriter.replace_value_with_new_type(block.args[index], old)


def _refresh_block(block: Block, journal: _TypeJournal, reason: str) -> None:
    """Re-infer every op of `block` in program order, each region body before its op.

    Entry-block arguments of a region first take the types the op states for
    them (`RegionSignatureInterface`). An op whose result types cannot be
    re-derived (not an RLX op) is an error once one of its operand types changed.
    """
    for op in block.ops:
        for region in op.regions:
            if isinstance(op, RegionSignatureInterface):
                for index, new_type in enumerate(op.region_arg_types(region)):
                    journal.set_arg_type(region.block, index, new_type)
            for inner in region.blocks:
                _refresh_block(inner, journal, reason)
        if isinstance(op, RlxOperation):
            try:
                journal.refresh(op)
            except VerifyException as error:
                raise SpecializeError(
                    f"cannot infer the result type of '{op.name}' after {reason}: {error}", op
                ) from error
        elif op.results and journal.retyped_any(op.operands):
            raise SpecializeError(
                f"cannot re-infer the result types of '{op.name}' after {reason}: it is not an RLX op "
                "and one of its operand types changed",
                op,
            )


def _retype(
    function: func.FuncOp, arg_types: Sequence[Attribute], journal: _TypeJournal, reason: str
) -> None:
    """Set the argument types, re-infer every result type, rebuild the signature."""
    block = function.body.block
    for index, new_type in enumerate(arg_types):
        journal.set_arg_type(block, index, new_type)
    for inner in function.body.blocks:
        _refresh_block(inner, journal, reason)
    journal.update_signature(function)


def set_argument_types(
    plans: Sequence[tuple[func.FuncOp, Sequence[Attribute]]], reason: str = "changing argument types"
) -> bool:
    """Give functions new argument types and re-infer all their types, all or nothing;
    whether any type changed.

    Raises `SpecializeError` at the first op whose inference fails (its message
    says why, after `reason`), leaving every function as it was.
    """
    journal = _TypeJournal()
    try:
        for function, arg_types in plans:
            _retype(function, arg_types, journal, reason)
    except BaseException:
        journal.undo()
        raise
    return journal.changed_any()


def specialize(module: ModuleOp, bindings: dict[str, Binding], function_name: str | None = None) -> bool:
    """Apply `bindings` to the arguments of the selected functions of `module`; whether any
    type changed (binding dims to the sizes they have changes nothing)."""
    if not bindings:
        return False
    functions = _select_functions(module, function_name)
    _check_names_known(module, functions, bindings)
    plans = [(f, bound_argument_types(f, bindings)) for f in functions]
    bound = sum(new != arg.type for f, types in plans for arg, new in zip(f.body.block.args, types))
    changed = set_argument_types(plans, "binding " + ", ".join(str(b) for b in bindings.values()))
    BOUND.add(bound if changed else 0)
    return changed


@dataclass(frozen=True)
class SpecializeShapesPass(ReportsChanges, ModulePass):
    """Bind dynamic argument dims to static sizes and re-infer every type.

    `shapes` holds NAME=DIMS bindings (`x=2x128`; `?` keeps a dim; NAME is the
    argument's rlx.name or argN): `rlx-specialize{shapes=x=2x128,w=?x64 func=main}`
    in rlx-opt (stock xdsl-opt needs each binding quoted: `shapes="x=2x128"`).
    `func` restricts the pass to one function (default: every function with
    those arguments).
    """

    name = "rlx-specialize"
    STATISTICS = (BOUND,)

    shapes: tuple[str, ...] = field(default=(), metadata={"syntax": "NAME=DIMS,...", "example": "x=2x8x32"})
    func: str | None = field(default=None, metadata={"syntax": "NAME"})

    def apply_and_report(self, ctx: Context, op: ModuleOp) -> bool:
        return specialize(op, parse_bindings(self.shapes), self.func)
