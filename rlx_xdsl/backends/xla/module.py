"""`XlaModule`: one MIR function compiled by XLA for a device (or a mesh of devices).

    compiled = XlaModule(module, device="gpu", function="llama")
    compiled.bind({"layers.0.wq": wq, ...})      # copied to the device(s) once, kept there
    (logits,) = compiled(x, cos, sin)            # the unbound arguments, in order

The function is traced (its `JAX_OPS` translation), lowered and compiled once,
when the module is made. XLA compiles static shapes: a function with `?` dims is
compiled at its first call instead, specialized (`rlx-specialize`) to the shapes of
the arguments, and again for each new set of shapes (each kept). Bound
arguments stay on the device as `jax.Array`s and are passed to the executable by
reference on every call; only the unbound ones move.

With `rlx.mesh` on the module the function runs SPMD: each argument is placed
with its `rlx.sharding` (replicated without one) as a `NamedSharding` over a
`jax.sharding.Mesh` of the first `prod(mesh sizes)` devices, and XLA's SPMD
partitioner splits the computation and inserts the collectives (an all-reduce of
the gradients of replicated weights under a batch-sharded input).

`donate=` names arguments whose buffers the call may reuse for its results (JAX's
`donate_argnums`): state that a step replaces, such as a KV cache or an optimizer's
moments, is then updated in place instead of copied into fresh buffers. A donated
argument is passed at every call, never bound, and the caller's array is deleted by
the call: feed the returned value back instead. A result with
`rlx.sharding` is laid out so (`out_shardings`: a train step's updated parameters
and optimizer state stay where their inputs were, so they can be fed back without
moving); the others keep the sharding XLA chose. `numpy.asarray` gathers them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from rlx_xdsl import dtypes
from rlx_xdsl.backends.xla.export import (
    abstract_args,
    check_exportable,
    matmul_precision,
    require_jax,
    traced,
)
from rlx_xdsl.conversions.mir_to_jax.registry import CUDA_KERNELS
from rlx_xdsl.ir.graph import GraphArg, find_function, graph_args
from rlx_xdsl.ir.sharding import Layout, read_layout
from rlx_xdsl.shapes import DYNAMIC, is_static

DEVICES = ("cpu", "gpu")
GPU_HINT = (
    "an NVIDIA GPU with its driver and a JAX built with CUDA "
    "(pip install -U 'jax[cuda12]', or the JAX with CUDA of the machine)"
)


class DeviceUnavailable(RuntimeError):
    """The requested device, or as many devices as the mesh asks for, is not there."""


class XlaModule:
    """One function of a MIR module, compiled by XLA for `device` ("cpu" or "gpu").

    `tf32=True` lets XLA compute f32 matmuls and convolutions in TF32 (faster on
    NVIDIA GPUs, about 1e-3 relative error); by default they run at full f32 precision.
    `donate` names the arguments whose buffers the results may reuse (see the module docstring).
    """

    def __init__(
        self,
        module: ModuleOp,
        device: str = "cpu",
        function: str | None = None,
        tf32: bool = False,
        donate: Sequence[str] = (),
    ):
        self.function = find_function(module, function)
        check_exportable(self.function, static=False)  # located errors before any device work
        self.layout: Layout = read_layout(module, self.function)
        self.args: list[GraphArg] = graph_args(self.function)
        self._donated = tuple(a.index for a in self._named(donate).values())
        self.tf32 = tf32
        devices = _devices(device, self.layout)
        self._nvidia = device == "gpu" and "NVIDIA" in getattr(devices[0], "device_kind", "")
        self.mesh = None
        if self.layout.sharded:
            from jax.sharding import Mesh

            grid = np.asarray(devices[: self.layout.devices], dtype=object).reshape(tuple(self.layout.mesh.values()))
            self.mesh = Mesh(grid, tuple(self.layout.mesh))
            self.device: Any = tuple(self.mesh.devices.flat)
        else:
            self.device = devices[0]
        self._shardings = [self._sharding(spec) for spec in self.layout.args]
        self._out_shardings = (
            None if self.mesh is None else tuple(None if spec is None else self._sharding(spec) for spec in self.layout.results)
        )
        self._dtypes = [dtypes.numpy_dtype(a.type.element_type) for a in self.args]
        self._shapes = [tuple(a.type.get_shape()) for a in self.args]
        self._bound: dict[int, Any] = {}
        self._module = module
        self._executables: dict[tuple, tuple[Any, Any]] = {}
        """(lowered, compiled) by the arguments' shapes."""
        self._last: tuple[Any, Any] | None = None
        self._last_shapes: tuple[tuple[int, ...], ...] = ()
        shapes = tuple(tuple(a.type.get_shape()) for a in self.args)
        if all(is_static(shape) for shape in shapes):
            self._executable(shapes)

    def _executable(self, shapes: tuple[tuple[int, ...], ...]) -> Any:
        """The executable for arguments of `shapes` (compiled at the first use of them)."""
        if shapes not in self._executables:
            jax = require_jax()
            module, f = self._module, self.function
            if any(tuple(a.type.get_shape()) != shape for a, shape in zip(self.args, shapes)):
                module, f = self._specialized(shapes)
            on_gpu = CUDA_KERNELS.set(self._nvidia)
            try:
                with matmul_precision(self.tf32):
                    placement = {} if self._out_shardings is None else {"out_shardings": self._out_shardings}
                    jitted = jax.jit(
                        traced(module, f), in_shardings=self._shardings, donate_argnums=self._donated, **placement
                    )
                    lowered = jitted.lower(*abstract_args(f))
            finally:
                CUDA_KERNELS.reset(on_gpu)
            self._executables[shapes] = (lowered, lowered.compile())
        self._last, self._last_shapes = self._executables[shapes], shapes
        return self._last[1]

    def _specialized(self, shapes: tuple[tuple[int, ...], ...]) -> tuple[ModuleOp, Any]:
        """A copy of the module with the function's `?` dims bound to `shapes`."""
        from rlx_xdsl.transforms.specialize import parse_bindings, specialize

        module = self._module.clone()
        dynamic = [(a, shape) for a, shape in zip(self.args, shapes) if not is_static(a.type.get_shape())]
        specialize(module, parse_bindings([f"{a.name}={'x'.join(map(str, shape))}" for a, shape in dynamic]), self.name)
        f = find_function(module, self.name)
        check_exportable(f)
        return module, f

    # Placement --------------------------------------------------------------------

    def _sharding(self, spec):
        """Where a value split as `spec` (None: replicated) lives: one device, or its split over the mesh."""
        jax = require_jax()
        if self.mesh is None:
            return jax.sharding.SingleDeviceSharding(self.device)
        from jax.sharding import NamedSharding, PartitionSpec

        entries = [] if spec is None else [None if not axes else axes[0] if len(axes) == 1 else axes for axes in spec]
        return NamedSharding(self.mesh, PartitionSpec(*entries))

    def _place(self, index: int, value: Any):
        """`value` (numpy or jax) checked against argument `index` and put where it lives."""
        jax = require_jax()
        if (
            isinstance(value, jax.Array)
            and value.shape == self._shapes[index]
            and value.dtype == self._dtypes[index]
            and value.sharding == self._shardings[index]
        ):  # already where it lives: the per-call cost of a resident input is these checks
            return value
        arg = self.args[index]
        array = value if isinstance(value, jax.Array) else np.asarray(value)
        declared = arg.type.get_shape()
        fits = len(declared) == array.ndim and all(d in (DYNAMIC, n) for d, n in zip(declared, array.shape))
        # Across hosts a process passes only its part of a sharded argument (docs/distributed.md).
        local = jax.process_count() > 1 and not isinstance(value, jax.Array)
        if array.dtype != dtypes.numpy_dtype(arg.type.element_type) or not (local or fits):
            raise ValueError(
                f"argument '{arg.name}' of @{self.name} has type {arg.type}, "
                f"got an array of shape {tuple(array.shape)} and dtype {array.dtype}"
            )
        sharding = self._shardings[index]
        if local:
            return jax.make_array_from_process_local_data(sharding, array, tuple(declared))
        return jax.device_put(array, sharding)

    # The API ------------------------------------------------------------------------

    @property
    def name(self) -> str:
        return self.function.sym_name.data

    @property
    def unbound(self) -> list[str]:
        """The names of the arguments a call takes, in order (those not bound)."""
        return [a.name for a in self.args if a.index not in self._bound]

    def _named(self, names: Sequence[str]) -> dict[str, GraphArg]:
        """The arguments called `names` (by `rlx.name`), or a KeyError listing the known ones."""
        by_name = {a.name: a for a in self.args}
        unknown = [name for name in names if name not in by_name]
        if unknown:
            known = ", ".join(f"'{a.name}'" for a in self.args)
            raise KeyError(f"@{self.name} has no argument named {', '.join(map(repr, unknown))} (arguments: {known})")
        return {name: by_name[name] for name in names}

    def bind(self, params: Mapping[str, Any]) -> None:
        """Put the named arguments (by `rlx.name`) on the device(s) now, and keep them there
        for every later call; binding a name again replaces its value. A donated argument
        cannot be bound (the first call would use it up)."""
        by_name = self._named(list(params))
        donated = [name for name, a in by_name.items() if a.index in self._donated]
        if donated:
            raise ValueError(
                f"@{self.name}: {', '.join(map(repr, donated))} is donated: pass it at every call, it cannot be bound"
            )
        placed = {by_name[name].index: self._place(by_name[name].index, value) for name, value in params.items()}
        self._bound.update(placed)

    def __call__(self, *args: Any, **named: Any) -> tuple:
        """Run on the unbound arguments (positionally in `unbound` order, or by name);
        the results as `jax.Array`s, on the device(s). Like any JAX call it returns before
        the device finishes: `jax.block_until_ready` waits (for timing)."""
        free = [a for a in self.args if a.index not in self._bound]
        values: dict[int, Any] = {}
        if len(args) > len(free):
            raise TypeError(f"@{self.name} takes {len(free)} unbound arguments ({', '.join(self.unbound)}), got {len(args)}")
        for arg, value in zip(free, args):
            values[arg.index] = value
        by_name = {a.name: a for a in free}
        for name, value in named.items():
            if name not in by_name or by_name[name].index in values:
                raise TypeError(f"@{self.name}: '{name}' is not an unbound argument, or is given twice")
            values[by_name[name].index] = value
        missing = [a.name for a in free if a.index not in values]
        if missing:
            raise TypeError(f"@{self.name} misses the arguments {', '.join(map(repr, missing))}")
        placed = {index: self._place(index, value) for index, value in values.items()}
        inputs = [self._bound[a.index] if a.index in self._bound else placed[a.index] for a in self.args]
        last = self._last
        if last is not None and all(x.shape == shape for x, shape in zip(inputs, self._last_shapes)):
            return tuple(last[1](*inputs))  # the common case: the shapes of the last call
        executable = self._executable(tuple(tuple(x.shape) for x in inputs))
        return tuple(executable(*inputs))

    def _compiled_last(self) -> tuple[Any, Any]:
        if self._last is None:
            raise RuntimeError(f"@{self.name} has dynamic dims and is compiled at its first call: call it first")
        return self._last

    def stablehlo(self) -> str:
        """The StableHLO text XLA compiled last (with the arguments' shardings when on a mesh)."""
        return self._compiled_last()[0].as_text()

    def compiled_text(self) -> str:
        """XLA's optimized HLO after partitioning (where the inserted collectives show)."""
        return self._compiled_last()[1].as_text()


