"""The sharding attributes: a device mesh on the module, a sharding per function argument.

    builtin.module attributes {rlx.mesh = {data = 2, model = 2}} {
      func.func @f(%x: tensor<8x4x6xf32> {rlx.sharding = ["data", unit, "model"]}, ...)

`rlx.mesh` names the axes of a logical device grid and their sizes (in order: the
first axis varies slowest over the device list). `rlx.sharding` has one entry per
dimension of the argument: a mesh axis name splits that dimension over the axis,
`unit` (or `[]`) leaves it whole, and a list of names (`["data", "model"]`) splits
it over several axes at once. An argument without `rlx.sharding` is replicated on
every device. `rlx.sharding` on a function *result* (in `res_attrs`) fixes where that
output lives (`rlx-train-step` keeps each updated parameter and optimizer state where
its input was); a result without one gets the sharding XLA's propagation picks. These are the `Mesh` and `PartitionSpec` of JAX; `unit` stands for
JAX's `None`. `null` is not MLIR attribute syntax, but the project's parser reads it
as `unit` (`["data", null, "model"]`), and prints `unit`, which any MLIR tool reads.

`read_layout` checks them, every mistake an `OpError` at the module or the
function: axes exist in the mesh, one entry per dimension, each dimension
divisible by the product of its axes' sizes, an axis used at most once per
argument. The verifier runs it on every function of a module
(`diagnostics.verify_located`), so `rlx-opt` reports a bad sharding like any
other invalid IR. Whether the machine has enough devices is a run-time question
(the XLA backend's), not a property of the IR. Only the XLA backend applies the
attributes (`backends/xla/`, `docs/distributed.md`); the interpreter and IREE ignore them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    TensorType,
    UnitAttr,
)
from xdsl.ir import Attribute

from rlx_xdsl.ir.diagnostics import MODULE_VERIFIERS, OpError
from rlx_xdsl.ir.graph import argument_name
from rlx_xdsl.shapes import DYNAMIC

MESH_ATTR = "rlx.mesh"
SHARDING_ATTR = "rlx.sharding"

DimSpec = tuple[str, ...]
"""The mesh axes one dimension is split over (empty: not split)."""


@dataclass(frozen=True)
class Layout:
    """A verified mesh (axis name -> size, in order), each argument's split, by index
    (`None`: replicated), and each result's (`None`: XLA chooses). `mesh` is empty for a
    module without `rlx.mesh`."""

    mesh: dict[str, int]
    args: tuple[tuple[DimSpec, ...] | None, ...]
    results: tuple[tuple[DimSpec, ...] | None, ...] = ()

    @property
    def devices(self) -> int:
        return math.prod(self.mesh.values())

    @property
    def sharded(self) -> bool:
        return bool(self.mesh)

    def describe(self) -> str:
        """`data=2 model=2`, as rlx-run reports the mesh."""
        return " ".join(f"{name}={size}" for name, size in self.mesh.items())


def annotate(module: ModuleOp, f: func.FuncOp, mesh: dict[str, int], shardings: dict[str, list]) -> None:
    """Write `rlx.mesh = mesh` on `module` and `rlx.sharding` on `f`'s arguments named in
    `shardings` (by `rlx.name`; an entry per dimension: an axis name, None, or a list of names).
    The Python way to shard a built graph; `read_layout` checks the result."""
    module.attributes[MESH_ATTR] = DictionaryAttr({k: IntegerAttr(v, 64) for k, v in mesh.items()})
    names = [argument_name(f, i) for i in range(len(f.function_type.inputs.data))]
    unknown = set(shardings) - set(names)
    if unknown:
        raise KeyError(f"@{f.sym_name.data} has no argument named {', '.join(sorted(map(repr, unknown)))}")
    old = f.arg_attrs.data if f.arg_attrs is not None else [DictionaryAttr({})] * len(names)
    entries = []
    for name, attrs in zip(names, old):
        data = dict(attrs.data)
        if name in shardings:
            data[SHARDING_ATTR] = ArrayAttr([_entry_attr(e) for e in shardings[name]])
        entries.append(DictionaryAttr(data))
    f.arg_attrs = ArrayAttr(entries)


def _entry_attr(entry: str | Sequence[str] | None) -> Attribute:
    if entry is None:
        return UnitAttr()
    if isinstance(entry, str):
        return StringAttr(entry)
    return ArrayAttr([StringAttr(a) for a in entry])


def read_layout(module: ModuleOp, f: func.FuncOp) -> Layout:
    """The verified mesh of `module` and the sharding of each of `f`'s arguments and results."""
    mesh = read_mesh(module)
    args = tuple(_read_sharding(f, index, mesh) for index in range(len(f.function_type.inputs.data)))
    results = tuple(_read_sharding(f, index, mesh, result=True) for index in range(len(f.function_type.outputs.data)))
    return Layout(mesh, args, results)


