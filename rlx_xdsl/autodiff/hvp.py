"""`rlx-hvp`: Hessian-vector products, forward mode over reverse mode.

`rlx-hvp{func=loss wrt=w,b}` adds

    @loss_hvp(<the arguments of @loss>, v_w, v_b) -> (loss, d_w, d_b, Hv_w, Hv_b)

the loss, its gradient with respect to the `wrt` arguments (default: the
`rlx.param` ones) and the Hessian of the loss applied to `v` (one tangent per
`wrt` argument, named `tangent_<name>`).

It builds the gradient function exactly as `rlx-grad` does (seeded with ones,
the loss's other results dropped) in a scratch copy of the module, then pushes
the tangents `v` through it with `rlx-jvp`'s sweep: the tangent of the
gradient is `H v`. The gradient function holds backward kernels, so every
kernel the reverse rules emit needs a JVP rule; a kernel that has none but has
an `rlx-decompose-backward` rule is first decomposed into primitives (which
do), so the pass works before every kernel has its own rule. RLX's `hvp` has
no rules for backward kernels and works only on graphs whose backward is
primitive; it also returns `<grad, v>`, which this pass leaves out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, ModuleOp, TensorType
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern
from xdsl.rewriter import InsertPoint

from rlx_xdsl import layers
from rlx_xdsl.autodiff.emit import scalar, splat, zeros_like
from rlx_xdsl.autodiff.grad import Mode, build_gradient, replace_return
from rlx_xdsl.autodiff.jvp import JVP_RULES_USED, _tangent_args, add_function, find_function, jvp_function
from rlx_xdsl.autodiff.jvp_registry import JVP_RULES
from rlx_xdsl.ir.diagnostics import OpError
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.shapes import is_static
from rlx_xdsl.transforms.dce import eliminate_dead_code
from rlx_xdsl.transforms.decompose_backward import DECOMPOSITIONS
from rlx_xdsl.transforms.rewriting import apply_patterns

WHO = "rlx-hvp"


class DecomposeWithoutJvpRule(RewritePattern):
    """A backward kernel with no JVP rule becomes the primitives of its decomposition."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if op in DECOMPOSITIONS and JVP_RULES.lookup(op) is None:
            e = Emitter.replacing(op, rewriter)
            e.replace(op, DECOMPOSITIONS[op](e, op))


def plain_gradient(gradient: func.FuncOp, count: int) -> None:
    """Seed the gradient function with ones and keep `(loss, grads...)` (drop the aux results)."""
    block = gradient.body.block
    seed = block.args[-1]
    terminator = block.last_op
    assert isinstance(terminator, func.ReturnOp)
    values = list(terminator.arguments)
    t = seed.type
    assert isinstance(t, TensorType)
    if is_static(t.get_shape()):
        e = Emitter(Builder(InsertPoint.at_start(block)), gradient.location)
        ones = splat(e, 1, t.element_type, t.get_shape())
    else:  # ones of the loss's run-time shape, built once the loss is defined
        loss = values[0]
        owner = loss.owner
        point = InsertPoint.after(owner) if isinstance(owner, Operation) else InsertPoint.at_start(block)
        e = Emitter(Builder(point), gradient.location)
        ones = e.mir.add(zeros_like(e, loss), scalar(e, 1, loss))
    seed.replace_all_uses_with(ones)
    block.erase_arg(seed)
    assert gradient.arg_attrs is not None
    gradient.arg_attrs = ArrayAttr(gradient.arg_attrs.data[:-1])
    replace_return(gradient, [values[0], *values[len(values) - count :]])


def build_hvp(module: ModuleOp, name: str, wrt: Sequence[str] = (), mode: Mode = Mode.STRICT) -> func.FuncOp:
    """Add `@<name>_hvp` to `module` (see the module docstring) and return it."""
    layers.load("vjp"), layers.load("jvp")
    layers.load("decompose-backward")
    function = find_function(module, name, WHO)
    indices = _tangent_args(function, module, WHO, wrt)
    scratch = ModuleOp([function.clone()])
    gradient = build_gradient(scratch, name, [str(i) for i in indices], mode)
    plain_gradient(gradient, len(indices))
    apply_patterns(scratch, DecomposeWithoutJvpRule())
    gradient = next(op for op in scratch.ops if isinstance(op, func.FuncOp) and op.sym_name.data == f"{name}_grad")
    built = jvp_function(gradient, indices, f"{name}_hvp", WHO)
    terminator = built.body.block.last_op
    assert isinstance(terminator, func.ReturnOp)
    values = list(terminator.arguments)
    half = len(values) // 2
    replace_return(built, [*values[:half], *values[half + 1 :]])  # no tangent of the loss
    eliminate_dead_code(built)
    return add_function(module, function, built, WHO)


@dataclass(frozen=True)
class HvpPass(ModulePass):
    """Add `@FUNC_hvp` returning the loss, its gradient and Hessian-vector products.

    `rlx-hvp{func=loss wrt=w,b}`: `@loss_hvp` takes `@loss`'s arguments and one
    vector `v` per `wrt` argument (named `tangent_<name>`, of the argument's type)
    and returns `(loss, d_w..., Hv_w...)`: forward mode (`rlx-jvp`) over the
    gradient function `rlx-grad` builds. `wrt` as for `rlx-grad` (default: the
    rlx.param arguments); `mode=training` gives a parameter the loss does not
    use a zero gradient (default `strict`: an error, as `rlx-grad`).

    Run `rlx-prepare-ad` first when the function has fused or control-flow ops.
    """

    name = "rlx-hvp"
    STATISTICS = (JVP_RULES_USED,)

    func: str = field(metadata={"syntax": "NAME", "example": "loss"})
    wrt: tuple[str | int, ...] = field(default=(), metadata={"syntax": "NAME|POSITION,..."})
    mode: str = field(default="strict", metadata={"syntax": "strict|training", "example": "training"})

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        try:
            mode = Mode(self.mode)
        except ValueError:
            raise OpError(op, f"'{WHO}' mode must be strict or training, got '{self.mode}'") from None
        build_hvp(op, self.func, [str(w) for w in self.wrt], mode)
