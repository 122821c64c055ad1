"""rlx-run: execute one graph of an .mlir file with the numpy reference interpreter.

    rlx-run model.mlir                       # random (seeded) values for every argument
    rlx-run model.mlir --input x=x.npy       # some arguments from .npy files
    rlx-run model.mlir --input x=[1,2,3] --input d_output=2.0   # or written inline
    rlx-run model.mlir --params w.safetensors --input x=x.npy  # parameters by rlx.name (.npz, .onnx too)
    rlx-run model.mlir --params partial.npz --random-params    # random values for those it lacks
    rlx-run model.mlir --func f --seed 3 --save out/
    rlx-opt model.mlir -p rlx-dce | rlx-run -
    rlx-run model.mlir --backend=iree        # lowered to linalg, compiled and run by IREE (CPU)
    rlx-run model.mlir --backend=iree --device=cuda
    rlx-run model.mlir --backend=xla         # traced by JAX, compiled and run by XLA (CPU)
    rlx-run model.mlir --backend=xla --device=gpu [--tf32]   # SPMD over the devices of rlx.mesh, if any
    rlx-opt model.mlir -p rlx-plan-memory | rlx-run -   # a planned function runs on its arena

A gradient function's seed `d_output` (added by `rlx-grad`) is ones unless given,
so its outputs are the plain gradients. `--params` reads a weight file (`rlx_xdsl/formats/weights.py`,
written by the importers' `--weights`); `--input` wins over it, a parameter neither in it nor
given with `--input` is an error unless `--random-params` asks for random values, and an entry
naming no parameter is a note on stderr (docs/importers.md, "Weights"). Without `--params`,
every argument not given is random: the quick run.

It is the quickest way to see what a graph computes, and to check that a pass
pipeline preserved it: run the file before and after `rlx-opt` and compare the
printed checksums (or the saved arrays).

Every user error is reported on stderr with exit code 1 and no traceback. Errors
about the input file (parse and verifier errors, and a kernel failing while the
graph runs) are located exactly as rlx-opt locates them, by the same code:

    g.mlir:3:3: error: interpretation failed: 'mir.gather' index 7 is out of range [-4, 4)
      %g = mir.gather %t, %i axis = 0 : (tensor<4x2xf32>, tensor<3xi64>) -> tensor<3x2xf32>
      ^
    g.mlir:3:3: note: while running @f
    g.mlir:3:3: note: see current operation: %g = "mir.gather"(%t, %i) <{axis = 0 : i64}> : ...

Other errors (missing file, unknown function, bad input, a bad weight file) are one
`rlx-run: error: ...` line, and a bug in rlx-run one `rlx-run: internal error: ...`
line (RLX_DEBUG=1 shows its traceback). `format_error` is the one place that
renders errors.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.interpreter import Interpreter, PythonValues
from xdsl.ir import Operation, SSAValue
from xdsl.utils.exceptions import ParseError

from rlx_xdsl import dtypes
from rlx_xdsl.context import make_context
from rlx_xdsl.dialects.lir import plan_of
from rlx_xdsl.formats.weights import WeightsError, read_weights
from rlx_xdsl.interpreters import call_function, make_interpreter
from rlx_xdsl.interpreters.checks import require_memory
from rlx_xdsl.interpreters.lir import ArenaRunError, run_planned
from rlx_xdsl.ir.diagnostics import OpError, describe, op_diagnostic, render
from rlx_xdsl.ir.graph import GRADIENT_SEED, GraphArg, find_function, graph_args, id_bound, output_names, random_array
from rlx_xdsl.ir.locations import LineIndex
from rlx_xdsl.ir.parser import parse_array_literal
from rlx_xdsl.ir.source import TOO_DEEP, SourceError, decode, parse_source
from rlx_xdsl.ir.suggest import closest, did_you_mean
from rlx_xdsl.numerics import KernelError
from rlx_xdsl.shapes import DYNAMIC, fmt_shape, is_static
from rlx_xdsl.tools.deep import run_deep

PROG = "rlx-run"
SHOWN_VALUES = 6
"""How many leading values of each output are printed."""


class RunError(Exception):
    """A user-facing error with no place in the input; printed as `rlx-run: error: <message>`."""


# Diagnostics ---------------------------------------------------------------


def format_error(error: RunError | SourceError) -> str:
    """Render a user-facing error as text, ending in a newline (the single
    diagnostics hook of rlx-run).

    Located errors are rendered by rlx-opt's renderer: `FILE:LINE:COL: error:`,
    the source line with a caret, then the notes and the op concerned.
    """
    if isinstance(error, SourceError):
        return render(error.diagnostic, error.source)
    return f"{PROG}: error: {error}\n"


# Loading -------------------------------------------------------------------


def read_source(path: str) -> tuple[str, str]:
    """The text to run and its name for diagnostics; `-` reads stdin (`rlx-opt ... | rlx-run -`).
    An empty (or blank) input is a `RunError` saying so: on stdin it is usually what a
    failed command before the pipe left."""
    if path == "-":
        text = decode(sys.stdin.buffer.read(), "<stdin>")
        if not text.strip():
            raise RunError("the input on stdin is empty: nothing to run (did the command before the pipe fail?)")
        return text, "<stdin>"
    if not Path(path).exists():
        raise RunError(f"no such file: '{path}'")
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise RunError(f"cannot read '{path}': {e.strerror}") from None
    text = decode(data, path)
    if not text.strip():
        raise RunError(f"'{path}' is empty: nothing to run")
    return text, path


def load_module(path: str, verify: bool = True) -> tuple[ModuleOp, LineIndex]:
    """Parse and (unless told not to) verify the file, every op located at its place
    in the source (also returned, for later diagnostics); errors are `SourceError`s."""
    text, name = read_source(path)
    return parse_source(make_context(), text, name, verify=verify)


def select_function(module: ModuleOp, name: str | None, source: LineIndex) -> func.FuncOp:
    """The function named `name`, or the module's first function; it must have a body."""
    try:
        f = find_function(module, name)
    except KeyError:
        funcs = [op for op in module.ops if isinstance(op, func.FuncOp)]
        if not funcs:
            raise RunError("the module contains no func.func to run") from None
        available = ", ".join(f"'{f.sym_name.data}'" for f in funcs)
        raise RunError(f"no function named '{name}' (available: {available})") from None
    if not f.body.blocks:
        raise SourceError(op_diagnostic(f, f"@{f.sym_name.data} is a declaration without a body: nothing to run"), source)
    for index, arg in enumerate(f.body.block.args):
        if not (isinstance(arg.type, TensorType) and dtypes.is_supported(arg.type.element_type)):
            message = f"argument #{index} of @{f.sym_name.data} has type {arg.type}; rlx-run takes tensors of RLX's dtypes"
            raise SourceError(op_diagnostic(f, message), source)
    return f


