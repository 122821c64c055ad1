"""Run MIR graphs on IREE: lower to upstream MLIR, compile with `iree-compile`, call the result.

    from rlx_xdsl.backends.iree import IreeModule
    compiled = IreeModule(module)                  # lowers and compiles every function once
    outputs = compiled.run("llama", inputs)        # numpy in, numpy out

`interpreters.run_function(module, name, inputs, backend="iree")` and
`rlx-run --backend=iree` go through here. IREE is an optional dependency
(`pip install -e '.[iree]'`); without it, `IreeUnavailable` says how to install it.

Compiled modules are cached by a hash of the lowered text and the target flags:
in this process, and across processes in `$RLX_IREE_CACHE_DIR` when it is set.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.printer import Printer

from rlx_xdsl import dtypes
from rlx_xdsl.conversions.mir_to_linalg import lower_module

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
        ),
    ),
    # sm_80 code runs on Ampere and newer (PTX is JIT-compiled there); this IREE wheel
    # has no sm_90 target (iree-org/iree#22147).
    "cuda": Device("cuda", "cuda", ("--iree-hal-target-device=cuda", "--iree-cuda-target=sm_80")),
}


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


def device_named(name: str) -> Device:
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
    """Every function of a MIR module, lowered and compiled for one device, ready to call."""

    def __init__(self, module: ModuleOp, device: str = "cpu"):
        self._lower(module, device)
        self._load(compile_text(self.text, self.device))

    @classmethod
    def compile_all(cls, modules: Sequence[ModuleOp], device: str = "cpu") -> list[IreeModule]:
        """Several modules compiled side by side (`iree-compile` processes in parallel).

        Lowering stays on this thread: xDSL's implicit builders are process-global.
        """
        compiled = [cls.__new__(cls) for _ in modules]
        for c, module in zip(compiled, modules):
            c._lower(module, device)
        with ThreadPoolExecutor(max(1, len(compiled))) as pool:
            binaries = list(pool.map(lambda c: compile_text(c.text, c.device), compiled))
        for c, vmfb in zip(compiled, binaries):
            c._load(vmfb)
        return compiled

    def _lower(self, module: ModuleOp, device: str) -> None:
        self.device = device_named(device)
        self._config = _runtime_device(self.device)
        self.text = lowered_text(module)  # ops IREE cannot compute are located errors here
        self.signatures = {f.sym_name.data: Signature.of(f) for f in module.ops if isinstance(f, func.FuncOp)}

    def _load(self, vmfb: bytes) -> None:
        runtime = _iree_runtime()
        self.vmfb = vmfb
        self._runtime = runtime
        self._context = runtime.SystemContext(config=self._config)
        self._context.add_vm_module(runtime.VmModule.copy_buffer(self._context.instance, vmfb))
        self._hal_types = _element_types(runtime)

    def run(self, name: str, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Call function `name` on numpy `inputs`; its outputs as numpy arrays of the MIR dtypes."""
        if name not in self.signatures:
            raise KeyError(f"no function named '{name}'")
        sig = self.signatures[name]
        if len(inputs) != len(sig.args):
            raise ValueError(f"@{name} takes {len(sig.args)} arguments, got {len(inputs)}")
        args = [self._to_device(np.asarray(x), dt) for x, dt in zip(inputs, sig.args)]
        results = self._context.modules.module[name](*args)
        if not isinstance(results, tuple | list):
            results = (results,)
        return [self._to_host(r, dt) for r, dt in zip(results, sig.results, strict=True)]

    def _to_device(self, array: np.ndarray, dt: dtypes.DType):
        """A buffer view of `array` in `dt`, typed with the lowered (signless) element type."""
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
        host = np.asarray(result.to_host() if hasattr(result, "to_host") else result)
        return np.array(host, order="C", copy=None).view(dt.numpy).reshape(host.shape)


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
