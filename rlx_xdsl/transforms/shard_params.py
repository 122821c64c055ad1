"""`rlx-shard-params`: split every large parameter over one mesh axis (ZeRO-3 / FSDP).

`rlx-shard-params{axis=data min-size=65536}` writes `rlx.sharding` on each `rlx.param`
argument of every function that has at least `min-size` elements: the parameter is
split over the mesh axis `axis` along one dimension, chosen as

* the largest dimension that is not split already and that the axis size divides
  (equal sizes: the first of them), so each device holds `1/axis-size` of it;
* none, when no dimension qualifies: the parameter stays as it was (replicated, or
  split only over its other axes), as does a parameter already split over `axis`.

A parameter split over another axis already (tensor parallelism over `model`) keeps that
split and gains `axis` on another dimension (2-D: FSDP over `data` x Megatron over `model`).
Run it before `rlx-train-step`, which gives each parameter's optimizer state and
updated value the parameter's sharding. Only the XLA backend applies shardings
(docs/distributed.md): XLA all-gathers a split parameter where the forward needs it
whole and reduce-scatters its gradient, which is ZeRO-3 (Rajbhandari et al. 2020) /
PyTorch FSDP (`fully_shard`), done by XLA's SPMD partitioner.

Errors (at the module): no `rlx.mesh`, or a mesh without `axis`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    ModuleOp,
    StringAttr,
    TensorType,
    UnitAttr,
)
from xdsl.ir import Attribute
from xdsl.passes import ModulePass

from rlx_xdsl.ir.diagnostics import OpError
from rlx_xdsl.ir.graph import is_param
from rlx_xdsl.ir.sharding import MESH_ATTR, SHARDING_ATTR, read_layout, read_mesh
from rlx_xdsl.shapes import DYNAMIC
from rlx_xdsl.transforms.statistics import Statistic

WHO = "rlx-shard-params"


def split_dim(shape: list[int], spec: tuple[tuple[str, ...], ...], parts: int) -> int | None:
    """The dimension to split over `parts` devices: the largest unsplit one `parts`
    divides (the first of equal ones), None without one."""
    candidates = [d for d, size in enumerate(shape) if not spec[d] and size != DYNAMIC and size % parts == 0]
    return max(candidates, key=lambda d: (shape[d], -d), default=None)


def shard_params(module: ModuleOp, axis: str, min_size: int) -> None:
    """Write `rlx.sharding` over `axis` on every parameter of at least `min_size` elements."""
    mesh = read_mesh(module)
    if not mesh:
        raise OpError(module, f"'{WHO}' needs a device mesh: the module has no '{MESH_ATTR}'")
    if axis not in mesh:
        known = ", ".join(f"'{a}'" for a in mesh)
        raise OpError(module, f"'{WHO}' axis={axis} is not an axis of the module's '{MESH_ATTR}' (axes: {known})")
    for f in module.ops:
        if isinstance(f, func.FuncOp):
            _shard_function(module, f, axis, mesh[axis], min_size)


def _shard_function(module: ModuleOp, f: func.FuncOp, axis: str, parts: int, min_size: int) -> None:
    layout = read_layout(module, f)
    types = f.function_type.inputs.data
    entries = [dict(a.data) for a in f.arg_attrs.data] if f.arg_attrs is not None else [{} for _ in types]
    changed = False
    for index, arg_type in enumerate(types):
        if not is_param(f, index) or not isinstance(arg_type, TensorType):
            continue
        shape = list(arg_type.get_shape())
        spec = layout.args[index] or tuple(() for _ in shape)
        if DYNAMIC in shape or math.prod(shape) < min_size or any(axis in axes for axes in spec):
            continue
        dim = split_dim(shape, spec, parts)
        if dim is None:
            continue
        new = [*spec[:dim], (axis,), *spec[dim + 1 :]]
        entries[index][SHARDING_ATTR] = ArrayAttr([_entry(axes) for axes in new])
        SHARDED.add()
        changed = True
    if changed:
        f.arg_attrs = ArrayAttr([DictionaryAttr(e) for e in entries])


def _entry(axes: tuple[str, ...]) -> Attribute:
    if not axes:
        return UnitAttr()
    if len(axes) == 1:
        return StringAttr(axes[0])
    return ArrayAttr([StringAttr(a) for a in axes])


SHARDED = Statistic("num-sharded-params", "Number of parameters given a sharding over the axis")


@dataclass(frozen=True)
class ShardParamsPass(ModulePass):
    """Split every parameter of at least `min-size` elements over the mesh axis `axis` (ZeRO-3 / FSDP).

    `rlx-shard-params{axis=data min-size=65536}`: each `rlx.param` argument with at
    least `min-size` elements gets `rlx.sharding` splitting its largest dimension that
    is not split yet and that the axis size divides (the first of equal ones) over
    `axis`; a parameter with no such dimension, or already split over `axis`, is left
    as it was; one split over other axes keeps those splits. The module needs
    `rlx.mesh` with `axis`. Run it before `rlx-train-step`, which keeps each
    parameter's optimizer state and updated value split like the parameter. Only the
    XLA backend applies shardings (docs/distributed.md).
    """

    name = "rlx-shard-params"
    STATISTICS = (SHARDED,)

    axis: str = field(default="data", metadata={"syntax": "NAME", "example": "data"})
    min_size: int = field(default=0, metadata={"range": (0, 2**63 - 1), "example": "65536"})

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        shard_params(op, self.axis, self.min_size)