# Inputs --------------------------------------------------------------------


def parse_input_specs(specs: Sequence[str]) -> dict[str, str]:
    """`["x=a.npy", "y=[1,2]", ...]` as `{"x": "a.npy", "y": "[1,2]"}` (values as written)."""
    result: dict[str, str] = {}
    for spec in specs:
        name, sep, value = spec.partition("=")
        if not sep or not name or not value:
            raise RunError(f"--input expects NAME=VALUE or NAME=FILE.npy, got '{spec}'")
        if name in result:
            raise RunError(f"--input given twice for '{name}'")
        result[name] = value
    return result


def is_inline(value: str) -> bool:
    """Whether an `--input` value is written inline (`1.0`, `-2`, `[1,2]`, `true`,
    `(1.0, 2.0)`) rather than the path of a .npy file (`./1.0` is a file)."""
    return not value.endswith(".npy") and (value[0] in "[(+-.0123456789" or value in ("true", "false", "nan", "inf"))


def arguments_by_name(f: func.FuncOp) -> dict[str, GraphArg]:
    """Every name an argument answers to: its SSA name (`x` or `%x`) and its
    RLX name (`rlx.name`, else `argN`); RLX names win when the two clash."""
    args = graph_args(f)
    by_name: dict[str, GraphArg] = {}
    for arg in args:
        hint = f.body.block.args[arg.index].name_hint
        if hint:
            by_name[hint] = by_name["%" + hint] = arg
    by_name.update({arg.name: arg for arg in args})
    return by_name


