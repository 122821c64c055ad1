"""RLX passes. `get_all_passes()` maps each pass name to a lazy class loader."""

from __future__ import annotations

import importlib
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


def _grad() -> type[ModulePass]:
    from rlx_xdsl.autodiff.grad import GradPass

    return GradPass


def _prepare_ad() -> type[ModulePass]:
    from rlx_xdsl.autodiff.prepare import PrepareAdPass

    return PrepareAdPass


def _lower_hir() -> type[ModulePass]:
    from rlx_xdsl.conversions.hir_to_mir.lower import LowerHirPass

    return LowerHirPass


def _plan_memory() -> type[ModulePass]:
    from rlx_xdsl.conversions.mir_to_lir.plan_memory import PlanMemoryPass

    return PlanMemoryPass


def _lazy(module: str, cls: str) -> Callable[[], type[ModulePass]]:
    """A loader importing `module` only when the pass is used."""
    return lambda: getattr(importlib.import_module(module), cls)


_FUSION = "rlx_xdsl.transforms.fusion."
FUSION_PASSES: dict[str, Callable[[], type[ModulePass]]] = {
    "rlx-lower-control-flow": _lazy(_FUSION + "control_flow", "LowerControlFlowPass"),
    "rlx-lower-dot-general": _lazy(_FUSION + "dot_general", "LowerDotGeneralPass"),
    "rlx-fuse-attention-block": _lazy(_FUSION + "attention_block", "FuseAttentionBlockPass"),
    "rlx-fuse-matmul-bias-act": _lazy(_FUSION + "matmul_bias_act", "FuseMatmulBiasActPass"),
    "rlx-fuse-residual-layer-norm": _lazy(_FUSION + "residual_norm", "FuseResidualLayerNormPass"),
    "rlx-fuse-residual-rms-norm": _lazy(_FUSION + "residual_norm", "FuseResidualRmsNormPass"),
    "rlx-fuse-rms-norm-reshape": _lazy(_FUSION + "rms_norm_reshape", "FuseRmsNormReshapePass"),
    "rlx-fuse-swiglu-dual-matmul": _lazy(_FUSION + "swiglu", "FuseSwigluDualMatmulPass"),
    "rlx-fuse-shared-input-matmul": _lazy(_FUSION + "shared_input_matmul", "FuseSharedInputMatmulPass"),
    "rlx-fuse-swiglu": _lazy(_FUSION + "swiglu", "FuseSwigluPass"),
    "rlx-fuse-lora": _lazy(_FUSION + "lora", "FuseLoraPass"),
    "rlx-fuse-matmul-epilogue": _lazy(_FUSION + "matmul_epilogue", "FuseMatmulEpiloguePass"),
    "rlx-mark-elementwise-regions": _lazy(_FUSION + "elementwise_regions", "MarkElementwiseRegionsPass"),
    "rlx-unfuse-elementwise-regions": _lazy(_FUSION + "elementwise_regions", "UnfuseElementwiseRegionsPass"),
    "rlx-clip-elementwise-regions": _lazy(_FUSION + "elementwise_regions", "ClipElementwiseRegionsPass"),
    "rlx-mark-batch-slice-regions": _lazy(_FUSION + "fk_regions", "MarkBatchSliceRegionsPass"),
    "rlx-mark-transform-regions": _lazy(_FUSION + "fk_regions", "MarkTransformRegionsPass"),
    "rlx-fuse-region-prologue": _lazy(_FUSION + "fk_regions", "FuseRegionProloguePass"),
    "rlx-fuse-batch-preprocess": _lazy(_FUSION + "fk_regions", "FuseBatchPreprocessPass"),
    "rlx-decompose-fusion-regions": _lazy(_FUSION + "fk_regions", "DecomposeFusionRegionsPass"),
    "rlx-fusion-pipeline": _lazy(_FUSION + "pipeline", "FusionPipelinePass"),
    "rlx-constant-fold": _lazy("rlx_xdsl.transforms.constant_fold", "ConstantFoldPass"),
}
"""The fusion issue's passes (RLX's fusion pipeline, its lowerings, constant folding)."""

_T = "rlx_xdsl.transforms."
BACKEND_PASSES: dict[str, Callable[[], type[ModulePass]]] = {
    "rlx-legalize": _lazy(_T + "legalize", "LegalizePass"),
    "rlx-legalize-broadcast": _lazy(_T + "legalize_broadcast", "LegalizeBroadcastPass"),
    "rlx-lower-group-norm": _lazy(_T + "lower_logical_kernels", "LowerGroupNormPass"),
    "rlx-lower-resize-nearest-2x": _lazy(_T + "lower_logical_kernels", "LowerResizeNearest2xPass"),
    "rlx-promote-params": _lazy(_T + "promote_params", "PromoteParamsPass"),
}
"""Backend preparation (RLX's rewrite_for_backend and its helpers)."""


def get_all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    return {
        "rlx-amp": _amp,
        "rlx-canonicalize": _canonicalize,
        "rlx-dce": _dce,
        "rlx-decompose-backward": _decompose_backward,
        "rlx-fold-casts": _fold_casts,
        "rlx-insert-qdq": _lazy("rlx_xdsl.transforms.quant.insert_qdq", "InsertQdqPass"),
        "rlx-quant-propagate": _lazy("rlx_xdsl.transforms.quant.propagate", "QuantPropagatePass"),
        "rlx-quantize-weights": _lazy("rlx_xdsl.transforms.quant.quantize_weights", "QuantizeWeightsPass"),
        "rlx-grad": _grad,
        "rlx-jvp": _lazy("rlx_xdsl.autodiff.jvp", "JvpPass"),
        "rlx-hvp": _lazy("rlx_xdsl.autodiff.hvp", "HvpPass"),
        "rlx-train-step": _lazy("rlx_xdsl.autodiff.train_step", "TrainStepPass"),
        "rlx-shard-params": _lazy(_T + "shard_params", "ShardParamsPass"),
        "rlx-vmap": _lazy("rlx_xdsl.batching.vmap", "VmapPass"),
        "rlx-lower-hir": _lower_hir,
        "rlx-lower-softmax-cross-entropy": _lower_sce,
        "rlx-plan-memory": _plan_memory,
        "rlx-prepare-ad": _prepare_ad,
        "rlx-specialize": _specialize,
        "rlx-unfuse": _unfuse,
        "rlx-convert-mir-to-linalg": _convert_mir_to_linalg,
        **FUSION_PASSES,
        **BACKEND_PASSES,
    }
