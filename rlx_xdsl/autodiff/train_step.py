"""`rlx-train-step`: one optimizer step (loss, gradients, update) as one function.

`rlx-train-step{func=loss optimizer=adamw lr=1.0e-3}` adds

    @loss_train_step(<the arguments of @loss>, <state...>, %step)
        -> (loss, <updated params...>, <updated state...>)

* the parameters are `@loss`'s `rlx.param` arguments, in argument order;
* the state is, per parameter in that order, AdamW's first then second moment
  (`m_<name>`, `v_<name>`), or SGD's momentum buffer (`momentum_<name>`, only
  when `momentum` is not 0); each has its parameter's type and starts at zeros;
* `step` (`tensor<f32>`) is the number of this step, counting from 1: AdamW's
  bias correction reads it.

Sharding (ZeRO-3 / FSDP, docs/distributed.md): a parameter's `rlx.sharding`
is copied to its state arguments, and set on its updated value and updated
state among the results (`res_attrs`), so on a mesh the XLA backend keeps
parameter, gradient and state split alike (all-gathering the parameter for the
forward, reduce-scattering its gradient) and returns them where they came
from: a training loop feeds the results back without moving them.
`rlx-shard-params` writes such shardings on every large parameter.

The gradient is built exactly as `rlx-grad{func=loss mode=training}` builds it
(seeded with ones, so a non-scalar loss is summed; the loss's other results are
dropped), in a scratch copy of the module, and the update follows it in the
same function. The update is PyTorch's (`torch.optim.AdamW`, `torch.optim.SGD`,
single-tensor form, no amsgrad, nesterov or dampening):

    AdamW:  p <- p * (1 - lr * wd)
            m <- beta1 * m + (1 - beta1) * g
            v <- beta2 * v + (1 - beta2) * g * g
            p <- p - lr / (1 - beta1^step) * m / (sqrt(v) / sqrt(1 - beta2^step) + eps)
    SGD:    g <- g + wd * p
            b <- momentum * b + g            (b = g at step 1: the same, as b starts at zeros)
            p <- p - lr * b                  (p - lr * g without momentum)

Each parameter's update runs in its own dtype (the step is cast to it). A
parameter no gradient reaches gets a zero gradient, so weight decay and the
moments still move it (PyTorch skips a parameter whose `.grad` is None; see
docs/deviations.md). Mixed precision: run `rlx-amp{policy=torch-cuda low=bf16}`
after this pass: the matmuls of the forward and backward compute in bf16 while
the parameters, the state and the update (elementwise ops on f32 arguments,
which that policy promotes to f32) stay f32, as PyTorch's autocast with f32
master weights does.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, ModuleOp, StringAttr, f32
from xdsl.ir import Attribute, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint
from xdsl.traits import SymbolTable

from rlx_xdsl.autodiff.emit import cast_to, element_type, scalar
from rlx_xdsl.autodiff.grad import (
    VJP_RULES_USED,
    Mode,
    _arg_attrs,
    _find_function,
    build_gradient,
    replace_return,
)
from rlx_xdsl.autodiff.hvp import plain_gradient
from rlx_xdsl.ir.diagnostics import OpError
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.ir.graph import NAME_ATTR, argument_name, is_param
from rlx_xdsl.ir.sharding import SHARDING_ATTR
from rlx_xdsl.shapes import tensor
from rlx_xdsl.transforms.dce import eliminate_dead_code
from rlx_xdsl.transforms.statistics import Statistic

WHO = "rlx-train-step"
OPTIMIZERS = ("adamw", "sgd")
DEFAULT_WEIGHT_DECAY = {"adamw": 1e-2, "sgd": 0.0}
"""PyTorch's defaults (`torch.optim.AdamW`, `torch.optim.SGD`)."""


