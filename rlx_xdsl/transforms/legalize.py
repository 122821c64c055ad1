"""`rlx-legalize{target supported}`: rewrite the ops a backend lacks into ops it has
(RLX's `rewrite_for_backend` / `legalize_for_backend`).

While some MIR op is outside the supported set, every rule the project has for it is
tried (unfuse rules of fused ops, backward-kernel decompositions, the
softmax-cross-entropy lowering, `mir.if` inlining and bounded `mir.while` unrolling,
`dot_general` as matmul, the logical-kernel lowerings: group_norm,
resize_nearest_2x, layer_norm_2d, conv_transpose_2d, and softmax, layer_norm and
rms_norm, rope, attention, conv and pool as matmul, reduce, elementwise and shape ops, grouped_matmul as
gather and matmul), one walk per round, at most
`MAX_ROUNDS` rounds; the rules' outputs are legalized in later rounds. What is
still unsupported then is an error at the first such op, listing them all.

`target` is `primitive` (matmul, the elementwise ops, reduce and the shape ops) or a
fusion target (cpu, metal, cuda, rocm, tpu, wgpu, best), whose kernels are declared
with its fusion pipeline (`fusion/pipeline.py`); `supported` (full op names)
overrides the target's set. `dispatch=common` lowers the logical kernels
(group_norm, resize_nearest_2x, layer_norm_2d, conv_transpose_2d) even on a target
that runs them (RLX's `RLX_KERNEL_DISPATCH=common`; `native`, the default, is its
PreferNative policy).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern
from xdsl.traits import IsTerminator

from rlx_xdsl import layers
from rlx_xdsl.ir.diagnostics import OpError
from rlx_xdsl.transforms.fusion.pipeline import PRIMITIVE
from rlx_xdsl.transforms.fusion.pipeline import TARGETS as FUSION_TARGETS
from rlx_xdsl.transforms.rewriting import apply_patterns
from rlx_xdsl.transforms.statistics import pattern_statistic

MAX_ROUNDS = 16

TARGETS: dict[str, frozenset[str]] = {
    "primitive": PRIMITIVE,
    **{name: target.kernels for name, target in FUSION_TARGETS.items()},
}
"""Each target's supported MIR ops."""


def rules() -> list[RewritePattern]:
    """Every rewrite the project has that replaces an op by simpler MIR."""
    from rlx_xdsl.transforms import decompose_backward, unfuse
    from rlx_xdsl.transforms.fusion.control_flow import InlineIf, UnrollWhile
    from rlx_xdsl.transforms.fusion.dot_general import LowerDotGeneral
    from rlx_xdsl.transforms.lower_logical_kernels import (
        LowerConvTranspose2d,
        LowerGroupNorm,
        LowerLayerNorm2d,
        LowerResizeNearest2x,
    )
    from rlx_xdsl.transforms.lower_sce import (
        LowerDenseLoss,
        LowerIndexedLoss,
        LowerLossBackward,
    )
    from rlx_xdsl.transforms.primitive_rules import (
        AttentionAsPrimitives,
        ConvAsPrimitives,
        GroupedMatmulAsPrimitives,
        LayerNormAsPrimitives,
        PoolAsPrimitives,
        RmsNormAsPrimitives,
        RopeAsPrimitives,
        SoftmaxAsPrimitives,
    )

    layers.load("unfuse")
    layers.load("decompose-backward")
    return [
        unfuse.UnfuseRegistered(),
        decompose_backward.DecomposeRegistered(frozenset()),
        LowerIndexedLoss(), LowerDenseLoss(), LowerLossBackward(),
        InlineIf(), UnrollWhile(), LowerDotGeneral(),
        LowerGroupNorm(), LowerResizeNearest2x(), LowerLayerNorm2d(), LowerConvTranspose2d(),
        SoftmaxAsPrimitives(), LayerNormAsPrimitives(), RmsNormAsPrimitives(),
        RopeAsPrimitives(), AttentionAsPrimitives(), ConvAsPrimitives(), PoolAsPrimitives(),
        GroupedMatmulAsPrimitives(),
    ]  # fmt: skip


