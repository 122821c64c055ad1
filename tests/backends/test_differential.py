"""The interpreter, IREE CPU and XLA CPU agree on edge values (issue 34's differential test).

Every lowerable case of `testing/op_cases.py` runs with `testing.edge_values` inputs
(±0, ±inf, NaN, subnormals, the largest finite values, integer limits, ties): every
argument of the elementwise, cast, compare and reduction cases, the float operands of
the others. IREE runs the session's compiled cases (`iree_op_cases`, shared with
test_ops_on_iree.py); XLA compiles each module of cases as one program, at its default
optimisation level (what users get; the rest of the suite runs level 0)
(`testing.differential_cases`, shared with benchmarks/gpu_differential.py).
Exact ops are compared bit for bit, transcendental ones within `ULP_BOUNDS`; every
other difference must be a `DEVIATIONS` entry (and a row of docs/deviations.md), held
exactly as documented.
"""

import importlib.util
import math
import sys
from collections import Counter
from fractions import Fraction
from pathlib import Path

import ml_dtypes
import mpmath
import numpy as np
import pytest

pytest.importorskip("iree.compiler")
jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

from rlx_xdsl.backends.iree import IreeModule, lowered_text  # noqa: E402
from rlx_xdsl.backends.xla.export import traced  # noqa: E402
from rlx_xdsl.backends.xla.module import XlaModule  # noqa: E402
from rlx_xdsl.context import make_context  # noqa: E402
from rlx_xdsl.conversions.mir_to_jax.registry import jax_function  # noqa: E402
from rlx_xdsl.ir.diagnostics import OpError  # noqa: E402
from rlx_xdsl.ir.graph import find_function
from rlx_xdsl.ir.source import parse_source  # noqa: E402
from rlx_xdsl.run import run_function  # noqa: E402
from rlx_xdsl.testing import op_cases  # noqa: E402
from rlx_xdsl.testing.differential import (  # noqa: E402
    DEVIATIONS,
    FAILURES,
    GPU_DEVIATIONS,
    bit_mismatch,
    deviation,
    differential_run,
    flush_subnormals,
    split_lowerable,
    ulp_distance,
)
from rlx_xdsl.testing.differential_cases import edge_cases, group_cases, inputs_for, splat_cases, xla_runner  # noqa: E402
from rlx_xdsl.testing.edge_values import edge_floats, edge_values  # noqa: E402

DOCS = Path(__file__).resolve().parents[2] / "docs" / "deviations.md"
GPU_DIFFERENTIAL = Path(__file__).resolve().parents[2] / "benchmarks" / "gpu_differential.py"
BACKEND_NAMES = {"iree": "IREE CPU", "xla": "XLA CPU", "iree-cuda": "IREE CUDA", "xla-gpu": "XLA GPU"}


def _run(iree_op_cases, cases: list[op_cases.OpCase]) -> list:
    """`differential_run` of `cases` on the session's compiled modules (`iree_op_cases`)
    and on XLA CPU (one program per module)."""
    found = []
    inputs_of = inputs_for(cases)
    by_module: dict[int, tuple] = {}
    for case in cases:
        module, binary = iree_op_cases[case.name]
        by_module.setdefault(id(module), (module, binary, []))[2].append(case.name)
    for module, binary, names in by_module.values():
        xla = xla_runner(module, names, inputs_of)
        found += differential_run(module, names, {"iree": binary.run, "xla": xla}, inputs_of)
    return found


@pytest.fixture(scope="module")
def outcomes(iree_op_cases):
    """The elementwise, cast, compare and reduction cases, every argument edge values."""
    return _run(iree_op_cases, edge_cases())


@pytest.fixture(scope="module")
def group_outcomes(iree_op_cases):
    """Every other lowerable case, with edge values in its float operands."""
    return _run(iree_op_cases, group_cases())


def test_other_groups_agree_on_edge_floats(group_outcomes):
    failures = [o for o in group_outcomes if o.status in FAILURES]
    counts = Counter(o.status for o in group_outcomes)
    assert counts["agrees"] > 40, counts
    assert failures == [], "\n".join(f"@{o.case} {o.backend} {o.op} #{o.output}: {o.status}: {o.detail}" for o in failures)


@pytest.fixture(scope="module")
def splat_outcomes(iree_op_cases):
    """The cases linalg cannot lower (Gaussian splatting), edge values in their float
    operands: on IREE a located refusal each, counted; on XLA compared as the others."""
    cases = {c.name: c for c in splat_cases()}
    module = op_cases.cases_module(list(cases.values()))
    names, refused = split_lowerable(module, list(cases), lowered_text)
    xla = {"xla": lambda name, arrays: [np.asarray(v) for v in XlaModule(module, function=name)(*arrays)]}
    return cases, names, refused, differential_run(module, list(cases), xla, inputs_for(list(cases.values())))


def test_splat_cases_agree_on_xla_and_are_counted_refusals_on_iree(splat_outcomes):
    cases, names, refused, outcomes = splat_outcomes
    assert names == [] and sorted(o.case for o in refused) == sorted(cases) and len(cases) >= 5
    assert all("no lowering to linalg: Gaussian splatting" in o.detail for o in refused)
    assert [o for o in outcomes if o.status != "agrees"] == []
    assert sorted({o.case for o in outcomes}) == sorted(cases)


