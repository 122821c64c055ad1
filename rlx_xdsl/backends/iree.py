"""Run MIR graphs on IREE: lower to upstream MLIR, compile with `iree-compile`, call the result.

    from rlx_xdsl.backends.iree import IreeModule
    compiled = IreeModule(module)                  # lowers and compiles every function once
    outputs = compiled.run("llama", inputs)        # numpy in, numpy out

    compiled.bind("llama", {"layers.0.wq": wq, ...})   # parameters uploaded to the device once
    outputs = compiled.run("llama", [x, cos, sin])      # then only the unbound arguments move

`interpreters.run_function(module, name, inputs, backend="iree")` and
`rlx-run --backend=iree` go through here. IREE is an optional dependency
(`pip install -e '.[iree]'`); without it, `IreeUnavailable` says how to install it.

Compiled modules are cached by a hash of the lowered text and the target flags:
in this process, and across processes in `$RLX_IREE_CACHE_DIR` when it is set.

The CUDA target follows the GPU (`cuda_target`): `sm_<major><minor>` of its compute
capability when the compiler takes it, else the newest target IREE 3.13 is known to take
below it (PTX of an older target is JIT-compiled by the driver for a newer GPU);
`$RLX_IREE_CUDA_TARGET` or `IreeModule(..., cuda_target=...)` overrides it.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.printer import Printer

from rlx_xdsl import dtypes
from rlx_xdsl.conversions.mir_to_linalg import lower_module
from rlx_xdsl.ir.graph import graph_args

INSTALL_HINT = "pip install -e '.[iree]' (iree-base-compiler and iree-base-runtime)"

COMMON_FLAGS = (
    # IREE narrows f64 and i64 to 32 bits by default; MIR keeps every dtype as written.
    "--iree-input-demote-f64-to-f32=false",
    "--iree-input-demote-i64-to-i32=false",
    # Hoisting constant subgraphs into globals miscomputes some that hold i1 tensors in
    # IREE 3.13 (a mask built from iotas came back with wrong counts); graphs take their
    # weights as arguments, so little is lost.
    "--iree-opt-const-expr-hoisting=false",
)


@dataclass(frozen=True)
class Device:
    """An IREE target: compiler flags and the runtime driver that runs its code."""

    name: str
    driver: str
    flags: tuple[str, ...]


DEVICES = {
    "cpu": Device(
        "cpu",
        "local-task",
        (
            "--iree-hal-target-device=local",
            "--iree-hal-local-target-device-backends=llvm-cpu",
            "--iree-llvmcpu-target-cpu=host",
            # A system library (not IREE's embedded ELF) links f64 `sin`, `cos`, `tan`,
            # `tanh`, `atan` to the host's libm; embedded, they are undefined symbols.
            "--iree-llvmcpu-link-embedded=false",
        ),
    ),
    # The target of a machine without a GPU (compiling ahead of time); `device_named`
    # picks the present GPU's own target instead (`cuda_target`).
    "cuda": Device("cuda", "cuda", ("--iree-hal-target-device=cuda", "--iree-cuda-target=sm_80")),
}

DEFAULT_CUDA_TARGET = "sm_80"
"""The CUDA target without a GPU to follow: Ampere's, which every newer GPU runs through PTX JIT."""

KNOWN_CUDA_TARGETS = ("sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_87", "sm_89")
"""Targets IREE 3.13's compiler takes (each compiled a matmul; `sm_89` emits PTX 8.4).
It rejects `sm_90` and newer ("missing GPU target in #hal.executable.target": its table
of NVIDIA target details stops at Ada, iree-org/iree#22147), so a Hopper GPU runs `sm_89`
PTX, JIT-compiled by the driver for `sm_90`."""

CUDA_TARGET_ENV = "RLX_IREE_CUDA_TARGET"