@dataclass
class Optimizer:
    """An optimizer's hyperparameters, as PyTorch names them."""

    kind: str
    lr: float
    beta1: float
    beta2: float
    eps: float
    weight_decay: float
    momentum: float
    emitted: dict[Attribute, tuple[SSAValue, SSAValue]] = field(default_factory=dict, compare=False)
    """The bias corrections emitted so far, by dtype (one function's build)."""

    def state_names(self, name: str) -> list[str]:
        """The names of one parameter's state arguments."""
        if self.kind == "adamw":
            return [f"m_{name}", f"v_{name}"]
        return [f"momentum_{name}"] if self.momentum else []

    def update(self, e: Emitter, p: SSAValue, g: SSAValue, state: list[SSAValue], step: SSAValue):
        """The updated parameter and state (one parameter, emitted in its dtype)."""
        if self.kind == "adamw":
            return self._adamw(e, p, g, state, step)
        return self._sgd(e, p, g, state)

    def _bias_corrections(self, e: Emitter, step: SSAValue, dtype: Attribute) -> tuple[SSAValue, SSAValue]:
        """`(1 - beta1^step, 1 - beta2^step)` in `dtype`, emitted once per dtype (kept in `self.emitted`)."""
        if dtype in self.emitted:
            return self.emitted[dtype]
        t = cast_to(e, step, dtype)
        one = scalar(e, 1, t)
        corrections = []
        for beta in (self.beta1, self.beta2):  # beta^t = exp(t ln beta); 0^t = 0 for t >= 1
            power = e.mir.exp(e.mir.mul(t, scalar(e, math.log(beta), t))) if beta else scalar(e, 0, t)
            corrections.append(e.mir.sub(one, power))
        self.emitted[dtype] = (corrections[0], corrections[1])
        return self.emitted[dtype]

    def _adamw(self, e: Emitter, p: SSAValue, g: SSAValue, state: list[SSAValue], step: SSAValue):
        m, v = state
        c = lambda value: scalar(e, value, p)
        mir = e.mir
        if self.weight_decay:
            p = mir.mul(p, c(1 - self.lr * self.weight_decay))
        m = mir.add(mir.mul(m, c(self.beta1)), mir.mul(g, c(1 - self.beta1)))
        v = mir.add(mir.mul(v, c(self.beta2)), mir.mul(mir.mul(g, g), c(1 - self.beta2)))
        correction1, correction2 = self._bias_corrections(e, step, element_type(p))
        denominator = mir.add(mir.div(mir.sqrt(v), mir.sqrt(correction2)), c(self.eps))
        step_size = mir.div(c(self.lr), correction1)
        p = mir.sub(p, mir.mul(step_size, mir.div(m, denominator)))
        return p, [m, v]

    def _sgd(self, e: Emitter, p: SSAValue, g: SSAValue, state: list[SSAValue]):
        c = lambda value: scalar(e, value, p)
        mir = e.mir
        if self.weight_decay:
            g = mir.add(g, mir.mul(p, c(self.weight_decay)))
        if self.momentum:
            (buffer,) = state
            g = mir.add(mir.mul(buffer, c(self.momentum)), g)
            state = [g]
        return mir.sub(p, mir.mul(g, c(self.lr))), state


def _add_argument(function: func.FuncOp, type_: Attribute, name: str, sharding: Attribute | None = None) -> SSAValue:
    block = function.body.block
    arg = block.insert_arg(type_, len(block.args))
    if SSAValue.is_valid_name(name):
        arg.name_hint = name
    attrs = [DictionaryAttr(a) for a in _arg_attrs(function)]
    new: dict[str, Attribute] = {NAME_ATTR: StringAttr(name)}
    if sharding is not None:
        new[SHARDING_ATTR] = sharding
    function.arg_attrs = ArrayAttr([*attrs, DictionaryAttr(new)])
    return arg


def _result_shardings(shardings: list[Attribute | None]) -> ArrayAttr[DictionaryAttr]:
    """`res_attrs` placing each result as `shardings` says (None: no attribute)."""
    return ArrayAttr([DictionaryAttr({} if s is None else {SHARDING_ATTR: s}) for s in shardings])


def build_train_step(module: ModuleOp, name: str, optimizer: Optimizer) -> func.FuncOp:
    """Add `@<name>_train_step` to `module` (see the module docstring) and return it."""
    function = _find_function(module, name, WHO)
    step_name = f"{name}_train_step"
    existing = SymbolTable.lookup_symbol(module, step_name)
    if existing is not None:
        raise OpError(existing, f"'{WHO}' cannot add @{step_name}: the symbol already exists")
    params = [i for i in range(len(function.body.block.args)) if is_param(function, i)]
    if not params:
        raise OpError(function, f"'{WHO}' @{name} has no rlx.param argument: mark the parameters to train with rlx.param")
    scratch = ModuleOp([function.clone()])
    built = build_gradient(scratch, name, [str(i) for i in params], Mode.TRAINING)
    plain_gradient(built, len(params))
    built.detach()
    built.sym_name = StringAttr(step_name)

    block = built.body.block
    terminator = block.last_op
    assert isinstance(terminator, func.ReturnOp)
    loss, *gradients = terminator.arguments
    shardings = {i: _arg_attrs(function)[i].get(SHARDING_ATTR) for i in params}
    states = [
        [
            _add_argument(built, block.args[i].type, state, shardings[i])
            for state in optimizer.state_names(argument_name(function, i))
        ]
        for i in params
    ]
    step = _add_argument(built, tensor(f32, []), "step")

    e = Emitter(Builder(InsertPoint.before(terminator)), function.location)
    new_params, new_states = [], []
    for i, g, state in zip(params, gradients, states, strict=True):
        UPDATED.add()
        p, updated = optimizer.update(e, block.args[i], g, state, step)
        names = [argument_name(function, i), *optimizer.state_names(argument_name(function, i))]
        for value, value_name in zip([p, *updated], names, strict=True):
            if value.name_hint is None and SSAValue.is_valid_name(f"new_{value_name}"):
                value.name_hint = f"new_{value_name}"
        new_params.append(p)
        new_states.extend(updated)
    replace_return(built, [loss, *new_params, *new_states])
    placed = [shardings[i] for i in params]
    state_placed = [shardings[i] for i, state in zip(params, states) for _ in state]
    if any(s is not None for s in placed):
        built.res_attrs = _result_shardings([None, *placed, *state_placed])
    eliminate_dead_code(built)
    module.body.block.insert_op_after(built, function)
    return built