def run_function(module: ModuleOp, name: str | None, inputs: Sequence[Any], device: str = "cpu") -> list[np.ndarray]:
    """Run one function on XLA (the first when `name` is None): numpy in, numpy out. HIR block
    ops are lowered to MIR first, on a copy (as `rlx-run --backend=xla` and IREE do)."""
    from rlx_xdsl.backends.iree import without_hir

    return [np.asarray(output) for output in XlaModule(without_hir(module), device, name)(*inputs)]


def _devices(device: str, layout: Layout) -> Sequence[Any]:
    """The JAX devices of `device`, as many as `layout`'s mesh needs, or `DeviceUnavailable`."""
    jax = require_jax()
    if device not in DEVICES:
        raise ValueError(f"unknown device '{device}' (known: {', '.join(DEVICES)})")
    try:
        found = jax.devices(device)
    except RuntimeError as e:
        if device == "gpu":
            raise DeviceUnavailable(f"device 'gpu' needs {GPU_HINT}; JAX found none ({_first_line(e)})") from None
        raise DeviceUnavailable(f"JAX cannot use device '{device}' ({_first_line(e)})") from None
    if layout.sharded and len(found) < layout.devices:
        hint = (
            " (on CPU, XLA_FLAGS=--xla_force_host_platform_device_count=N before JAX starts makes N host devices)"
            if device == "cpu"
            else ""
        )
        raise DeviceUnavailable(
            f"the mesh {layout.describe()} needs {layout.devices} {device} devices, "
            f"but JAX sees {len(found)}{hint}"
        )
    return found


def _first_line(error: BaseException) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[0]
