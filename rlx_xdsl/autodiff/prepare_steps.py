"""The steps of `rlx-prepare-ad`, in their fixed order (`PREPARE_STEPS`).

Each step is defined here with what it does; the modules that implement steps
(`prepare.py`, `prepare_structured.py`) fill them with `PREPARE_STEPS.implement(name,
rewrites=...)`. A step that has no implementation yet is registered all the same
(`pending` names the issue that fills it), so the order is fixed in one place and the
steps are listed by `describe_steps()`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation


def rewrites_nothing(op: Operation) -> bool:
    return False


def _pending(module: ModuleOp) -> None:
    """A step whose ops cannot occur yet."""


@dataclass
class PrepareStep:
    """One rewrite of `rlx-prepare-ad`: `run(module)` rewrites the ops `rewrites(op)` accepts."""

    name: str
    doc: str
    run: Callable[[ModuleOp], None] = _pending
    rewrites: Callable[[Operation], bool] = rewrites_nothing
    pending: str | None = None
    """The issue that implements the step, while it has no implementation."""


class StepList:
    """The steps in their fixed order; `implement(name)` fills a registered step."""

    def __init__(self) -> None:
        self._steps: dict[str, PrepareStep] = {}

    def define(self, name: str, doc: str, pending: str | None = None) -> None:
        self._steps[name] = PrepareStep(name, doc, pending=pending)

    def implement(
        self, name: str, rewrites: Callable[[Operation], bool]
    ) -> Callable[[Callable[[ModuleOp], None]], Callable[[ModuleOp], None]]:
        """Decorator: `run(module)` becomes step `name`, which rewrites the ops `rewrites` accepts."""

        def decorate(run: Callable[[ModuleOp], None]) -> Callable[[ModuleOp], None]:
            step = self._steps[name]
            step.run, step.rewrites, step.pending = run, rewrites, None
            return run

        return decorate

    def __iter__(self):
        return iter(self._steps.values())

    def __getitem__(self, name: str) -> PrepareStep:
        return self._steps[name]


PREPARE_STEPS = StepList()
PREPARE_STEPS.define("lower-hir", "HIR block ops become MIR primitive chains (rlx-lower-hir{policy=fusable})")
PREPARE_STEPS.define("unfuse", "expand composite ops without a VJP rule through their rlx-unfuse rule")
PREPARE_STEPS.define(
    "decompose-backward", "backward kernels without a VJP rule become primitives (gradients of gradients)"
)
PREPARE_STEPS.define("lower-dot-general", "mir.dot_general without a VJP rule becomes matmuls")
PREPARE_STEPS.define("inline-if", "mir.if becomes both branches and mir.where")
PREPARE_STEPS.define("unroll-while", "a bounded mir.while is unrolled")
PREPARE_STEPS.define("inline-custom-fn", "mir.custom_fn without a vjp body is replaced by its forward body")
PREPARE_STEPS.define("materialize-scan-bcasts", "the bcasts of a mir.scan become xs (expanded along the steps)")
PREPARE_STEPS.define(
    "convert-scans-for-ad", "scans save their trajectory for the backward sweep (the final carry is its last row)"
)
PREPARE_STEPS.define(
    "legalize-multi-axis-reduce", "a reduce over several axes becomes a chain of single-axis reduces"
)
PREPARE_STEPS.define(
    "fuse-decomposed-gaussian-splat", "mir.gaussian_splat_prepare then mir.gaussian_splat_rasterize becomes one render"
)


def describe_steps() -> list[str]:
    """One line per step, in order: its name, what it does, and whether it is pending."""
    return [
        f"{step.name}: {step.doc}" + (f" [pending: {step.pending}]" if step.pending else "")
        for step in PREPARE_STEPS
    ]
