"""`rlx-prepare-ad`: rewrite a graph into ops that `rlx-grad` differentiates.

RLX's `prepare_graph_for_ad` runs a fixed sequence of rewrites before reverse
mode; here each is a named step in `PREPARE_STEPS`, run in this order:

* `lower-hir`: HIR block ops are lowered with the fusable policy (RLX's
  `lower_for_autodiff`: primitive chains rather than fused ops);
* `unfuse`: composite ops (fused ops, elementwise regions, `selective_scan`,
  `gated_delta_net`) that have an `rlx-unfuse` rule and no VJP rule of their own
  are expanded into primitive MIR (RLX's steps 1 and 2);
* `decompose-backward`: backward kernels (which have no VJP rules) become
  primitives through `rlx-decompose-backward`'s rules, so the gradient of a
  gradient can be taken (newer RLX's `decompose_backward_ops`);
* `lower-dot-general`: a `mir.dot_general` without a VJP rule becomes matmuls
  (`rlx-lower-dot-general`'s pattern; dot_general has a rule, so this is a
  fallback, as for every step: an op with a rule of its own is kept whole);
* `inline-if`: `mir.if` becomes both branches and `mir.where`, every result kept
  (`rlx-lower-control-flow`'s pattern);
* `unroll-while`: a bounded `mir.while` is unrolled (same pass); one without
  `max_iterations` is a located error;
* `inline-custom-fn`: a `mir.custom_fn` without a vjp body is inlined;
* `materialize-scan-bcasts`: a scan's bcasts become xs;
* `convert-scans-for-ad`: scans keep their trajectory for the backward sweep
  (these three are in `prepare_structured`);
* `legalize-multi-axis-reduce`: a reduce over several axes becomes a chain of
  single-axis reduces (inserted before the reduce, so the IR stays in
  topological order, unlike RLX's, which appends them at the end);
* `fuse-decomposed-gaussian-splat`: a `mir.gaussian_splat_prepare` feeding a
  `mir.gaussian_splat_rasterize` becomes one `mir.gaussian_splat_render`, the
  op with a VJP rule (`transforms/fusion/splat.py`).

The steps are defined, in order, in `prepare_steps.py` (a step without an
implementation yet is registered all the same, `pending` naming the issue that
fills it); this module and `prepare_structured` implement them. Each step rewrites only the ops it
`rewrites`; `rlx-grad` names the step in its "no VJP rule" error when one would
have removed the op (`step_rewriting`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)

from rlx_xdsl import dtypes, layers
from rlx_xdsl.autodiff import prepare_structured  # noqa: F401  (implements three of the steps)
from rlx_xdsl.autodiff.prepare_steps import (  # noqa: F401  (describe_steps: part of this module's API)
    PREPARE_STEPS,
    PrepareStep,
    describe_steps,
    rewrites_nothing,
)
from rlx_xdsl.autodiff.registry import VJP_RULES
from rlx_xdsl.dialects.base import tensor_type
from rlx_xdsl.dialects.mir.attrs import ReduceKind
from rlx_xdsl.dialects.mir.contraction import DotGeneralOp
from rlx_xdsl.dialects.mir.reduction import ReduceOp
from rlx_xdsl.dialects.mir.regions import IfOp, WhileOp
from rlx_xdsl.dialects.mir.splat import GaussianSplatPrepareOp, GaussianSplatRasterizeOp
from rlx_xdsl.ir.diagnostics import OpError
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.registry import OpClass
from rlx_xdsl.shapes import DYNAMIC
from rlx_xdsl.transforms.decompose_backward import DECOMPOSITIONS
from rlx_xdsl.transforms.fusion.control_flow import InlineIf, UnrollWhile
from rlx_xdsl.transforms.fusion.dot_general import LowerDotGeneral
from rlx_xdsl.transforms.fusion.splat import FuseDecomposedGaussianSplat
from rlx_xdsl.transforms.rewriting import apply_patterns
from rlx_xdsl.transforms.statistics import pattern_statistic
from rlx_xdsl.transforms.unfuse import UNFUSE_RULES


def _load_registries() -> None:
    layers.load("vjp")
    layers.load("unfuse")
    layers.load("decompose-backward")
    layers.load("hir-lowerings")


def step_rewriting(op: Operation | OpClass) -> str | None:
    """The step of `rlx-prepare-ad` that rewrites `op` (an op, or any op of a class) away, if any."""
    _load_registries()
    return next((step.name for step in PREPARE_STEPS if step.rewrites(op)), None)


def prepare_rewrites(op: Operation | OpClass) -> bool:
    """Some step of `rlx-prepare-ad` would rewrite `op` away."""
    return step_rewriting(op) is not None


def prepare_for_ad(module: ModuleOp, after_step: Callable[[PrepareStep], None] | None = None) -> None:
    """Run every step in order; `after_step(step)` is called after each (tests verify there)."""
    _load_registries()
    for step in PREPARE_STEPS:
        step.run(module)
        if after_step is not None:
            after_step(step)


# lower-hir ---------------------------------------------------------------------------------


def _lowered_for_ad(op: Operation | OpClass) -> bool:
    from rlx_xdsl.conversions.hir_to_mir.registry import LOWERINGS

    return op in LOWERINGS and op not in VJP_RULES


@PREPARE_STEPS.implement("lower-hir", rewrites=_lowered_for_ad)
def lower_hir(module: ModuleOp) -> None:
    from rlx_xdsl.conversions.hir_to_mir.lower import LowerBlockOp
    from rlx_xdsl.conversions.hir_to_mir.registry import Policy

    apply_patterns(module, LowerBlockOp(Policy.FUSABLE))


# unfuse --------------------------------------------------------------------------------


def _unfused_for_ad(op: Operation) -> bool:
    """Composite ops without a rule of their own are differentiated through their expansion."""
    return op in UNFUSE_RULES and op not in VJP_RULES


class UnfuseForAD(RewritePattern):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if _unfused_for_ad(op):
            e = Emitter.replacing(op, rewriter)
            e.replace(op, *UNFUSE_RULES[op](e, op))


@PREPARE_STEPS.implement("unfuse", rewrites=_unfused_for_ad)
def unfuse(module: ModuleOp) -> None:
    apply_patterns(module, UnfuseForAD(), recursive=True)


# decompose-backward -----------------------------------------------------------------


def _decomposed_for_ad(op: Operation) -> bool:
    return op in DECOMPOSITIONS and op not in VJP_RULES


class DecomposeForAD(RewritePattern):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if _decomposed_for_ad(op):
            e = Emitter.replacing(op, rewriter)
            e.replace(op, DECOMPOSITIONS[op](e, op))


@PREPARE_STEPS.implement("decompose-backward", rewrites=_decomposed_for_ad)
def decompose_backward(module: ModuleOp) -> None:
    apply_patterns(module, DecomposeForAD())


# lower-dot-general, inline-if, unroll-while: rlx-lower-dot-general's and rlx-lower-control-flow's patterns


def _dot_general_lowered_for_ad(op: Operation | OpClass) -> bool:
    """`mir.dot_general` has a rule of its own (fewer ops than its matmul form); a lowering is a fallback."""
    return (op is DotGeneralOp or isinstance(op, DotGeneralOp)) and op not in VJP_RULES


class LowerDotGeneralForAD(LowerDotGeneral):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if _dot_general_lowered_for_ad(op):
            super().match_and_rewrite(op, rewriter)


@PREPARE_STEPS.implement("lower-dot-general", rewrites=_dot_general_lowered_for_ad)
def lower_dot_general(module: ModuleOp) -> None:
    apply_patterns(module, LowerDotGeneralForAD())


def _region_op(op_class: type[Operation]) -> Callable[[Operation | OpClass], bool]:
    return lambda op: (op is op_class or isinstance(op, op_class)) and op not in VJP_RULES


@PREPARE_STEPS.implement("inline-if", rewrites=_region_op(IfOp))
def inline_if(module: ModuleOp) -> None:
    """Nested ifs too, those in while bodies included (their copies are then if-free)."""
    apply_patterns(module, InlineIf(), recursive=True)


@PREPARE_STEPS.implement("unroll-while", rewrites=_region_op(WhileOp))
def unroll_while(module: ModuleOp) -> None:
    for op in module.walk():
        if isinstance(op, WhileOp) and op.iteration_limit is None:
            reason = "cannot be unrolled for autodiff (give the loop a bound)"
            raise OpError(op, f"'{op.name}' without max_iterations {reason}")
    apply_patterns(module, UnrollWhile(), recursive=True)


# legalize-multi-axis-reduce ---------------------------------------------------------


def _legalizable(op: Operation) -> bool:
    """A reduce over several axes, except an integer mean (truncating twice is not the mean)
    and a dropped-axes result with several `?` dims (one reshape cannot restore it)."""
    if not isinstance(op, ReduceOp) or len(op.axes) < 2:
        return False
    if not dtypes.is_float(tensor_type(op.input).element_type) and op.kind.data == ReduceKind.MEAN:
        return False
    return op.keep_dim is not None or tensor_type(op.result).get_shape().count(DYNAMIC) <= 1


class SingleAxisReduces(RewritePattern):
    """`reduce axes=[a, b]` = `reduce axes=[a] keep_dim` then `reduce axes=[b] keep_dim` (+ reshape).

    Reducing one axis at a time over the same elements gives the same sum, max,
    min and product, and (every slice having the same count) the same mean; in
    f16/bf16 each step rounds its result.
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ReduceOp, rewriter: PatternRewriter) -> None:
        if not _legalizable(op):
            return
        e = Emitter.replacing(op, rewriter)
        value = op.input
        for axis in op.normalized_axes():
            value = e.mir.reduce(value, kind=op.kind.data, axes=[axis], keep_dim=True)
        if op.keep_dim is None:
            shape = tensor_type(op.result).get_shape()
            value = e.mir.reshape(value, new_shape=[-1 if d == DYNAMIC else d for d in shape])
        e.replace(op, value)


