"""`rlx-fusion-pipeline{target skip-fusion keep-regions}`: RLX's per-target fusion pass lists.

RLX's `fusion_passes_for_supported` builds the list from the fused ops a
target claims, always in this order (the CPU target gets all 13):

     1 rlx-lower-control-flow          8 rlx-fuse-swiglu-dual-matmul   (FusedSwiGLU)
     2 rlx-lower-dot-general             -- skip-fusion stops after 2 --
     3 rlx-fuse-attention-block  (FusedAttentionBlock)
     4 rlx-fuse-matmul-bias-act  (FusedMatMulBiasAct)
     5 rlx-fuse-residual-layer-norm (FusedResidualLN)
     6 rlx-fuse-residual-rms-norm (FusedResidualRmsNorm)
     7 rlx-fuse-rms-norm-reshape  (always)
     9 rlx-fuse-shared-input-matmul    (MatMul)
    10 rlx-fuse-swiglu                 (FusedSwiGLU)
    11 rlx-mark-elementwise-regions    (always; the target's caps)
       where regions are kept, RLX 0.2.6's FK passes (fk-fusion): rlx-mark-batch-slice-regions,
       rlx-mark-transform-regions, rlx-fuse-region-prologue (fuse-region-prologue),
       rlx-fuse-batch-preprocess (fuse-batch-preprocess), then rlx-decompose-fusion-regions
       unless native-fk-regions and the target claims TransformRegion/BatchElementwiseRegion
    12 rlx-unfuse-elementwise-regions  (unless the target keeps regions)
    13 rlx-dce

then, as RLX's `CompilePipeline` does after the list, `rlx-clip-elementwise-regions`
with the target's caps when regions are kept. Unlike RLX, `rlx-dce` also runs
before the fusions: a dead user of a value makes it look used twice and blocks
the fusions it is part of, which the final `rlx-dce` would only unblock for a
second run; so one run reaches the fixed point (running the pipeline twice
changes nothing). `target=best` is the CPU list
with our beyond-RLX passes: `rlx-constant-fold` after the lowerings and again after
the fusions (`rlx-fuse-rms-norm-reshape` can move a reshape onto a constant),
`rlx-fuse-matmul-epilogue` before regions are marked, regions kept, no caps.

Targets (RLX's `supported_for_target`): cpu claims every fused op and
unfuses regions; metal lacks FusedAttentionBlock; cuda and rocm lack
FusedSwiGLU; tpu claims MatMul, ElementwiseRegion, FusedMatMulBiasAct and
FusedResidualLN only; wgpu claims everything. GPU targets and tpu keep
regions with RLX's 32-step / 16-input caps; cpu's caps are unbounded.

Each target also declares the MIR ops its kernels run (`Target.kernels`, what
`rlx-legalize{target=…}` and the dispatch report read; RLX's backends'
`supported_ops()`), from its kernel library and its fusion claims:

* `full` (cpu, best): every MIR op except `mir.if` / `mir.while` (RLX's backends lower
  control flow before anything else);
* `forward` (metal, cuda, rocm, wgpu): the same without the backward kernels (RLX runs
  those as CPU thunks only) and without the logical kernels group_norm,
  resize_nearest_2x, layer_norm_2d and conv_transpose_2d (the "common IR" path);
* `primitive` (tpu): matmul, the elementwise ops, reduce and the shape ops;

plus the fused ops the target claims (`mir.elementwise_region` only where regions
are kept, `mir.fused_matmul_epilogue` only for best), and none it does not claim.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from rlx_xdsl.dialects.mir import (
    ALL_OPS,
    backward,
    contraction,
    elementwise,
    fused,
    fused_regions,
    loss,
    reduction,
    regions,
    shape,
    vision,
)
from rlx_xdsl.dialects.mir.norm import GroupNormOp
from rlx_xdsl.transforms.dce import DeadCodeEliminationPass
from rlx_xdsl.transforms.fusion.attention_block import FuseAttentionBlockPass
from rlx_xdsl.transforms.fusion.control_flow import LowerControlFlowPass
from rlx_xdsl.transforms.fusion.dot_general import LowerDotGeneralPass
from rlx_xdsl.transforms.fusion.elementwise_regions import (
    ClipElementwiseRegionsPass,
    MarkElementwiseRegionsPass,
    UnfuseElementwiseRegionsPass,
)
from rlx_xdsl.transforms.fusion.fk_regions import (
    DecomposeFusionRegionsPass,
    FuseBatchPreprocessPass,
    FuseRegionProloguePass,
    MarkBatchSliceRegionsPass,
    MarkTransformRegionsPass,
)
from rlx_xdsl.transforms.fusion.matmul_bias_act import FuseMatmulBiasActPass
from rlx_xdsl.transforms.fusion.matmul_epilogue import FuseMatmulEpiloguePass
from rlx_xdsl.transforms.fusion.residual_norm import (
    FuseResidualLayerNormPass,
    FuseResidualRmsNormPass,
)
from rlx_xdsl.transforms.fusion.rms_norm_reshape import FuseRmsNormReshapePass
from rlx_xdsl.transforms.fusion.shared_input_matmul import FuseSharedInputMatmulPass
from rlx_xdsl.transforms.fusion.swiglu import FuseSwigluDualMatmulPass, FuseSwigluPass
from rlx_xdsl.transforms.statistics import Statistic, declared

ALL = frozenset(
    {
        "FusedAttentionBlock", "FusedMatMulBiasAct", "FusedResidualLN", "FusedResidualRmsNorm",
        "FusedSwiGLU", "FusedTransformerLayer", "MatMul", "ElementwiseRegion",
        "TransformRegion", "BatchElementwiseRegion",
    }
)  # fmt: skip
"""The RLX op kinds whose support decides which fusion passes a target runs."""


def _names(*ops: type) -> frozenset[str]:
    return frozenset(op.name for op in ops)


PRIMITIVE = _names(*elementwise.OPS, *shape.OPS, contraction.MatmulOp, reduction.ReduceOp)
"""The minimal primitive set: matmul, elementwise, reduce, shape ops."""

FUSED_OPS = {
    "FusedAttentionBlock": fused.FusedAttentionBlockOp,
    "FusedMatMulBiasAct": fused.FusedMatmulBiasActOp,
    "FusedResidualLN": fused.FusedResidualLayerNormOp,
    "FusedResidualRmsNorm": fused.FusedResidualRmsNormOp,
    "FusedSwiGLU": fused.FusedSwigluOp,
    "FusedTransformerLayer": fused.FusedTransformerLayerOp,
    "ElementwiseRegion": fused_regions.ElementwiseRegionOp,
    "TransformRegion": fused_regions.TransformRegionOp,
    "BatchElementwiseRegion": fused_regions.BatchElementwiseRegionOp,
}
"""The MIR op of each fused RLX kind a target may claim."""

LIBRARIES: dict[str, frozenset[str]] = {
    "full": _names(*ALL_OPS) - _names(regions.IfOp, regions.WhileOp),
    "primitive": PRIMITIVE,
}
LIBRARIES["forward"] = LIBRARIES["full"] - _names(
    *(op for op in backward.OPS if op is not backward.StopGradientOp),
    loss.SoftmaxCrossEntropyBackwardOp,
    GroupNormOp, vision.ResizeNearest2xOp, vision.LayerNorm2dOp, vision.ConvTranspose2dOp,
)  # fmt: skip
"""The unfused MIR ops a kernel library runs (see the module docstring)."""


@dataclass(frozen=True)
class Target:
    """What a backend claims: its fusions, region caps and kernels."""

    supports: frozenset[str]
    keep_regions: bool
    max_steps: int = 32
    max_inputs: int = 16
    beyond_rlx: bool = False
    library: str = "forward"
    native_fk_regions: bool = True
    """RLX's `apply_native_fk_defaults`: GPU-class targets and tpu keep FK regions; cpu does not."""

    @property
    def kernels(self) -> frozenset[str]:
        """The MIR ops the target runs natively: its library and the fused ops it claims."""
        claimed = {kind for kind in self.supports if kind != "ElementwiseRegion" or self.keep_regions}
        fused_ops = _names(*(op for kind, op in FUSED_OPS.items() if kind in claimed))
        if self.beyond_rlx:
            fused_ops |= _names(fused_regions.FusedMatmulEpilogueOp)
        unfused = LIBRARIES[self.library] - _names(*FUSED_OPS.values(), fused_regions.FusedMatmulEpilogueOp)
        return unfused | fused_ops


