"""The translation table: an ATen op overload -> the function emitting its MIR.

A rule is `rule(t, node) -> value | tuple of values`, where `t` is the running
`Translator` (its emitter, operand lookup, shapes and dtypes) and `node` the
`torch.fx` node. Rules are registered by the modules of `ops/`, one per op family.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

ATEN: dict[Any, Callable[..., Any]] = {}
"""ATen `OpOverload` (e.g. `torch.ops.aten.mm.default`) -> rule; a library's custom op (which
exists only once that library is imported) by its name, `str` of the overload
(`"transformers.grouped_mm_fallback.default"`)."""


def rule(*overloads: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register the decorated function as the rule of each of `overloads`."""

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        for overload in overloads:
            if overload in ATEN:  # two rules for one op: the later would silently win
                raise ValueError(f"{overload} already has an import rule")
            ATEN[overload] = fn
        return fn

    return register