@PREPARE_STEPS.implement("legalize-multi-axis-reduce", rewrites=rewrites_nothing)
def legalize_multi_axis_reduce(module: ModuleOp) -> None:
    apply_patterns(module, SingleAxisReduces(), recursive=True)


# fuse-decomposed-gaussian-splat ------------------------------------------------------


_SPLAT_HALVES = (GaussianSplatPrepareOp, GaussianSplatRasterizeOp)


def _splat_half(op: Operation | OpClass) -> bool:
    """The two halves of a render have no VJP rule: only their fusion into a render does."""
    is_half = op in _SPLAT_HALVES if isinstance(op, type) else isinstance(op, _SPLAT_HALVES)
    return is_half and op not in VJP_RULES


@PREPARE_STEPS.implement("fuse-decomposed-gaussian-splat", rewrites=_splat_half)
def fuse_decomposed_gaussian_splat(module: ModuleOp) -> None:
    apply_patterns(module, FuseDecomposedGaussianSplat(), recursive=True)


@dataclass(frozen=True)
class PrepareAdPass(ModulePass):
    """Rewrite fused, control-flow and structured ops into ops rlx-grad differentiates.

    RLX's `prepare_graph_for_ad`, step by step: lower HIR, unfuse composite ops, decompose
    backward kernels, lower dot_general, inline if, unroll while, inline
    custom_fn, materialise scan bcasts, convert scans, legalise multi-axis reduces, fuse
    decomposed Gaussian splats.
    """

    name = "rlx-prepare-ad"
    STATISTICS = tuple(
        map(
            pattern_statistic,
            (
                UnfuseForAD, DecomposeForAD, LowerDotGeneralForAD, InlineIf, UnrollWhile, SingleAxisReduces,
                FuseDecomposedGaussianSplat,
            ),
        )
    )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        prepare_for_ad(op)

