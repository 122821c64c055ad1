"""`rlx-grad`: reverse-mode autodiff as an IR-to-IR rewrite of one function.

`rlx-grad{func=loss wrt=w1,b1 mode=strict}` differentiates the first result of
`@loss` (the loss, of any shape) and adds `@loss_grad`:

    @loss_grad(<the arguments of @loss>, %d_output) -> (loss, aux..., d_wrt0, d_wrt1, ...)

* `d_output` (the loss's type, `rlx.name = "d_output"`) seeds the sweep: the
  results are the vector-Jacobian products with it (pass ones for a plain gradient);
* the aux results are `@loss`'s other results, passed through;
* `wrt` names arguments by `rlx.name` (or `argN`) or by position (`0`, `2`);
  omitted, it is every `rlx.param` argument;
* `mode=strict` (the default): an argument that no gradient reaches is an
  error located where its path to the loss is cut (or at the function), saying
  why; `mode=training`: its gradient is zeros of its type;
* `loss=drop` leaves the loss out of the results, `(aux..., d_wrt0, ...)`: RLX's
  `grad()`, which is `grad_with_loss` with its first output dropped; the default
  `loss=keep` is `grad_with_loss`. Forward ops only the loss needed are removed.

As RLX's `grad_with_loss` does, the gradient function first recomputes the
forward (a copy of `@loss`'s body; `@loss` itself is left unchanged), then
walks the copied ops in reverse, calling each op's VJP rule (`VJP_RULES`) with
the cotangents of its results, and sums the cotangents of values with several
uses. Only floating-point values carry gradients: integer and `i1` values, and
operands with a non-DATA role (indices, labels, predicates, masks), carry none.
Ops that need no gradient (off every path from a `wrt` argument to the loss)
need no rule; an op on such a path without a rule is an error naming the op.
Backward ops nobody uses (gradients of operands off the path) are removed at
the end, by `rlx-dce`'s sweep of the new function.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ArrayAttr,
    ComplexType,
    DictionaryAttr,
    ModuleOp,
    StringAttr,
    TensorType,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint
from xdsl.traits import SymbolTable
from xdsl.utils.exceptions import PassFailedException

from rlx_xdsl import dtypes, layers
from rlx_xdsl.autodiff.emit import zeros_like
from rlx_xdsl.autodiff.registry import COMPLEX_RULES, VJP_RULES, Unsupported, no_gradient
from rlx_xdsl.dialects.base import types_compatible
from rlx_xdsl.dialects.traits import data_operands, operand_roles
from rlx_xdsl.ir.diagnostics import OpError
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.ir.graph import (
    GRADIENT_SEED,
    NAME_ATTR,
    PARAM_ATTR,
    argument_name,
    argument_names,
    result_name,
    set_result_names,
)
from rlx_xdsl.transforms.dce import eliminate_dead_code
from rlx_xdsl.transforms.statistics import Statistic

VJP_RULES_USED = Statistic("num-vjp-rules", "Number of VJP rules applied")

D_OUTPUT = GRADIENT_SEED
"""The name of the seed argument (RLX's `Input "d_output"`)."""


class Loss(Enum):
    """Whether the gradient function returns the loss (its first result) or not."""

    KEEP = "keep"
    """`(loss, aux..., grads...)`: RLX's `grad_with_loss`."""
    DROP = "drop"
    """`(aux..., grads...)`: RLX's `grad()`."""


class Mode(Enum):
    """What to do with a `wrt` argument that no gradient reaches."""

    STRICT = "strict"
    """Report it (RLX's `GradWithLossOptions::STRICT`, which panics)."""
    TRAINING = "training"
    """Return zeros of its type (RLX's `TRAINING`: an optimiser step updates every parameter)."""


def _is_complex(value: SSAValue) -> bool:
    return isinstance(value.type, TensorType) and isinstance(value.type.element_type, ComplexType)


def carries_gradient(value: SSAValue) -> bool:
    """Floating-point and complex tensors have gradients (integers and `i1` do not)."""
    return isinstance(value.type, TensorType) and (
        dtypes.is_float(value.type.element_type) or isinstance(value.type.element_type, ComplexType)
    )


# Which argument the user means -------------------------------------------------------


def resolve_wrt(function: func.FuncOp, wrt: Sequence[str], who: str = "rlx-grad") -> list[int]:
    """Argument indices named by `wrt` (`rlx.name`, `argN` or a position); default: the params.
    A name that is not there, or no params, is an `OpError` at the function."""
    names = argument_names(function)
    if not wrt:
        params = [i for i, attrs in enumerate(_arg_attrs(function)) if PARAM_ATTR in attrs]
        if not params:
            raise OpError(
                function,
                f"'{who}' @{function.sym_name.data} has no rlx.param argument: name the "
                "arguments to differentiate with wrt=NAME,..."
            )
        return params
    indices = []
    for spec in wrt:
        if spec.isdigit() and int(spec) < len(names):
            indices.append(int(spec))
        elif spec in names:
            indices.append(names.index(spec))
        else:
            raise OpError(
                function,
                f"'{who}' @{function.sym_name.data} has no argument '{spec}' "
                f"(its arguments: {', '.join(names) or 'none'}; positions 0..{len(names) - 1})"
            )
    return indices


def _arg_attrs(function: func.FuncOp) -> list[dict[str, Attribute]]:
    count = len(function.body.block.args)
    if function.arg_attrs is None:
        return [{} for _ in range(count)]
    return [dict(entry.data) for entry in function.arg_attrs.data if isinstance(entry, DictionaryAttr)]


# The gradient function ----------------------------------------------------------------


@dataclass
class ReverseSweep:
    """State of one reverse sweep over the copied forward block."""

    block: Block
    originals: dict[Operation, Operation]
    """Copied op -> forward op, for diagnostics located in the user's function."""
    active: set[SSAValue] = field(default_factory=set[SSAValue])
    """Values that depend differentiably on a `wrt` argument."""
    cotangents: dict[SSAValue, SSAValue] = field(default_factory=dict[SSAValue, SSAValue])

    def mark_active(self, seeds: Sequence[SSAValue]) -> None:
        """Forward pass: results of ops with an active DATA operand become active."""
        self.active.update(v for v in seeds if carries_gradient(v))
        for op in self.block.ops:
            if any(op.operands[i] in self.active for i in data_operands(op)):
                self.active.update(r for r in op.results if carries_gradient(r))

    def accumulate(self, e: Emitter, value: SSAValue, cotangent: SSAValue) -> None:
        previous = self.cotangents.get(value)
        self.cotangents[value] = cotangent if previous is None else e.mir.add(previous, cotangent)

    def run(self, before: Operation) -> None:
        """Reverse pass: call each op's rule with its results' cotangents, before `before`."""
        builder = Builder(InsertPoint.before(before))
        for op in reversed(list(self.block.ops)):
            if op is before:
                continue
            cotangents = [self.cotangents.get(r) for r in op.results]
            if all(c is None for c in cotangents):
                continue
            needed = [i for i in data_operands(op) if op.operands[i] in self.active]
            if not needed:
                continue
            e = Emitter(builder, op.location)
            gradients = self._apply_rule(e, op, cotangents)
            for index in needed:
                gradient = gradients[index]
                if callable(gradient):
                    gradient = self._emit_deferred(op, gradient)
                if gradient is not None:
                    self._check_type(op, index, gradient)
                    self.accumulate(e, op.operands[index], gradient)

    def _emit_deferred(self, op: Operation, gradient) -> SSAValue | None:
        """Call a rule's deferred gradient; its `Unsupported` is located like the rule's own."""
        try:
            return gradient()
        except Unsupported as error:
            raise OpError(self.originals[op], f"'rlx-grad' cannot differentiate '{op.name}': {error}") from error

    def _apply_rule(self, e: Emitter, op: Operation, cotangents: list[SSAValue | None]):
        original = self.originals[op]
        rule = VJP_RULES.lookup(op)
        if rule is None:
            raise OpError(original, f"'rlx-grad' no VJP rule for '{op.name}'{_prepare_hint(op)}")
        complex_rule = COMPLEX_RULES.lookup(op)
        if self._touches_complex(op, cotangents) and not (complex_rule and complex_rule(op)):
            raise OpError(
                original,
                f"'rlx-grad' no complex VJP rule for '{op.name}': its rule holds for real values only",
            )
        try:
            gradients = rule(e, op, cotangents)
        except Unsupported as error:
            raise OpError(original, f"'rlx-grad' cannot differentiate '{op.name}': {error}") from error
        VJP_RULES_USED.add()
        if len(gradients) != len(op.operands):
            raise OpError(
                original,
                f"'rlx-grad' the VJP rule of '{op.name}' returned {len(gradients)} gradients "
                f"for {len(op.operands)} operands",
            )
        return gradients

    def _touches_complex(self, op: Operation, cotangents: Sequence[SSAValue | None]) -> bool:
        """A complex cotangent reaches the op, or one of its complex operands needs a gradient."""
        return any(c is not None and _is_complex(c) for c in cotangents) or any(
            _is_complex(v) and v in self.active for v in op.operands
        )

    def _check_type(self, op: Operation, index: int, gradient: SSAValue) -> None:
        expected = op.operands[index].type
        if not types_compatible(gradient.type, expected):
            raise OpError(
                self.originals[op],
                f"'rlx-grad' the VJP rule of '{op.name}' returned a gradient of type "
                f"{gradient.type} for operand #{index} of type {expected}",
            )


def _prepare_hint(op: Operation) -> str:
    from rlx_xdsl.autodiff.prepare import step_rewriting

    step = step_rewriting(op)
    return f" (the '{step}' step of rlx-prepare-ad rewrites it: run rlx-prepare-ad first)" if step else ""


def _copy_function(function: func.FuncOp, name: str) -> tuple[func.FuncOp, dict[Operation, Operation]]:
    """A copy of `function` named `name`, with a map from copied to original top-level ops."""
    copy = function.clone()
    copy.sym_name = StringAttr(name)
    originals = dict(zip(copy.body.block.ops, function.body.block.ops, strict=True))
    return copy, originals


def _add_seed(copy: func.FuncOp, loss: SSAValue) -> SSAValue:
    block = copy.body.block
    seed = block.insert_arg(loss.type, len(block.args))
    seed.name_hint = D_OUTPUT
    attrs = [DictionaryAttr(a) for a in _arg_attrs(copy)]
    attrs.append(DictionaryAttr({NAME_ATTR: StringAttr(D_OUTPUT)}))
    copy.arg_attrs = ArrayAttr(attrs)
    return seed


def build_gradient(
    module: ModuleOp, name: str, wrt: Sequence[str] = (), mode: Mode = Mode.STRICT, loss: Loss = Loss.KEEP
) -> func.FuncOp:
    """Add `@<name>_grad` to `module` (see the module docstring) and return it."""
    layers.load("vjp")
    function = _find_function(module, name)
    grad_name = f"{name}_grad"
    existing = SymbolTable.lookup_symbol(module, grad_name)
    if existing is not None:
        raise OpError(existing, f"'rlx-grad' cannot add @{grad_name}: the symbol already exists")
    forward_return = function.body.block.last_op
    assert isinstance(forward_return, func.ReturnOp)
    if not forward_return.arguments:
        raise OpError(function, f"'rlx-grad' @{name} returns nothing: its first result is the loss")
    indices = resolve_wrt(function, wrt)
    loss_type = forward_return.arguments[0].type
    if not (isinstance(loss_type, TensorType) and dtypes.is_float(loss_type.element_type)):
        raise OpError(
            forward_return,
            f"'rlx-grad' the loss (result #0) must be a floating-point tensor, got {loss_type}",
        )

    copy, originals = _copy_function(function, grad_name)
    block = copy.body.block
    copy_return = block.last_op
    assert isinstance(copy_return, func.ReturnOp)
    outputs = list(copy_return.arguments)
    seed = _add_seed(copy, outputs[0])

    sweep = ReverseSweep(block, originals)
    sweep.mark_active([block.args[i] for i in indices])
    if outputs[0] in sweep.active:
        sweep.cotangents[outputs[0]] = seed
    sweep.run(copy_return)

    gradients = []
    e = Emitter(Builder(InsertPoint.before(copy_return)), copy_return.location)
    for index in indices:
        arg = block.args[index]
        gradient = sweep.cotangents.get(arg)
        if gradient is None:
            if mode is Mode.STRICT:
                raise _no_gradient_error(function, index, forward_return.arguments[0])
            gradient = zeros_like(e, arg)
        if gradient.name_hint is None and arg.name_hint and SSAValue.is_valid_name(f"d_{arg.name_hint}"):
            gradient.name_hint = f"d_{arg.name_hint}"
        gradients.append(gradient)

    forward_names = [result_name(function, i) for i in range(len(outputs))]
    forward_names[0] = forward_names[0] or "loss"
    gradient_names = [f"d_{argument_name(function, index)}" for index in indices]
    kept = slice(None) if loss is Loss.KEEP else slice(1, None)
    replace_return(copy, [*outputs[kept], *gradients], [*forward_names[kept], *gradient_names])
    eliminate_dead_code(copy)
    module.body.block.insert_op_after(copy, function)
    return copy


def replace_return(
    function: func.FuncOp, values: Sequence[SSAValue], names: Sequence[str | None] | None = None
) -> None:
    """Make `function` return `values` (at its old return's location) and update its type;
    `names` are the results' `rlx.name`s (default: none)."""
    block = function.body.block
    old = block.last_op
    assert isinstance(old, func.ReturnOp)
    new = func.ReturnOp(*values)
    new.location = old.location
    block.insert_op_before(new, old)
    block.erase_op(old)
    function.update_function_type()
    set_result_names(function, names or [None] * len(values))


def _find_function(module: ModuleOp, name: str, who: str = "rlx-grad") -> func.FuncOp:
    found = SymbolTable.lookup_symbol(module, name)
    if not isinstance(found, func.FuncOp):
        functions = [op.sym_name.data for op in module.ops if isinstance(op, func.FuncOp)]
        raise PassFailedException(
            f"'{who}' no function named @{name} "
            f"(functions: {', '.join('@' + f for f in functions) or 'none'})"
        )
    return found


# Why no gradient reaches an argument --------------------------------------------------


def _no_gradient_error(function: func.FuncOp, index: int, loss: SSAValue) -> OpError:
    """A strict-mode error for argument `index`, located where its paths are cut."""
    arg = function.body.block.args[index]
    name = argument_name(function, index)
    if arg.name_hint and arg.name_hint != name:
        name += f"' (%{arg.name_hint})"
    else:
        name += "'"
    who = f"'rlx-grad' no gradient reaches argument '{name} of @{function.sym_name.data}"
    advice = " (mode=training returns zeros instead)"
    if not carries_gradient(arg):
        return OpError(function, f"{who}: its type {arg.type} carries no gradient{advice}")
    if arg.first_use is None:
        return OpError(function, f"{who}: it is not used{advice}")
    reached, cuts = _forward_reach(function.body.block, arg)
    if cuts:
        where = ", ".join(dict.fromkeys(reason for _, reason in cuts))
        return OpError(cuts[0][0], f"{who}: its paths to the loss are cut by {where}{advice}")
    if loss not in reached:
        return OpError(function, f"{who}: the loss does not depend on it{advice}")
    return OpError(function, f"{who}: the derivatives along its paths to the loss are zero{advice}")


def _forward_reach(block: Block, arg: SSAValue) -> tuple[set[SSAValue], list[tuple[Operation, str]]]:
    """Values depending differentiably on `arg`, and the ops where that dependence stops."""
    reached = {arg}
    cuts: list[tuple[Operation, str]] = []
    for op in block.ops:
        roles = operand_roles(op)
        used = [i for i, v in enumerate(op.operands) if v in reached]
        if not used:
            continue
        data = [i for i in used if roles[i].is_data]
        if len(data) < len(used):
            role = next(roles[i] for i in used if not roles[i].is_data)
            cuts.append((op, f"the {role.value} operand of '{op.name}'"))
        if not data:
            continue
        produced = [r for r in op.results if carries_gradient(r)]
        if VJP_RULES.lookup(op) is no_gradient:
            cuts.append((op, f"'{op.name}'"))
        elif not produced and op.results and not isinstance(op, func.ReturnOp):
            cuts.append((op, f"'{op.name}' (its results carry no gradient)"))
        else:
            reached.update(produced)
    return reached, cuts


@dataclass(frozen=True)
class GradPass(ModulePass):
    """Add `@FUNC_grad` returning the loss, aux results and the gradients of `wrt`.

    `rlx-grad{func=loss wrt=w,b mode=training}`: `func` names the function whose
    first result is the loss; `wrt` names arguments by rlx.name or position
    (default: the rlx.param arguments). `@FUNC_grad` takes `@FUNC`'s arguments and
    a last argument `d_output` of the loss's type, the seed of the backward sweep
    (ones give the plain gradient; `rlx-run` passes ones unless told otherwise).

    `mode` says what happens to a `wrt` argument that no gradient reaches (the
    loss does not depend on it, or only through integer values or index, label,
    predicate or mask operands): `mode=strict` (the default) is an error located
    where its path to the loss is cut, saying why, since asking for a gradient
    that is always zero is usually a mistake in the graph; `mode=training` gives
    it a gradient of zeros of its type, as a training loop over all parameters
    wants (a parameter this loss does not use stays where it is).

    `loss=drop` returns no loss, only aux results and gradients (RLX's `grad()`;
    default `loss=keep`).

    Run `rlx-prepare-ad` first when the function has fused or control-flow ops.
    """

    name = "rlx-grad"
    STATISTICS = (VJP_RULES_USED,)

    func: str = field(metadata={"syntax": "NAME", "example": "loss"})
    wrt: tuple[str | int, ...] = field(default=(), metadata={"syntax": "NAME|POSITION,..."})
    mode: str = field(default="strict", metadata={"syntax": "strict|training", "example": "training"})
    loss: str = field(default="keep", metadata={"syntax": "keep|drop", "example": "drop"})

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        try:
            mode = Mode(self.mode)
        except ValueError:
            raise PassFailedException(
                f"'rlx-grad' mode must be strict or training, got '{self.mode}'"
            ) from None
        try:
            loss = Loss(self.loss)
        except ValueError:
            raise PassFailedException(f"'rlx-grad' loss must be keep or drop, got '{self.loss}'") from None
        build_gradient(op, self.func, [str(w) for w in self.wrt], mode, loss)
