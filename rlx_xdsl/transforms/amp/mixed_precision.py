"""`rlx-amp`: the pass, its options and how they make a policy.

    rlx-amp{policy=auto-mixed}
    rlx-amp{policy=custom compute=f16 reduction=f32 elementwise=bf16 data-movement=f16}
    rlx-amp{policy=auto-mixed reduction=f32}            # a preset with one class changed
    rlx-amp{policy=torch-cuda low=bf16 ops=mir.softmax:f16,mir.exp:keep}

Option values are checked when the pass is built, so a bad one (`policy=f8`,
`compute=i32`) is reported by rlx-opt as `invalid options for pass 'rlx-amp'`
with the option and its allowed values. Op names in `ops=` are looked up in the
context the pass runs with (and in the dialects RLX's tools load).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, UnregisteredOp
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from rlx_xdsl.context import make_context
from rlx_xdsl.registry import OpClass
from rlx_xdsl.transforms.amp.policy import (
    CHOICES,
    CLASS_OPTIONS,
    CLASS_POLICIES,
    FLOATS,
    LOW,
    LOW_PRECISIONS,
    Policy,
    WithOpOverrides,
    check_choice,
)
from rlx_xdsl.transforms.amp.presets import TORCH_PRESETS, torch_preset
from rlx_xdsl.transforms.amp.rewrite import auto_mixed_precision
from rlx_xdsl.transforms.statistics import Statistic

CASTS = Statistic("num-casts", "Number of casts inserted")

POLICY_NAMES = (*CLASS_POLICIES, *TORCH_PRESETS)

OpResolver = Callable[[str], OpClass]


def resolve_op(ctx: Context, name: str) -> OpClass:
    """The op class named `name` (`mir.softmax`): from `ctx`, else from the dialects RLX's tools load."""
    for context in (ctx, make_context()):
        found = context.get_optional_op(name)
        if found is not None and not issubclass(found, UnregisteredOp):
            return found
    raise PassFailedException(
        f"rlx-amp option ops: no op is named '{name}' (ops are named in full, e.g. mir.softmax)"
    )


def parse_op_overrides(
    entries: tuple[str, ...], allowed: tuple[str, ...], resolve: OpResolver | None
) -> dict[OpClass, str]:
    """`("mir.softmax:f32", ...)` as `{SoftmaxOp: "f32"}`; without `resolve`, only the syntax is checked."""
    overrides: dict[OpClass, str] = {}
    seen: set[str] = set()
    for entry in entries:
        name, colon, choice = entry.rpartition(":")
        if not (colon and name):
            raise ValueError(f"ops={entry}: expected OP:PRECISION, e.g. ops=mir.softmax:f32")
        check_choice("ops", choice, allowed, written=f"ops={entry}")
        if name in seen:
            raise ValueError(f"ops: '{name}' is given twice")
        seen.add(name)
        if resolve is not None:
            overrides[resolve(name)] = choice
    return overrides


@dataclass(frozen=True)
class AutoMixedPrecisionPass(ModulePass):
    """Cast floating-point data to the precision a policy gives each op (RLX's AutoMixedPrecision).

    `policy`: always-f32 (default: nothing changes), always-f16,
    auto-mixed-conservative, auto-mixed, auto-mixed-bf16, custom (classes f32
    unless set), torch-cuda or torch-cpu (PyTorch autocast's per-op lists, with
    `low=f16|bf16`). `compute`, `reduction`, `elementwise`, `data-movement`
    (f32|f16|bf16) set an AMP class under the class policies; `ops=OP:PRECISION,...`
    sets single ops under any policy (f32|f16|bf16|keep|promote, and low for the
    torch presets). Function arguments and results keep their types; integer,
    i1, f64 values and index/label/predicate/mask operands never change.
    """

    name = "rlx-amp"
    STATISTICS = (CASTS,)

    policy: str = field(default="always-f32", metadata={"syntax": "|".join(POLICY_NAMES), "example": "auto-mixed"})
    compute: str | None = field(default=None, metadata={"syntax": "f32|f16|bf16"})
    reduction: str | None = field(default=None, metadata={"syntax": "f32|f16|bf16"})
    elementwise: str | None = field(default=None, metadata={"syntax": "f32|f16|bf16"})
    data_movement: str | None = field(default=None, metadata={"syntax": "f32|f16|bf16"})
    low: str | None = field(default=None, metadata={"syntax": "f16|bf16"})
    ops: tuple[str, ...] = field(default=(), metadata={"syntax": "OP:PRECISION,...", "example": "mir.softmax:f32"})

    def __post_init__(self) -> None:
        self.build_policy(resolve=None)  # reject bad option values now, before any IR is read

    def class_settings(self) -> dict[str, str]:
        """The per-class options that were given, by option name."""
        given = {
            "compute": self.compute,
            "reduction": self.reduction,
            "elementwise": self.elementwise,
            "data-movement": self.data_movement,
        }
        return {option: value for option, value in given.items() if value is not None}

    def build_policy(self, resolve: OpResolver | None) -> Policy:
        """The policy the options describe (op names resolved with `resolve`, if given)."""
        check_choice("policy", self.policy, POLICY_NAMES)
        classes = {
            option: check_choice(option, value, FLOATS) for option, value in self.class_settings().items()
        }
        if self.policy in TORCH_PRESETS:
            if classes:
                raise ValueError(
                    f"{', '.join(classes)}: policy={self.policy} chooses per op, not per AMP class; "
                    "set single ops with ops=OP:PRECISION"
                )
            low = None if self.low is None else check_choice("low", self.low, LOW_PRECISIONS)
            preset = torch_preset(self.policy, low)
            base: Policy = preset
            allowed, low = (*CHOICES, LOW), preset.low
        else:
            if self.low is not None:
                raise ValueError(
                    f"low={self.low}: only policy=torch-cuda and policy=torch-cpu have a low precision "
                    f"to set, not policy={self.policy}"
                )
            base = CLASS_POLICIES[self.policy].overriding(
                {CLASS_OPTIONS[option]: value for option, value in classes.items()}
            )
            allowed, low = CHOICES, None
        overrides = {
            op: low if choice == LOW else choice
            for op, choice in parse_op_overrides(self.ops, allowed, resolve).items()
        }
        return WithOpOverrides(base, overrides) if overrides else base

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        CASTS.add(auto_mixed_precision(op, self.build_policy(lambda name: resolve_op(ctx, name))))