def test_a_case_that_cannot_be_lowered_is_a_counted_refusal():
    """One unlowerable function (a blocked-scaling cast) leaves the others of its module."""
    text = """
func.func @ok(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = mir.neg %x : (tensor<2xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}
func.func @blocked(%x: tensor<2x32xf32>) -> tensor<2x32xbf16> {
  %y = mir.cast %x config <sf_block = [1, 32]> : (tensor<2x32xf32>) -> tensor<2x32xbf16>
  func.return %y : tensor<2x32xbf16>
}
"""
    module, _ = parse_source(make_context(), text, "<refusal>")
    names, refused = split_lowerable(module, ["ok", "blocked"], lowered_text)
    assert names == ["ok"]
    assert [(o.case, o.status) for o in refused] == [("blocked", "refused")]
    assert "blocked-scaling cast" in refused[0].detail


def test_no_undocumented_disagreement_on_edge_values(outcomes):
    failures = [o for o in outcomes if o.status in FAILURES]
    counts = Counter(o.status for o in outcomes)
    assert counts["agrees"] > 100, counts
    assert failures == [], "\n".join(f"@{o.case} {o.backend} {o.op} #{o.output}: {o.status}: {o.detail}" for o in failures)


def test_every_documented_deviation_is_witnessed_and_in_the_docs(outcomes, group_outcomes):
    """Each entry is seen on the edge values (held as documented), and has its row."""
    witnessed = {(o.backend, o.op) for o in (*outcomes, *group_outcomes) if o.status == "documented"}
    docs = DOCS.read_text()
    unseen = [d for d in DEVIATIONS if (d.backend, d.op) not in witnessed]
    assert unseen == [], "no longer seen: remove them and their docs rows"
    for d in DEVIATIONS:
        assert f"| {BACKEND_NAMES[d.backend]} | `{d.op}` |" in docs, d


def test_every_gpu_deviation_has_its_row_and_a_gpu_keeps_its_cpu_rows():
    """The GPU rows are held by benchmarks/gpu_differential.py on a GPU (it fails on a row no
    case shows); here: each has its docs row, and a GPU backend's lookup falls back to the
    rows of its CPU backend (the same lowering)."""
    docs = DOCS.read_text()
    for d in GPU_DEVIATIONS:
        assert f"| {BACKEND_NAMES[d.backend]} | `{d.op}` |" in docs, d
    assert deviation("xla-gpu", "mir.fft", "reorders-sums").ulps == 3  # its own row first
    assert deviation("xla-gpu", "mir.rope", "flushes-subnormals") == deviation("xla", "mir.rope", "flushes-subnormals")
    assert deviation("xla-gpu", "mir.log", "inexact-on-subnormal-inputs") is None


@pytest.fixture(scope="module")
def gpu_differential():
    spec = importlib.util.spec_from_file_location("gpu_differential", GPU_DIFFERENTIAL)
    sys.path.insert(0, str(GPU_DIFFERENTIAL.parent))  # it imports gpu_check beside it
    try:
        script = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(script)
    finally:
        sys.path.remove(str(GPU_DIFFERENTIAL.parent))
    return script


def test_gpu_outputs_saved_then_replayed_classify_alike(gpu_differential, tmp_path):
    """The GPU script's `--save` file (bf16 outputs as bits, errors as text) replays to the
    same outcomes: XLA CPU stands in for the GPU here."""
    text = """
func.func @half(%x: tensor<4xf32>) -> tensor<4xbf16> {
  %y = mir.cast %x : (tensor<4xf32>) -> tensor<4xbf16>
  func.return %y : tensor<4xbf16>
}
func.func @fails(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = mir.neg %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
"""
    module, _ = parse_source(make_context(), text, "<saved>")

    def xla(name, inputs):
        if name == "fails":
            raise RuntimeError("<device>:1:1: error: the device is gone")
        return [np.asarray(v) for v in XlaModule(module, function=name)(*inputs)]

    saved: dict = {}
    inputs_of = lambda f: [np.float32([1 + 2**-9, -0.0, np.inf, 3e38])]  # noqa: E731
    first = differential_run(module, ["half", "fails"], {"xla-gpu": gpu_differential.recording("xla-gpu", xla, saved)}, inputs_of)
    np.savez_compressed(tmp_path / "saved.npz", **saved)
    replayed = gpu_differential.replayer("xla-gpu", np.load(tmp_path / "saved.npz"))
    again = differential_run(module, ["half", "fails"], {"xla-gpu": replayed}, inputs_of)
    assert [(o.case, o.status) for o in first] == [("half", "agrees"), ("fails", "refused")]
    assert [(o.case, o.status, o.detail[-20:]) for o in again] == [(o.case, o.status, o.detail[-20:]) for o in first]


def test_a_replayed_file_lacking_a_case_says_so(gpu_differential, tmp_path):
    """A file saved by another version of the cases is an error naming the case, not a
    KeyError ending the replay."""
    np.savez(tmp_path / "old.npz", **{"xla-gpu|silu_f64|0|": np.zeros(1)})
    replayed = gpu_differential.replayer("xla-gpu", np.load(tmp_path / "old.npz"))
    with pytest.raises(gpu_differential.Replayed, match="holds no xla-gpu output of @sweep_silu_f64"):
        replayed("sweep_silu_f64", [])


def _gelu_module(n: int):
    text = "\n".join(f"""
func.func @{dt}(%x: tensor<{n}x{dt}>) -> tensor<{n}x{dt}> {{
  %y = mir.gelu %x : (tensor<{n}x{dt}>) -> tensor<{n}x{dt}>
  func.return %y : tensor<{n}x{dt}>
}}""" for dt in ("f32", "f64"))
    return parse_source(make_context(), text, "<gelu>")[0]


