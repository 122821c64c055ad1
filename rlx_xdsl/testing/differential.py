"""Comparing another backend's outputs with the interpreter's, with dtype-aware tolerances.

Exact ops (arithmetic, data movement) are held to a tight relative tolerance;
transcendental functions and reductions, whose rounding depends on evaluation
order and on the math library, to a looser one. Half-precision results get
tolerances of a few units in their last place. Integers and booleans must be
equal. The tolerance is relative to the magnitude of the expected tensor (its
largest finite entry, at least 1), so entries that cancel to nearly zero are
not held to a relative bound they cannot meet. NaN and inf must appear at the
same positions.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import ml_dtypes
import numpy as np

from rlx_xdsl import dtypes

TOLERANCES: dict[str, tuple[float, float]] = {
    "f64": (1e-12, 1e-10),
    "f32": (1e-5, 1e-4),
    "complex<f32>": (1e-5, 1e-4),  # compared as complex numbers: |got - expected|
    "f16": (2e-3, 1e-2),
    "bf16": (1.6e-2, 5e-2),
}
"""`dtype -> (exact, approximate)` relative tolerances."""


def tolerance(dtype: np.dtype, approximate: bool) -> float:
    """The relative tolerance for results of `dtype` (0 for integers and booleans)."""
    name = dtypes.dtype_of_numpy(dtype).name
    if name not in TOLERANCES:
        return 0.0
    exact, approx = TOLERANCES[name]
    return approx if approximate else exact


def mismatch(got: np.ndarray, expected: np.ndarray, approximate: bool) -> str | None:
    """Why `got` does not match `expected`, or None when it does."""
    if got.shape != expected.shape:
        return f"shape {got.shape} != expected {expected.shape}"
    if got.dtype != expected.dtype:
        return f"dtype {got.dtype} != expected {expected.dtype}"
    rtol = tolerance(expected.dtype, approximate)
    if rtol == 0.0:
        bad = got != expected
        return f"{int(bad.sum())} of {bad.size} elements differ" if bad.any() else None
    wide = np.complex128 if np.iscomplexobj(expected) else np.float64
    g, e = got.astype(wide), expected.astype(wide)
    finite = e[np.isfinite(e)]
    scale = max(1.0, float(np.abs(finite).max())) if finite.size else 1.0
    ok = np.isclose(g, e, rtol=rtol, atol=rtol * scale, equal_nan=True)
    if ok.all():
        return None
    worst = np.nanmax(np.where(ok, 0.0, np.abs(g - e)))
    return f"{int((~ok).sum())} of {ok.size} elements differ (max abs error {worst:.3g}, scale {scale:.3g}, rtol {rtol})"


def assert_matches(got: np.ndarray, expected: np.ndarray, approximate: bool = False, what: str = "") -> None:
    reason = mismatch(np.asarray(got), np.asarray(expected), approximate)
    assert reason is None, f"{what}: {reason}" if what else reason


# Bit-for-bit comparison on edge values ---------------------------------------------

ULP_BOUNDS: dict[str, int] = {
    name: 4
    for name in ("mir.gelu", "mir.gelu_approx", "mir.silu", "mir.sigmoid", "mir.tanh", "mir.exp", "mir.log",
                 "mir.sqrt", "mir.rsqrt", "mir.sin", "mir.cos", "mir.tan", "mir.atan", "mir.log1p", "mir.expm1",
                 "mir.pow", "mir.erf", "mir.softmax", "mir.if", "mir.elementwise_region")  # fmt: skip
} | {"mir.rng_normal": 64}
"""Ops whose results may differ from the interpreter's by a few units in the last place
(libm implementations differ; IEEE 754 requires correct rounding of none of them):
`op name -> bound in ulps of the result dtype` (`mir.if` and `mir.elementwise_region` for the
transcendental ops in their bodies; `rng_normal`'s Box-Muller `log`, `sqrt` and `cos` of one
uniform draw). Every other op is exact: compared bit for bit."""


F64_ULP_BOUNDS: dict[tuple[str, str], int] = {
    **{(backend, "mir.gelu"): 8 for backend in ("iree", "xla")},
    **{(backend, "mir.gelu_approx"): 2048 for backend in ("iree", "xla")},
    ("xla", "mir.tanh"): 8,
}
"""`(backend, op) -> ulps` where an f64 result may be further from the interpreter's than
`ULP_BOUNDS` says (tests/backends/test_transcendental_ranges.py; docs/deviations.md): exact
gelu's erfc is Cody's (5 ulps from exact, libm's 2); tanh-GELU is `x / (1 + exp(-2u))` with
|2u| up to 700 below x = -10, where one ulp of u (a fused multiply-add, or not) is 700 ulps
of the result; XLA's f64 tanh is 7 ulps off near ±1."""

def ulp_bound(backend: str, op: str, dtype: np.dtype) -> int:
    """The ulps a result of `op` in `dtype` on `backend` may be from the interpreter's:
    `F64_ULP_BOUNDS` (a GPU backend's CPU backend's) for f64, else `ULP_BOUNDS` (0: exact)."""
    cpu = GPU_BACKENDS.get(backend, backend)
    if np.dtype(dtype) == np.float64 and (cpu, op) in F64_ULP_BOUNDS:
        return F64_ULP_BOUNDS[cpu, op]
    return ULP_BOUNDS.get(op, 0)


COMPLEX_ULP_BOUNDS = {"mir.div": 1}
"""Complex ops whose backends scale the parts in another order (1 ulp of a part)."""


def _ordered(x: np.ndarray) -> np.ndarray:
    """Float bits as integers ordered like the floats (-0 and +0 one apart)."""
    bits = x.view(f"i{x.dtype.itemsize}").astype(np.int64)
    lowest = np.int64(np.iinfo(f"i{x.dtype.itemsize}").min)
    return np.where(bits < 0, lowest - bits - 1, bits)


def ulp_distance(got: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """Units in the last place between two float arrays of one dtype (0 where both are
    NaN, the dtype's largest integer where only one is)."""
    if got.dtype.kind == "c":
        return np.maximum(ulp_distance(got.real, expected.real), ulp_distance(got.imag, expected.imag))
    wrapped = _ordered(got).view(np.uint64) - _ordered(expected).view(np.uint64)  # the shorter way round
    apart = np.minimum(wrapped, -wrapped).astype(np.int64)
    g, e = np.isnan(got), np.isnan(expected)
    return np.where(g & e, 0, np.where(g | e, np.iinfo(np.int64).max, apart))


def _differs(got: np.ndarray, expected: np.ndarray, ulps: int) -> np.ndarray:
    """Elementwise: `got` is not `expected` (within `ulps` for floats; see `bit_mismatch`)."""
    dt = dtypes.dtype_of_numpy(expected.dtype)
    return ulp_distance(got, expected) > ulps if dt.is_float or dt.kind == "complex" else got != expected


def bit_mismatch(got: np.ndarray, expected: np.ndarray, ulps: int = 0) -> str | None:
    """Why `got` differs from `expected`: bit for bit (any NaN matches any NaN, the sign of
    zero counts) when `ulps` is 0, else within `ulps` units in the last place."""
    if got.shape != expected.shape:
        return f"shape {got.shape} != expected {expected.shape}"
    if got.dtype != expected.dtype:
        return f"dtype {got.dtype} != expected {expected.dtype}"
    bad = _differs(got, expected, ulps)
    if not bad.any():
        return None
    where = np.argwhere(bad)[:3].tolist()
    return f"{int(bad.sum())} of {bad.size} elements differ, at {where}: got {got[bad][:3]}, expected {expected[bad][:3]}"


@dataclass(frozen=True)
class Deviation:
    """A documented way a backend's result differs from the interpreter's on one op.

    `kind` is "flushes-subnormals" (each element is the interpreter's on the inputs with
    subnormals flushed to zero, flushed again: FTZ/DAZ; or, where the backend only copies
    it, the interpreter's), "inexact-on-subnormal-inputs"
    (every element that subnormal inputs do not influence agrees: one that neither zeros nor
    smallest normals in their place change; those that they do may take any value), "value-where-interpreter-errors" (where the interpreter raises, the
    backend gives the lowering's documented value), "reorders-sums" (every element that no
    non-finite, huge (past the square root of the largest finite value) or subnormal input
    influences agrees within `ulps` (a subnormal result may be flushed); those that one does may take any value: the order of
    a sum decides between inf, NaN and an absorbed term) or "pending" (a known fault being
    fixed: any result, or a result where the interpreter errors, is accepted and counted).
    """

    backend: str
    op: str
    kind: str
    reason: str
    ulps: int = 0
    """The bound of a "reorders-sums" deviation on the elements edge inputs do not influence."""
    tiny: int = 0
    """How many smallest normals a finite element of a "flushes-subnormals" deviation may be
    off by: each subnormal intermediate result that FTZ makes zero moves it by less than one."""


FTZ_REASON = "the CPU code runs with FTZ/DAZ set: subnormal inputs and results are zero"
_FTZ_OPS = ("mir.log", "mir.sqrt", "mir.rsqrt", "mir.relu", "mir.add", "mir.sub", "mir.mul", "mir.div", "mir.max", "mir.min")
RULE_REASON = "the lowering's documented rule where the interpreter raises: x / 0 is 0, a negative integer exponent gives 0"
_FTZ_GROUP_OPS = ("mir.scatter_add", "mir.relu_backward", "mir.fused_residual_rms_norm", "mir.grouped_matmul",
                  "mir.dequant_moe_weights", "mir.dequant_grouped_matmul", "mir.dequant_matmul", "mir.lora_matmul",
                  "mir.complex_norm_sq_backward", "mir.selective_scan", "mir.batch_elementwise_region",
                  "mir.conv_transpose_2d", "mir.conv_backward_input")  # fmt: skip
SUM_REASON = ("the backend sums (and multiplies out) in another order: with ±inf, NaN or the largest finite "
              "values among the terms, the order decides between inf, NaN and an absorbed term")
_BOTH_REORDERED = {"mir.batched_dense_solve": 0, "mir.topk": 0, "mir.cumsum": 0, "mir.softmax_cross_entropy_backward": 2,
                   "mir.softmax_cross_entropy_with_logits": 1, "mir.rope_backward": 0, "mir.layer_norm_2d": 0,
                   "mir.axial_rope_2d": 1, "mir.log_mel": 0, "mir.fused_swiglu": 192}  # fmt: skip
REORDERED: dict[str, dict[str, int]] = {
    "iree": {**_BOTH_REORDERED, "mir.rope": 0, "mir.rms_norm_backward_input": 3, "mir.fft": 9, "mir.reduce": 0, "mir.matmul": 0, "mir.batch_norm_inference": 0,
             "mir.scan_backward": 0, "mir.pool_backward": 0},
    "xla": {**_BOTH_REORDERED, "mir.fft": 2, "mir.softmax_cross_entropy": 0, "mir.pool": 0, "mir.batch_norm_inference": 0,
            "mir.scan_backward": 0, "mir.layer_norm_backward_input": 0, "mir.conv_backward_weight": 0},
}  # fmt: skip
"""`backend -> {op: ulps}` of the "reorders-sums" deviations."""
REASONS = {
    "mir.fused_swiglu": "FTZ flushes the subnormal intermediates of `silu(gate) * up` (192 ulps of bf16 near the smallest normal)",
}
_NO_RUNTIME_ERROR = "compiled code has no run-time error to raise: "
ERROR_RULES: dict[str, str] = {
    "mir.sample": _NO_RUNTIME_ERROR + "a row of logits holding a NaN gives an unspecified id",
    "mir.scatter_add": _NO_RUNTIME_ERROR + "an out-of-range id gives the lowering's value (see \"Out-of-range ids\")",
    "mir.gather_backward": _NO_RUNTIME_ERROR + "an out-of-range id gives the lowering's value (see \"Out-of-range ids\")",
}
"""`op -> the rule its lowerings follow where the interpreter raises` (both backends)."""
ROPE_FTZ_REASON = FTZ_REASON + ", the two products of an element too (each moves it by less than the smallest normal)"
DEVIATIONS: tuple[Deviation, ...] = (
    *(Deviation(backend, op, "flushes-subnormals", FTZ_REASON) for backend in ("iree", "xla") for op in _FTZ_OPS),
    *(Deviation(backend, "mir.fake_quantize_backward", "flushes-subnormals", FTZ_REASON) for backend in ("iree", "xla")),
    Deviation("xla", "mir.fake_quantize_lsq_backward_x", "flushes-subnormals", FTZ_REASON),
    *(Deviation(backend, op, "flushes-subnormals", FTZ_REASON) for backend in ("iree", "xla")
      for op in _FTZ_GROUP_OPS),
    *(Deviation(backend, op, "reorders-sums", REASONS.get(op, SUM_REASON), ulps) for backend, ops in REORDERED.items()
      for op, ulps in ops.items()),
    *(Deviation(backend, op, "value-where-interpreter-errors", reason)
      for backend in ("iree", "xla") for op, reason in ERROR_RULES.items()),
    Deviation("xla", "mir.pool_backward", "flushes-subnormals", FTZ_REASON),
    Deviation("xla", "mir.rope", "flushes-subnormals", ROPE_FTZ_REASON, tiny=2),
    *(Deviation(backend, op, "flushes-subnormals", FTZ_REASON) for backend in ("iree", "xla")
      for op in ("mir.matmul", "mir.dot_general", "mir.conv", "mir.pool", "mir.layer_norm", "mir.rms_norm")
      if (backend, op) not in (("iree", "mir.matmul"), ("xla", "mir.pool"))),
    *(Deviation(backend, "mir.pow", "inexact-on-subnormal-inputs", "pow of a subnormal base goes through the "
                "backend's log, which reads subnormals as zero (IREE) or approximately (XLA)")
      for backend in ("iree", "xla")),
    *(Deviation(backend, op, "value-where-interpreter-errors", RULE_REASON)
      for backend in ("iree", "xla") for op in ("mir.div", "mir.pow")),
)  # fmt: skip
"""Every known per-backend difference on the edge values; docs/deviations.md has one row each."""

GPU_BACKENDS = {"iree-cuda": "iree", "xla-gpu": "xla"}
"""Each GPU backend (benchmarks/gpu_differential.py) and the CPU backend whose documented
deviations hold for it too: its lowering is the same; `GPU_DEVIATIONS` adds what only the
GPU does."""
GPU_REORDERED: dict[str, dict[str, int]] = {
    "iree-cuda": {"mir.dot_general": 0, "mir.fft": 10, "mir.conv_backward_weight": 0, "mir.lora_matmul": 0,
                  "mir.conv_transpose_2d": 0, "mir.fused_residual_rms_norm": 1},
    "xla-gpu": {"mir.dot_general": 0, "mir.fft": 3},
}  # fmt: skip
"""`GPU backend -> {op: ulps}` of the "reorders-sums" deviations only the GPU has (a GPU
reduces in tiles, and contracts products into fused multiply-adds)."""
GPU_DEVIATIONS: tuple[Deviation, ...] = (
    *(Deviation(backend, op, "reorders-sums", SUM_REASON, ulps) for backend, ops in GPU_REORDERED.items()
      for op, ulps in ops.items()),
    Deviation("iree-cuda", "mir.log", "inexact-on-subnormal-inputs",
              "the CUDA `log` reads a subnormal input as the smallest normal (log(1e-45) gives log(2**-126))"),
)  # fmt: skip
"""The GPU-only differences the recorded H200 run showed; docs/deviations.md has one row each."""


def deviation(backend: str, op: str, kind: str) -> Deviation | None:
    """The documented deviation of `kind` of `op` on `backend`, or None (a GPU backend's
    own first, then its CPU backend's: `GPU_BACKENDS`)."""
    found = next((d for d in (*GPU_DEVIATIONS, *DEVIATIONS) if (d.backend, d.op, d.kind) == (backend, op, kind)), None)
    return found or (deviation(GPU_BACKENDS[backend], op, kind) if backend in GPU_BACKENDS else None)


def flush_subnormals(x: np.ndarray, to_normal: bool = False) -> np.ndarray:
    """`x` with its subnormal floats replaced by zeros of their sign, or with `to_normal`
    by the smallest normal of their sign (other dtypes unchanged)."""
    dt = dtypes.dtype_of_numpy(x.dtype)
    if dt.kind == "complex":
        return _complex(flush_subnormals(x.real, to_normal), flush_subnormals(x.imag, to_normal))
    if not dt.is_float:
        return x
    tiny = float(ml_dtypes.finfo(x.dtype).smallest_normal)
    wide = x.astype(np.float64)
    replaced = np.copysign(tiny if to_normal else 0.0, wide)
    return np.where((wide != 0) & (np.abs(wide) < tiny), replaced, wide).astype(x.dtype)


@dataclass
class Outcome:
    """What the differential run found for one output of one case on one backend."""

    case: str
    backend: str
    op: str
    output: int
    status: str
    """agrees, documented (a `Deviation` held), refused (a located error compiling it),
    error-agrees (both error), or a failure: disagrees, silent (a value where the
    interpreter errors), error (the backend fails where the interpreter computes)."""
    detail: str = ""


FAILURES = ("disagrees", "silent", "error")


def _located(error: Exception) -> bool:
    return ": error: " in str(error) or type(error).__name__ in ("OpError", "LoweringError", "Diagnostic")


def _returned_ops(f) -> list[str]:
    """The name of the op computing each output of `f`."""
    return [v.owner.name if hasattr(v.owner, "name") and v.owner.name != "func.func" else "argument"
            for v in f.body.block.last_op.operands]  # fmt: skip


def _complex(real: np.ndarray, imag: np.ndarray) -> np.ndarray:
    """The complex64 array of two f32 parts (signs of zero kept)."""
    out = np.empty(real.shape, np.complex64)
    out.real, out.imag = real, imag
    return out


def tame(x: np.ndarray) -> np.ndarray:
    """`x` with its non-finite, huge (past the square root of the largest finite value) and
    subnormal floats made 1 (other dtypes unchanged): inputs on which the order of a sum
    cannot decide between inf, NaN and an absorbed term (1, not 0: a matrix stays regular)."""
    dt = dtypes.dtype_of_numpy(x.dtype)
    if dt.kind == "complex":
        return _complex(tame(x.real), tame(x.imag))
    if not dt.is_float:
        return x
    info = ml_dtypes.finfo(x.dtype)
    wide = np.abs(x.astype(np.float64))
    keep = np.isfinite(wide) & (wide <= np.sqrt(float(info.max))) & ((wide == 0) | (wide >= float(info.smallest_normal)))
    return np.where(keep, x, np.ones_like(x))


def _compare(case: str, backend: str, ops: list[str], got: Sequence, plain: list, flushed=None, tamed=None,
             raised=None) -> list[Outcome]:  # fmt: skip
    """`flushed()`, `raised()` and `tamed()`: the interpreter's outputs on the inputs with
    subnormals made zero, made the smallest normal, and on the tamed inputs, computed the
    first time a deviation asks (None where they are unknown)."""
    outcomes = []
    for index, (op, g, e) in enumerate(zip(ops, got, plain, strict=True)):
        g = np.asarray(g)
        ulps = COMPLEX_ULP_BOUNDS.get(op, 0) if e.dtype.kind == "c" else ULP_BOUNDS.get(op, 0)
        reason = bit_mismatch(g, e, ulps)
        if reason is None:
            outcomes.append(Outcome(case, backend, op, index, "agrees"))
            continue
        held = deviation(backend, op, "pending") is not None
        if not held and deviation(backend, op, "flushes-subnormals") and g.shape == e.shape and flushed and flushed():
            # an element the backend only copies (no arithmetic) keeps its subnormal
            copied = ~_differs(g, e, ulps) if g.dtype == e.dtype else False
            kept = np.where(copied, e, flush_subnormals(flushed()[index]))
            held = bit_mismatch(g, kept, ulps) is None
            tiny = deviation(backend, op, "flushes-subnormals").tiny
            if not held and tiny and g.dtype == e.dtype and g.dtype.kind == "f":
                with np.errstate(invalid="ignore"):  # inf - inf: not near, compared exactly
                    near = np.abs(g.astype(np.float64) - kept) <= tiny * float(ml_dtypes.finfo(g.dtype).smallest_normal)
                held = bool((near | ~_differs(g, kept, ulps)).all())
        if not held and deviation(backend, op, "inexact-on-subnormal-inputs") and flushed and flushed() and raised():
            unaffected = (ulp_distance(e, flushed()[index]) == 0) & (ulp_distance(e, raised()[index]) == 0)
            held = bit_mismatch(g[unaffected], e[unaffected], ulps) is None
        reordered = deviation(backend, op, "reorders-sums")
        if not held and reordered is not None and tamed is not None:
            unaffected = ulp_distance(e, tamed()[index]) == 0
            held = bit_mismatch(flush_subnormals(g[unaffected]), flush_subnormals(e[unaffected]), max(ulps, reordered.ulps)) is None
        outcomes.append(Outcome(case, backend, op, index, "documented" if held else "disagrees", reason))
    return outcomes


Runner = Callable[[str, list[np.ndarray]], Sequence]
"""`run(function name, inputs) -> outputs` of one compiled backend."""


def differential_run(module, names: Sequence[str], backends: dict[str, Runner], inputs_of) -> list[Outcome]:
    """Run each function `names` of `module` on the interpreter and on each backend with
    `inputs_of(f)`, and classify every output (see `Outcome`). A documented
    "flushes-subnormals" deviation is held only when the backend gives exactly the
    interpreter's result on the flushed inputs, flushed."""
    from rlx_xdsl.ir.graph import find_function
    from rlx_xdsl.run import run_function

    outcomes: list[Outcome] = []
    for name in names:
        f = find_function(module, name)
        inputs, ops = inputs_of(f), _returned_ops(f)
        try:
            plain = run_function(module, name, inputs)
            flushed = _once(lambda: _flushed_run(module, name, inputs))
            raised = _once(lambda: _flushed_run(module, name, inputs, to_normal=True))
            tamed = _once(lambda: _tamed_run(module, name, inputs, plain))
            refused = None
        except Exception as error:  # the interpreter's run-time error (a KernelError)
            plain = flushed = raised = tamed = None
            named = re.search(r"'(mir\.\w+)'", str(error))
            refused = named[1] if named else "?"
        for backend, run in backends.items():
            try:
                got = run(name, inputs)
            except Exception as error:
                status = "error-agrees" if refused else "refused" if _located(error) else "error"
                outcomes.append(Outcome(name, backend, refused or "?", -1, status, str(error)[:300]))
                continue
            if refused:
                held = any(deviation(backend, refused, kind) for kind in ("pending", "value-where-interpreter-errors"))
                status = "documented" if held else "silent"
                outcomes.append(Outcome(name, backend, refused, -1, status, "a value where the interpreter errors"))
                continue
            outcomes.extend(_compare(name, backend, ops, got, plain, flushed, tamed, raised))
    return outcomes


def _flushed_run(module, name: str, inputs: list[np.ndarray], to_normal: bool = False) -> list[np.ndarray] | None:
    """The interpreter's outputs on the inputs with their subnormals flushed (`flush_subnormals`),
    None when that raises."""
    from rlx_xdsl.run import run_function

    try:
        return run_function(module, name, [flush_subnormals(x, to_normal) for x in inputs])
    except Exception:
        return None


def _tamed_run(module, name: str, inputs: list[np.ndarray], plain: list[np.ndarray]) -> list[np.ndarray]:
    """The interpreter's outputs on the `tame` inputs; NaN everywhere (every element
    influenced) when they make it raise (a solve whose tamed matrix is singular)."""
    from rlx_xdsl.run import run_function

    try:
        return run_function(module, name, [tame(x) for x in inputs])
    except Exception:
        return [np.full(p.shape, np.nan).astype(p.dtype) if p.dtype.kind in "fc" or p.dtype == ml_dtypes.bfloat16 else ~p
                for p in plain]  # fmt: skip


def _once(compute):
    """`compute` as a function that calls it the first time only."""
    results = []
    return lambda: results[0] if results else results.append(compute()) or results[0]


def split_lowerable(module, names: Sequence[str], lower) -> tuple[list[str], list[Outcome]]:
    """`(names that lower, a "refused" outcome per other name)`: `lower(module)` is tried
    once; when it raises a located error, each function is lowered alone to find which
    refuse, so one case that cannot be lowered does not fail its whole module."""
    try:
        lower(module)
        return list(names), []
    except Exception as error:
        if not _located(error):
            raise
    kept, refused = [], []
    for name in names:
        alone = module.clone()
        for f in [f for f in alone.ops if getattr(f, "sym_name", None) is not None and f.sym_name.data != name]:
            alone.body.block.erase_op(f)
        try:
            lower(alone)
            kept.append(name)
        except Exception as error:
            if not _located(error):
                raise
            refused.append(Outcome(name, "iree", "?", -1, "refused", str(error)[:300]))
    return kept, refused