def verify_layouts(module: ModuleOp) -> None:
    """Check the mesh and the shardings of every function of `module` (`OpError`s)."""
    functions = [f for f in module.ops if isinstance(f, func.FuncOp)]
    if MESH_ATTR not in module.attributes and not any(
        attrs is not None and any(SHARDING_ATTR in a.data for a in attrs.data)
        for f in functions
        for attrs in (f.arg_attrs, f.res_attrs)
    ):
        return
    for f in functions:
        read_layout(module, f)


def read_mesh(module: ModuleOp) -> dict[str, int]:
    """`rlx.mesh` as axis name -> size ({} without one)."""
    attr = module.attributes.get(MESH_ATTR)
    if attr is None:
        return {}
    if not isinstance(attr, DictionaryAttr) or not attr.data:
        raise OpError(module, f"'{MESH_ATTR}' must be a non-empty dictionary of axis sizes ({{data = 2, model = 2}}), got {attr}")
    mesh: dict[str, int] = {}
    for name, size in attr.data.items():
        if not isinstance(size, IntegerAttr) or size.value.data < 1:
            raise OpError(module, f"'{MESH_ATTR}' axis '{name}' must have a positive integer size, got {size}")
        mesh[name] = size.value.data
    return mesh


def _read_sharding(
    f: func.FuncOp, index: int, mesh: dict[str, int], result: bool = False
) -> tuple[DimSpec, ...] | None:
    """The checked `rlx.sharding` of argument (or result) `index` of `f`, None without one."""
    entries = f.res_attrs if result else f.arg_attrs
    attrs = entries.data[index].data if entries is not None and index < len(entries.data) else {}
    attr = attrs.get(SHARDING_ATTR)
    if attr is None:
        return None
    if result:
        arg_type = f.function_type.outputs.data[index]
        what = f"result #{index} of @{f.sym_name.data}"
    else:
        arg_type = f.function_type.inputs.data[index]
        what = f"argument #{index} ('{argument_name(f, index)}') of @{f.sym_name.data}"
    if not mesh:
        raise OpError(f, f"{what} has '{SHARDING_ATTR}' but the module has no '{MESH_ATTR}'")
    if not isinstance(attr, ArrayAttr):
        raise OpError(f, f"'{SHARDING_ATTR}' of {what} must be a list with one entry per dimension, got {attr}")
    if not isinstance(arg_type, TensorType):
        raise OpError(f, f"{what} has '{SHARDING_ATTR}' but is not a tensor")
    shape = arg_type.get_shape()
    if len(attr.data) != len(shape):
        raise OpError(
            f, f"'{SHARDING_ATTR}' of {what} has {len(attr.data)} entries, but its type {arg_type} has rank {len(shape)}"
        )
    spec = tuple(_dim_axes(f, what, entry) for entry in attr.data)
    used: set[str] = set()
    for dim, (axes, size) in enumerate(zip(spec, shape)):
        for axis in axes:
            if axis not in mesh:
                known = ", ".join(f"'{a}'" for a in mesh)
                raise OpError(f, f"'{SHARDING_ATTR}' of {what} names axis '{axis}', which is not in the mesh (axes: {known})")
            if axis in used:
                raise OpError(f, f"'{SHARDING_ATTR}' of {what} uses mesh axis '{axis}' more than once")
            used.add(axis)
        parts = math.prod(mesh[a] for a in axes)
        if axes and size == DYNAMIC:
            raise OpError(f, f"{what} splits dimension {dim} over {_axes_text(axes)}, but that dimension is dynamic")
        if size % parts:
            raise OpError(
                f,
                f"{what} splits dimension {dim} of size {size} over {_axes_text(axes)} "
                f"({parts} devices), which does not divide it",
            )
    return spec


def _dim_axes(f: func.FuncOp, what: str, entry: Attribute) -> DimSpec:
    """One entry of a sharding: `"axis"`, `unit`, or a list of axis names."""
    if isinstance(entry, StringAttr):
        return (entry.data,)
    if isinstance(entry, UnitAttr):
        return ()
    if isinstance(entry, ArrayAttr) and all(isinstance(a, StringAttr) for a in entry.data):
        return tuple(a.data for a in entry.data)
    raise OpError(
        f, f"'{SHARDING_ATTR}' of {what}: an entry must be an axis name, unit or a list of axis names, got {entry}"
    )


def _axes_text(axes: DimSpec) -> str:
    return " x ".join(f"'{a}'" for a in axes)


MODULE_VERIFIERS.append(verify_layouts)  # verify_located checks every module's mesh and shardings