def cuda_target(capability: tuple[int, int] | None, accepts=None) -> str:
    """The `--iree-cuda-target` for a GPU of compute `capability` (`None`: no GPU).

    `sm_<major><minor>` when `accepts(target)` says the compiler takes it (`None`: unknown),
    else the newest of `KNOWN_CUDA_TARGETS` at or below the capability.
    """
    if capability is None:
        return DEFAULT_CUDA_TARGET
    exact = f"sm_{capability[0]}{capability[1]}"
    if exact in KNOWN_CUDA_TARGETS or (accepts is not None and accepts(exact)):
        return exact
    older = [t for t in KNOWN_CUDA_TARGETS if _sm_number(t) <= capability[0] * 10 + capability[1]]
    return older[-1] if older else exact


def _sm_number(target: str) -> int:
    return int(target.removeprefix("sm_").rstrip("a"))


def gpu_capability() -> tuple[int, int] | None:
    """The compute capability of the first NVIDIA GPU (`nvidia-smi`), or None without one."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return None
    try:
        out = subprocess.run(
            [smi, "--query-gpu=compute_cap", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=30, check=True,
        ).stdout  # fmt: skip
        major, minor = out.split()[0].split(".")
        return int(major), int(minor)
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        return None


PROBE = "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n  %0 = arith.addf %a, %a : tensor<4xf32>\n  return %0 : tensor<4xf32>\n}\n"


@cache
def compiler_accepts_cuda_target(target: str) -> bool | None:
    """Whether the installed `iree-compile` compiles for `target` (None: no compiler here)."""
    try:
        import iree.compiler as compiler
    except ImportError:
        return None
    try:
        compiler.compile_str(PROBE, extra_args=["--iree-hal-target-device=cuda", f"--iree-cuda-target={target}"])
    except compiler.CompilerToolError:
        return False
    return True


def cuda_device(target: str | None = None) -> Device:
    """The CUDA device compiling for `target`; by default `$RLX_IREE_CUDA_TARGET`, else the
    present GPU's target (`cuda_target`)."""
    target = target or os.environ.get(CUDA_TARGET_ENV) or cuda_target(gpu_capability(), compiler_accepts_cuda_target)
    return Device("cuda", "cuda", ("--iree-hal-target-device=cuda", f"--iree-cuda-target={target}"))


class IreeUnavailable(RuntimeError):
    """IREE's Python packages are not installed."""


class DeviceUnavailable(RuntimeError):
    """The requested device (a CUDA GPU) cannot be used on this machine."""


class IreeCompileError(RuntimeError):
    """iree-compile rejected the lowered module (a bug in the lowering)."""


def _iree() -> tuple[Any, Any]:
    """The `iree.compiler` and `iree.runtime` modules, or `IreeUnavailable`."""
    try:
        import iree.compiler as compiler
    except ImportError:
        raise IreeUnavailable(f"the IREE backend needs IREE: {INSTALL_HINT}") from None
    return compiler, _iree_runtime()


def _iree_runtime() -> Any:
    """The `iree.runtime` module (all that running precompiled modules needs), or `IreeUnavailable`."""
    try:
        import iree.runtime as runtime
    except ImportError:
        raise IreeUnavailable(f"the IREE backend needs IREE: {INSTALL_HINT}") from None
    return runtime


def device_named(name: str, cuda_target: str | None = None) -> Device:
    """The device called `name`; "cuda" compiles for `cuda_target` or the present GPU's."""
    if name == "cuda":
        return cuda_device(cuda_target)
    try:
        return DEVICES[name]
    except KeyError:
        raise ValueError(f"unknown device '{name}' (known: {', '.join(DEVICES)})") from None


# Lowering and compiling -----------------------------------------------------------


def lowered_text(module: ModuleOp) -> str:
    """`module` lowered to upstream MLIR, printed in generic form (which IREE's newer
    parser reads the same way as xDSL writes it); `module` itself is not changed.

    HIR block ops are first lowered to MIR as the interpreter runs them
    (`rlx-lower-hir{policy=fusable}`), so any graph `rlx-run` runs, IREE runs too."""
    lowered = module.clone()
    lower_hir(lowered)
    lower_module(lowered)
    out = io.StringIO()
    Printer(stream=out, print_generic_format=True).print_op(lowered)
    return out.getvalue()


