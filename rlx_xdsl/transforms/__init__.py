"""RLX passes. `get_all_passes()` maps each pass name to a lazy class loader."""

from __future__ import annotations

from collections.abc import Callable

from xdsl.passes import ModulePass


def _canonicalize() -> type[ModulePass]:
    from rlx_xdsl.transforms.canonicalize import CanonicalizePass

    return CanonicalizePass


def _dce() -> type[ModulePass]:
    from rlx_xdsl.transforms.dce import DeadCodeEliminationPass

    return DeadCodeEliminationPass


def _specialize() -> type[ModulePass]:
    from rlx_xdsl.transforms.specialize import SpecializeShapesPass

    return SpecializeShapesPass


def _unfuse() -> type[ModulePass]:
    from rlx_xdsl.transforms.unfuse import UnfusePass

    return UnfusePass


def _plan_memory() -> type[ModulePass]:
    from rlx_xdsl.conversions.mir_to_lir.plan_memory import PlanMemoryPass

    return PlanMemoryPass


def get_all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    return {
        "rlx-canonicalize": _canonicalize,
        "rlx-dce": _dce,
        "rlx-plan-memory": _plan_memory,
        "rlx-specialize": _specialize,
        "rlx-unfuse": _unfuse,
    }