def _check(condition: bool, message: str) -> None:
    if not condition:
        raise ValueError(message)


UPDATED = Statistic("num-updated-params", "Number of parameters the step updates")


@dataclass(frozen=True)
class TrainStepPass(ModulePass):
    """Add `@FUNC_train_step`: the loss, its gradient and one optimizer update, in one function.

    `rlx-train-step{func=loss optimizer=adamw lr=1.0e-3 beta1=0.9 beta2=0.999 eps=1.0e-8
    weight-decay=0.01}` or `{func=loss optimizer=sgd lr=0.1 momentum=0.9}`:
    `@FUNC_train_step` takes `@FUNC`'s arguments, then the optimizer state of each
    rlx.param argument in argument order (AdamW: its first moment, then its second
    moment; SGD: its momentum buffer when momentum is not 0), then the step number
    (`tensor<f32>`, 1 at the first step); it returns the loss, the updated parameters
    and the updated state, in the same order. The update is PyTorch's `AdamW`
    (decoupled weight decay, bias correction) or `SGD`; `weight-decay` defaults to
    PyTorch's (0.01 for adamw, 0 for sgd); `beta1`, `beta2`, `eps` are AdamW's and
    `momentum` is SGD's. A parameter the loss does not use gets a zero gradient
    (weight decay still applies; PyTorch skips it). Mixed precision (f32 master
    weights and state, bf16 forward and backward matmuls): follow with
    `rlx-amp{policy=torch-cuda low=bf16}`.

    Run `rlx-prepare-ad` first when the function has fused or control-flow ops.
    """

    name = "rlx-train-step"
    STATISTICS = (UPDATED, VJP_RULES_USED)

    func: str = field(metadata={"syntax": "NAME", "example": "loss"})
    optimizer: str = field(default="adamw", metadata={"syntax": "|".join(OPTIMIZERS), "example": "sgd"})
    lr: float = field(default=1e-3, metadata={"example": "0.1"})
    beta1: float = 0.9
    beta2: float = 0.999
    eps: float = 1e-8
    weight_decay: float | None = None
    momentum: float = 0.0

    def __post_init__(self) -> None:
        self.settings()  # reject bad option values now, before any IR is read

    def settings(self) -> Optimizer:
        """The optimizer the options describe; a value PyTorch rejects is a ValueError."""
        _check(self.optimizer in OPTIMIZERS, f"optimizer={self.optimizer}: expected adamw or sgd")
        weight_decay = DEFAULT_WEIGHT_DECAY[self.optimizer] if self.weight_decay is None else self.weight_decay
        _check(self.lr >= 0, f"lr={self.lr}: the learning rate must be >= 0")
        _check(0 <= self.beta1 < 1, f"beta1={self.beta1}: must be in [0, 1)")
        _check(0 <= self.beta2 < 1, f"beta2={self.beta2}: must be in [0, 1)")
        _check(self.eps >= 0, f"eps={self.eps}: must be >= 0")
        _check(weight_decay >= 0, f"weight-decay={weight_decay}: must be >= 0")
        _check(self.momentum >= 0, f"momentum={self.momentum}: must be >= 0")
        if self.optimizer == "adamw":
            _check(not self.momentum, f"momentum={self.momentum}: optimizer=adamw has no momentum (beta1 is its)")
        return Optimizer(self.optimizer, self.lr, self.beta1, self.beta2, self.eps, weight_decay, self.momentum)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        build_train_step(op, self.func, self.settings())