def is_unsupported(op: Operation, supported: frozenset[str]) -> bool:
    """A MIR op outside `supported` (terminators go with their region op)."""
    return op.name.startswith("mir.") and op.name not in supported and not op.has_trait(IsTerminator)


class RewriteUnsupported(RewritePattern):
    """Apply the first rule that rewrites an unsupported op."""

    def __init__(self, supported: frozenset[str]):
        self.supported = supported
        self.rules = tuple(rules())

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        # The rules in order, as a greedy applier would try them, but without its erasure
        # of dead ops: legalisation rewrites unsupported ops and nothing else.
        if not is_unsupported(op, self.supported):
            return
        for rule in self.rules:
            rule.match_and_rewrite(op, rewriter)
            if rewriter.has_done_action:
                return


def rewrite_unsupported(module: ModuleOp, supported: frozenset[str]) -> tuple[int, list[Operation]]:
    """Rewrite until everything is supported or nothing changes (at most `MAX_ROUNDS`
    rounds); the rounds that changed the IR and the ops still unsupported."""
    pattern = RewriteUnsupported(supported)
    rounds = 0
    while rounds < MAX_ROUNDS and any(is_unsupported(op, supported) for op in module.walk()):
        if not apply_patterns(module, pattern):
            break
        rounds += 1
    return rounds, [op for op in module.walk() if is_unsupported(op, supported)]


def legalize(module: ModuleOp, supported: frozenset[str]) -> int:
    """`rewrite_unsupported`, failing at the first op left unsupported; the rounds."""
    rounds, left = rewrite_unsupported(module, supported)
    if left:
        kinds = sorted({op.name for op in left})
        raise OpError(
            left[0],
            f"'{left[0].name}' is not supported by the target and no rule rewrites it into "
            f"supported ops; still unsupported after {rounds} round(s): {', '.join(kinds)}",
        )
    return rounds


@dataclass(frozen=True)
class LegalizePass(ModulePass):
    """Rewrite ops a backend does not support into ones it does (RLX's rewrite_for_backend)."""

    name = "rlx-legalize"

    STATISTICS = (pattern_statistic(RewriteUnsupported),)

    target: str = field(default="primitive", metadata={"syntax": "|".join(TARGETS), "example": "primitive"})
    supported: tuple[str, ...] = field(
        default=(), metadata={"syntax": "OP_NAME,...", "example": "mir.matmul"}
    )
    dispatch: str = field(default="native", metadata={"syntax": "native|common", "example": "common"})
    """RLX's `KernelDispatchConfig`: `native` (PreferNative) keeps the logical kernels a
    target runs; `common` lowers them to common IR even there."""

    def __post_init__(self) -> None:
        """Bad options are usage errors, before any IR is read."""
        if self.target not in TARGETS:
            raise ValueError(f"target={self.target}: '{self.target}' is not one of {', '.join(TARGETS)}")
        if self.dispatch not in ("native", "common"):
            raise ValueError(f"dispatch={self.dispatch}: '{self.dispatch}' is not one of native, common")
        from rlx_xdsl.context import make_context

        ctx = make_context()
        unknown = [name for name in self.supported if ctx.get_optional_op(name) is None]
        if unknown:
            raise ValueError(f"supported={','.join(unknown)}: no such op")

    def supported_ops(self, ctx: Context) -> frozenset[str]:
        supported = frozenset(self.supported) if self.supported else TARGETS[self.target]
        if self.dispatch == "common":
            from rlx_xdsl.transforms.lower_logical_kernels import LOGICAL_KERNELS

            supported -= {op.name for op in LOGICAL_KERNELS}
        return supported

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        legalize(op, self.supported_ops(ctx))