@pytest.mark.parametrize("backend", ["iree", "xla"])
def test_exact_gelu_keeps_the_digits_of_its_negative_tail(backend):
    """`x Φ(x)` from x = -13 (the last normal f32 result) to 10: f32 bit for bit with the
    interpreter and within an ulp of mpmath (`1 + erf` lost every digit below -5.5 on IREE,
    XLA's f32 erfc 24 ulps near -4.7); f64 within 8 ulps of mpmath (Cody's erfc is 5 ulps
    from exact: docs/deviations.md)."""
    x = np.random.default_rng(0).uniform(-13, 10, 512)
    x32 = x.astype(np.float32)
    module = _gelu_module(x.size)
    with mpmath.workprec(200):
        # erfc exact at z = -x/√2 rounded to f64, as the op's formula has it: one ulp of z moves erfc 2z² ulps
        exact, exact32 = ([float(mpmath.mpf(v) * mpmath.erfc(-v / math.sqrt(2.0)) / 2) for v in map(float, xs)]
                          for xs in (x, x32))  # fmt: skip
    if backend == "iree":
        compiled = IreeModule(module)
        run = lambda name, arg: compiled.run(name, [arg])[0]  # noqa: E731
    else:
        run = lambda name, arg: np.asarray(XlaModule(module, function=name)(arg)[0])  # noqa: E731
    got32, got64 = run("f32", x32), run("f64", x)
    assert bit_mismatch(got32, run_function(module, "f32", [x32])[0]) is None
    assert ulp_distance(got32, np.float32(exact32)).max() <= 1
    assert ulp_distance(got64, np.float64(exact)).max() <= 8


def test_complex_division_is_numpys_on_xla_at_its_default_level():
    """Smith's method with rounded products gives numpy's quotient bit for bit (XLA's own
    complex division: 40% of these one ulp off at its default level, a third at level 0)."""
    from rlx_xdsl.conversions.mir_to_jax.elementwise import complex_divide
    from rlx_xdsl.testing.differential_cases import DEFAULT_LEVEL

    rng = np.random.default_rng(0)
    a, b = ((rng.standard_normal(4096) + 1j * rng.standard_normal(4096)).astype(np.complex64) for _ in range(2))
    b[:4] = [0, 1e30 + 1e-30j, -3j, 2.5 + 0j]  # a zero divisor, each branch, a real divisor
    got = np.asarray(jax.jit(complex_divide).lower(a, b).compile(compiler_options=DEFAULT_LEVEL)(a, b))
    with np.errstate(all="ignore"):
        want = a / b
    assert bit_mismatch(got.real, want.real) is None and bit_mismatch(got.imag, want.imag) is None
    grad = jax.grad(lambda z: jnp.abs(complex_divide(z, b[1:2] * 0 + 2.0))[0] ** 2)(a[:1])  # (|z / 2|²)' = z / 2
    np.testing.assert_allclose(np.asarray(grad).conj(), a[:1] / 2, rtol=1e-6)


COMPLEX_DIVISION = """
func.func @d(%a: tensor<4xcomplex<f32>>, %b: tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>> {
  %y = mir.div %a, %b : (tensor<4xcomplex<f32>>, tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
  func.return %y : tensor<4xcomplex<f32>>
}"""


def test_a_finite_over_an_infinite_complex_number_is_documented_on_each_backend():
    """docs/deviations.md: the interpreter and XLA divide as numpy (Smith's method: NaN where
    both parts of the divisor are infinite, or one is NaN), IREE's `complex.div` as C99's
    Annex G (a finite number over an infinite one is 0)."""
    module, _ = parse_source(make_context(), COMPLEX_DIVISION, "<complex division>")
    a = np.array([3e38j, 1j, 1 + 1j, 2], np.complex64)
    b = np.array([complex(np.nan, np.inf), complex(-np.inf, -np.inf), complex(np.inf, 0), complex(0, np.inf)], np.complex64)
    with np.errstate(all="ignore"):
        numpy = a / b
    assert np.isnan(numpy[:2]).all() and (numpy[2:] == 0).all()
    for got in (run_function(module, "d", [a, b])[0], np.asarray(XlaModule(module, function="d")(a, b)[0])):
        assert bit_mismatch(got.real, numpy.real) is None and bit_mismatch(got.imag, numpy.imag) is None
    got = IreeModule(module).run("d", [a, b])[0]
    assert (got == 0).all() and np.signbit(got.real).tolist() == [False, True, False, False]


def test_flushing_is_checked_exactly():
    """A subnormal result made zero is the documented flush; a result off by anything
    else is not."""
    tiny = np.float32(1e-45)
    assert flush_subnormals(np.array([tiny, -tiny, 1.0, np.nan], np.float32)).tolist()[:3] == [0.0, -0.0, 1.0]
    assert np.signbit(flush_subnormals(np.array([-tiny], np.float32)))[0]
    assert bit_mismatch(np.float32([0.0]), flush_subnormals(np.float32([tiny]))) is None
    assert bit_mismatch(np.float32([-0.0]), flush_subnormals(np.float32([tiny]))) is not None