TARGETS: dict[str, Target] = {
    "cpu": Target(ALL, keep_regions=False, max_steps=0, max_inputs=0, library="full", native_fk_regions=False),
    "metal": Target(ALL - {"FusedAttentionBlock"}, keep_regions=True),
    "cuda": Target(ALL - {"FusedSwiGLU"}, keep_regions=True),
    "rocm": Target(ALL - {"FusedSwiGLU"}, keep_regions=True),
    "tpu": Target(
        frozenset({"MatMul", "ElementwiseRegion", "FusedMatMulBiasAct", "FusedResidualLN"}),
        keep_regions=True,
        library="primitive",
    ),
    "wgpu": Target(ALL, keep_regions=True),
    "best": Target(ALL, keep_regions=True, max_steps=0, max_inputs=0, beyond_rlx=True, library="full"),
}

FUSIONS: tuple[tuple[str | None, Callable[[], ModulePass]], ...] = (
    ("FusedAttentionBlock", FuseAttentionBlockPass),
    ("FusedMatMulBiasAct", FuseMatmulBiasActPass),
    ("FusedResidualLN", FuseResidualLayerNormPass),
    ("FusedResidualRmsNorm", FuseResidualRmsNormPass),
    (None, FuseRmsNormReshapePass),
    ("FusedSwiGLU", FuseSwigluDualMatmulPass),
    ("MatMul", FuseSharedInputMatmulPass),
    ("FusedSwiGLU", FuseSwigluPass),
)
"""RLX's fusion passes 3-10, each with the op kind a target must claim for it (None: always)."""