def conform(arg: GraphArg, array: np.ndarray, what: str) -> np.ndarray:
    """`array` as the value of `arg` (`what` names it in errors: "input 'x'"): its dtype
    and static dims must be the argument type's. bf16 stored as raw 2-byte records
    (as `.npy` and `.npz` store it) is read as bf16."""
    expected = dtypes.numpy_dtype(arg.type.element_type)
    if array.dtype.kind == "V" and array.dtype.itemsize == expected.itemsize:
        array = array.view(expected)
    if array.dtype != expected:
        raise RunError(f"{what} has dtype {_dtype_name(array.dtype)}, but the argument has type {arg.type}")
    _check_shape(arg, array, what)
    return array


def _check_shape(arg: GraphArg, array: np.ndarray, what: str) -> None:
    expected = arg.type.get_shape()
    ok = len(expected) == array.ndim and all(
        e == DYNAMIC or e == a for e, a in zip(expected, array.shape)
    )
    if not ok:
        raise RunError(f"{what} has shape {fmt_shape(array.shape)}, but the argument has type {arg.type}")


def load_input(arg: GraphArg, path: Path) -> np.ndarray:
    """Load an .npy file for `arg`, checking its dtype and shape against the type."""
    try:
        array = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as e:
        raise RunError(f"cannot read input '{arg.name}' from '{path}': {e}") from None
    return conform(arg, array, f"input '{arg.name}'")


def inline_input(arg: GraphArg, name: str, text: str) -> np.ndarray:
    """An inline `--input NAME=VALUE` for `arg`, read as the body of `dense<...>` of the
    argument's element type (exactly, as the parser reads literals): a single value
    fills the argument's (static) shape, a nested list must have its shape."""
    try:
        values, shape = parse_array_literal(text, arg.type.element_type)
    except ParseError as e:
        spec = f"{name}={text}"
        caret = " " * (len(name) + 1 + e.span.start)
        hint = " (NaN and infinities are bit patterns, as in MLIR: 0x7FC00000, 0x7F800000 for f32)" if re.search(r"nan|inf", text, re.I) else ""
        raise RunError(f"--input {spec}: {e.msg}{hint}\n  {spec}\n  {caret}^") from None
    if not shape:
        if not is_static(arg.type.get_shape()):
            raise RunError(
                f"input '{arg.name}': one value cannot give the dims of the dynamic type {arg.type}; "
                f"write it as a nested list ([[1, 2], [3, 4]])"
            )
        return np.full(arg.type.get_shape(), values[0], dtype=values.dtype)
    array = values.reshape(shape)
    _check_shape(arg, array, f"input '{arg.name}'")
    return array


def _dtype_name(dt: np.dtype) -> str:
    """RLX's name of a numpy dtype (`f32`), or numpy's own for dtypes RLX lacks."""
    try:
        return dtypes.dtype_of_numpy(dt).name
    except dtypes.UnsupportedDTypeError:
        return str(dt)


