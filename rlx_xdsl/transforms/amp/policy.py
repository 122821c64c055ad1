"""Precision policies: what each op computes in under `rlx-amp`.

A policy gives every op a *choice*:

* `f32`, `f16` or `bf16`: the op's floating-point data operands are cast to
  that type, so the op computes (and returns its float results) in it;
* `keep`: the op keeps the types it was written with (its operands are cast
  back if their producers changed);
* `promote`: the op computes in the widest float type among its data operands
  (f16 with bf16 gives f32), which is how PyTorch runs an op that autocast
  does not list.

RLX's policies (`ClassPolicy`) choose by the op's AMP class, read from its
`PrecisionClass` trait (an op that declares none is compute, as RLX's
fallback). PyTorch's autocast presets (`OpTablePolicy`, see `presets.py`)
choose by op class, from tables keyed by op class. Per-op overrides
(`ops=mir.softmax:f32`) take precedence over either (`WithOpOverrides`).
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Union

from xdsl.ir import Operation

from rlx_xdsl.dialects.traits import Precision, precision_class
from rlx_xdsl.registry import OpClass, OpRegistry

F32, F16, BF16 = "f32", "f16", "bf16"
KEEP, PROMOTE = "keep", "promote"
LOW = "low"
"""In the PyTorch presets' tables: the preset's low precision (`low=f16|bf16`)."""

FLOATS = (F32, F16, BF16)
"""The precisions AMP moves values between; other dtypes (f64, integers, i1) never change."""
CHOICES = (*FLOATS, KEEP, PROMOTE)
LOW_PRECISIONS = (F16, BF16)

OpRule = Union[str, Callable[[Operation], str]]
"""A preset table entry: a choice (`LOW` included), or a function of the op giving one."""


def check_choice(option: str, value: str, allowed: Sequence[str], written: str | None = None) -> str:
    """`value` if it is one of `allowed`, else a ValueError naming the option and the allowed values.

    `written` is how the option appeared (default `option=value`).
    """
    if value not in allowed:
        shown = written if written is not None else f"{option}={value}"
        raise ValueError(f"{shown}: '{value}' is not one of {', '.join(allowed)}")
    return value


def amp_class(op: Operation) -> Precision:
    """The op's AMP class; an op that declares none is compute (RLX's fallback)."""
    declared = precision_class(op)
    return declared if declared is not None else Precision.COMPUTE


class Policy(abc.ABC):
    """Maps each op to one of `CHOICES`."""

    name: str

    @abc.abstractmethod
    def choice(self, op: Operation) -> str:
        """What `op` computes in: a float name, `keep` or `promote`."""


@dataclass(frozen=True)
class ClassPolicy(Policy):
    """One of RLX's `PrecisionPolicy`s: a choice per AMP class, `default` for the classes not listed."""

    name: str
    by_class: Mapping[Precision, str]
    default: str = F32

    def choice(self, op: Operation) -> str:
        return self.by_class.get(amp_class(op), self.default)

    def overriding(self, by_class: Mapping[Precision, str]) -> ClassPolicy:
        """This policy with some classes set otherwise (`compute=f16 reduction=f32`)."""
        return ClassPolicy(self.name, {**self.by_class, **by_class}, self.default)


@dataclass(frozen=True)
class OpTablePolicy(Policy):
    """A per-op table (PyTorch autocast's lists); unlisted ops `promote`, as in PyTorch."""

    name: str
    table: OpRegistry[OpRule]
    low: str

    def choice(self, op: Operation) -> str:
        rule = self.table.lookup(op)
        chosen = PROMOTE if rule is None else rule(op) if callable(rule) else rule
        return self.low if chosen == LOW else chosen


@dataclass(frozen=True)
class WithOpOverrides(Policy):
    """`base`, except for the op classes in `overrides` (the `ops=` option)."""

    base: Policy
    overrides: Mapping[OpClass, str]

    @property
    def name(self) -> str:  # type: ignore[override]
        return self.base.name

    def choice(self, op: Operation) -> str:
        chosen = self.overrides.get(type(op))
        return chosen if chosen is not None else self.base.choice(op)


def _all(choice: str, boundary: str = KEEP) -> dict[Precision, str]:
    """Every computing class at `choice`; boundary ops (constants) keep their type."""
    return {
        Precision.COMPUTE: choice,
        Precision.REDUCTION: choice,
        Precision.ELEMENTWISE: choice,
        Precision.DATA_MOVEMENT: choice,
        Precision.BOUNDARY: boundary,
    }


CLASS_POLICIES: dict[str, ClassPolicy] = {
    # RLX skips the pass for AlwaysF32: every op keeps the types it was written with.
    "always-f32": ClassPolicy("always-f32", _all(KEEP), KEEP),
    "always-f16": ClassPolicy("always-f16", _all(F16)),
    "auto-mixed-conservative": ClassPolicy(
        "auto-mixed-conservative", {**_all(F16), Precision.REDUCTION: F32}
    ),
    "auto-mixed": ClassPolicy("auto-mixed", _all(F16)),
    "auto-mixed-bf16": ClassPolicy("auto-mixed-bf16", _all(BF16)),
    # RLX's Custom map: unmapped classes compute in f32; set classes with compute=... etc.
    "custom": ClassPolicy("custom", {Precision.BOUNDARY: KEEP}, F32),
}
"""RLX's policies by option name (`Precision::AlwaysF32` is `always-f32`, ...)."""

CLASS_OPTIONS: dict[str, Precision] = {
    "compute": Precision.COMPUTE,
    "reduction": Precision.REDUCTION,
    "elementwise": Precision.ELEMENTWISE,
    "data-movement": Precision.DATA_MOVEMENT,
}
"""The per-class options of the class policies, by their option names."""