def test_bit_comparison_sees_signed_zeros_nan_positions_and_ulps():
    x = np.array([0.0, np.nan, 1.0], np.float32)
    assert bit_mismatch(x.copy(), x) is None
    assert bit_mismatch(np.array([-0.0, np.nan, 1.0], np.float32), x) is not None
    assert bit_mismatch(np.array([0.0, 1.0, 1.0], np.float32), x) is not None
    one_up = np.array([0.0, np.nan, np.nextafter(np.float32(1), np.float32(2))], np.float32)
    assert bit_mismatch(one_up, x) is not None
    assert bit_mismatch(one_up, x, ulps=1) is None


def test_edge_floats_refill_floats_and_keep_ids():
    ids, x = np.array([3, 0, 1], np.int64), np.zeros((2, 9), ml_dtypes.bfloat16)
    kept, filled = edge_floats([ids, x])
    assert kept is ids and filled.dtype == x.dtype and filled.shape == x.shape
    assert np.isnan(filled.astype(np.float32)).any() and np.isinf(filled.astype(np.float32)).any()


def test_edge_values_hold_the_limits():
    f = edge_values(np.float16)
    assert np.isnan(f).any() and np.isinf(f).sum() == 2 and np.signbit(f[f == 0]).any()
    assert np.float16(65504) in f and (np.abs(f[np.isfinite(f)]) < np.finfo(np.float16).tiny).sum() >= 2
    i = edge_values(np.int32)
    assert np.iinfo(np.int32).min in i and np.iinfo(np.int32).max in i and (i < 0).any()


# The fixed casts, against exact oracles ----------------------------------------------

CASTS = """
func.func @conv(%d: tensor<4xf64>, %i: tensor<4xi64>, %j: tensor<4xi32>) -> (tensor<4xbf16>, tensor<4xf16>, tensor<4xbf16>, tensor<4xbf16>) {
  %a = mir.cast %d : (tensor<4xf64>) -> tensor<4xbf16>
  %b = mir.cast %d : (tensor<4xf64>) -> tensor<4xf16>
  %c = mir.cast %i : (tensor<4xi64>) -> tensor<4xbf16>
  %e = mir.cast %j : (tensor<4xi32>) -> tensor<4xbf16>
  func.return %a, %b, %c, %e : tensor<4xbf16>, tensor<4xf16>, tensor<4xbf16>, tensor<4xbf16>
}
func.func @f2i(%x: tensor<8xf32>, %y: tensor<4xf64>) -> (tensor<8xi32>, tensor<8xi8>, tensor<8xui8>, tensor<4xi64>) {
  %a = mir.cast %x : (tensor<8xf32>) -> tensor<8xi32>
  %b = mir.cast %x : (tensor<8xf32>) -> tensor<8xi8>
  %c = mir.cast %x : (tensor<8xf32>) -> tensor<8xui8>
  %e = mir.cast %y : (tensor<4xf64>) -> tensor<4xi64>
  func.return %a, %b, %c, %e : tensor<8xi32>, tensor<8xi8>, tensor<8xui8>, tensor<4xi64>
}
func.func @cmp(%a: tensor<2xi32>, %b: tensor<2xf32>) -> tensor<2xi1> {
  %c = mir.compare eq, %a, %b : (tensor<2xi32>, tensor<2xf32>) -> tensor<2xi1>
  func.return %c : tensor<2xi1>
}
func.func @bools(%a: tensor<4xi1>, %b: tensor<4xi1>) -> (tensor<4xi1>, tensor<4xi1>) {
  %n = mir.neg %a : (tensor<4xi1>) -> tensor<4xi1>
  %s = mir.sub %a, %b : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  func.return %n, %s : tensor<4xi1>, tensor<4xi1>
}
"""

EMPTY_MAX = """
func.func @empty_max(%x: tensor<0x3xf32>) -> tensor<3xf32> {
  %r = mir.reduce max %x axes = [0] : (tensor<0x3xf32>) -> tensor<3xf32>
  func.return %r : tensor<3xf32>
}
"""


def _round_once(value: int | float, bits: int, max_exponent: int) -> float:
    """`value` rounded once to nearest-even with `bits` significant bits (exact rationals;
    normal range, overflow to inf past the largest finite value's rounding range)."""
    x = Fraction(value)
    if x == 0:
        return 0.0
    sign, x = (-1 if x < 0 else 1), abs(x)
    e = x.numerator.bit_length() - x.denominator.bit_length()
    e = e if Fraction(2) ** e <= x else e - 1
    ulp = Fraction(2) ** (e - bits + 1)
    q, r = divmod(x, ulp)
    q += 1 if r > ulp / 2 or (r == ulp / 2 and q % 2) else 0
    y = q * ulp
    return sign * (float("inf") if y >= Fraction(2) ** (max_exponent + 1) else float(y))


D = np.array([1.0039062500000002, 65519.99999999999, -1.0039062500000002, 1e300])
I = np.array([2**24 + 2**16 + 1, -(2**40 + 2**32 + 1), 2**60 + 2**52 + 1, -(2**63)], np.int64)
J = np.array([2**25 + 2**17 + 1, 2**31 - 1, -(2**24 + 2**16 + 1), 7], np.int32)
X = np.array([np.nan, np.inf, -np.inf, -2.7, 3e9, 300, -129, 2.7], np.float32)
Y = np.array([np.inf, -np.inf, 1e19, -1.5])


def _rust_as(x: np.ndarray, dtype) -> np.ndarray:
    """Truncate toward zero, saturate, NaN -> 0 (Rust's `as`), in Python integers."""
    info = np.iinfo(dtype)
    return np.array([0 if np.isnan(v) else min(max(int(v) if np.isfinite(v) else (info.max if v > 0 else info.min), info.min), info.max) for v in x.astype(np.float64)], dtype)


