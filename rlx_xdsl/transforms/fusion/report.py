"""The fusion report: what fused, what was missed, and why (after RLX's `FusionReport`).

    report = FusionReport.analyze(before, after)   # two modules (or functions)
    report = FusionReport.scan(module)             # one module, before = after
    print(report)                                  # what `rlx-opt --fusion-report` prints
    report.to_json()                               # the same, as a dict (`--fusion-report=json`)

Counts follow RLX 0.2.6's `fusion_report.rs`: node counts before and after,
matmuls before and after, and per-kind counts on the after graph; the miss
scanners run on the after graph and give each miss a `MissReason` (RLX's
reason names, kept as identifiers in the JSON form) described in words, with
a hint in this project's terms: its passes, `rlx-fusion-pipeline` targets and
HIR ops. A "node" is what RLX's graph holds: function arguments plus the ops
of the function body (terminators excepted; a region op counts once).

Where RLX names a bare node id, a miss here names the op's source location
(`FILE:LINE:COL`, `locations.op_position`) and, when the op comes from an HIR
block, that block's label (a `NameLoc` in its location). Uses count function
results, so a matmul the function also returns is a `MultiConsumer` miss.

Beyond RLX: an activation-free `fused_matmul_bias_act` followed by an
activation the pass does not fuse is reported (RLX reports only unfused
matmuls); the add of a full-shaped value after a matmul is a `ResidualAdd`,
not a bias of too high a rank; a matmul whose add went into a residual norm
is not a miss, and neither is a matmul no add follows (RLX's
`NonAddBiasConsumer`: a bias-free layer has no bias to fuse); an add left in
front of a norm is a `residual_norm` miss; the
summary also counts attention blocks, residual norms and matmul epilogues.
`MirBaseline` is the graph `rlx-opt --fusion-report` counts as "before": the
input's first MIR form (after `rlx-lower-hir` when the pipeline lowers HIR).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field, fields
from typing import Any

from xdsl.dialects import func
from xdsl.dialects.builtin import CallSiteLoc, FusedLoc, ModuleOp, NameLoc
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.traits import IsTerminator

from rlx_xdsl.dialects.hir.base import HirOperation
from rlx_xdsl.dialects.mir.attention import AttentionOp, RopeOp
from rlx_xdsl.dialects.mir.attrs import Activation
from rlx_xdsl.dialects.mir.contraction import MatmulOp
from rlx_xdsl.dialects.mir.elementwise import AddOp, MulOp, SiluOp, UnaryOperation
from rlx_xdsl.dialects.mir.fused import (
    FusedAttentionBlockOp,
    FusedMatmulBiasActOp,
    FusedResidualLayerNormOp,
    FusedResidualNormOperation,
    FusedResidualRmsNormOp,
    FusedSwigluOp,
    FusedTransformerLayerOp,
)
from rlx_xdsl.dialects.mir.fused_regions import (
    BatchElementwiseRegionOp,
    ElementwiseRegionOp,
    FusedMatmulEpilogueOp,
    TransformRegionOp,
)
from rlx_xdsl.dialects.mir.norm import LayerNormOp, RmsNormOp
from rlx_xdsl.dialects.mir.shape import NarrowOp
from rlx_xdsl.ir.locations import op_position
from rlx_xdsl.shapes import shape_of
from rlx_xdsl.transforms.fusion.matmul_bias_act import EPILOGUE_ACTIVATIONS
from rlx_xdsl.transforms.fusion.residual_norm import (
    anchor,
    one_element_type,
    other_users,
    residual_add,
    split_bias,
)

BEST = "`rlx-fusion-pipeline{target=best}`"

HINTS = {
    "MultiConsumer": "rlx-fuse-matmul-bias-act needs the product used once; "
    "a layer written as `hir.linear_fused` lowers to mir.fused_matmul_bias_act directly",
    "BiasRankTooHigh": f"rlx-fuse-matmul-bias-act takes a bias of rank 0 or 1; {BEST} fuses any broadcast add "
    "into the matmul as an epilogue",
    "ResidualAdd": f"not a bias: {BEST} fuses it into the matmul as an epilogue (rlx-fuse-matmul-epilogue)",
    "UnsupportedEpilogueActivation": f"rlx-fuse-matmul-bias-act folds gelu and silu only; {BEST} fuses any "
    "elementwise epilogue",
    "SharedMatmulCount": "rlx-fuse-shared-input-matmul fuses two matmuls of one input, not more",
    "SwigluGateBeforeUp": "rlx-fuse-swiglu-dual-matmul wants the up matmul first; `rlx-fusion-pipeline` "
    "still fuses the pair (rlx-fuse-shared-input-matmul, then rlx-fuse-swiglu with gate_first)",
    "SwigluNotSharedInput": "the gate and up matmuls must read the same input",
    "NotFused": "run rlx-fuse-shared-input-matmul (`rlx-opt --print-between-passes` shows what each pass did)",
    "SumDtypesDiffer": "a fused op hides no promotion: cast the summands to one element type first",
    "NoPlaceForSum": "a user of the sum comes before the norm and gamma or beta is computed after the add: "
    "compute them before the add",
    "NormNotFused": "run rlx-fuse-residual-rms-norm / rlx-fuse-residual-layer-norm "
    "(a `rlx-fusion-pipeline` target runs them when it claims the fused norm)",
    "LoraScaleNotFolded": "rlx-fuse-lora folds a scalar constant of the adapter's element type that f32 holds "
    "exactly (mir.lora_matmul's scale is an f32 property)",
    "LoraSharedIntermediate": "rlx-fuse-lora needs x @ w, x @ a and the scaled adapter used only in the chain",
    "LoraNotFused": "run rlx-fuse-lora",
}
"""The hint for each `MissReason` kind (RLX's and ours), in this project's terms."""

DESCRIPTIONS = {
    "MultiConsumer": "the product has {count} users",
    "BiasRankTooHigh": "a bias of rank {rank}",
    "ResidualAdd": "a residual add of a full-shaped value",
    "UnsupportedEpilogueActivation": "activation {activation} is not folded",
    "SharedMatmulCount": "{count} matmuls share this input",
    "SwigluGateBeforeUp": "the gate matmul comes before the up matmul",
    "SwigluNotSharedInput": "gate and up read different inputs",
    "NotFused": "two matmuls of one input are left apart",
    "SumDtypesDiffer": "the residual sum mixes element types",
    "NoPlaceForSum": "no place sees both the sum's users and the norm's gamma and beta",
    "NormNotFused": "an add and its norm are left unfused",
    "LoraScaleNotFolded": "the adapter's scale is not a foldable scalar",
    "LoraSharedIntermediate": "an intermediate of the LoRA chain has other users",
    "LoraNotFused": "a LoRA chain x @ w + s * ((x @ a) @ b) is left unfused",
}
"""What each `MissReason` kind says in the text report, its detail filled in."""


@dataclass(frozen=True)
class MissReason:
    """Why a recognisable pattern did not collapse: RLX's `MissReason` and its payload."""

    kind: str
    rank: int | None = None
    count: int | None = None
    activation: Activation | None = None

    def __str__(self) -> str:
        """In words: `a bias of rank 2`, `activation exp is not folded`."""
        activation = None if self.activation is None else self.activation.value
        return DESCRIPTIONS[self.kind].format(rank=self.rank, count=self.count, activation=activation)

    @property
    def hint(self) -> str:
        return HINTS[self.kind]


@dataclass(frozen=True)
class MissedFusion:
    """One fusion opportunity left in the graph, at an op's source position."""

    pattern: str
    op: Operation = field(repr=False, compare=False)
    reason: MissReason
    location: str | None
    label: str | None

    @property
    def hint(self) -> str:
        return self.reason.hint

    def __str__(self) -> str:
        where = self.location or self.op.name
        context = f" ({self.label})" if self.label else ""
        return f"{self.pattern} @ {where}{context} — {self.reason} → {self.hint}"

    def to_json(self) -> dict[str, Any]:
        detail = {k: v for k, v in (("rank", self.reason.rank), ("count", self.reason.count)) if v is not None}
        if self.reason.activation is not None:
            detail["activation"] = self.reason.activation.value
        return {
            "pattern": self.pattern,
            "op": self.op.name,
            "location": self.location,
            "label": self.label,
            "reason": self.reason.kind,
            "detail": detail,
            "hint": self.hint,
        }


def hir_label(location: Attribute) -> str | None:
    """The name of the first `NameLoc` in a location (the HIR block an op was lowered from)."""
    match location:
        case NameLoc():
            return location.desc.data
        case CallSiteLoc():
            return hir_label(location.callee) or hir_label(location.caller)
        case FusedLoc():
            return next(filter(None, map(hir_label, location.locations.data)), None)
        case _:
            return None


def missed(pattern: str, op: Operation, reason: MissReason) -> MissedFusion:
    position = op_position(op)
    return MissedFusion(pattern, op, reason, str(position) if position else None, hir_label(op.location))


# What is counted -----------------------------------------------------------------------

COUNTED: dict[str, type[Operation]] = {
    "attention": AttentionOp,
    "rope": RopeOp,
    "narrow": NarrowOp,
    "silu": SiluOp,
    "mul": MulOp,
    "fused_matmul_bias_act": FusedMatmulBiasActOp,
    "fused_swiglu": FusedSwigluOp,
    "fused_residual_ln": FusedResidualLayerNormOp,
    "fused_residual_rms_norm": FusedResidualRmsNormOp,
    "fused_attention_block": FusedAttentionBlockOp,
    "fused_transformer_layer": FusedTransformerLayerOp,
    "elementwise_region": ElementwiseRegionOp,
    "transform_region": TransformRegionOp,
    "batch_elementwise_region": BatchElementwiseRegionOp,
    "fused_matmul_epilogue": FusedMatmulEpilogueOp,
}
"""RLX's per-kind counters (plus our epilogue op), by the op class they count; `fk_prologue_region`
counts the elementwise regions with a prologue (also counted in `elementwise_region`, as RLX)."""


def functions(root: ModuleOp | func.FuncOp) -> list[func.FuncOp]:
    return [root] if isinstance(root, func.FuncOp) else [op for op in root.walk() if isinstance(op, func.FuncOp)]


def graph_ops(root: ModuleOp | func.FuncOp) -> list[Operation]:
    """Every op of the functions' bodies, nested ones included (RLX's sub-graphs are graphs too)."""
    return [op for f in functions(root) for op in f.body.walk() if not op.has_trait(IsTerminator)]


def node_count(root: ModuleOp | func.FuncOp) -> int:
    """RLX's `graph.len()`: arguments plus top-level ops (a region op is one node)."""
    return sum(
        len(f.args) + sum(1 for op in f.body.block.ops if not op.has_trait(IsTerminator)) for f in functions(root)
    )


def op_counts(root: ModuleOp | func.FuncOp) -> Counter[type[Operation]]:
    return Counter(type(op) for op in graph_ops(root))


# The scanners ---------------------------------------------------------------------------


def uses(value: SSAValue) -> list[Operation]:
    """The ops using `value`, once per use; a function result counts (it is a consumer)."""
    return [use.operation for use in value.uses]


def scan_matmul_bias_act(ops: list[Operation]) -> list[MissedFusion]:
    """Matmuls that did not become `fused_matmul_bias_act`, and why."""
    out = []
    for op in ops:
        if isinstance(op, MatmulOp):
            reason = matmul_miss(op)
        elif isinstance(op, FusedMatmulBiasActOp) and op.kind is None:
            reason = activation_miss(op.result)
        else:
            continue
        if reason is not None:
            out.append(missed("matmul_bias_act", op, reason))
    return out


def matmul_miss(mm: MatmulOp) -> MissReason | None:
    users = uses(mm.result)
    if len(users) != 1:
        return MissReason("MultiConsumer", count=len(users)) if users else None
    add = users[0]
    if isinstance(add, FusedResidualNormOperation) and mm.result in add.summands().values():
        return None  # its residual add went into the norm
    if isinstance(add, FusedSwigluOp):
        return None  # the SwiGLU projection: the fused op is built to read it
    if not isinstance(add, AddOp):
        return None  # no bias: nothing for matmul_bias_act to fuse (a bias-free layer is no miss)
    bias = add.rhs if add.lhs is mm.result else add.lhs
    bias_shape = shape_of(bias.type)
    if len(bias_shape) > 1:
        residual = tuple(bias_shape) == tuple(shape_of(add.result.type))
        return MissReason("ResidualAdd") if residual else MissReason("BiasRankTooHigh", rank=len(bias_shape))
    return activation_miss(add.result)


def activation_miss(value: SSAValue) -> MissReason | None:
    """An activation consuming `value` alone that the fusion does not fold."""
    users = uses(value)
    if len(users) == 1 and isinstance(users[0], UnaryOperation) and users[0].KIND not in EPILOGUE_ACTIVATIONS:
        return MissReason("UnsupportedEpilogueActivation", activation=users[0].KIND)
    return None


def scan_shared_input_matmul(ops: list[Operation]) -> list[MissedFusion]:
    """Matmuls still sharing their input: a fusable pair (`NotFused`), or more (`SharedMatmulCount`)."""
    groups: dict[SSAValue, list[MatmulOp]] = {}
    for op in ops:
        if isinstance(op, MatmulOp):
            groups.setdefault(op.lhs, []).append(op)
    out = []
    for matmuls in groups.values():
        if len(matmuls) == 2:
            w1, w2 = (shape_of(m.rhs.type) for m in matmuls)
            if len(w1) == 2 and len(w2) == 2 and w1[0] == w2[0]:
                out.append(missed("shared_input_matmul", matmuls[0], MissReason("NotFused")))
        elif len(matmuls) > 2:
            out.append(missed("shared_input_matmul", matmuls[0], MissReason("SharedMatmulCount", count=len(matmuls))))
    return out


def scan_swiglu(ops: list[Operation]) -> list[MissedFusion]:
    """`mul(x @ w_up, silu(x @ w_gate))` left unfused: not one input, or the gate declared first."""
    position = {op: index for index, op in enumerate(ops)}
    out = []
    for op in ops:
        if not isinstance(op, MulOp):
            continue
        lhs, rhs = op.lhs.owner, op.rhs.owner
        if isinstance(rhs, SiluOp):
            up, silu = lhs, rhs
        elif isinstance(lhs, SiluOp):
            up, silu = rhs, lhs
        else:
            continue
        gate = silu.input.owner
        if not isinstance(up, MatmulOp) or not isinstance(gate, MatmulOp):
            continue
        if up.lhs is not gate.lhs:
            out.append(missed("swiglu", op, MissReason("SwigluNotSharedInput")))
        elif position.get(gate, -1) < position.get(up, -1):
            out.append(missed("swiglu", op, MissReason("SwigluGateBeforeUp")))
    return out


def scan_residual_norm(ops: list[Operation]) -> list[MissedFusion]:
    """Norms still reading an add, and what kept `rlx-fuse-residual-*-norm` from fusing them."""
    out = []
    for op in ops:
        if not isinstance(op, (LayerNormOp, RmsNormOp)) or (add := residual_add(op)) is None:
            continue
        adds, x, residual, bias = split_bias(add)
        if not one_element_type(x, residual, bias):
            reason = "SumDtypesDiffer"
        elif anchor(adds, op, other_users(add, op)) is None:
            reason = "NoPlaceForSum"
        else:
            reason = "NormNotFused"
        out.append(missed("residual_norm", op, MissReason(reason)))
    return out


def lora_miss(add: AddOp) -> MissReason | None:
    """Why `add` reads a LoRA chain that `rlx-fuse-lora` left apart, or None if it reads none."""
    from rlx_xdsl.transforms.fusion.lora import adapter_of, f32_scalar

    for base, adapter in ((add.lhs, add.rhs), (add.rhs, add.lhs)):
        mm, mul = base.owner, adapter.owner
        up = mul if isinstance(mul, MatmulOp) else None
        factors: list[SSAValue] = []
        if isinstance(mul, MulOp):
            for product, factor in ((mul.lhs, mul.rhs), (mul.rhs, mul.lhs)):
                if isinstance(product.owner, MatmulOp):
                    up, factors = product.owner, [factor]
        down = up.lhs.owner if up is not None else None
        if not (isinstance(mm, MatmulOp) and isinstance(down, MatmulOp) and down.lhs is mm.lhs):
            continue
        if factors and (f32_scalar(factors[0]) is None or mul.result.type != up.result.type):
            return MissReason("LoraScaleNotFolded")
        if adapter_of(adapter, add) is None or len(uses(base)) != 1:
            return MissReason("LoraSharedIntermediate")
        return MissReason("LoraNotFused")
    return None


def scan_lora(ops: list[Operation]) -> list[MissedFusion]:
    """Adds of `x @ w` and a scaled `(x @ a) @ b` that did not become `mir.lora_matmul` (beyond RLX)."""
    return [missed("lora", op, reason) for op in ops if isinstance(op, AddOp) and (reason := lora_miss(op))]


def scan_misses(root: ModuleOp | func.FuncOp) -> list[MissedFusion]:
    ops = graph_ops(root)
    return [
        *scan_matmul_bias_act(ops),
        *scan_shared_input_matmul(ops),
        *scan_swiglu(ops),
        *scan_residual_norm(ops),
        *scan_lora(ops),
    ]


# The report -------------------------------------------------------------------------------


@dataclass
class FusionReport:
    """Before/after fusion statistics and the missed-pattern tally (RLX's fields and order)."""

    nodes_before: int = 0
    nodes_after: int = 0
    matmul_before: int = 0
    attention: int = 0
    rope: int = 0
    narrow: int = 0
    matmul_after: int = 0
    silu: int = 0
    mul: int = 0
    fused_matmul_bias_act: int = 0
    fused_swiglu: int = 0
    fused_residual_ln: int = 0
    fused_residual_rms_norm: int = 0
    fused_attention_block: int = 0
    fused_transformer_layer: int = 0
    elementwise_region: int = 0
    transform_region: int = 0
    batch_elementwise_region: int = 0
    fk_prologue_region: int = 0
    fused_matmul_epilogue: int = 0
    """Beyond RLX: matmuls with a fused epilogue (not in RLX's summary line)."""
    missed: list[MissedFusion] = field(default_factory=list)

    @classmethod
    def analyze(cls, before: ModuleOp | func.FuncOp, after: ModuleOp | func.FuncOp) -> FusionReport:
        """Compare the graph before fusion with the result (counts are of `after` unless named `_before`)."""
        counts = op_counts(after)
        return cls(
            nodes_before=node_count(before),
            nodes_after=node_count(after),
            matmul_before=op_counts(before)[MatmulOp],
            matmul_after=counts[MatmulOp],
            missed=scan_misses(after),
            **{name: counts[op_class] for name, op_class in COUNTED.items()},
            fk_prologue_region=sum(
                1 for op in graph_ops(after) if isinstance(op, ElementwiseRegionOp) and op.prologue is not None
            ),
        )

    @classmethod
    def scan(cls, graph: ModuleOp | func.FuncOp) -> FusionReport:
        """The report of one graph, taken as both before and after."""
        return cls.analyze(graph, graph)

    def _missed_in(self, pattern: str) -> int:
        return sum(1 for m in self.missed if m.pattern == pattern)

    def missed_matmul_bias_act(self) -> int:
        return self._missed_in("matmul_bias_act")

    def missed_swiglu(self) -> int:
        return self._missed_in("swiglu")

    def missed_shared_matmul(self) -> int:
        return self._missed_in("shared_input_matmul")

    def missed_residual_norm(self) -> int:
        return self._missed_in("residual_norm")

    def summary_line(self) -> str:
        """RLX's one-line summary (0.2.6 fields), with our fused ops and misses added."""
        return (
            f"nodes={self.nodes_before}→{self.nodes_after} matmul={self.matmul_before}→{self.matmul_after} "
            f"fused_mm_act={self.fused_matmul_bias_act} fused_swiglu={self.fused_swiglu} "
            f"fused_attention_block={self.fused_attention_block} "
            f"fused_residual_norm={self.fused_residual_ln + self.fused_residual_rms_norm} "
            f"fused_mm_epilogue={self.fused_matmul_epilogue} "
            f"elementwise_region={self.elementwise_region} transform_region={self.transform_region} "
            f"batch_region={self.batch_elementwise_region} fk_prologue={self.fk_prologue_region} "
            f"missed_mm_act={self.missed_matmul_bias_act()} missed_swiglu={self.missed_swiglu()} "
            f"missed_shared_mm={self.missed_shared_matmul()} missed_residual_norm={self.missed_residual_norm()}"
        )

    def __str__(self) -> str:
        """As RLX's `Display`: a header, the summary line, then one line per miss."""
        lines = ["fusion report:", f"  {self.summary_line()}"]
        if self.missed:
            lines.append("  missed patterns:")
            lines += [f"    {m}" for m in self.missed]
        return "\n".join(lines) + "\n"

    def to_json(self) -> dict[str, Any]:
        """Every counter, the summary line and the misses, for `--fusion-report=json`."""
        counters = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "missed"}
        return {
            **counters,
            "missed_matmul_bias_act": self.missed_matmul_bias_act(),
            "missed_swiglu": self.missed_swiglu(),
            "missed_shared_matmul": self.missed_shared_matmul(),
            "missed_residual_norm": self.missed_residual_norm(),
            "summary": self.summary_line(),
            "missed": [m.to_json() for m in self.missed],
        }

    def render(self, form: str = "text") -> str:
        """The report as `text` or `json`."""
        return json.dumps(self.to_json(), indent=2, ensure_ascii=False) + "\n" if form == "json" else str(self)


class MirBaseline:
    """The graph `--fusion-report` counts as "before": the first MIR form of the input.

    `offer` it the module before the pipeline and after each pass; it keeps a copy
    of the first one without HIR ops (so a pipeline that starts with `rlx-lower-hir`
    compares MIR with MIR), or of the input when the HIR is never lowered.
    """

    def __init__(self) -> None:
        self.graph: ModuleOp | None = None
        self._is_mir = False

    def offer(self, module: ModuleOp) -> None:
        if self._is_mir:
            return
        self._is_mir = not any(isinstance(op, HirOperation) for op in module.walk())
        if self._is_mir or self.graph is None:
            self.graph = module.clone()