def gather_inputs(
    f: func.FuncOp, specs: dict[str, str], seed: int, params: str | None = None, random_params: bool = False
) -> tuple[list[np.ndarray], int]:
    """One array per argument: given by `specs` (inline or from a .npy file), a parameter's
    from the weight file `params` (one it lacks is an error unless `random_params`), ones
    for a gradient seed (`d_output`: the plain gradient, as `jax.grad`), or deterministic
    random; and how many are random.

    Random arguments draw from one generator seeded with `seed`, in argument
    order, exactly as `graph.random_inputs` does; so with no `--input` the
    values of a function without a seed equal `random_inputs(f, seed)`.
    """
    args = graph_args(f)
    by_name = arguments_by_name(f)
    given: dict[int, np.ndarray] = {}
    for name, value in specs.items():
        if name not in by_name:
            known = ", ".join(f"'{a.name}'" for a in args) or "none"
            raise RunError(f"--input names no argument '{name}'{did_you_mean(name, by_name)} (arguments: {known})")
        arg = by_name[name]
        if arg.index in given:
            raise RunError(f"--input given twice for '{arg.name}'")
        given[arg.index] = inline_input(arg, name, value) if is_inline(value) else load_input(arg, Path(value))
    if params is not None:
        given.update(params_from_file(f, params, set(given), seed, random_params))
    for arg in args:
        if arg.index not in given and arg.name == GRADIENT_SEED:
            given[arg.index] = _ones_for(arg)
    _require_memory_for_random([a for a in args if a.index not in given])
    rng = np.random.default_rng(seed)
    block_args = f.body.block.args
    inputs = [given[a.index] if a.index in given else _random_for(a, rng, block_args[a.index]) for a in args]
    return inputs, len(args) - len(given)


SHOWN_NAMES = 8
"""How many names a note lists."""


def params_from_file(
    f: func.FuncOp, path: str, taken: set[int], seed: int, random_params: bool = False
) -> dict[int, np.ndarray]:
    """The values of `f`'s parameters (`rlx.param` arguments, by `rlx.name`) in the weight
    file `path`, by argument index, except those `taken` (by `--input`, which wins).

    Each value must have its argument's dtype and static dims. A parameter the file lacks
    is an error naming it (and the file's entry most like it), unless `random_params`:
    then it keeps its random value, with a note on stderr. An entry that names no parameter
    is ignored with a note, so one file serves a model's variants (an `.onnx` file's
    initializers that the import folded into constants are not reported at all).
    """
    try:
        arrays = read_weights(path)
    except WeightsError as e:
        raise RunError(f"--params: {e}") from None
    args = graph_args(f)
    params = [a for a in args if a.is_param and a.index not in taken]
    values = {
        a.index: conform(a, arrays[a.name], f"parameter '{a.name}' in '{path}'") for a in params if a.name in arrays
    }
    fname = f"@{f.sym_name.data}"
    missing = [a.name for a in params if a.name not in arrays]
    if missing and not random_params:
        unused = [name for name in arrays if name not in {a.name for a in args if a.is_param}]
        listed = _listed([f"'{name}'{_near(name, unused)}" for name in missing])
        raise RunError(
            f"--params: '{path}' has no entry for {_count(len(missing), 'parameter')} of {fname}: {listed} "
            "(give them with --input, or --random-params for seeded random values)"
        )
    if missing:
        listed = _listed([f"'{name}'" for name in missing])
        _note(f"not in '{path}', random values (seed {seed}) for {_count(len(missing), 'parameter')} of {fname}: {listed}")
    if not path.lower().endswith(".onnx"):
        for name in arrays:
            _note_unknown_entry(name, f, path)
    return values


def _listed(names: list[str]) -> str:
    return ", ".join(names[:SHOWN_NAMES]) + (", ..." if len(names) > SHOWN_NAMES else "")


def _near(name: str, entries: list[str]) -> str:
    """` (did you mean 'entry'?)` for the entry most like the missing parameter `name`."""
    match = closest(name, entries)
    return f" (did you mean '{match}'?)" if match is not None else ""