@pytest.fixture(scope="module")
def casts():
    module, _ = parse_source(make_context(), CASTS, "<casts>")
    return module, IreeModule(module)


@pytest.mark.parametrize("backend", ["interpreter", "iree", "xla"])
def test_casts_round_once_and_saturate(casts, backend):
    module, iree = casts

    def run(name, inputs):
        if backend == "iree":
            return iree.run(name, inputs)
        if backend == "xla":
            return [np.asarray(v) for v in XlaModule(module, function=name)(*inputs)]
        return run_function(module, name, inputs)

    bf16, f16 = (8, 127), (11, 15)
    expected = [
        [_round_once(v, *bf16) if abs(v) < 1e100 else np.inf for v in D],
        [_round_once(v, *f16) if abs(v) < 1e100 else np.inf for v in D],
        [_round_once(int(v), *bf16) for v in I],
        [_round_once(int(v), *bf16) for v in J],
    ]
    got = run("conv", [D, I, J])
    assert np.float16(got[1][1]) == 65504
    for g, e in zip(got, expected, strict=True):
        assert np.asarray(g).astype(np.float64).tolist() == e
    got = run("f2i", [X, Y])
    for g, dtype, x in zip(got, [np.int32, np.int8, np.uint8, np.int64], [X, X, X, Y], strict=True):
        assert np.asarray(g).tolist() == _rust_as(x, dtype).tolist()
    (equal,) = run("cmp", [np.array([2**24 + 1, 3], np.int32), np.array([2**24, 3], np.float32)])
    assert np.asarray(equal).tolist() == [False, True]
    a, b = np.array([True, True, False, False]), np.array([True, False, True, False])
    neg, sub = run("bools", [a, b])
    assert np.asarray(neg).tolist() == a.tolist() and np.asarray(sub).tolist() == (a ^ b).tolist()


def test_an_empty_max_is_a_located_error_on_both_backends():
    """The interpreter raises at run time; the shape says so before running on the backends."""
    module, _ = parse_source(make_context(), EMPTY_MAX, "<empty>")
    with pytest.raises(OpError, match="max over zero elements"):
        XlaModule(module, function="empty_max")
    with pytest.raises(Exception, match=r"cannot lower 'mir.reduce': max over zero elements"):
        IreeModule(module)


# The fixed lowerings, against independent formulas -------------------------------------


def _transposed_conv_loops(x, w, stride, padding, dilation, groups, size):
    """conv_transpose2d by its definition (`torch.nn.functional.conv_transpose2d`): each
    real product `x[n, ci, i, j] w[ci, co, a, b]` added at `(i sh - ph + a dh, j sw - pw + b dw)`."""
    n, cin, h, width = x.shape
    _, per_group, kh, kw = w.shape
    out = np.zeros((n, per_group * groups, *size), np.float64)
    for ci, i, j, a, b in np.ndindex(cin, h, width, kh, kw):
        r, c = i * stride[0] - padding[0] + a * dilation[0], j * stride[1] - padding[1] + b * dilation[1]
        if 0 <= r < size[0] and 0 <= c < size[1]:
            co = ci // (cin // groups) * per_group + np.arange(per_group)
            with np.errstate(invalid="ignore"):
                out[:, co, r, c] += x[:, ci, i, j, None] * w[ci, :, a, b].astype(np.float64)
    return out.astype(np.float32)


def _small_ints(rng, *shape):
    """Nonzero small integers (every sum exact in f32)."""
    return rng.choice(np.array([-3, -2, -1, 1, 2, 3], np.float32), size=shape)


@pytest.mark.parametrize("case", ["conv_transpose_2d", "backward_windows"])
@pytest.mark.parametrize("backend", ["interpreter", "iree", "xla"])
def test_transposed_conv_never_multiplies_inserted_or_padding_zeros(iree_op_cases, case, backend):
    """An inf weight gives ±inf only where it meets real inputs, never NaN from a zero the
    stride inserts or the padding adds (stride 2, padding 1); a real 0 times inf is NaN."""
    module, binary = iree_op_cases[case]
    rng = np.random.default_rng(0)
    if case == "conv_transpose_2d":  # x [2, 4, 3, 3], w [4, 3, 3, 2]
        x, w = _small_ints(rng, 2, 4, 3, 3), _small_ints(rng, 4, 3, 3, 2)
        inputs, props = [x, w], ((2, 1), (1, 0), (1, 2), 1, (6, 5))
    else:  # conv_backward_input of dy [2, 6, 3, 3] with w [6, 2, 3, 3] (and three other ops)
        x, w = _small_ints(rng, 2, 6, 3, 3), _small_ints(rng, 6, 2, 3, 3)
        inputs, props = [rng.standard_normal((2, 4, 7, 7)).astype(np.float32), w, x, _small_ints(rng, 2, 4, 4, 4)], ((2, 2), (0, 0), (1, 1), 2, (7, 7))
    w[1, 0, 1, 1], w[2, 1, 0, 1], x[0, 1, 1, 1] = np.inf, -np.inf, 0.0
    expected = _transposed_conv_loops(x, w, *props)
    if backend == "iree":
        got = binary.run(case, inputs)[0]
    elif backend == "xla":
        got = XlaModule(module, function=case)(*inputs)[0]
    else:
        got = run_function(module, case, inputs)[0]
    assert np.isinf(expected).any() and np.isnan(expected).any()
    assert bit_mismatch(np.asarray(got), expected) is None


