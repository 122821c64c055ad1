"""Pass instrumentation: hooks called around every pass the pipeline runs.

MLIR's `PassInstrumentation` lets IR printing, timing, statistics and crash
reproducers watch a pipeline without the passes knowing. Here the same: the
pipeline (`pipeline.py`) opens a `pass_scope` around each pass it runs,
anchored groups (`func.func(...)`) included, and the scope calls the hooks of
every `PassInstrumentation` made active with `instrumented(...)`. With none
active a scope costs one context-variable read.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

from xdsl.ir import Operation
from xdsl.passes import ModulePass


class PassInstrumentation:
    """Watches passes run; every hook does nothing unless overridden.

    `op` is the op the pass runs on: the root module, or the anchored op
    (e.g. a `func.func`) inside it. After the pass, `ops` are what stands in its
    place (usually `[op]`; several, or none, if the pass split or erased it).
    """

    def before_pass(self, pass_: ModulePass, op: Operation) -> None:
        pass

    def after_pass(self, pass_: ModulePass, ops: Sequence[Operation], changed: bool) -> None:
        """The pass succeeded, and the IR it left verified (when verification is on)."""

    def after_pass_failed(self, pass_: ModulePass, ops: Sequence[Operation], error: BaseException) -> None:
        """The pass raised, or the verifier rejected what it left; `error` is about to propagate."""

    def before_verify(self, pass_: ModulePass) -> None:
        """The verifier is about to check what `pass_` left (inside the pass's scope)."""

    def after_verify(self, pass_: ModulePass) -> None:
        """The verifier has checked what `pass_` left (whether or not it passed)."""


_ACTIVE: ContextVar[tuple[PassInstrumentation, ...]] = ContextVar("rlx_pass_instrumentation", default=())


@contextmanager
def instrumented(*instrumentations: PassInstrumentation) -> Iterator[None]:
    """Make `instrumentations` watch every pass run inside the block (nested blocks add to them)."""
    token = _ACTIVE.set(_ACTIVE.get() + instrumentations)
    try:
        yield
    finally:
        _ACTIVE.reset(token)


@dataclass
class PassScope:
    """One pass run: the runner records what the pass left in `ops` and whether it `changed` the IR."""

    ops: list[Operation]
    changed: bool = True
    hooks: tuple[PassInstrumentation, ...] = field(default=())


@contextmanager
def pass_scope(pass_: ModulePass, op: Operation) -> Iterator[PassScope]:
    """Call the active instrumentations' hooks around running (and verifying) `pass_` on `op`."""
    hooks = _ACTIVE.get()
    scope = PassScope([op], hooks=hooks)
    if not hooks:
        yield scope
        return
    for hook in hooks:
        hook.before_pass(pass_, op)
    try:
        yield scope
    except BaseException as e:
        for hook in reversed(hooks):
            hook.after_pass_failed(pass_, scope.ops, e)
        raise
    for hook in reversed(hooks):
        hook.after_pass(pass_, scope.ops, scope.changed)


@contextmanager
def verify_scope(pass_: ModulePass) -> Iterator[None]:
    """Call the active instrumentations' hooks around verifying what `pass_` left."""
    hooks = _ACTIVE.get()
    for hook in hooks:
        hook.before_verify(pass_)
    try:
        yield
    finally:
        for hook in reversed(hooks):
            hook.after_verify(pass_)