def lower_hir(module: ModuleOp) -> None:
    """Expand the HIR block ops of `module`, if it has any, into the MIR the interpreter runs."""
    from rlx_xdsl.dialects.hir.base import HirOperation

    if any(isinstance(op, HirOperation) for op in module.walk()):
        from xdsl.context import Context

        from rlx_xdsl.conversions.hir_to_mir.lower import LowerHirPass

        LowerHirPass(policy="fusable").apply(Context(), module)


def without_hir(module: ModuleOp) -> ModuleOp:
    """`module` when it has no HIR block ops, else a copy with them expanded into MIR by
    `lower_hir` (what XLA's export and run take, as `rlx-opt --emit=stablehlo` and
    `rlx-run --backend=xla` do)."""
    from rlx_xdsl.dialects.hir.base import HirOperation

    if not any(isinstance(op, HirOperation) for op in module.walk()):
        return module
    lowered = module.clone()
    lower_hir(lowered)
    return lowered


_COMPILED: dict[str, bytes] = {}


def compile_text(text: str, device: Device) -> bytes:
    """The IREE VM flatbuffer of upstream-MLIR `text` for `device` (cached).

    With `RLX_IREE_CACHE_DIR` set, compiled modules are also kept there, keyed by a
    hash of the flags and the text; a hit needs no compiler, so a machine with only
    `iree-base-runtime` can run modules compiled ahead of time elsewhere.
    """
    flags = (*device.flags, *COMMON_FLAGS)
    key = hashlib.sha256("\0".join((*flags, text)).encode()).hexdigest()
    if key in _COMPILED:
        return _COMPILED[key]
    cache_dir = os.environ.get("RLX_IREE_CACHE_DIR")
    cached = Path(cache_dir) / f"{key}.vmfb" if cache_dir else None
    if cached is not None and cached.exists():
        vmfb = cached.read_bytes()
    else:
        compiler, _ = _iree()
        try:
            vmfb = compiler.compile_str(text, extra_args=list(flags))
        except compiler.CompilerToolError as e:
            errors = [line for line in str(e).splitlines() if "error:" in line] or ["(no message)"]
            raise IreeCompileError(f"iree-compile rejected the lowered module: {errors[0][:400]}") from e
        if cached is not None:
            cached.parent.mkdir(parents=True, exist_ok=True)
            cached.write_bytes(vmfb)
    _COMPILED[key] = vmfb
    return vmfb


# Running --------------------------------------------------------------------------


def _runtime_device(device: Device):
    """A runtime config for `device`, or `DeviceUnavailable` saying why not."""
    runtime = _iree_runtime()
    try:
        return runtime.Config(device.driver)
    except Exception as e:
        # IREE's message reads "<source>:<line>: UNAVAILABLE; <reason>; <hint>".
        reason = re.sub(r"^.*?: [A-Z_]+; ", "", str(e.__cause__ or e)).split("; ")[0]
        if device.name == "cuda":
            raise DeviceUnavailable(
                f"--device=cuda needs an NVIDIA GPU with its driver, and IREE found none ({reason})"
            ) from None
        raise DeviceUnavailable(f"IREE cannot create a '{device.driver}' device ({reason})") from None


def _element_types(runtime) -> dict[str, Any]:
    """The HAL element type of each RLX dtype's lowered (signless) storage (all twelve)."""
    hal = runtime.HalElementType
    return {
        "i1": hal.BOOL_8, "ui8": hal.INT_8, "i8": hal.INT_8, "i16": hal.INT_16,
        "ui32": hal.INT_32, "i32": hal.INT_32, "i64": hal.INT_64,
        "f16": hal.FLOAT_16, "bf16": hal.BFLOAT_16, "f32": hal.FLOAT_32, "f64": hal.FLOAT_64,
        "complex<f32>": hal.COMPLEX_64,
    }  # fmt: skip