def _note_unknown_entry(name: str, f: func.FuncOp, path: str) -> None:
    """Say that the weight file's entry `name` is ignored, unless it names a parameter."""
    args = graph_args(f)
    params = [a.name for a in args if a.is_param]
    if name in params:
        return
    arg = arguments_by_name(f).get(name)
    if arg is not None and not arg.is_param:
        why = " (an input, not a parameter: give it with --input)"
    elif arg is not None:
        why = f" (the SSA name of '{arg.name}': entries are matched by rlx.name)"
    else:
        why = did_you_mean(name, params)
    _note(f"'{path}' entry '{name}' names no parameter of @{f.sym_name.data}, ignored{why}")


def _note(message: str) -> None:
    sys.stderr.write(f"{PROG}: note: {message}\n")


def _ones_for(arg: GraphArg) -> np.ndarray:
    if not is_static(arg.type.get_shape()):
        raise RunError(
            f"the gradient seed '{arg.name}' has dynamic type {arg.type}; pass its value with --input {arg.name}=VALUE"
        )
    return np.ones(arg.type.get_shape(), dtype=dtypes.numpy_dtype(arg.type.element_type))


def _require_memory_for_random(args: list[GraphArg]) -> None:
    """Refuse up front when the random arguments cannot fit in memory."""
    static = [a for a in args if is_static(a.type.get_shape())]
    needed = sum(math.prod(a.type.get_shape()) * dtypes.numpy_dtype(a.type.element_type).itemsize for a in static)
    try:
        require_memory(needed, f"the random values of {_count(len(static), 'argument')}")
    except KernelError as e:
        raise RunError(e.message) from None


def _random_for(arg: GraphArg, rng: np.random.Generator, value: SSAValue) -> np.ndarray:
    """Random values for `arg` (ids below the bound of the ops reading it as indices)."""
    if not is_static(arg.type.get_shape()):
        raise RunError(
            f"argument '{arg.name}' has dynamic type {arg.type}; "
            f"pass its value with --input {arg.name}=VALUE or {arg.name}=FILE.npy"
        )
    ids = id_bound(value)
    if ids == 0 and math.prod(arg.type.get_shape()):
        readers = sorted({f"'{use.operation.name}'" for use in value.uses if _bound(use.operation, value) == 0})
        raise RunError(
            f"argument '{arg.name}' indexes {', '.join(readers)} with nothing to select from (0 entries): "
            f"no value of it is valid; give it with --input {arg.name}=VALUE or change the graph"
        )
    return random_array(arg.type, rng, ids)


def _bound(op: Operation, value: SSAValue) -> int | None:
    """How many ids `op` selects from when it reads `value` as indices (`index_bound`)."""
    return op.index_bound(value) if hasattr(op, "index_bound") else None


# Running and reporting -----------------------------------------------------


class _RunningOps(Interpreter.Listener):
    """The ops the interpreter is inside of, innermost last (a `mir.if`, then the
    op of its region being run). After a failure the last one is the culprit."""

    def __init__(self) -> None:
        self.stack: list[Operation] = []

    def will_interpret_op(self, op: Operation, args: PythonValues) -> None:
        self.stack.append(op)

    def did_interpret_op(self, op: Operation, results: PythonValues) -> None:
        self.stack.pop()


def execute(module: ModuleOp, f: func.FuncOp, inputs: list[np.ndarray], source: LineIndex) -> list[np.ndarray]:
    """Run `f` (on its arena when it has a memory plan). Any failure (a kernel rejecting
    its inputs, a missing kernel) is a `SourceError` at the op being interpreted, or at
    `f` before its first op."""
    if plan_of(f) is not None:
        return execute_planned(module, f, inputs, source)
    interpreter = make_interpreter(module)
    running = _RunningOps()
    interpreter.listeners = (*interpreter.listeners, running)
    try:
        outputs = call_function(interpreter, f, inputs)
    except Exception as e:
        culprit = running.stack[-1] if running.stack else f
        cause = TOO_DEEP if isinstance(e, RecursionError) else describe(e)
        message, note = f"interpretation failed: {cause}", f"while running @{f.sym_name.data}"
        raise SourceError(op_diagnostic(culprit, message, note), source) from e
    return [np.asarray(output) for output in outputs]