ROPE_BY_FMA = """
func.func @rope(%x: tensor<1x1x1x2xf32>, %cos: tensor<1x1xf32>, %sin: tensor<1x1xf32>) -> tensor<1x1x1x2xf32> {
  %y = mir.rope %x, %cos, %sin head_dim = 2 n_rot = 2 : (tensor<1x1x1x2xf32>, tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1x1x2xf32>
  func.return %y : tensor<1x1x1x2xf32>
}
func.func @rms(%x: tensor<1x4xf32>, %g: tensor<4xf32>, %dy: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %y = mir.rms_norm_backward_input %x, %g, %dy axis = -1 eps = 1.0e-06 : (tensor<1x4xf32>, tensor<4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  func.return %y : tensor<1x4xf32>
}
func.func @pool(%x: tensor<1x1x2x2xf32>, %dy: tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32> {
  %y = mir.pool_backward %x, %dy kind = max kernel_size = [2, 2] stride = [2, 2] padding = [1, 1] : (tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  func.return %y : tensor<1x1x2x2xf32>
}
"""


@pytest.fixture(scope="module")
def fixed_on_xla():
    module, _ = parse_source(make_context(), ROPE_BY_FMA, "<fixed>")
    return module, lambda name, *inputs: np.asarray(XlaModule(module, function=name)(*inputs)[0])


def test_rope_rounds_each_product_on_xla(fixed_on_xla):
    """`a cos - b sin` with every operand `1 + 2⁻¹²` (each product rounds a tie): 0 with
    rounded products, as numpy's float32 gives, not the ±2⁻²⁴ of a contracted FMA. XLA
    contracts only when LLVM optimises, which the suite's XLA_FLAGS turn off: this compile
    asks for XLA's default optimisation level."""
    module, _ = fixed_on_xla
    a = np.float32(1 + 2**-12)
    x, cs = np.full((1, 1, 1, 2), a, np.float32), np.full((1, 1), a, np.float32)
    expected = np.array([[[[a * a - a * a, a * a + a * a]]]], np.float32)
    assert expected[0, 0, 0, 0] == 0.0
    optimised = {"xla_backend_optimization_level": 2, "xla_llvm_disable_expensive_passes": False}
    rope = jax.jit(jax_function(module, "rope")).lower(x, cs, cs).compile(compiler_options=optimised)
    for got in (rope(x, cs, cs)[0], run_function(module, "rope", [x, cs, cs])[0]):
        assert bit_mismatch(np.asarray(got), expected) is None


def test_rms_norm_input_gradient_stays_finite_on_xla(fixed_on_xla):
    """dy near the largest float: `rstd (g - x_hat mean(g x_hat))` is finite (an f64
    evaluation of the formula agrees); the VJP of the forward overflowed to ±inf and NaN."""
    module, xla = fixed_on_xla
    x, gamma = np.array([[0.5, -1.0, 2.0, 0.25]], np.float32), np.array([1.0, 2.0, 1.0, 0.5], np.float32)
    dy = np.array([[1e38, -1e38, 5e37, 2.0]], np.float32)
    x64, g64 = x.astype(np.float64), dy.astype(np.float64) * gamma
    rstd = 1 / np.sqrt((x64 * x64).mean(axis=-1, keepdims=True) + float(np.float32(1e-6)))
    expected = rstd * (g64 - x64 * rstd * (g64 * x64 * rstd).mean(axis=-1, keepdims=True))
    for got in (xla("rms", x, gamma, dy), run_function(module, "rms", [x, gamma, dy])[0]):
        np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-6)


def test_max_pool_gradient_reaches_a_real_minus_inf_beside_padding(fixed_on_xla):
    """Each 2x2 window (padding 1) holds one real cell; the one holding -inf is still its
    window's first real maximum, so every dy reaches x (XLA sent it to a padding cell)."""
    module, xla = fixed_on_xla
    x, dy = np.array([[[[-np.inf, 1.0], [2.0, 3.0]]]], np.float32), np.array([[[[5.0, 6.0], [7.0, 8.0]]]], np.float32)
    for got in (xla("pool", x, dy), run_function(module, "pool", [x, dy])[0]):
        assert bit_mismatch(np.asarray(got), dy) is None


