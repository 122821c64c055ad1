"""The cases of the backends' differential test, their edge-value inputs, and the XLA runner.

Shared by tests/backends/test_differential.py (the interpreter, IREE CPU and XLA CPU) and
benchmarks/gpu_differential.py (the same cases on IREE CUDA and XLA GPU):

- `edge_cases()`: the cast, unary, binary and reduction cases; every argument is edge
  values (`edge_values.edge_inputs`).
- `group_cases()`: every other case linalg lowers; edge values in their float operands
  only (`edge_values.edge_floats`: ids, bytes and other integers keep the case's values).
- `splat_cases()`: the cases linalg cannot lower (Gaussian splatting): XLA only.
- `sweep_module()`, `sweep_inputs()`, `sweep_run(...)`: the transcendental unary ops
  in f32 and f64 over their whole range, held to their ulp bounds (subnormals left out).
- `xla_runner(module, names, inputs_of, device)`: a `differential.Runner` that traces and
  compiles the static-shaped functions `names` as one XLA program (one compile, not one
  per function) and runs the others, or all of them when the program does not trace,
  one `XlaModule` each.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from rlx_xdsl.context import make_context
from rlx_xdsl.ir.graph import find_function
from rlx_xdsl.ir.source import parse_source
from rlx_xdsl.testing import op_cases
from rlx_xdsl.testing.edge_values import edge_floats, edge_inputs


def _edge_groups() -> list[op_cases.OpCase]:
    return [
        *op_cases._cast_cases(),
        *op_cases._unary_cases(),
        *op_cases._binary_cases(),
        *[c for c in op_cases._reduction_cases() if c.name.startswith("reduce")],
    ]


def edge_cases() -> list[op_cases.OpCase]:
    """The static-shaped cast, unary, binary and reduction cases (edge values fill every
    argument, so they need a shape)."""
    cases = _edge_groups()
    module = op_cases.cases_module(cases)
    return [c for c in cases if static_function(find_function(module, c.name))]


def group_cases() -> list[op_cases.OpCase]:
    """Every lowerable case of the other groups."""
    edge_groups = {c.name for c in _edge_groups()}
    return [c for c in op_cases.lowerable_cases() if c.name not in edge_groups]


def splat_cases() -> list[op_cases.OpCase]:
    """The cases whose ops linalg cannot lower: a located refusal each on IREE."""
    lowerable = {c.name for c in op_cases.lowerable_cases()}
    return [c for c in op_cases.all_cases() if c.name not in lowerable]


def inputs_for(cases: Sequence[op_cases.OpCase]) -> Callable:
    """`inputs_of(f)` for the differential run: `edge_inputs(f)` for `edge_cases`, the
    case's own inputs with edge values in their float operands for the others."""
    by_name = {c.name: c for c in cases}
    edge = {c.name for c in edge_cases()}

    def inputs_of(f) -> list[np.ndarray]:
        name = f.sym_name.data
        return edge_inputs(f) if name in edge else edge_floats(op_cases.case_inputs(by_name[name], f))

    return inputs_of


DEFAULT_LEVEL = {"xla_backend_optimization_level": 2, "xla_llvm_disable_expensive_passes": False}
"""XLA's default optimisation level, what users get (the suite's XLA_FLAGS set level 0 for
speed): `xla_outputs` compiles at it."""


def static_function(f) -> bool:
    return all(t.has_static_shape() for t in f.function_type.inputs)


def xla_outputs(module, names: Sequence[str], inputs_of, device: str = "cpu") -> dict[str, list[np.ndarray]]:
    """`{name: outputs}` of the static-shaped functions `names` on XLA `device`, traced and
    compiled as one program at `DEFAULT_LEVEL`; empty when one of them does not trace (each
    then runs alone, through `XlaModule`)."""
    import jax

    from rlx_xdsl.backends.xla.export import matmul_precision, traced

    static = [n for n in names if static_function(find_function(module, n))]
    arrays = {n: inputs_of(find_function(module, n)) for n in static}
    programs = {n: traced(module, find_function(module, n)) for n in static}
    try:
        with matmul_precision(False):
            placed = jax.device_put(arrays, jax.devices(device)[0])
            program = jax.jit(lambda args: {n: programs[n](*args[n]) for n in static}).lower(placed)
            outputs = program.compile(compiler_options=DEFAULT_LEVEL)(placed)
    except Exception:  # a located refusal: XlaModule reports it per function
        return {}
    return {n: [np.asarray(v) for v in outputs[n]] for n in static}