def execute_on_iree(
    module: ModuleOp, f: func.FuncOp, inputs: list[np.ndarray], source: LineIndex, device: str
) -> list[np.ndarray]:
    """Lower the module, compile it with IREE for `device` and run `f`.

    An op without a lowering is a located error; a missing IREE install or
    device, a compiler rejection or a runtime failure is one `rlx-run: error:` line.
    """
    from rlx_xdsl.backends import iree

    try:
        compiled = iree.IreeModule(module, device)
    except OpError as e:
        raise SourceError(op_diagnostic(e.op, e.message), source) from None
    except (iree.IreeUnavailable, iree.DeviceUnavailable, iree.IreeCompileError) as e:
        raise RunError(str(e)) from None
    try:
        return compiled.run(f.sym_name.data, inputs)
    except Exception as e:
        raise RunError(f"IREE failed while running @{f.sym_name.data}: {describe(e)}") from None


def execute_on_xla(
    module: ModuleOp, f: func.FuncOp, inputs: list[np.ndarray], source: LineIndex, device: str, tf32: bool
) -> tuple[list[np.ndarray], str]:
    """Compile `f` with XLA for `device` (over the module's mesh, when it has `rlx.mesh`) and
    run it; also say where it ran. HIR block ops are lowered to MIR first, on a copy.

    An op XLA cannot take or a bad sharding is a located error; a missing JAX or device
    (or too few for the mesh), or a failure while running, is one `rlx-run: error:` line.
    """
    from rlx_xdsl.backends import xla
    from rlx_xdsl.backends.iree import without_hir

    try:
        compiled = xla.XlaModule(without_hir(module), xla_device(device), f.sym_name.data, tf32)
    except OpError as e:
        raise SourceError(op_diagnostic(e.op, e.message, e.note), source) from None
    except (xla.XlaUnavailable, xla.DeviceUnavailable) as e:
        raise RunError(str(e)) from None
    try:
        outputs = [np.asarray(output) for output in compiled(*inputs)]
    except Exception as e:
        raise RunError(f"XLA failed while running @{f.sym_name.data}: {describe(e)}") from None
    layout = compiled.layout
    where = f"XLA {xla_device(device)}{', TF32' if tf32 else ''}"
    if layout.sharded:
        where += f", mesh {layout.describe()} on {layout.devices} devices"
    return outputs, where


def xla_device(device: str) -> str:
    """XLA's name of `--device` (`cuda` is `gpu`)."""
    return "gpu" if device == "cuda" else device


def execute_planned(
    module: ModuleOp, f: func.FuncOp, inputs: list[np.ndarray], source: LineIndex
) -> list[np.ndarray]:
    """Run the planned `f` on one arena; failures are located like `execute`'s."""
    try:
        return run_planned(module, f, inputs)
    except ArenaRunError as e:
        message, note = f"interpretation failed: {describe(e.cause)}", f"while running @{f.sym_name.data} on its arena"
        raise SourceError(op_diagnostic(e.op, message, note), source) from e


def summarize(array: np.ndarray, shown: int = SHOWN_VALUES) -> list[str]:
    """Statistics and leading values of one array, as indented report lines."""
    if array.size == 0:
        return ["  (empty)"]
    values = array.astype(np.complex128 if array.dtype.kind == "c" else np.float64)
    flat = values.reshape(-1)
    lines = []
    if array.dtype.kind == "c":
        lines.append(f"  sum={_fmt(flat.sum())}  max|z|={_fmt(np.abs(flat).max())}")
    else:
        finite = flat[np.isfinite(flat)]
        stats = (
            f"min={_fmt(finite.min())}  max={_fmt(finite.max())}  mean={_fmt(finite.mean())}"
            if finite.size
            else "no finite values"
        )
        lines.append(f"  {stats}  sum={_fmt(flat.sum())}  sum|x|={_fmt(np.abs(flat).sum())}")
        if finite.size != flat.size:
            lines.append(f"  non-finite: {flat.size - finite.size} of {flat.size}")
    head = ", ".join(_fmt(v) for v in flat[:shown])
    more = ", ..." if flat.size > shown else ""
    lines.append(f"  values: [{head}{more}]")
    return lines


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _fmt(value) -> str:
    if isinstance(value, complex | np.complexfloating):
        return f"({value.real:.6g}{value.imag:+.6g}j)"
    return f"{float(value):.6g}"