CONTRACTED_BY_DEFAULT = """
func.func @rms(%x: tensor<64x2xf32>, %g: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<64x2xf32> {
  %y = mir.rms_norm %x, %g, %b axis = -1 eps = 1.0e-06 : (tensor<64x2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<64x2xf32>
  func.return %y : tensor<64x2xf32>
}
func.func @layer(%x: tensor<64x2xf32>, %g: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<64x2xf32> {
  %y = mir.layer_norm %x, %g, %b axis = -1 eps = 1.0e-05 : (tensor<64x2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<64x2xf32>
  func.return %y : tensor<64x2xf32>
}
func.func @batch(%x: tensor<64x2xf32>, %g: tensor<2xf32>, %b: tensor<2xf32>, %m: tensor<2xf32>, %v: tensor<2xf32>) -> tensor<64x2xf32> {
  %y = mir.batch_norm_inference %x, %g, %b, %m, %v eps = 1.0e-03 : (tensor<64x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<64x2xf32>
  func.return %y : tensor<64x2xf32>
}
func.func @complex(%a: tensor<64x2xcomplex<f32>>, %c: tensor<64x2xcomplex<f32>>) -> (tensor<64x2xcomplex<f32>>, tensor<64xcomplex<f32>>) {
  %p = mir.mul %a, %c : (tensor<64x2xcomplex<f32>>, tensor<64x2xcomplex<f32>>) -> tensor<64x2xcomplex<f32>>
  %r = mir.reduce prod %a axes = [1] : (tensor<64x2xcomplex<f32>>) -> tensor<64xcomplex<f32>>
  func.return %p, %r : tensor<64x2xcomplex<f32>>, tensor<64xcomplex<f32>>
}
func.func @axial(%x: tensor<1x2x12x8xf32>) -> tensor<1x2x12x8xf32> {
  %y = mir.axial_rope_2d %x end_x = 3 end_y = 2 head_dim = 8 num_heads = 2 theta = 1.0e+02 repeat_factor = 2 : (tensor<1x2x12x8xf32>) -> tensor<1x2x12x8xf32>
  func.return %y : tensor<1x2x12x8xf32>
}
func.func @lsq(%x: tensor<2x64xf32>, %s: tensor<64xf32>, %dy: tensor<2x64xf32>) -> tensor<64xf32> {
  %y = mir.fake_quantize_lsq_backward_scale %x, %s, %dy bits = 3 axis = 1 : (tensor<2x64xf32>, tensor<64xf32>, tensor<2x64xf32>) -> tensor<64xf32>
  func.return %y : tensor<64xf32>
}
func.func @attention(%q: tensor<1x1x64x1xf32>, %k: tensor<1x1x2x1xf32>, %v: tensor<1x1x2x1xf32>, %bias: tensor<1x64x2xf32>) -> tensor<1x1x64x1xf32> {
  %y = mir.attention %q, %k, %v, %bias num_heads = 1 head_dim = 1 mask_kind = bias : (tensor<1x1x64x1xf32>, tensor<1x1x2x1xf32>, tensor<1x1x2x1xf32>, tensor<1x64x2xf32>) -> tensor<1x1x64x1xf32>
  func.return %y : tensor<1x1x64x1xf32>
}
"""


def _complex_product(a, c):
    """`(ac - bd) + (ad + bc)i` in f32 parts, each product rounded."""
    real = a.real * c.real - a.imag * c.imag
    return (real + 1j * (a.real * c.imag + a.imag * c.real)).astype(np.complex64)


def _norm_oracle(centred, square_mean, g, b, eps):
    """numpy f32: `centred / sqrt(square_mean + eps) * g + b`, every step rounded."""
    return centred / np.sqrt(square_mean + np.float32(eps)) * g + b


def test_xla_at_its_default_level_rounds_as_the_interpreter():
    """XLA's default optimisation level (what users get; the suite runs level 0) lets LLVM
    fuse a product into the add that reads it, and rewrites `a / sqrt(b)` as `a * rsqrt(b)`:
    each formula here gave other bits there. Sums run over two terms (one order), so the
    results are exact: numpy's float32 formulas and the interpreter give them bit for bit
    (attention within softmax's `exp` bound). One compile for all the functions."""
    module, _ = parse_source(make_context(), CONTRACTED_BY_DEFAULT, "<contracted>")
    rng = np.random.default_rng(0)
    f32 = lambda *shape: rng.standard_normal(shape).astype(np.float32)  # noqa: E731
    c64 = lambda *shape: (f32(*shape) + 1j * f32(*shape)).astype(np.complex64)  # noqa: E731
    x, g, b = f32(64, 2), f32(2), f32(2)
    inputs = {
        "rms": [x, g, b], "layer": [x, g, b], "batch": [x, g, b, f32(2), np.float32([0.5, 2.0])],
        "complex": [c64(64, 2), c64(64, 2)], "axial": [f32(1, 2, 12, 8)], "lsq": [f32(2, 64), np.abs(f32(64)) + 0.1, f32(2, 64)],
        # scores near 1e4 less a bias near 1e4: a fused multiply-add moves them by many ulps
        "attention": [f32(1, 1, 64, 1) * 100, f32(1, 1, 2, 1) * 100, np.float32([1, 0]).reshape(1, 1, 2, 1), f32(1, 64, 2) * 1e4],
    }  # fmt: skip
    programs = {n: traced(module, find_function(module, n)) for n in inputs}
    optimised = {"xla_backend_optimization_level": 2, "xla_llvm_disable_expensive_passes": False}
    compiled = jax.jit(lambda args: {n: programs[n](*args[n]) for n in inputs}).lower(inputs).compile(compiler_options=optimised)
    got = {n: [np.asarray(v) for v in outs] for n, outs in compiled(inputs).items()}
    a, c = inputs["complex"]
    m, v = inputs["batch"][3:]
    mean = (x[:, :1] + x[:, 1:]) / np.float32(2)
    centred = x - mean
    independent = {
        "rms": [_norm_oracle(x, (x[:, :1] * x[:, :1] + x[:, 1:] * x[:, 1:]) / np.float32(2), g, b, 1e-6)],
        "layer": [_norm_oracle(centred, (centred[:, :1] ** 2 + centred[:, 1:] ** 2) / np.float32(2), g, b, 1e-5)],
        "batch": [_norm_oracle(x - m, v, g, b, 1e-3)],
        "complex": [_complex_product(a, c), _complex_product(a[:, 0], a[:, 1])],
    }
    for name, outputs in got.items():
        expected = run_function(module, name, inputs[name])
        ulps = 4 if name == "attention" else 0
        for k, (out, want) in enumerate(zip(outputs, expected, strict=True)):
            assert bit_mismatch(out, want, ulps) is None, (name, k, bit_mismatch(out, want, ulps))
        for k, (out, want) in enumerate(zip(outputs, independent.get(name, []))):
            assert bit_mismatch(out, want) is None, (name, k, "numpy", bit_mismatch(out, want))