def xla_runner(module, names: Sequence[str], inputs_of, device: str = "cpu"):
    """A `differential.Runner` for the functions `names` of `module` on XLA `device`."""
    from rlx_xdsl.backends.xla.module import XlaModule

    ran = xla_outputs(module, names, inputs_of, device)

    def run(name: str, inputs: list[np.ndarray]) -> list[np.ndarray]:
        if name in ran:
            return ran[name]
        return [np.asarray(v) for v in XlaModule(module, device, function=name)(*inputs)]

    return run


SWEEP_OPS = ("gelu", "gelu_approx", "silu", "sigmoid", "tanh", "exp", "log", "sqrt", "rsqrt", "sin", "cos", "tan",
             "atan", "log1p", "expm1", "erf")  # fmt: skip
SWEEP_DTYPES = {"f32": np.float32, "f64": np.float64}


def sweep_inputs() -> np.ndarray:
    """1400 f64 values: uniform in [-30, 30], magnitudes from 1e-30 to 1e30 of both signs,
    and uniform in [-1, 1] (each function rounds them to its dtype)."""
    rng = np.random.default_rng(0)
    magnitudes = np.exp(rng.uniform(np.log(1e-30), np.log(1e30), 400))
    return np.concatenate([rng.uniform(-30, 30, 400), magnitudes, -magnitudes, rng.uniform(-1, 1, 200)])


def sweep_module():
    """`@sweep_<op>_<dtype>` for every op of `SWEEP_OPS` and dtype of `SWEEP_DTYPES` (`sweep_names`)."""
    n = sweep_inputs().size
    text = "\n".join(f"""
func.func @sweep_{op}_{dt}(%x: tensor<{n}x{dt}>) -> tensor<{n}x{dt}> {{
  %y = mir.{op} %x : (tensor<{n}x{dt}>) -> tensor<{n}x{dt}>
  func.return %y : tensor<{n}x{dt}>
}}""" for op in SWEEP_OPS for dt in SWEEP_DTYPES)
    return parse_source(make_context(), text, "<sweep>")[0]


def sweep_names() -> dict[str, tuple[str, str]]:
    """`{function name: (op, dtype)}` of `sweep_module()`."""
    return {f"sweep_{op}_{dt}": (op, dt) for op in SWEEP_OPS for dt in SWEEP_DTYPES}


def sweep_input(name: str) -> np.ndarray:
    """The input of sweep function `name`."""
    return sweep_inputs().astype(SWEEP_DTYPES[sweep_names()[name][1]])


def sweep_mismatch(backend: str, op: str, got: np.ndarray, expected: np.ndarray, x: np.ndarray) -> str | None:
    """Why `got` is further from `expected` than `differential.ulp_bound` allows on some
    element whose input and result are normal numbers, or None."""
    from rlx_xdsl.testing.differential import ulp_bound, ulp_distance

    tiny = float(np.finfo(x.dtype).tiny)
    normal = ~(np.abs(expected.astype(np.float64)) < tiny) & ~(np.abs(x.astype(np.float64)) < tiny)
    ulps = np.where(normal, ulp_distance(got, expected), 0)
    bound = ulp_bound(backend, f"mir.{op}", x.dtype)
    if ulps.max() <= bound:
        return None
    at = int(np.argmax(ulps))
    return f"{ulps.max()} ulps > {bound} at x = {x[at]!r}: got {got[at]!r}, expected {expected[at]!r}"


def sweep_run(module, runners) -> dict[tuple[str, str], str | None]:
    """`{(backend, function name): sweep_mismatch}` of every function of `sweep_module()`
    (`module`) on each runner `{backend: run(name, inputs)}`, against the interpreter."""
    from rlx_xdsl.run import run_function

    found = {}
    for name, (op, _) in sweep_names().items():
        x = sweep_input(name)
        with np.errstate(all="ignore"):
            (expected,) = run_function(module, name, [x])
        for backend, run in runners.items():
            found[backend, name] = sweep_mismatch(backend, op, np.asarray(run(name, [x])[0]), expected, x)
    return found