def describe_output(name: str, array: np.ndarray) -> list[str]:
    """The report block of one output: header line plus `summarize` lines."""
    return [f"{name}: shape {fmt_shape(array.shape)} dtype {_dtype_name(array.dtype)}", *summarize(array)]


def save_arrays(directory: Path, f: func.FuncOp, inputs, outputs) -> None:
    """Write `<name>.npy` for the outputs (`output_names`: `rlx.name` or `out<i>`) and
    `inputs/<name>.npy` for the arguments (a `/` in a name is written `_`).

    The saved inputs can be fed back with `--input NAME=DIR/inputs/NAME.npy`.
    """
    try:
        (directory / "inputs").mkdir(parents=True, exist_ok=True)
        for name, array in zip(output_names(f), outputs):
            np.save(directory / f"{name.replace('/', '_')}.npy", array)
        for arg, array in zip(graph_args(f), inputs):
            np.save(directory / "inputs" / f"{arg.name.replace('/', '_')}.npy", array)
    except OSError as e:
        raise RunError(f"cannot save to '{directory}': {e}") from None


# Command line --------------------------------------------------------------


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description=(
            "Run one function of an RLX .mlir file with the numpy reference interpreter "
            "and print a summary of each output (shape, dtype, min/max/mean, checksums, "
            "leading values). Arguments not given with --input get deterministic random values "
            "drawn from --seed (floats: standard normal; integers: 0..3; i1: coin flips), "
            "except the parameters when --params is given (from the file; one it lacks is an error "
            "unless --random-params) and the gradient seed 'd_output' of a function made by rlx-grad, which is ones: "
            "the outputs are then the plain gradients, as jax.grad gives them."
        ),
        epilog="Errors are reported as 'FILE:LINE:COL: error: ...' (parse, verifier and "
        "interpretation errors, located at the op as rlx-opt does) or 'rlx-run: error: ...', "
        "with exit code 1. RLX_DEBUG=1 shows the traceback of an internal error.",
    )
    parser.add_argument(
        "file", metavar="FILE", help="the .mlir file to run, '-' for stdin (parsed and verified first)"
    )
    parser.add_argument("--func", metavar="NAME", help="the function to run (default: the first func.func)")
    parser.add_argument(
        "--input",
        metavar="NAME=VALUE",
        action="append",
        default=[],
        help="value of the argument NAME (its rlx.name, or its SSA name): inline, written as in "
        "MLIR's dense<...> ('d_output=1.0' fills the argument's shape, 'x=[1,2,3]', "
        "'m=[[1,2],[3,4]]', 'b=true', 'f=0x7FC00000' is NaN), or a .npy file ('x=x.npy'); "
        "dtype and static dims must match the argument type; repeatable",
    )
    parser.add_argument(
        "--params",
        metavar="FILE",
        help="values of the parameters (rlx.param arguments), by their rlx.name, from a weight file "
        "(as rlx-import-torch/rlx-import-onnx --weights write one): .safetensors (needs the safetensors "
        "package), .npz, or an .onnx model's initializers; dtype and static dims must match "
        "the argument type; --input wins over it; a parameter neither in the file nor given with --input "
        "is an error (unless --random-params), and an entry naming no parameter is ignored (a note on "
        "stderr says which)",
    )
    parser.add_argument(
        "--random-params",
        action="store_true",
        help="with --params: seeded random values (as --seed draws them) for the parameters the file lacks, "
        "with a note naming them, instead of an error (without --params every argument not given is random)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default: 0)")
    parser.add_argument(
        "--backend",
        choices=("interpreter", "iree", "xla"),
        default="interpreter",
        help="run on the numpy reference interpreter (default), or lower to upstream MLIR and run "
        "it compiled by IREE (needs pip install -e '.[iree]'), or trace it with JAX and run it "
        "compiled by XLA, SPMD over the module's rlx.mesh if it has one (needs pip install -e '.[xla]'); "
        "for both, HIR block ops are lowered to MIR first, as the interpreter runs them",
    )
    parser.add_argument(
        "--device",
        choices=("cpu", "cuda", "gpu"),
        default="cpu",
        help="the compiled backend's target: the host CPU (default) or an NVIDIA GPU "
        "(cuda and gpu are the same; --backend=iree or xla only)",
    )
    parser.add_argument(
        "--tf32",
        action="store_true",
        help="--backend=xla: let f32 matmuls and convolutions run in TF32 on GPUs (faster, about "
        "1e-3 relative error); by default they run at full f32 precision",
    )
    parser.add_argument(
        "--disable-verify",
        action="store_true",
        help="skip the verifier: a function whose memory plan is wrong then runs anyway (and computes garbage)",
    )
    parser.add_argument(
        "--save",
        metavar="DIR",
        type=Path,
        help="write the outputs as DIR/NAME.npy (a result's rlx.name, as rlx-grad gives its loss and "
        "gradients: loss.npy, d_w.npy; else out0, out1, ...) and the inputs as DIR/inputs/NAME.npy",
    )
    return parser