@dataclass(frozen=True)
class Signature:
    """A function's MIR argument and result dtypes (the lowered ones lose signedness)."""

    args: tuple[dtypes.DType, ...]
    results: tuple[dtypes.DType, ...]

    @staticmethod
    def of(f: func.FuncOp) -> Signature:
        def dt(t) -> dtypes.DType:
            assert isinstance(t, TensorType), f"@{f.sym_name.data} takes and returns tensors only"
            return dtypes.dtype_of(t.element_type)

        ft = f.function_type
        return Signature(tuple(map(dt, ft.inputs)), tuple(map(dt, ft.outputs)))


class IreeModule:
    """Every function of a MIR module, lowered and compiled for one device, ready to call.

    `bind` keeps a function's parameters on the device: they are uploaded once, and later
    calls take (and copy) only the unbound arguments.
    """

    def __init__(self, module: ModuleOp, device: str = "cpu", *, cuda_target: str | None = None):
        from rlx_xdsl.support.progress import status

        self._lower(module, device, cuda_target)
        names = ", ".join(f"@{name}" for name in self.signatures)
        with status(f"iree-compile: {names} for {self.device.name}"):
            self._load(compile_text(self.text, self.device))

    @classmethod
    def compile_all(
        cls, modules: Sequence[ModuleOp], device: str = "cpu", *, cuda_target: str | None = None
    ) -> list[IreeModule]:
        """Several modules compiled side by side (`iree-compile` processes in parallel).

        Lowering stays on this thread: xDSL's implicit builders are process-global.
        """
        compiled = [cls.__new__(cls) for _ in modules]
        for c, module in zip(compiled, modules):
            c._lower(module, device, cuda_target)
        from rlx_xdsl.support.progress import status

        with status(f"iree-compile: {len(compiled)} modules for {device}"), ThreadPoolExecutor(max(1, len(compiled))) as pool:
            binaries = list(pool.map(lambda c: compile_text(c.text, c.device), compiled))
        for c, vmfb in zip(compiled, binaries):
            c._load(vmfb)
        return compiled

    def _lower(self, module: ModuleOp, device: str, cuda_target: str | None) -> None:
        self.device = device_named(device, cuda_target)
        self._config = _runtime_device(self.device)
        self.text = lowered_text(module)  # ops IREE cannot compute are located errors here
        functions = [f for f in module.ops if isinstance(f, func.FuncOp)]
        self.signatures = {f.sym_name.data: Signature.of(f) for f in functions}
        self._arguments = {f.sym_name.data: graph_args(f) for f in functions}
        self._bound: dict[str, dict[int, Any]] = {name: {} for name in self.signatures}

    def _load(self, vmfb: bytes) -> None:
        runtime = _iree_runtime()
        self.vmfb = vmfb
        self._runtime = runtime
        self._context = runtime.SystemContext(config=self._config)
        self._context.add_vm_module(runtime.VmModule.copy_buffer(self._context.instance, vmfb))
        self._hal_types = _element_types(runtime)

    def bind(self, name: str, params: Mapping[str, Any]) -> None:
        """Upload parameters of function `name` (`rlx.param` arguments, by `rlx.name`) to the
        device once; they stay there for every later `run`, which then takes only the
        arguments still unbound, in order. Binding a name again replaces its array."""
        self._signature(name)
        by_name = {a.name: a for a in self._arguments[name] if a.is_param}
        unknown = sorted(set(params) - set(by_name))
        if unknown:
            known = ", ".join(sorted(by_name)) or "none"
            raise KeyError(f"@{name} has no parameter named {', '.join(map(repr, unknown))} (parameters: {known})")
        sig = self.signatures[name]
        for key, array in params.items():
            arg = by_name[key]
            want = tuple(arg.type.get_shape())
            if tuple(np.shape(array)) != want:
                raise ValueError(f"@{name} parameter '{key}' has shape {want}, got {tuple(np.shape(array))}")
            self._bound[name][arg.index] = self._to_device(np.asarray(array), sig.args[arg.index])

    def unbound(self, name: str) -> list[str]:
        """The names of the arguments of `name` that `run` still takes, in order."""
        self._signature(name)
        return [a.name for a in self._arguments[name] if a.index not in self._bound[name]]

    def put(self, name: str, argument: str, array: np.ndarray):
        """`array` uploaded as argument `argument` of function `name` (a device buffer that
        `run` takes in place of a numpy array, without copying it again)."""
        self._signature(name)
        for a in self._arguments[name]:
            if a.name == argument:
                return self._to_device(np.asarray(array), self.signatures[name].args[a.index])
        raise KeyError(f"@{name} has no argument named '{argument}'")

    def run(self, name: str, inputs: Sequence[Any], *, to_host: bool = True) -> list[Any]:
        """Call function `name` on its unbound arguments (all of them when nothing is bound):
        numpy arrays, or device buffers from `put`. Its outputs as numpy arrays of the MIR
        dtypes, or, with `to_host=False`, as device arrays (the call has finished)."""
        sig = self._signature(name)
        bound = self._bound[name]
        free = [i for i in range(len(sig.args)) if i not in bound]
        if len(inputs) != len(free):
            what = f"{len(sig.args)} arguments" if not bound else f"{len(free)} unbound arguments"
            raise ValueError(f"@{name} takes {what}, got {len(inputs)}")
        args = dict(bound)
        for i, x in zip(free, inputs):
            args[i] = x if isinstance(x, self._runtime.HalBufferView) else self._to_device(np.asarray(x), sig.args[i])
        results = self._context.modules.module[name](*(args[i] for i in range(len(sig.args))))
        if not isinstance(results, tuple | list):
            results = (results,)
        if not to_host:
            return list(results)
        return self.fetch(name, results)

    def fetch(self, name: str, results: Sequence[Any]) -> list[np.ndarray]:
        """Device results of function `name` (`run(..., to_host=False)`) as numpy arrays of its MIR dtypes."""
        sig = self._signature(name)
        return [self._to_host(r, dt) for r, dt in zip(results, sig.results, strict=True)]

    def _signature(self, name: str) -> Signature:
        if name not in self.signatures:
            raise KeyError(f"no function named '{name}'")
        return self.signatures[name]

    def _to_device(self, array: np.ndarray, dt: dtypes.DType):
        """A device buffer view of `array` in `dt`, typed with the lowered (signless) element type."""
        data = np.array(array, dtype=dt.numpy, order="C", copy=None)  # keeps rank 0, unlike ascontiguousarray
        device = self._config.device
        buffer = device.allocator.allocate_buffer_copy(
            memory_type=self._runtime.MemoryType.DEVICE_LOCAL,
            allowed_usage=self._runtime.BufferUsage.DEFAULT,
            device=device,
            buffer=data.reshape(-1).view(np.uint8),
        )
        return self._runtime.HalBufferView(buffer, list(data.shape), self._hal_types[dt.name])

    @staticmethod
    def _to_host(result, dt: dtypes.DType) -> np.ndarray:
        """A copy: `to_host` maps the device buffer, which may be an argument's buffer (a
        result that is a view of an input, such as a reshape) freed when the call returns."""
        host = np.asarray(result.to_host() if hasattr(result, "to_host") else result)
        return np.array(host, order="C", copy=True).view(dt.numpy).reshape(host.shape)


def run_function(
    module: ModuleOp, name: str | None, inputs: Sequence[np.ndarray], device: str = "cpu"
) -> list[np.ndarray]:
    """Run one function of `module` on IREE (the first function when `name` is None)."""
    compiled = IreeModule(module, device)
    if name is None:
        name = next(iter(compiled.signatures), None)
        if name is None:
            raise KeyError("the module contains no func.func")
    return compiled.run(name, inputs)
