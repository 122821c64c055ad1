"""RLX passes. `get_all_passes()` maps each pass name to a lazy class loader."""

from __future__ import annotations

from collections.abc import Callable

from xdsl.passes import ModulePass


def _dce() -> type[ModulePass]:
    from rlx_xdsl.transforms.dce import DeadCodeEliminationPass

    return DeadCodeEliminationPass


def _specialize() -> type[ModulePass]:
    from rlx_xdsl.transforms.specialize import SpecializeShapesPass

    return SpecializeShapesPass


def _unfuse() -> type[ModulePass]:
    from rlx_xdsl.transforms.unfuse import UnfusePass

    return UnfusePass


def _convert_mir_to_linalg() -> type[ModulePass]:
    from rlx_xdsl.conversions.mir_to_linalg import ConvertMirToLinalgPass

    return ConvertMirToLinalgPass


def get_all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    return {
        "rlx-dce": _dce,
        "rlx-specialize": _specialize,
        "rlx-unfuse": _unfuse,
        "rlx-convert-mir-to-linalg": _convert_mir_to_linalg,
    }
