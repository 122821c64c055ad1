"""The translation table: ONNX op type (default domain) -> the function emitting its MIR.

A rule is `rule(t, node) -> value | list of values` (one per node output), where `t`
is the running `Translator` and `node` the `NodeProto`. Rules are registered by the
modules of `ops/`, one per op family.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

ONNX_OPS: dict[str, Callable[..., Any]] = {}

FOLLOWED_SINCE: dict[str, frozenset[str]] = {}
"""Op type -> attributes and inputs an op gained after the rules' opsets that its rule
reads anyway (`Translator._check_schema` refuses the other new ones)."""


def rule(*op_types: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        for op_type in op_types:
            if op_type in ONNX_OPS:  # two rules for one op: the later would silently win
                raise ValueError(f"{op_type} already has an import rule")
            ONNX_OPS[op_type] = fn
        return fn

    return register
