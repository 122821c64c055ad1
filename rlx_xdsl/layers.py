"""The op groups, and the layers that register per-op knowledge group by group.

Every op of a dialect belongs to one group (`mir.elementwise`, `mir.norm`, ...), and every
layer that knows something per op (the dialect's op classes, interpreter kernels, VJP,
JVP and batching rules, linalg lowerings, JAX formulas, graph-generator recipes) keeps
one module per group, named after the group, inside its own package. This module holds
the one list of groups of each dialect and the one table of layers, so adding a group
is one line here (and a module in each layer), and `tests/test_registries.py` checks
that every layer covers every group.

A layer's registry (`VJP_RULES`, `JAX_OPS`, ...) never imports its entries: the pass
or tool that needs a registry filled calls `load(layer)` (once; later calls are free),
which imports the layer's group modules by name; each module registers its entries in
the registry when imported. Layers of passes whose rules are not grouped by op group
(unfuse rules, backward-kernel decompositions) list their modules here the same way.

May import: only the standard library (it is the bottom of the package).
"""

from __future__ import annotations

import importlib
import importlib.util
from functools import cache
from types import ModuleType

MIR_GROUPS = (
    "elementwise",
    "contraction",
    "shape",
    "indexing",
    "reduction",
    "norm",
    "attention",
    "conv",
    "loss",
    "signal",
    "backward",
    "regions",
    "structured",
    "fused",
    "fused_regions",
    "quant",
    "moe",
    "random",
    "vision",
    "splat",
)
"""The MIR op groups, in the dialect's order (`dialects/mir/<group>.py`)."""

HIR_GROUPS = ("linear", "norm", "attention", "conv", "blocks", "moe")
"""The HIR block-op groups, in the dialect's order (`dialects/hir/<group>.py`)."""

LAYERS: dict[str, tuple[str, tuple[str, ...]]] = {
    "mir-dialect": ("rlx_xdsl.dialects.mir", MIR_GROUPS),
    "mir-kernels": ("rlx_xdsl.interpreters.mir", MIR_GROUPS),
    "vjp": ("rlx_xdsl.autodiff.rules.mir", MIR_GROUPS),
    "jvp": ("rlx_xdsl.autodiff.jvp_rules.mir", MIR_GROUPS),
    "batching": ("rlx_xdsl.batching.rules.mir", MIR_GROUPS),
    "linalg": ("rlx_xdsl.conversions.mir_to_linalg", (*MIR_GROUPS, "lir")),  # and the LIR dialect
    "jax": ("rlx_xdsl.conversions.mir_to_jax", MIR_GROUPS),
    "mir-graphgen": ("rlx_xdsl.testing.graphgen.mir", MIR_GROUPS),
    "hir-dialect": ("rlx_xdsl.dialects.hir", HIR_GROUPS),
    "hir-kernels": ("rlx_xdsl.interpreters.hir", HIR_GROUPS),
    "hir-lowerings": ("rlx_xdsl.conversions.hir_to_mir", HIR_GROUPS),
    "hir-graphgen": ("rlx_xdsl.testing.graphgen.hir", HIR_GROUPS),
    "unfuse": ("rlx_xdsl.transforms.unfuse_rules", ("fused", "fused_regions", "moe", "structured")),
    "decompose-backward": (
        "rlx_xdsl.transforms.decompose_backward",
        ("activation", "attention", "conv", "indexing", "loss", "norm", "quant"),
    ),
}
"""Each layer's package and the groups it is organised by."""

NO_MODULE: dict[tuple[str, str], str] = {
    ("linalg", "fused_regions"): "the regions lower through their unfuse rules (mir_to_linalg/fused.py)",
}
"""The groups a layer has no module for, and why (`tests/test_registries.py` checks that
every other group has one, and that every op is covered)."""


def group_modules(package: str, groups: tuple[str, ...]) -> tuple[ModuleType, ...]:
    """Import `package.<group>` for each group that has a module there, in `groups` order."""
    names = (f"{package}.{group}" for group in groups)
    return tuple(importlib.import_module(name) for name in names if importlib.util.find_spec(name) is not None)


@cache
def load(layer: str) -> tuple[ModuleType, ...]:
    """Import the group modules of `layer` (a key of `LAYERS`), which register their entries."""
    package, groups = LAYERS[layer]
    return group_modules(package, groups)