def _constant_fold() -> ModulePass:
    # Imported here: constant folding loads the interpreter (numpy, xDSL's interpreters),
    # which the RLX targets never need.
    from rlx_xdsl.transforms.constant_fold import ConstantFoldPass

    return ConstantFoldPass()


@dataclass(frozen=True)
class FkOptions:
    """RLX's FK region toggles (`FusionOptions`), defaults as RLX's."""

    fk_fusion: bool = True
    fuse_region_prologue: bool = True
    fuse_batch_preprocess: bool = True
    native_fk_regions: bool | None = None
    """None: the target's default."""


def fk_passes(profile: Target, fk: FkOptions) -> list[ModulePass]:
    """RLX's FK passes after the regions are marked, then the decomposition for targets
    that do not keep (or claim) transform and batch regions."""
    passes: list[ModulePass] = []
    if fk.fk_fusion:
        passes += [MarkBatchSliceRegionsPass(), MarkTransformRegionsPass()]
        if fk.fuse_region_prologue:
            passes.append(FuseRegionProloguePass())
        if fk.fuse_batch_preprocess:
            passes.append(FuseBatchPreprocessPass())
    native = profile.native_fk_regions if fk.native_fk_regions is None else fk.native_fk_regions
    if not (native and {"TransformRegion", "BatchElementwiseRegion"} <= profile.supports):
        passes.append(DecomposeFusionRegionsPass())
    return passes


def fusion_passes(
    target: str = "cpu", skip_fusion: bool = False, keep_regions: bool | None = None, fk: FkOptions = FkOptions()
) -> list[ModulePass]:
    """The passes `rlx-fusion-pipeline` runs for `target`, in RLX's order."""
    profile = TARGETS.get(target)
    if profile is None:
        raise ValueError(f"unknown fusion target '{target}' (expected one of: {', '.join(TARGETS)})")
    passes: list[ModulePass] = [LowerControlFlowPass(), LowerDotGeneralPass()]
    if skip_fusion:
        return passes
    if profile.beyond_rlx:
        passes.append(_constant_fold())
    passes.append(DeadCodeEliminationPass())  # dead users would block fusions that a second run then makes
    passes += [make() for kind, make in FUSIONS if kind is None or kind in profile.supports]
    if profile.beyond_rlx:  # folding again what the fusions exposed (a reshape moved onto a constant)
        passes += [_constant_fold(), FuseMatmulEpiloguePass()]
    keep = profile.keep_regions if keep_regions is None else keep_regions
    passes.append(MarkElementwiseRegionsPass(max_steps=profile.max_steps, max_inputs=profile.max_inputs))
    if keep:
        passes += fk_passes(profile, fk)
    if not keep:
        passes.append(UnfuseElementwiseRegionsPass())
    passes.append(DeadCodeEliminationPass())
    if keep:
        passes.append(ClipElementwiseRegionsPass(max_steps=profile.max_steps, max_inputs=profile.max_inputs))
    return passes


@dataclass(frozen=True)
class FusionPipelinePass(ModulePass):
    """Run RLX's fusion pass list for a target: lowerings, fusions, elementwise regions, DCE.

    target: cpu, metal, cuda, rocm, tpu, wgpu (RLX's lists) or best (adds our
    beyond-RLX passes); skip-fusion keeps only the two lowerings; keep-regions
    overrides whether the target keeps elementwise regions. Where regions are kept,
    RLX's FK passes follow the marking: fk-fusion (all of them), fuse-region-prologue
    and fuse-batch-preprocess (default true, as RLX); native-fk-regions keeps transform
    and batch regions (default: true on GPU-class targets and tpu, false on cpu, as
    RLX's `apply_native_fk_defaults`) where the target claims them, else
    rlx-decompose-fusion-regions expands them.
    """

    name = "rlx-fusion-pipeline"

    target: str = field(default="cpu", metadata={"syntax": "|".join(TARGETS), "example": "best"})
    skip_fusion: bool = False
    keep_regions: bool | None = field(default=None, metadata={"syntax": "true|false"})
    fk_fusion: bool = True
    fuse_region_prologue: bool = True
    fuse_batch_preprocess: bool = True
    native_fk_regions: bool | None = field(default=None, metadata={"syntax": "true|false"})

    def __post_init__(self) -> None:
        if self.target not in TARGETS:  # a bad option is a usage error, before any IR is read
            raise ValueError(f"target={self.target}: '{self.target}' is not one of {', '.join(TARGETS)}")

    @property
    def fk(self) -> FkOptions:
        return FkOptions(self.fk_fusion, self.fuse_region_prologue, self.fuse_batch_preprocess, self.native_fk_regions)

    @property
    def STATISTICS(self) -> tuple[Statistic, ...]:  # noqa: N802  (the statistics protocol's name)
        """Its passes' counters: their patterns count while it runs them."""
        passes = fusion_passes(self.target, self.skip_fusion, self.keep_regions, self.fk)
        return tuple(dict.fromkeys(stat for pass_ in passes for stat in declared(pass_)))

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for pass_ in fusion_passes(self.target, self.skip_fusion, self.keep_regions, self.fk):
            pass_.apply(ctx, op)