def run(args: argparse.Namespace) -> list[str]:
    """Do the work of one invocation; return the report lines."""
    if args.device != "cpu" and args.backend == "interpreter":
        raise RunError(f"--device={args.device} needs --backend=iree or --backend=xla")
    if args.tf32 and args.backend != "xla":
        raise RunError("--tf32 needs --backend=xla")
    specs = parse_input_specs(args.input)
    module, source = load_module(args.file, verify=not args.disable_verify)
    f = select_function(module, args.func, source)
    inputs, random = gather_inputs(f, specs, args.seed, args.params, args.random_params)
    notes = [f"seed {args.seed}"] if random else []
    if args.backend == "iree":
        outputs = execute_on_iree(module, f, inputs, source, "cuda" if args.device == "gpu" else args.device)
        notes.append(f"IREE {args.device}")
    elif args.backend == "xla":
        outputs, where = execute_on_xla(module, f, inputs, source, args.device, args.tf32)
        notes.append(where)
    else:
        outputs = execute(module, f, inputs, source)
    if args.save is not None:
        save_arrays(args.save, f, inputs, outputs)
    counts = f"{_count(len(inputs), 'argument')}, {_count(len(outputs), 'output')}"
    plan = plan_of(f)
    on_arena = plan is not None and args.backend == "interpreter"
    arena = f", on an arena of {plan.arena_bytes.value.data} bytes" if on_arena else ""
    how = f" ({', '.join(notes)})" if notes else ""
    lines = [f"@{f.sym_name.data}: {counts}{how}{arena}"]
    for name, array in zip(output_names(f), outputs):
        lines += describe_output(name, array)
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    args = make_parser().parse_args(argv)
    try:
        lines = run_deep(lambda: run(args))
    except (RunError, SourceError) as e:
        sys.stderr.write(format_error(e))
        return 1
    except MemoryError:
        sys.stderr.write(f"{PROG}: error: out of memory (the inputs or outputs are too large for this machine)\n")
        return 1
    except Exception as e:
        if os.environ.get("RLX_DEBUG"):
            raise
        sys.stderr.write(f"{PROG}: internal error: {describe(e)} (set RLX_DEBUG=1 for a traceback)\n")
        return 1
    try:
        print("\n".join(lines), flush=True)
    except BrokenPipeError:  # `rlx-run f.mlir | head`: the reader left early, not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


if __name__ == "__main__":
    sys.exit(main())
