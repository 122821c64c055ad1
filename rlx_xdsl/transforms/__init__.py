"""RLX passes. `get_all_passes()` maps each pass name to a lazy class loader."""

from __future__ import annotations

from collections.abc import Callable

from xdsl.passes import ModulePass


def _amp() -> type[ModulePass]:
    from rlx_xdsl.transforms.amp.mixed_precision import AutoMixedPrecisionPass

    return AutoMixedPrecisionPass


def _canonicalize() -> type[ModulePass]:
    from rlx_xdsl.transforms.canonicalize import CanonicalizePass

    return CanonicalizePass


def _decompose_backward() -> type[ModulePass]:
    from rlx_xdsl.transforms.decompose_backward import DecomposeBackwardPass

    return DecomposeBackwardPass


def _dce() -> type[ModulePass]:
    from rlx_xdsl.transforms.dce import DeadCodeEliminationPass

    return DeadCodeEliminationPass


def _fold_casts() -> type[ModulePass]:
    from rlx_xdsl.transforms.fold_casts import FoldCastsPass

    return FoldCastsPass


def _lower_sce() -> type[ModulePass]:
    from rlx_xdsl.transforms.lower_sce import LowerSoftmaxCrossEntropyPass

    return LowerSoftmaxCrossEntropyPass


def _specialize() -> type[ModulePass]:
    from rlx_xdsl.transforms.specialize import SpecializeShapesPass

    return SpecializeShapesPass


def _unfuse() -> type[ModulePass]:
    from rlx_xdsl.transforms.unfuse import UnfusePass

    return UnfusePass


def _convert_mir_to_linalg() -> type[ModulePass]:
    from rlx_xdsl.conversions.mir_to_linalg import ConvertMirToLinalgPass

    return ConvertMirToLinalgPass


def _lower_hir() -> type[ModulePass]:
    from rlx_xdsl.conversions.hir_to_mir.lower import LowerHirPass

    return LowerHirPass


def _plan_memory() -> type[ModulePass]:
    from rlx_xdsl.conversions.mir_to_lir.plan_memory import PlanMemoryPass

    return PlanMemoryPass


def get_all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    return {
        "rlx-amp": _amp,
        "rlx-canonicalize": _canonicalize,
        "rlx-dce": _dce,
        "rlx-decompose-backward": _decompose_backward,
        "rlx-fold-casts": _fold_casts,
        "rlx-lower-hir": _lower_hir,
        "rlx-lower-softmax-cross-entropy": _lower_sce,
        "rlx-plan-memory": _plan_memory,
        "rlx-specialize": _specialize,
        "rlx-unfuse": _unfuse,
        "rlx-convert-mir-to-linalg": _convert_mir_to_linalg,
    }