GRADIENTS_CONTRACTED_BY_DEFAULT = """
func.func @rms_input(%x: tensor<64x2xf32>, %g: tensor<2xf32>, %dy: tensor<64x2xf32>) -> tensor<64x2xf32> {
  %y = mir.rms_norm_backward_input %x, %g, %dy axis = -1 eps = 1.0e-06 : (tensor<64x2xf32>, tensor<2xf32>, tensor<64x2xf32>) -> tensor<64x2xf32>
  func.return %y : tensor<64x2xf32>
}
func.func @rms_gamma(%x: tensor<2x64xf32>, %dy: tensor<2x64xf32>) -> tensor<64xf32> {
  %y = mir.rms_norm_backward_gamma %x, %dy axis = -1 eps = 1.0e-06 : (tensor<2x64xf32>, tensor<2x64xf32>) -> tensor<64xf32>
  func.return %y : tensor<64xf32>
}
func.func @layer_gamma(%x: tensor<2x64xf32>, %dy: tensor<2x64xf32>) -> tensor<64xf32> {
  %y = mir.layer_norm_backward_gamma %x, %dy axis = -1 eps = 1.0e-05 : (tensor<2x64xf32>, tensor<2x64xf32>) -> tensor<64xf32>
  func.return %y : tensor<64xf32>
}
func.func @atan(%x: tensor<64xf32>, %dy: tensor<64xf32>) -> tensor<64xf32> {
  %y = mir.activation_backward atan %x, %dy : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  func.return %y : tensor<64xf32>
}
func.func @tan(%x: tensor<64xf32>, %dy: tensor<64xf32>) -> tensor<64xf32> {
  %y = mir.activation_backward tan %x, %dy : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  func.return %y : tensor<64xf32>
}
"""


def test_xla_at_its_default_level_rounds_gradients_as_the_interpreter():
    """The gradients whose products XLA's default level fused into a sum or into `1 + x²`:
    `dy gamma` in the rms_norm input gradient, `dy x_hat` in the gamma gradients, the squares
    of the atan and tan derivatives. Every sum runs over two terms or over small integers
    (one order, exact), so numpy's float32 formulas give the bits: of tan's derivative,
    around XLA's own `tan` (a libm difference, not the lowering's). One compile."""
    module, _ = parse_source(make_context(), GRADIENTS_CONTRACTED_BY_DEFAULT, "<contracted>")
    rng = np.random.default_rng(1)
    f32 = lambda *shape: rng.standard_normal(shape).astype(np.float32)  # noqa: E731
    x, g, dy = f32(64, 2), f32(2), f32(64, 2)
    small = rng.integers(-8, 9, (2, 64)).astype(np.float32)  # squares and sums exact in any order
    xs, dys = f32(64) * 2, f32(64)
    inputs = {"rms_input": [x, g, dy], "rms_gamma": [small, f32(2, 64)], "layer_gamma": [small, f32(2, 64)],
              "atan": [xs, dys], "tan": [xs, dys]}  # fmt: skip
    programs = {n: traced(module, find_function(module, n)) for n in inputs}
    optimised = {"xla_backend_optimization_level": 2, "xla_llvm_disable_expensive_passes": False}
    both = jax.jit(lambda args: ({n: programs[n](*args[n]) for n in inputs}, jax.numpy.tan(args["tan"][0])))
    outputs, tan = both.lower(inputs).compile(compiler_options=optimised)(inputs)
    got = {n: np.asarray(outs[0]) for n, outs in outputs.items()}

    def mean2(v):  # over the last axis of length 2
        return (v[..., :1] + v[..., 1:]) / np.float32(2)

    rstd = np.float32(1) / np.sqrt(mean2(x * x) + np.float32(1e-6))
    g_dy, x_hat = dy * g, x * rstd
    (rms_dy, layer_dy), centred = (inputs[n][1] for n in ("rms_gamma", "layer_gamma")), small - small.mean(-1, keepdims=True)
    rms_hat = small / np.sqrt((small * small).mean(-1, keepdims=True) + np.float32(1e-6))
    layer_hat = centred / np.sqrt((centred * centred).mean(-1, keepdims=True) + np.float32(1e-5))
    t = np.asarray(tan)
    independent = {
        "rms_input": rstd * (g_dy - x_hat * mean2(g_dy * x_hat)),
        "rms_gamma": (rms_dy * rms_hat)[0] + (rms_dy * rms_hat)[1],
        "layer_gamma": (layer_dy * layer_hat)[0] + (layer_dy * layer_hat)[1],
        "atan": dys * (np.float32(1) / (np.float32(1) + xs * xs)),
        "tan": dys * (np.float32(1) + t * t),
    }
    for name, out in got.items():
        assert bit_mismatch(out, independent[name]) is None, (name, "numpy", bit_mismatch(out, independent[name]))
        # the interpreter's tan is numpy's; its layer_norm x_hat is `centred * (1 / sqrt)`,
        # not the forward's quotient (1 ulp apart at any level)
        if name not in ("tan", "layer_gamma"):
            want = run_function(module, name, inputs[name])[0]
            assert bit_mismatch(out, want) is None, (name, bit_mismatch(out, want))
