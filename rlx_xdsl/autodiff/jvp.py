"""`rlx-jvp`: forward-mode autodiff as an IR-to-IR rewrite of one function.

`rlx-jvp{func=f wrt=x,w}` adds

    @f_jvp(<the arguments of @f>, t_x, t_w) -> (<the results of @f>, <their tangents>)

the Jacobian-vector products of every result of `@f` with the tangents of the
`wrt` arguments (named by `rlx.name`, `argN` or position; default: the
`rlx.param` arguments). The tangent arguments are named `tangent_<name>`.

The JVP function is a copy of `@f` (which is left unchanged) in which each op
on a path from a `wrt` argument is followed by the tangent ops its rule
(`JVP_RULES`) emits. Tangents are *symbolically* zero until a `wrt` argument
reaches them: nothing is emitted for an op none of whose DATA operands has a
tangent (so arguments outside `wrt` cost nothing), and a result whose tangent
stays zero gets a zeros constant only at the return. Only floating-point values
carry tangents; index, label, predicate and mask operands carry none.

An op on a tangent path without a rule is an error located at that op (with the
`rlx-prepare-ad` step that would remove it, as `rlx-grad` says), and so is a
`NoJvpRule`'s reason. Region ops are rebuilt over (primal, tangent) pairs by
their rules, with `jvp_region` pushing tangents through their bodies.

Running the pass again on the same function is a no-op when `@f_jvp` is the
function it would build, and an error when a different `@f_jvp` exists.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, ModuleOp, StringAttr
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint
from xdsl.traits import SymbolTable
from xdsl.utils.exceptions import PassFailedException

from rlx_xdsl import layers
from rlx_xdsl.autodiff.emit import zeros_like
from rlx_xdsl.autodiff.grad import (
    _arg_attrs,
    _find_function,
    _is_complex,
    _prepare_hint,
    carries_gradient,
    replace_return,
    resolve_wrt,
)
from rlx_xdsl.autodiff.jvp_registry import JVP_RULES, Rebuilt
from rlx_xdsl.autodiff.registry import COMPLEX_RULES, Unsupported
from rlx_xdsl.dialects.base import types_compatible
from rlx_xdsl.dialects.mir.regions import YieldOp
from rlx_xdsl.dialects.traits import data_operands
from rlx_xdsl.ir.diagnostics import OpError
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.ir.graph import NAME_ATTR, argument_name
from rlx_xdsl.transforms.dce import eliminate_dead_code, eliminate_dead_code_in_block
from rlx_xdsl.transforms.statistics import Statistic

JVP_RULES_USED = Statistic("num-jvp-rules", "Number of JVP rules applied")

TANGENT_PREFIX = "tangent_"
"""The `rlx.name` of a tangent argument is this prefix and the argument's name (as RLX's)."""


@dataclass
class ForwardSweep:
    """State of one forward sweep over a block: the tangent of each value that has one."""

    block: Block
    originals: dict[Operation, Operation]
    """Op in the block -> the op to locate errors at (the user's)."""
    who: str = "rlx-jvp"
    tangents: dict[SSAValue, SSAValue] = field(default_factory=dict[SSAValue, SSAValue])

    def run(self, stop: Operation) -> None:
        """Push tangents through every op before `stop`, emitting right after each op."""
        for op in list(self.block.ops):
            if op is stop:
                break
            tangents = [
                self.tangents.get(v) if i in data else None
                for data in [set(data_operands(op))]
                for i, v in enumerate(op.operands)
            ]
            if all(t is None for t in tangents):
                continue
            next_op = op.next_op
            assert next_op is not None
            e = Emitter(Builder(InsertPoint.before(next_op)), op.location)
            out = self._apply_rule(e, op, tangents)
            results = list(op.results)
            if isinstance(out, Rebuilt):
                for old, new in zip(results, out.primals, strict=True):
                    old.replace_all_uses_with(new)
                results, out = list(out.primals), out.tangents
            self._record(op, results, out)

    def _apply_rule(self, e: Emitter, op: Operation, tangents: list[SSAValue | None]):
        original = self.originals.get(op, op)
        rule = JVP_RULES.lookup(op)
        if rule is None:
            raise OpError(original, f"'{self.who}' no JVP rule for '{op.name}'{_prepare_hint(op)}")
        complex_rule = COMPLEX_RULES.lookup(op)  # the rules known to hold on complex values, as rlx-grad's
        if any(t is not None and _is_complex(t) for t in tangents) and not (complex_rule and complex_rule(op)):
            raise OpError(
                original, f"'{self.who}' no complex JVP rule for '{op.name}': its rule holds for real values only"
            )
        try:
            out = rule(e, op, tangents)
        except Unsupported as error:
            raise OpError(original, f"'{self.who}' cannot differentiate '{op.name}': {error}") from error
        JVP_RULES_USED.add()
        return out

    def _record(self, op: Operation, results: Sequence[SSAValue], out: Sequence[SSAValue | None]) -> None:
        original = self.originals.get(op, op)
        if len(out) != len(results):
            raise OpError(
                original,
                f"'{self.who}' the JVP rule of '{op.name}' returned {len(out)} tangents "
                f"for {len(results)} results",
            )
        for index, (result, tangent) in enumerate(zip(results, out)):
            if tangent is None or not carries_gradient(result):
                continue
            if not types_compatible(tangent.type, result.type):
                raise OpError(
                    original,
                    f"'{self.who}' the JVP rule of '{op.name}' returned a tangent of type "
                    f"{tangent.type} for result #{index} of type {result.type}",
                )
            self.tangents[result] = tangent


def _tangent_name(name: str | None) -> str | None:
    if name and SSAValue.is_valid_name(f"t_{name}"):
        return f"t_{name}"
    return None


def jvp_function(function: func.FuncOp, indices: Sequence[int], name: str, who: str = "rlx-jvp") -> func.FuncOp:
    """A new function `name(args..., t_wrt...) -> (results..., tangents...)`, not inserted anywhere."""
    layers.load("vjp"), layers.load("jvp")
    for index in indices:
        arg = function.body.block.args[index]
        if not carries_gradient(arg):
            raise OpError(
                function,
                f"'{who}' argument '{argument_name(function, index)}' of @{function.sym_name.data} "
                f"has type {arg.type}, which carries no tangent (only floating-point tensors do)",
            )
    copy = function.clone()
    copy.sym_name = StringAttr(name)
    block = copy.body.block
    originals = dict(zip(block.ops, function.body.block.ops, strict=True))
    sweep = ForwardSweep(block, originals, who)
    attrs = [DictionaryAttr(a) for a in _arg_attrs(copy)]
    for index in indices:
        arg = block.args[index]
        tangent = block.insert_arg(arg.type, len(block.args))
        tangent.name_hint = _tangent_name(arg.name_hint)
        attrs.append(DictionaryAttr({NAME_ATTR: StringAttr(TANGENT_PREFIX + argument_name(function, index))}))
        sweep.tangents[arg] = tangent
    copy.arg_attrs = ArrayAttr(attrs)

    terminator = block.last_op
    assert isinstance(terminator, func.ReturnOp)
    sweep.run(terminator)
    outputs = list(terminator.arguments)
    e = Emitter(Builder(InsertPoint.before(terminator)), terminator.location)
    tangents = [sweep.tangents.get(v) or zeros_like(e, v) for v in outputs]
    replace_return(copy, [*outputs, *tangents])
    eliminate_dead_code(copy)
    return copy


def jvp_region(
    body: Region,
    active: Sequence[bool],
    groups: Sequence[int],
    required: Sequence[bool] | None = None,
    take: bool = False,
) -> tuple[Region, list[bool]]:
    """The region counterpart of `rlx-jvp`: `(a..., ta...) -> (y..., ty...)` per argument group.

    `body`'s arguments come in `groups` (a scan's carries, bcasts and xs); the
    tangent of each `active` argument is a new argument placed after its group,
    so a group `(c...)` becomes `(c..., tc...)`. The body yields its values, then
    the tangents of those that have one or are `required` (zeros when required
    but zero). Returns the region and which yields got a tangent.

    `take` moves `body`'s block into the new region instead of copying it (for a
    rule whose rebuilt op replaces the op holding `body`): a region nested d
    levels deep is then never copied once per enclosing level, which keeps the
    pass linear in the nesting depth.
    """
    region = Region()
    if take:
        body.move_blocks(region)
    else:
        body.clone_into(region)
    block = region.block
    terminator = block.last_op
    assert isinstance(terminator, YieldOp)
    sweep = ForwardSweep(block, {}, "rlx-jvp")
    args = list(block.args)
    position = start = 0
    for size in groups:
        position += size
        for arg, is_active in zip(args[start : start + size], active[start : start + size]):
            if is_active:
                tangent = block.insert_arg(arg.type, position)
                tangent.name_hint = _tangent_name(arg.name_hint)
                sweep.tangents[arg] = tangent
                position += 1
        start += size
    sweep.run(terminator)
    values = list(terminator.values)
    present = [sweep.tangents.get(v) is not None for v in values]
    tangents = [sweep.tangents[v] for v, p in zip(values, present) if p]
    block.insert_op_before(YieldOp(*values, *tangents), terminator)
    block.erase_op(terminator)
    if required is not None:
        present = require_tangents(region, present, required)
    eliminate_dead_code_in_block(block)
    return region, present


def require_tangents(region: Region, present: Sequence[bool], required: Sequence[bool]) -> list[bool]:
    """Make `region` (as `jvp_region` returns it) also yield zero tangents where `required`.

    `region` yields its n values, then the tangents of those `present`; afterwards
    it yields a tangent for each value `present` or `required` (zeros for a
    missing one), in value order. Returns which values now yield one. Padding the
    yield, rather than pushing the body forward again, keeps nested regions
    (an `if` in an `if`'s branch) linear in their depth.
    """
    wanted = [p or r for p, r in zip(present, required, strict=True)]
    if wanted == list(present):
        return wanted
    terminator = region.block.last_op
    assert isinstance(terminator, YieldOp)
    operands = list(terminator.values)
    values, given = operands[: len(present)], iter(operands[len(present) :])
    e = Emitter(Builder(InsertPoint.before(terminator)), terminator.location)
    tangents = [next(given) if p else zeros_like(e, v) for v, p, w in zip(values, present, wanted) if w]
    e.insert(YieldOp(*values, *tangents))
    region.block.erase_op(terminator)
    return wanted


def find_function(module: ModuleOp, name: str, who: str) -> func.FuncOp:
    """`@name`; a missing one is an error located at the module."""
    try:
        return _find_function(module, name, who)
    except PassFailedException as error:
        raise OpError(module, str(error)) from None


def _tangent_args(function: func.FuncOp, module: ModuleOp, who: str, wrt: Sequence[str]) -> list[int]:
    return resolve_wrt(function, wrt, who)


def add_function(module: ModuleOp, after: func.FuncOp, built: func.FuncOp, who: str) -> func.FuncOp:
    """Insert `built` after `after`; an identical function of that name is kept (a second run)."""
    name = built.sym_name.data
    existing = SymbolTable.lookup_symbol(module, name)
    if existing is not None:
        if existing.is_structurally_equivalent(built):
            return existing  # type: ignore[return-value]
        raise OpError(existing, f"'{who}' cannot add @{name}: a different symbol of that name exists")
    module.body.block.insert_op_after(built, after)
    return built


def build_jvp(module: ModuleOp, name: str, wrt: Sequence[str] = ()) -> func.FuncOp:
    """Add `@<name>_jvp` to `module` (see the module docstring) and return it."""
    function = find_function(module, name, "rlx-jvp")
    indices = _tangent_args(function, module, "rlx-jvp", wrt)
    return add_function(module, function, jvp_function(function, indices, f"{name}_jvp"), "rlx-jvp")


@dataclass(frozen=True)
class JvpPass(ModulePass):
    """Add `@FUNC_jvp` returning the results of `@FUNC` and their tangents (forward mode).

    `rlx-jvp{func=f wrt=x,w}`: `@f_jvp` takes `@f`'s arguments and one tangent per
    `wrt` argument (named `tangent_<name>`), and returns `@f`'s results followed by
    their Jacobian-vector products. `wrt` names arguments by rlx.name or position
    (default: the rlx.param arguments). Nothing is emitted for values no `wrt`
    argument reaches; a result whose tangent is zero returns zeros.

    Run `rlx-prepare-ad` first when the function has fused ops.
    """

    name = "rlx-jvp"
    STATISTICS = (JVP_RULES_USED,)

    func: str = field(metadata={"syntax": "NAME", "example": "f"})
    wrt: tuple[str | int, ...] = field(default=(), metadata={"syntax": "NAME|POSITION,..."})

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        build_jvp(op, self.func, [str(w) for w in self.wrt])
