"""Single-op MIR functions covering every primitive op, for differential tests of backends.

Each `OpCase` is one function: usually a single op line whose arguments are
`%0, %1, ...` (the function is built around it from the op's functional type),
or a whole `func.func` for region ops. `all_cases_module()` puts every case in
one module, so a backend compiles them all at once; `case_inputs` gives the
arguments (deterministic random values of each type, or the case's own
`inputs` where the op needs a domain: positive divisors, in-range ids,
well-conditioned matrices, dynamic shapes).

`approximate` marks ops whose rounding legitimately differs between
implementations (transcendental functions, reductions); they get the looser
tolerance of `testing.differential`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import ml_dtypes
import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute
from xdsl.parser import Parser

from rlx_xdsl.context import make_context
from rlx_xdsl.ir.graph import random_array
from rlx_xdsl.ir.source import parse_source

Inputs = Callable[[np.random.Generator], list[np.ndarray]]


@dataclass(frozen=True)
class OpCase:
    name: str
    text: str | tuple[str, ...]
    """One op line over `%0, %1, ...`; several (a family sharing the arguments `args`);
    or a whole `func.func @<name>`."""
    approximate: bool = False
    inputs: Inputs | None = None
    args: tuple[str, ...] = ()
    """The argument types of a family (a single op line states its own)."""


_SIGNATURE = re.compile(r":\s*\((?P<args>.*?)\)\s*->\s*(?P<results>\(.*\)|\S.*)$")


def _signature(line: str) -> tuple[list[str], list[str]]:
    """The operand and result types at the end of an op line."""
    match = _SIGNATURE.search(line)
    if match is None:  # `mir.constant ... : type`: no operands
        return [], [line.rsplit(" : ", 1)[1].strip()]
    args = [t.strip() for t in match["args"].split(", ") if t.strip()]
    results = match["results"].strip()
    return args, [t.strip() for t in results.strip("()").split(", ")] if results.startswith("(") else [
        results
    ]


def function_text(case: OpCase) -> str:
    """The `func.func` of a case: its op lines' results are the function's outputs."""
    if isinstance(case.text, str) and case.text.lstrip().startswith("func.func"):
        return case.text
    lines = (case.text,) if isinstance(case.text, str) else case.text
    args = list(case.args) if case.args else _signature(lines[0])[0]
    body, returned, result_types = [], [], []
    for j, line in enumerate(lines):
        types = _signature(line)[1]
        name = f"%r{j}"
        body.append(f"  {name}{':' + str(len(types)) if len(types) > 1 else ''} = {line}")
        returned += [name] if len(types) == 1 else [f"{name}#{i}" for i in range(len(types))]
        result_types += types
    params = ", ".join(f"%{i}: {t}" for i, t in enumerate(args))
    results = ", ".join(result_types)
    return "\n".join(
        [
            f"func.func @{case.name}({params}) -> ({results}) {{",
            *body,
            f"  func.return {', '.join(returned)} : {results}",
            "}",
        ]
    )


def cases_module(cases: Sequence[OpCase]) -> ModuleOp:
    """One module holding every case's function (parsed and verified)."""
    text = "\n".join(function_text(c) for c in cases)
    module, _ = parse_source(make_context(), text, "<op cases>")
    return module


def case_inputs(case: OpCase, f: func.FuncOp, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    if case.inputs is not None:
        return case.inputs(rng)
    return [random_array(t, rng) for t in f.function_type.inputs]


# Input recipes --------------------------------------------------------------------


def normal(*shape: int, dtype=np.float32) -> Callable[[np.random.Generator], np.ndarray]:
    return lambda rng: rng.standard_normal(shape).astype(dtype)


def ints(lo: int, hi: int, *shape: int, dtype=np.int32) -> Callable[[np.random.Generator], np.ndarray]:
    """Integers in [lo, hi]."""
    return lambda rng: rng.integers(lo, hi + 1, size=shape).astype(dtype)


def fixed(value) -> Callable[[np.random.Generator], np.ndarray]:
    return lambda rng: np.asarray(value)


def of(*makers: Callable[[np.random.Generator], np.ndarray]) -> Inputs:
    return lambda rng: [make(rng) for make in makers]


def solvable(n: int, *rhs: int, dtype=np.float32, batch: tuple[int, ...] = ()) -> Inputs:
    """Diagonally dominant (well-conditioned) matrices (`batch` of them) and right-hand sides."""

    def make(rng: np.random.Generator) -> list[np.ndarray]:
        a = rng.standard_normal((*batch, n, n)) + n * np.eye(n)
        return [a.astype(dtype), rng.standard_normal((*batch, n, *rhs)).astype(dtype)]

    return make


# The cases ------------------------------------------------------------------------

T23 = "tensor<2x3xf32>"
C23 = "tensor<2x3xcomplex<f32>>"
UNARY_FLOAT = ["gelu", "gelu_approx", "silu", "sigmoid", "tanh", "exp", "log", "sqrt", "rsqrt",
               "sin", "cos", "tan", "atan", "round", "relu", "neg", "abs", "log1p", "expm1", "erf"]  # fmt: skip


def _unary_cases() -> list[OpCase]:
    ints_only = tuple(f"mir.{name} %0 : (tensor<5xi32>) -> tensor<5xi32>" for name in ("relu", "neg", "abs"))
    return [
        OpCase("unary_f32", tuple(f"mir.{name} %0 : ({T23}) -> {T23}" for name in UNARY_FLOAT), approximate=True),
        OpCase("unary_i32", ints_only, inputs=of(ints(-3, 3, 5))),
        OpCase("exp_bf16", "mir.exp %0 : (tensor<6xbf16>) -> tensor<6xbf16>", approximate=True),
        OpCase("gelu_f16", "mir.gelu %0 : (tensor<6xf16>) -> tensor<6xf16>", approximate=True),
        OpCase("silu_f64", "mir.silu %0 : (tensor<6xf64>) -> tensor<6xf64>", approximate=True),
        OpCase("round_halves", "mir.round %0 : (tensor<6xf32>) -> tensor<6xf32>",
               inputs=of(fixed(np.array([0.5, -0.5, 1.5, -2.5, 2.4999, 0.0], np.float32)))),
    ]  # fmt: skip


def _binary_cases() -> list[OpCase]:
    broadcast = tuple(
        f"mir.{name} %0, %1 : (tensor<2x1x3xf32>, tensor<4x1xf32>) -> tensor<2x4x3xf32>"
        for name in ("add", "sub", "mul", "div", "max", "min", "pow")
    )
    compares = tuple(
        f"mir.compare {p}, %0, %1 : (tensor<6xi32>, tensor<6xi32>) -> tensor<6xi1>"
        for p in ("eq", "ne", "lt", "le", "gt", "ge")
    )
    return [
        OpCase("binary_broadcast", broadcast, approximate=True),
        OpCase("compare_i32", compares),
        OpCase("div_i32", "mir.div %0, %1 : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>",
               inputs=of(ints(-9, 9, 2, 3), ints(1, 4, 3))),
        OpCase("unsigned", ("mir.div %0, %1 : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>",
                            "mir.max %0, %1 : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>",
                            "mir.compare lt, %0, %1 : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xi1>"),
               args=("tensor<4xui8>", "tensor<4xui8>"),
               inputs=of(fixed(np.array([200, 3, 255, 0], np.uint8)), fixed(np.array([100, 2, 9, 1], np.uint8)))),
        OpCase("sub_i64", "mir.sub %0, %1 : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>",
               inputs=of(fixed(np.array([2**40, -5, 7], np.int64)), fixed(np.array([1, 2**35, -7], np.int64)))),
        OpCase("pow_i32", "mir.pow %0, %1 : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>",
               inputs=of(ints(-3, 3, 4), ints(0, 3, 4))),
        OpCase("bool_ops", ("mir.add %0, %1 : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>",
                            "mir.mul %0, %1 : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>",
                            "mir.max %0, %1 : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>"),
               args=("tensor<4xi1>", "tensor<4xi1>")),
        OpCase("add_promote", "mir.add %0, %1 : (tensor<3xbf16>, tensor<3xf16>) -> tensor<3xf32>"),
        OpCase("mul_int_float", "mir.mul %0, %1 : (tensor<3xi32>, tensor<3xf32>) -> tensor<3xf64>"),
        OpCase("add_ui8_i8", "mir.add %0, %1 : (tensor<3xui8>, tensor<3xi8>) -> tensor<3xi16>",
               inputs=of(fixed(np.array([200, 3, 255], np.uint8)), fixed(np.array([-100, 5, 127], np.int8)))),
        OpCase("add_bf16", "mir.add %0, %1 : (tensor<5xbf16>, tensor<5xbf16>) -> tensor<5xbf16>"),
        OpCase("mul_rank0", "mir.mul %0, %1 : (tensor<f32>, tensor<2x2xf32>) -> tensor<2x2xf32>"),
        OpCase("compare_nan", "mir.compare ne, %0, %1 : (tensor<3xf32>, tensor<1xf32>) -> tensor<3xi1>",
               inputs=of(fixed(np.array([np.nan, 1.0, 2.0], np.float32)), fixed(np.array([1.0], np.float32)))),
        OpCase("compare_mixed", "mir.compare ge, %0, %1 : (tensor<2x3xf32>, tensor<3xi32>) -> tensor<2x3xi1>"),
        OpCase("where", "mir.where %0, %1, %2 : (tensor<2x3xi1>, tensor<3xf32>, tensor<2x1xf16>) -> tensor<2x3xf32>"),
        OpCase("where_float_cond", "mir.where %0, %1, %2 : (tensor<3xf32>, tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>",
               inputs=of(fixed(np.array([0.0, -1.5, np.nan], np.float32)), ints(0, 3, 3), ints(0, 3, 3))),
    ]  # fmt: skip


CAST_PAIRS = [("f32", "i32"), ("f32", "bf16"), ("bf16", "f16"), ("i32", "f32"), ("i1", "f32"), ("f32", "i1"),
              ("ui8", "i32"), ("i32", "ui8"), ("f64", "f32"), ("i64", "i8"), ("f32", "ui8"), ("i8", "i64"),
              ("f16", "f64")]  # fmt: skip
CAST_INPUTS = {
    "f32": np.array([2.7, -2.7, 0.5, -0.5, 100.2, 0.0], np.float32),
    "i32": np.array([1, 255, 256, 300, -1, 7], np.int32),
}
"""Inputs showing truncation and wrap-around (the float ones also stay in range of ui8 where cast there)."""


def _cast_cases() -> list[OpCase]:
    lines = tuple(f"mir.cast %{i} : (tensor<6x{a}>) -> tensor<6x{b}>" for i, (a, b) in enumerate(CAST_PAIRS))
    args = tuple(f"tensor<6x{a}>" for a, _ in CAST_PAIRS)

    def inputs(rng: np.random.Generator) -> list[np.ndarray]:
        values = []
        for a, b in CAST_PAIRS:
            if (a, b) == ("f32", "ui8"):
                values.append(np.array([2.7, 0.5, 200.9, 0.0, 1.0, 7.5], np.float32))
            elif (a, b) == ("f32", "i1"):
                values.append(np.array([0.0, -0.0, 1.0, np.nan, -2.0, 0.1], np.float32))
            elif a in CAST_INPUTS:
                values.append(CAST_INPUTS[a])
            else:
                values.append(random_array(parse_type(f"tensor<6x{a}>"), rng))
        return values

    narrowing = tuple(f"mir.cast %{i} : (tensor<6x{a}>) -> tensor<6x{b}>" for i, (a, b) in enumerate(NARROWING_CASTS))
    return [
        OpCase("casts", lines, args=args, inputs=inputs),
        OpCase("casts_narrowing", narrowing, args=tuple(f"tensor<6x{a}>" for a, _ in NARROWING_CASTS)),
    ]


NARROWING_CASTS = [("f64", "bf16"), ("f64", "f16"), ("i64", "bf16"), ("i32", "bf16"), ("i64", "f16"),
                   ("f64", "i64"), ("f64", "ui32"), ("f32", "i8"), ("f16", "i64"), ("bf16", "ui8")]  # fmt: skip
"""Conversions that round once (f64/i64 to halves) or saturate (floats to integers)."""


def parse_type(text: str) -> Attribute:
    """A builtin type from its text (`tensor<6xf32>`)."""
    return Parser(make_context(), text).parse_type()


def _constant_cases() -> list[OpCase]:
    return [
        OpCase("constant_f32", f"mir.constant dense<[[1.5, -2.0, 0.0], [3.0, 4.25, -0.5]]> : {T23}"),
        OpCase("constant_ui8", "mir.constant dense<[0, 200, 255]> : tensor<3xui8>"),
        OpCase("constant_i1", "mir.constant dense<[true, false]> : tensor<2xi1>"),
        OpCase("constant_bf16", "mir.constant dense<[1.5, -3.0]> : tensor<2xbf16>"),
    ]


def _contraction_cases() -> list[OpCase]:
    return [
        OpCase("matmul", "mir.matmul %0, %1 : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>"),
        OpCase("matmul_batch_bcast", "mir.matmul %0, %1 : (tensor<2x1x3x4xf32>, tensor<5x4x2xf32>) -> tensor<2x5x3x2xf32>"),
        OpCase("matmul_bf16", "mir.matmul %0, %1 : (tensor<3x8xbf16>, tensor<8x2xbf16>) -> tensor<3x2xbf16>"),
        OpCase("matmul_mixed", "mir.matmul %0, %1 : (tensor<3x4xf16>, tensor<4x2xf32>) -> tensor<3x2xf32>"),
        OpCase("matmul_i32", "mir.matmul %0, %1 : (tensor<3x4xi32>, tensor<4x2xi32>) -> tensor<3x2xi32>"),
        OpCase("dot_general",
               "mir.dot_general %0, %1 lhs_contracting = [3] rhs_contracting = [0] lhs_batch = [0, 2] rhs_batch = [1, 3] "
               ": (tensor<2x3x4x5xf32>, tensor<5x2x6x4xf32>) -> tensor<2x4x3x6xf32>"),
        OpCase("dot_general_outer",
               "mir.dot_general %0, %1 lhs_contracting = [] rhs_contracting = [] lhs_batch = [] rhs_batch = [] "
               ": (tensor<3xf32>, tensor<2xf32>) -> tensor<3x2xf32>"),
        OpCase("dense_solve", "mir.dense_solve %0, %1 : (tensor<4x4xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>",
               approximate=True, inputs=solvable(4, 2)),
        OpCase("dense_solve_vector_f64", "mir.dense_solve %0, %1 : (tensor<5x5xf64>, tensor<5xf64>) -> tensor<5xf64>",
               approximate=True, inputs=solvable(5, dtype=np.float64)),
        OpCase("batched_dense_solve", "mir.batched_dense_solve %0, %1 "
               ": (tensor<3x4x4xf32>, tensor<3x4x2xf32>) -> tensor<3x4x2xf32>",
               approximate=True, inputs=solvable(4, 2, batch=(3,))),
        OpCase("batched_dense_solve_vector_dynamic", "mir.batched_dense_solve %0, %1 "
               ": (tensor<?x3x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>",
               approximate=True, inputs=solvable(3, batch=(2,))),
    ]  # fmt: skip


def _shape_cases() -> list[OpCase]:
    return [
        OpCase("reshape", "mir.reshape %0 new_shape = [4, -1] : (tensor<2x3x4xf32>) -> tensor<4x6xf32>"),
        OpCase("reshape_rank0", "mir.reshape %0 new_shape = [] : (tensor<1x1xf32>) -> tensor<f32>"),
        OpCase("reshape_dynamic", "mir.reshape %0 new_shape = [-1, 6] : (tensor<?x3xf32>) -> tensor<?x6xf32>",
               inputs=of(normal(4, 3))),
        OpCase("transpose", "mir.transpose %0 perm = [2, 0, 1] : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>"),
        OpCase("narrow", "mir.narrow %0 axis = 1 start = 2 len = 2 : (tensor<2x5x4xf32>) -> tensor<2x2x4xf32>"),
        OpCase("concat", "mir.concat %0, %1, %2 axis = -1 : (tensor<2x3xi32>, tensor<2x1xi32>, tensor<2x3xi32>) -> tensor<2x7xi32>"),
        OpCase("expand", "mir.expand %0 target_shape = [2, -1, 4] : (tensor<3x1xf32>) -> tensor<2x3x4xf32>"),
    ]  # fmt: skip


def _indexing_cases() -> list[OpCase]:
    return [
        OpCase("gather", "mir.gather %0, %1 axis = 1 : (tensor<3x5x2xf32>, tensor<2x2xi32>) -> tensor<3x2x2x2xf32>",
               inputs=of(normal(3, 5, 2), fixed(np.array([[0, -1], [4, -5]], np.int32)))),  # -1: the last
        OpCase("gather_float_ids", "mir.gather %0, %1 axis = 0 : (tensor<6x3xbf16>, tensor<4xf32>) -> tensor<4x3xbf16>",
               inputs=of(normal(6, 3, dtype=ml_dtypes.bfloat16), fixed(np.array([0.0, 5.9, -2.5, -6.0], np.float32)))),
        OpCase("scatter_add", "mir.scatter_add %0, %1 dim_size = 5 : (tensor<6x3xf32>, tensor<6xi64>) -> tensor<5x3xf32>",
               inputs=of(normal(6, 3), fixed(np.array([0, 4, 0, -3, -1, 4], np.int64)))),
        OpCase("scatter_add_i32", "mir.scatter_add %0, %1 dim_size = 3 : (tensor<4xi32>, tensor<4xf32>) -> tensor<3xi32>",
               inputs=of(ints(-5, 5, 4), fixed(np.array([2.0, -3.0, 2.9, -1.5], np.float32)))),
        OpCase("dynamic_update_slice",  # start 7 along dim 1 clamps to 6 - 2 = 4
               "mir.dynamic_update_slice %0, %1 at [%2, %3, %4] : (tensor<2x6x3xf32>, tensor<2x2x3xf32>, tensor<i32>, tensor<i32>, tensor<i64>) -> tensor<2x6x3xf32>",
               inputs=of(normal(2, 6, 3), normal(2, 2, 3), fixed(np.array(0, np.int32)), fixed(np.array(7, np.int32)), fixed(np.array(-1, np.int64)))),
        OpCase("dynamic_update_slice_at", "mir.dynamic_update_slice %0, %1 at [%2, %3] : (tensor<4x5xbf16>, tensor<1x5xbf16>, tensor<i32>, tensor<i32>) -> tensor<4x5xbf16>",
               inputs=of(normal(4, 5, dtype=ml_dtypes.bfloat16), normal(1, 5, dtype=ml_dtypes.bfloat16), fixed(np.array(2, np.int32)), fixed(np.array(0, np.int32)))),
    ]  # fmt: skip


def _reduction_cases() -> list[OpCase]:
    cases = [
        OpCase(f"reduce_{kind}", f"mir.reduce {kind} %0 axes = [0, 2] : (tensor<3x2x4xf32>) -> tensor<2xf32>", approximate=True)
        for kind in ("sum", "mean", "max", "min", "prod")
    ]  # fmt: skip
    cases += [
        OpCase("reduce_keep_dim", "mir.reduce sum %0 axes = [-1, 1] keep_dim : (tensor<2x3x4xf32>) -> tensor<2x1x1xf32>", approximate=True),
        OpCase("reduce_all_keep", "mir.reduce max %0 axes = [0, 1] keep_dim : (tensor<2x3xi32>) -> tensor<1x1xi32>"),
        OpCase("reduce_mean_i32", "mir.reduce mean %0 axes = [1] : (tensor<2x3xi32>) -> tensor<2xi32>",
               inputs=of(ints(-7, 7, 2, 3))),
        OpCase("reduce_mean_bf16", "mir.reduce mean %0 axes = [1] : (tensor<2x64xbf16>) -> tensor<2xbf16>", approximate=True),
        OpCase("reduce_sum_dynamic", "mir.reduce mean %0 axes = [0] : (tensor<?x3xf32>) -> tensor<3xf32>",
               approximate=True, inputs=of(normal(5, 3))),
        OpCase("softmax", "mir.softmax %0 axis = 0 : (tensor<4x5xf32>) -> tensor<4x5xf32>", approximate=True),
        OpCase("softmax_f16", "mir.softmax %0 axis = -1 : (tensor<2x7xf16>) -> tensor<2x7xf16>", approximate=True),
        OpCase("cumsum", "mir.cumsum %0 axis = 1 : (tensor<2x5xf32>) -> tensor<2x5xf32>", approximate=True),
        OpCase("cumsum_exclusive", "mir.cumsum %0 axis = 0 exclusive : (tensor<3x5xi32>) -> tensor<3x5xi32>"),
        OpCase("topk", "mir.topk %0 k = 4 : (tensor<3x6xf32>) -> (tensor<3x4xf32>, tensor<3x4xi64>)"),
        OpCase("topk_ties", "mir.topk %0 k = 3 : (tensor<8xi32>) -> (tensor<3xi32>, tensor<3xi64>)"),
        OpCase("topk_nan", "mir.topk %0 k = 3 : (tensor<5xf32>) -> (tensor<3xf32>, tensor<3xi64>)",
               inputs=of(fixed(np.array([1.0, np.nan, 3.0, 3.0, -1.0], np.float32)))),
    ]  # fmt: skip
    return cases


def _norm_cases() -> list[OpCase]:
    return [
        OpCase("layer_norm", "mir.layer_norm %0, %1, %2 axis = -1 eps = 1.000000e-05 "
               ": (tensor<2x3x8xf32>, tensor<8xf32>, tensor<1xf32>) -> tensor<2x3x8xf32>", approximate=True),
        OpCase("layer_norm_bf16", "mir.layer_norm %0, %1, %2 axis = 1 eps = 1.000000e-05 "
               ": (tensor<2x3x8xbf16>, tensor<3x8xbf16>, tensor<8xbf16>) -> tensor<2x3x8xbf16>", approximate=True),
        OpCase("rms_norm", "mir.rms_norm %0, %1, %2 axis = -1 eps = 1.000000e-06 "
               ": (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8xf32>", approximate=True),
        OpCase("group_norm", "mir.group_norm %0, %1, %2 num_groups = 3 eps = 1.000000e-05 "
               ": (tensor<2x6x3x2xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<2x6x3x2xf32>", approximate=True),
        OpCase("batch_norm_inference", "mir.batch_norm_inference %0, %1, %2, %3, %4 eps = 1.000000e-03 "
               ": (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4xf32>",
               approximate=True,
               inputs=of(normal(2, 3, 4), normal(3), normal(3), normal(3), fixed(np.float32([0.5, 1.0, 2.0])))),
    ]  # fmt: skip


def _signal_cases() -> list[OpCase]:
    """fft on the real layout and on complex<f32>; log_mel on power spectra (non-negative,
    some clamped by eps); complex arithmetic, reductions, constants and norms."""

    def spectra(rng: np.random.Generator) -> list[np.ndarray]:
        power = rng.random((2, 3, 6)).astype(np.float32)
        power[0, 0] = 0  # a silent frame: every mel bin clamps to eps
        filters = rng.random((6, 4)).astype(np.float32)
        return [power, filters]

    def with_dy(rng: np.random.Generator) -> list[np.ndarray]:
        return [*spectra(rng), rng.standard_normal((2, 3, 4)).astype(np.float32)]

    return [
        OpCase("fft_real_layout", "mir.fft %0 norm = backward : (tensor<2x3x16xf32>) -> tensor<2x3x16xf32>",
               approximate=True),
        OpCase("fft_real_layout_inverse_ortho_f64", "mir.fft %0 inverse norm = ortho : (tensor<4x10xf64>) -> tensor<4x10xf64>",
               approximate=True),
        OpCase("fft_real_layout_forward_bf16", "mir.fft %0 norm = forward : (tensor<2x8xbf16>) -> tensor<2x8xbf16>",
               approximate=True),
        OpCase("fft_complex", "mir.fft %0 norm = backward : (tensor<2x8xcomplex<f32>>) -> tensor<2x8xcomplex<f32>>",
               approximate=True),
        OpCase("fft_complex_inverse_ortho", "mir.fft %0 inverse norm = ortho : (tensor<3x5xcomplex<f32>>) -> tensor<3x5xcomplex<f32>>",
               approximate=True),
        OpCase("complex_arith", tuple(f"mir.{name} %0, %1 : ({C23}, tensor<3xcomplex<f32>>) -> {C23}"
                                      for name in ("add", "sub", "mul", "div")), args=(C23, "tensor<3xcomplex<f32>>"),
               approximate=True),
        OpCase("complex_with_real", ("mir.mul %0, %1 : (tensor<2x3xcomplex<f32>>, tensor<3xf32>) -> tensor<2x3xcomplex<f32>>",
                                     "mir.neg %0 : (tensor<2x3xcomplex<f32>>) -> tensor<2x3xcomplex<f32>>",
                                     "mir.abs %0 : (tensor<2x3xcomplex<f32>>) -> tensor<2x3xcomplex<f32>>",
                                     "mir.conjugate %0 : (tensor<2x3xcomplex<f32>>) -> tensor<2x3xcomplex<f32>>",
                                     "mir.complex_norm_sq %0 : (tensor<2x3xcomplex<f32>>) -> tensor<2x3xf32>",
                                     "mir.reduce sum %0 axes = [1] : (tensor<2x3xcomplex<f32>>) -> tensor<2xcomplex<f32>>",
                                     "mir.reduce mean %0 axes = [0] : (tensor<2x3xcomplex<f32>>) -> tensor<3xcomplex<f32>>",
                                     "mir.reduce prod %0 axes = [1] : (tensor<2x3xcomplex<f32>>) -> tensor<2xcomplex<f32>>",
                                     "mir.cumsum %0 axis = 1 : (tensor<2x3xcomplex<f32>>) -> tensor<2x3xcomplex<f32>>"),
               args=(C23, "tensor<3xf32>"), approximate=True),
        OpCase("complex_norm_sq_backward", f"mir.complex_norm_sq_backward %0, %1 : ({C23}, {T23}) -> {C23}",
               approximate=True),
        OpCase("matmul_complex", "mir.matmul %0, %1 : (tensor<3x4xcomplex<f32>>, tensor<4x2xcomplex<f32>>) -> tensor<3x2xcomplex<f32>>",
               approximate=True),
        OpCase("complex_casts", (f"mir.cast %0 : ({C23}) -> {T23}", f"mir.cast %0 : ({C23}) -> tensor<2x3xi32>",
                                 f"mir.cast %0 : ({C23}) -> tensor<2x3xi1>", "mir.cast %1 : (tensor<3xi32>) -> tensor<3xcomplex<f32>>"),
               args=(C23, "tensor<3xi32>"),
               inputs=of(fixed(np.complex64([[2.5 - 1j, -3.75 + 0j, 0j], [1j, 0.5 + 2j, -0.25 - 0.5j]])),
                         ints(-3, 3, 3))),
        OpCase("constant_complex", "mir.constant dense<[(1.5, -2.0), (0.0, 3.25), (-1.0, 0.0)]> : tensor<3xcomplex<f32>>"),
        OpCase("log_mel", "mir.log_mel %0, %1 eps = 1.000000e-10 "
               ": (tensor<2x3x6xf32>, tensor<6x4xf32>) -> tensor<2x3x4xf32>", approximate=True, inputs=spectra),
        OpCase("log_mel_backward", "mir.log_mel_backward %0, %1, %2 eps = 1.000000e-10 "
               ": (tensor<2x3x6xf32>, tensor<6x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x6xf32>",
               approximate=True, inputs=with_dy),
    ]  # fmt: skip


def _attention(
    name: str, mask_kind: str, q: str, kv: str, extra: str = "", mask: str | None = None
) -> OpCase:
    """An attention case; q's shape `BxHxSxD...` gives num_heads and head_dim."""
    _, heads, _, dim = (int(d) for d in q.split("x")[:4])
    operands = "%0, %1, %2" + (", %3" if mask else "")
    types = f"tensor<{q}>, tensor<{kv}>, tensor<{kv}>" + (f", tensor<{mask}>" if mask else "")
    text = (f"mir.attention {operands} num_heads = {heads} head_dim = {dim} mask_kind = {mask_kind}{extra} "
            f": ({types}) -> tensor<{q}>")  # fmt: skip
    return OpCase(name, text, approximate=True)


def _attention_cases() -> list[OpCase]:
    return [
        _attention("attention_none", "none", "2x4x3x8xf32", "2x4x5x8xf32"),
        _attention("attention_causal_gqa", "causal", "2x4x3x8xf32", "2x2x5x8xf32"),
        _attention("attention_sliding_softcap", "sliding_window", "1x2x5x4xf32", "1x2x5x4xf32",
                   " window = 2 score_scale = 3.000000e-01 attn_logit_softcap = 2.000000e+00"),
        _attention("attention_custom", "custom", "2x2x3x4xf32", "2x1x5x4xf32", mask="2x5xf32"),
        _attention("attention_bias", "bias", "2x4x3x4xf32", "2x2x5x4xf32", mask="4x1x5xf32"),
        _attention("attention_bf16", "causal", "1x2x4x8xbf16", "1x1x4x8xbf16"),
        OpCase("rope", "mir.rope %0, %1, %2 head_dim = 8 n_rot = 6 "
               ": (tensor<2x3x5x8xf32>, tensor<5x3xf32>, tensor<5x3xf32>) -> tensor<2x3x5x8xf32>"),
    ]  # fmt: skip


def _conv_cases() -> list[OpCase]:
    return [
        OpCase("conv", "mir.conv %0, %1 kernel_size = [3, 2] stride = [2, 2] padding = [1, 0] dilation = [1, 2] groups = 1 "
               ": (tensor<2x3x7x6xf32>, tensor<4x3x3x2xf32>) -> tensor<2x4x4x2xf32>", approximate=True),
        OpCase("conv_grouped", "mir.conv %0, %1 kernel_size = [3, 3] stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 2 "
               ": (tensor<1x4x5x5xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x5x5xf32>", approximate=True),
        OpCase("conv_grouped_strided", "mir.conv %0, %1 kernel_size = [2, 1] stride = [2, 1] padding = [1, 0] dilation = [1, 1] groups = 2 "
               ": (tensor<2x2x1x4xf32>, tensor<2x1x2x1xf32>) -> tensor<2x2x1x4xf32>", approximate=True),
        OpCase("conv_bf16", "mir.conv %0, %1 kernel_size = [2, 2] stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 "
               ": (tensor<1x2x3x3xbf16>, tensor<2x2x2x2xbf16>) -> tensor<1x2x2x2xbf16>", approximate=True),
        OpCase("pool_max", "mir.pool %0 kind = max kernel_size = [3, 3] stride = [2, 2] padding = [1, 1] "
               ": (tensor<1x2x5x5xf32>) -> tensor<1x2x3x3xf32>"),
        OpCase("pool_max_i32", "mir.pool %0 kind = max kernel_size = [2, 2] stride = [1, 1] padding = [1, 1] "
               ": (tensor<1x1x3x3xi32>) -> tensor<1x1x4x4xi32>", inputs=of(ints(-9, -1, 1, 1, 3, 3))),
        OpCase("pool_mean", "mir.pool %0 kind = mean kernel_size = [3, 2] stride = [2, 2] padding = [1, 1] "
               ": (tensor<1x2x5x4xf32>) -> tensor<1x2x3x3xf32>", approximate=True),
    ]  # fmt: skip


def _loss_cases() -> list[OpCase]:
    return [
        OpCase("sce_with_logits", "mir.softmax_cross_entropy_with_logits %0, %1 : (tensor<4x5xf32>, tensor<4xi32>) -> tensor<4xf32>",
               approximate=True, inputs=of(normal(4, 5), fixed(np.array([0, 4, -1, 5], np.int32)))),
        OpCase("sce_float_labels", "mir.softmax_cross_entropy_with_logits %0, %1 : (tensor<3x4xbf16>, tensor<3xf32>) -> tensor<3xbf16>",
               approximate=True, inputs=of(normal(3, 4, dtype=ml_dtypes.bfloat16), fixed(np.array([1.7, 0.0, 3.2], np.float32)))),
        OpCase("sce_dense", "mir.softmax_cross_entropy %0, %1 : (tensor<4x5xf32>, tensor<4x5xf32>) -> tensor<4xf32>", approximate=True),
        OpCase("sce_backward", "mir.softmax_cross_entropy_backward %0, %1, %2 : (tensor<4x5xf32>, tensor<4xi64>, tensor<4xf32>) -> tensor<4x5xf32>",
               approximate=True),
        # `-inf` logits of unselected classes, `[N, 1]` labels, ignored rows and a NaN label.
        OpCase("sce_ignore_index", "mir.softmax_cross_entropy_with_logits %0, %1 ignore_index = 2 : (tensor<4x5xf32>, tensor<4x1xf32>) -> tensor<4xf32>",
               approximate=True, inputs=of(fixed(_SCE_LOGITS), fixed(np.array([[0.0], [2.0], [np.nan], [4.5]], np.float32)))),
        OpCase("sce_dense_neg_inf", "mir.softmax_cross_entropy %0, %1 : (tensor<4x5xf32>, tensor<4x5xf32>) -> tensor<4xf32>",
               approximate=True, inputs=of(fixed(_SCE_LOGITS), fixed(_SCE_TARGETS))),
        OpCase("sce_backward_ignore_index", "mir.softmax_cross_entropy_backward %0, %1, %2 ignore_index = -100 : (tensor<4x5xf32>, tensor<4x1xi32>, tensor<4xf32>) -> tensor<4x5xf32>",
               approximate=True, inputs=of(fixed(_SCE_LOGITS), fixed(np.array([[1], [-100], [3], [-100]], np.int32)), normal(4))),
    ]  # fmt: skip


_SCE_LOGITS = np.array(
    [[1, -np.inf, 2, 0, 0.5], [0, 1, 2, 3, -np.inf], [-np.inf, 5, 1, 1, 0], [2, 2, -np.inf, -np.inf, 1]], np.float32
)
_SCE_TARGETS = np.array([[1, 0, 0, 0, 0], [0, 0.5, 0.5, 0, 0], [0, 1, 0, 0, 0], [0.25, 0.75, 0, 0, 0]], np.float32)
"""`_SCE_LOGITS` has `-inf` in classes the labels and targets above do not select."""


IF_CASE = """func.func @{name}(%p: tensor<1x1xi1>, %x: tensor<3xf32>, %y: tensor<2xi32>) -> (tensor<3xf32>, tensor<2xi32>) {{
  %0, %1 = mir.if %p (%x, %y) : (tensor<1x1xi1>, tensor<3xf32>, tensor<2xi32>) -> (tensor<3xf32>, tensor<2xi32>) {{
  ^bb0(%a: tensor<3xf32>, %b: tensor<2xi32>):
    %e = mir.exp %a : (tensor<3xf32>) -> tensor<3xf32>
    mir.yield %e, %b : tensor<3xf32>, tensor<2xi32>
  }} else {{
  ^bb0(%a: tensor<3xf32>, %b: tensor<2xi32>):
    %n = mir.neg %b : (tensor<2xi32>) -> tensor<2xi32>
    mir.yield %a, %n : tensor<3xf32>, tensor<2xi32>
  }}
  func.return %0, %1 : tensor<3xf32>, tensor<2xi32>
}}"""

WHILE_CASE = """func.func @{name}(%x: tensor<f32>, %n: tensor<2xi32>) -> (tensor<f32>, tensor<2xi32>) {{
  %0, %1 = mir.while (%x, %n){bound} : (tensor<f32>, tensor<2xi32>) -> (tensor<f32>, tensor<2xi32>) cond {{
  ^bb0(%a: tensor<f32>, %b: tensor<2xi32>):
    %c = mir.constant dense<100.0> : tensor<f32>
    %lt = mir.compare lt, %a, %c : (tensor<f32>, tensor<f32>) -> tensor<i1>
    mir.yield %lt : tensor<i1>
  }} do {{
  ^bb0(%a: tensor<f32>, %b: tensor<2xi32>):
    %c = mir.constant dense<3.0> : tensor<f32>
    %one = mir.constant dense<1> : tensor<2xi32>
    %a2 = mir.add %a, %c : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %b2 = mir.add %b, %one : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
    mir.yield %a2, %b2 : tensor<f32>, tensor<2xi32>
  }}
  func.return %0, %1 : tensor<f32>, tensor<2xi32>
}}"""


def _region_cases() -> list[OpCase]:
    return [
        OpCase("if_true", IF_CASE.format(name="if_true"), True, of(fixed([[True]]), normal(3), ints(0, 9, 2))),
        OpCase("if_false", IF_CASE.format(name="if_false"), True, of(fixed([[False]]), normal(3), ints(0, 9, 2))),
        OpCase("while", WHILE_CASE.format(name="while", bound=""), False, of(fixed(np.float32(1.0)), ints(0, 9, 2))),
        OpCase("while_bounded", WHILE_CASE.format(name="while_bounded", bound=" max_iterations = 4"), False,
               of(fixed(np.float32(1.0)), ints(0, 9, 2))),
    ]  # fmt: skip


def _backward_cases() -> list[OpCase]:
    """Backward kernels (lowered through their decompositions) and stop_gradient."""
    x, dy = "tensor<2x3xf32>", "tensor<2x3xf32>"
    activations = (
        f"mir.relu_backward %0, %1 : ({x}, {dy}) -> {x}",
        f"mir.activation_backward gelu_approx %0, %1 : ({x}, {dy}) -> {x}",
        f"mir.activation_backward tan %0, %1 : ({x}, {dy}) -> {x}",
        f"mir.stop_gradient %0 : ({x}) -> {x}",
    )
    t = "tensor<2x3x4xf32>"
    norms = (
        f"mir.layer_norm_backward_input %0, %1, %3 axis = -1 eps = 1.0e-05 : ({t}, tensor<4xf32>, {t}) -> {t}",
        f"mir.layer_norm_backward_gamma %0, %3 axis = 1 eps = 1.0e-05 : ({t}, {t}) -> tensor<3x4xf32>",
        f"mir.rms_norm_backward_input %0, %1, %3 axis = -1 eps = 1.0e-06 : ({t}, tensor<4xf32>, {t}) -> {t}",
        f"mir.rms_norm_backward_gamma %0, %3 axis = -1 eps = 1.0e-06 : ({t}, {t}) -> tensor<4xf32>",
        f"mir.rms_norm_backward_beta %3 axis = -2 : ({t}) -> tensor<3x4xf32>",
        f"mir.group_norm_backward_input %0, %2, %3 num_groups = 3 eps = 1.0e-05 : ({t}, tensor<3xf32>, {t}) -> {t}",
        f"mir.group_norm_backward_gamma %0, %3 num_groups = 1 eps = 1.0e-05 : ({t}, {t}) -> tensor<3xf32>",
        f"mir.group_norm_backward_beta %3 : ({t}) -> tensor<3xf32>",
    )
    q, kv, m = "tensor<2x4x3x8xf32>", "tensor<2x2x5x8xf32>", "tensor<2x5xf32>"
    heads = (
        f"mir.rope_backward %3, %5, %6 head_dim = 8 n_rot = 4 : ({q}, tensor<3x2xf32>, tensor<3x2xf32>) -> {q}",
        f"mir.attention_backward query %0, %1, %2, %3 num_heads = 4 head_dim = 8 mask_kind = causal : ({q}, {kv}, {kv}, {q}) -> {q}",
        f"mir.attention_backward key %0, %1, %2, %3, %4 num_heads = 4 head_dim = 8 mask_kind = custom score_scale = 0.5 "
        f"attn_logit_softcap = 30.0 : ({q}, {kv}, {kv}, {q}, {m}) -> {kv}",
        f"mir.attention_backward value %0, %1, %2, %3 num_heads = 4 head_dim = 8 mask_kind = sliding_window window = 2 "
        f": ({q}, {kv}, {kv}, {q}) -> {kv}",
    )
    x4, w4, dy4, dp = (
        "tensor<2x4x7x7xf32>",
        "tensor<6x2x3x3xf32>",
        "tensor<2x6x3x3xf32>",
        "tensor<2x4x4x4xf32>",
    )
    windows = (
        f"mir.conv_backward_input %2, %1 input_size = [7, 7] kernel_size = [3, 3] stride = [2, 2] padding = [0, 0] "
        f"dilation = [1, 1] groups = 2 : ({dy4}, {w4}) -> {x4}",
        f"mir.conv_backward_weight %0, %2 kernel_size = [3, 3] stride = [2, 2] padding = [0, 0] dilation = [1, 1] "
        f"groups = 2 : ({x4}, {dy4}) -> {w4}",
        f"mir.pool_backward %0, %3 kind = max kernel_size = [2, 2] stride = [2, 2] padding = [1, 1] : ({x4}, {dp}) -> {x4}",
        f"mir.pool_backward %0, %3 kind = mean kernel_size = [2, 2] stride = [2, 2] padding = [1, 1] : ({x4}, {dp}) -> {x4}",
    )
    d5 = "tensor<2x3x5xf32>"
    indexing = (
        f"mir.cumsum_backward %0 axis = -1 exclusive : ({d5}) -> {d5}",
        f"mir.cumsum_backward %0 axis = 0 : ({d5}) -> {d5}",
        f"mir.gather_backward %0, %1 axis = 1 dim_size = 7 : ({d5}, tensor<3xi64>) -> tensor<2x7x5xf32>",
        f"mir.gather_backward %0, %2 axis = 0 dim_size = 4 : ({d5}, tensor<2x3xf32>) -> tensor<4x5xf32>",
    )
    return [
        OpCase("backward_activations", activations, True, args=(x, dy)),
        OpCase("backward_norms", norms, True, args=(t, "tensor<4xf32>", "tensor<3xf32>", t)),
        OpCase("backward_heads", heads, True, args=(q, kv, kv, q, m, "tensor<3x2xf32>", "tensor<3x2xf32>")),
        OpCase("backward_windows", windows, True, args=(x4, w4, dy4, dp)),
        OpCase("backward_indexing", indexing, True, args=(d5, "tensor<3xi64>", "tensor<2x3xf32>"),
               inputs=of(normal(2, 3, 5), fixed(np.array([6, -7, -1], np.int64)),
                         fixed(np.array([[0.0, -3.7, 1.0], [2.0, -4.0, 0.5]], np.float32)))),
    ]  # fmt: skip


def _fused_cases() -> list[OpCase]:
    x, r = "tensor<2x3x4xf32>", "tensor<2x3x4xf32>"
    return [
        OpCase("fused", (
            "mir.fused_matmul_bias_act %0, %1, %2 activation = gelu : (tensor<2x3x4xf32>, tensor<4x5xf32>, tensor<5xf32>) -> tensor<2x3x5xf32>",
            "mir.fused_swiglu %3 gate_first cast_to = bf16 : (tensor<2x3x8xf32>) -> tensor<2x3x4xbf16>",
            f"mir.fused_residual_rms_norm %0, %4, %5, %5 axis = -1 eps = 1.000000e-06 : ({x}, {r}, tensor<4xf32>, tensor<4xf32>) -> {x}",
        ), True, args=(x, "tensor<4x5xf32>", "tensor<5xf32>", "tensor<2x3x8xf32>", r, "tensor<4xf32>")),
        OpCase("fused_matmul_relu_i32", "mir.fused_matmul_bias_act %0, %1, %2 activation = relu "
               ": (tensor<3x4xi32>, tensor<4x2xi32>, tensor<i32>) -> tensor<3x2xi32>",
               inputs=of(ints(-3, 3, 3, 4), ints(-3, 3, 4, 2), fixed(np.int32(1)))),
        OpCase("fused_residual_layer_norm", f"mir.fused_residual_layer_norm %0, %1, bias %2, %3, %4 axis = -1 "
               f"eps = 1.000000e-05 : ({x}, {r}, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> {x}", True),
        OpCase("fused_residual_norms_keeping_the_sum", (
            f"mir.fused_residual_rms_norm %0, %1, %3, %4 axis = -1 eps = 1.000000e-06 : ({x}, tensor<3x1xf32>, "
            f"tensor<4xf32>, tensor<4xf32>) -> ({x}, {x})",
            f"mir.fused_residual_layer_norm %0, %1, bias %2, %3, %4 axis = -1 eps = 1.000000e-05 : ({x}, "
            f"tensor<3x1xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> ({x}, {x})",
        ), True, args=(x, "tensor<3x1xf32>", "tensor<4xf32>", "tensor<4xf32>", "tensor<4xf32>")),
        OpCase("fused_attention_block", "mir.fused_attention_block %0, %1, %2 rope(%3, %4) num_heads = 2 head_dim = 4 "
               "num_kv_heads = 1 mask_kind = causal : (tensor<1x3x8xf32>, tensor<8x16xf32>, tensor<8x8xf32>, "
               "tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<1x3x8xf32>", True),
        OpCase("fused_transformer_layer", "mir.fused_transformer_layer %0, %1, %2, %3, %4, %5, %6, %7, %8 num_heads = 2 "
               "head_dim = 2 mask_kind = none activation = gelu eps1 = 1.000000e-05 eps2 = 1.000000e-05 : "
               "(tensor<1x3x4xf32>, tensor<4x12xf32>, tensor<4x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4x6xf32>, "
               "tensor<6x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x3x4xf32>", True),
        OpCase("elementwise_region", ELEMENTWISE_REGION_CASE, True),
        OpCase("fused_matmul_epilogue", EPILOGUE_CASE, True),
        OpCase("elementwise_region_prologue", PROLOGUE_CASE, True),
        OpCase("transform_region", 'mir.transform_region %0 steps = ["resize_nearest_2x", "resize_nearest_2x"] '
               ": (tensor<1x2x2x3xf32>) -> tensor<1x2x8x12xf32>"),
        OpCase("transform_region_i32_dynamic", 'mir.transform_region %0 steps = ["resize_nearest_2x"] '
               ": (tensor<2x1x?x2xi32>) -> tensor<2x1x?x4xi32>", inputs=of(ints(-5, 5, 2, 1, 3, 2))),
        OpCase("batch_elementwise_region", BATCH_REGION_CASE, True),
        OpCase("batch_elementwise_region_prologue", BATCH_PROLOGUE_CASE, True),
    ]  # fmt: skip


ELEMENTWISE_REGION_CASE = """func.func @elementwise_region(%x: tensor<4x8xf32>, %y: tensor<4x1xf32>, %t: tensor<f32>) -> (tensor<4x8xf32>, tensor<4x8xi1>) {
  %r:2 = mir.elementwise_region (%x, %y, %t) : (tensor<4x8xf32>, tensor<4x1xf32>, tensor<f32>) -> (tensor<4x8xf32>, tensor<4x8xi1>) {
  ^bb0(%a: tensor<4x8xf32>, %b: tensor<4x1xf32>, %c: tensor<f32>):
    %s = mir.add %a, %b : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
    %m = mir.compare gt, %s, %c : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xi1>
    %w = mir.where %m, %s, %c : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
    %e = mir.tanh %w : (tensor<4x8xf32>) -> tensor<4x8xf32>
    mir.yield %e, %m : tensor<4x8xf32>, tensor<4x8xi1>
  }
  func.return %r#0, %r#1 : tensor<4x8xf32>, tensor<4x8xi1>
}"""

EPILOGUE_CASE = """func.func @fused_matmul_epilogue(%x: tensor<3x4xf32>, %w: tensor<4x5xf32>, %b: tensor<5xf32>, %r: tensor<3x5xf32>) -> tensor<3x5xbf16> {
  %0 = mir.fused_matmul_epilogue %x, %w (%b, %r) : (tensor<3x4xf32>, tensor<4x5xf32>, tensor<5xf32>, tensor<3x5xf32>) -> tensor<3x5xbf16> {
  ^bb0(%acc: tensor<3x5xf32>, %bias: tensor<5xf32>, %res: tensor<3x5xf32>):
    %1 = mir.add %acc, %bias : (tensor<3x5xf32>, tensor<5xf32>) -> tensor<3x5xf32>
    %2 = mir.silu %1 : (tensor<3x5xf32>) -> tensor<3x5xf32>
    %3 = mir.add %2, %res : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
    %4 = mir.cast %3 : (tensor<3x5xf32>) -> tensor<3x5xbf16>
    mir.yield %4 : tensor<3x5xbf16>
  }
  func.return %0 : tensor<3x5xbf16>
}"""


PROLOGUE_CASE = """func.func @elementwise_region_prologue(%a: tensor<1x2x4x6xf32>, %x: tensor<1x2x2x3xf32>) -> tensor<1x2x4x6xf32> {
  %0 = mir.elementwise_region (%a, %x) prologue = resize_nearest_2x on 1 : (tensor<1x2x4x6xf32>, tensor<1x2x2x3xf32>) -> tensor<1x2x4x6xf32> {
  ^bb0(%p: tensor<1x2x4x6xf32>, %q: tensor<1x2x4x6xf32>):
    %s = mir.add %p, %q : (tensor<1x2x4x6xf32>, tensor<1x2x4x6xf32>) -> tensor<1x2x4x6xf32>
    %t = mir.tanh %s : (tensor<1x2x4x6xf32>) -> tensor<1x2x4x6xf32>
    mir.yield %t : tensor<1x2x4x6xf32>
  }
  func.return %0 : tensor<1x2x4x6xf32>
}"""
"""RLX's region prologue: input 1 read upsampled 2x in H and W."""

BATCH_REGION_CASE = """func.func @batch_elementwise_region(%s0: tensor<2x3xf32>, %s1: tensor<2x3xf32>, %s2: tensor<2x3xf32>, %m: tensor<1x3xf32>, %k: tensor<f32>) -> tensor<6x3xf32> {
  %0 = mir.batch_elementwise_region (%s0, %s1, %s2) shared (%m, %k) : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<1x3xf32>, tensor<f32>) -> tensor<6x3xf32> {
  ^bb0(%v: tensor<2x3xf32>, %mean: tensor<1x3xf32>, %scale: tensor<f32>):
    %d = mir.sub %v, %mean : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
    %e = mir.mul %d, %scale : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
    %t = mir.tanh %e : (tensor<2x3xf32>) -> tensor<2x3xf32>
    mir.yield %t : tensor<2x3xf32>
  }
  func.return %0 : tensor<6x3xf32>
}"""
"""Three slices, a per-channel mean and a scalar scale shared by every slice (RLX's batch pre-processing)."""

BATCH_PROLOGUE_CASE = """func.func @batch_elementwise_region_prologue(%s0: tensor<1x2x2x3xf32>, %s1: tensor<1x2x2x3xf32>, %m: tensor<1x2x1x1xf32>, %k: tensor<f32>) -> tensor<2x2x4x6xf32> {
  %0 = mir.batch_elementwise_region (%s0, %s1) shared (%m, %k) prologue = resize_nearest_2x on 0 : (tensor<1x2x2x3xf32>, tensor<1x2x2x3xf32>, tensor<1x2x1x1xf32>, tensor<f32>) -> tensor<2x2x4x6xf32> {
  ^bb0(%v: tensor<1x2x4x6xf32>, %mean: tensor<1x2x1x1xf32>, %scale: tensor<f32>):
    %d = mir.sub %v, %mean : (tensor<1x2x4x6xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x4x6xf32>
    %e = mir.mul %d, %scale : (tensor<1x2x4x6xf32>, tensor<f32>) -> tensor<1x2x4x6xf32>
    mir.yield %e : tensor<1x2x4x6xf32>
  }
  func.return %0 : tensor<2x2x4x6xf32>
}"""
"""Two half-resolution image slices read upsampled 2x (the prologue), normalised by a shared
per-channel mean and a scalar scale (RLX's batch pre-processing of upsampled slices)."""


SCAN_CASE = """func.func @scan(%h: tensor<1x3xf32>, %k: tensor<i32>, %w: tensor<3x3xf32>, %xs: tensor<6x1x3xf32>, %s: tensor<6xf32>)
    -> (tensor<6x1x3xf32>, tensor<6xi32>, tensor<2x1x3xf32>, tensor<1x3xf32>) {
  %r, %q = mir.scan init(%h, %k : tensor<1x3xf32>, tensor<i32>) bcasts(%w : tensor<3x3xf32>) xs(%xs, %s : tensor<6x1x3xf32>, tensor<6xf32>) length = 6 save_trajectory -> tensor<6x1x3xf32>, tensor<6xi32> {
  ^bb0(%c: tensor<1x3xf32>, %i: tensor<i32>, %wb: tensor<3x3xf32>, %x: tensor<1x3xf32>, %st: tensor<f32>):
    %m = mir.matmul %c, %wb : (tensor<1x3xf32>, tensor<3x3xf32>) -> tensor<1x3xf32>
    %a = mir.add %m, %x : (tensor<1x3xf32>, tensor<1x3xf32>) -> tensor<1x3xf32>
    %t = mir.tanh %a : (tensor<1x3xf32>) -> tensor<1x3xf32>
    %n = mir.mul %t, %st : (tensor<1x3xf32>, tensor<f32>) -> tensor<1x3xf32>
    %one = mir.constant dense<1> : tensor<i32>
    %j = mir.add %i, %one : (tensor<i32>, tensor<i32>) -> tensor<i32>
    mir.yield %n, %j : tensor<1x3xf32>, tensor<i32>
  }
  %cp = mir.scan init(%h : tensor<1x3xf32>) xs(%xs : tensor<6x1x3xf32>) length = 6 save_trajectory num_checkpoints = 2 -> tensor<2x1x3xf32> {
  ^bb0(%c: tensor<1x3xf32>, %x: tensor<1x3xf32>):
    %n = mir.add %c, %x : (tensor<1x3xf32>, tensor<1x3xf32>) -> tensor<1x3xf32>
    mir.yield %n : tensor<1x3xf32>
  }
  %f = mir.scan init(%h : tensor<1x3xf32>) length = 4 -> tensor<1x3xf32> {
  ^bb0(%c: tensor<1x3xf32>):
    %n = mir.sin %c : (tensor<1x3xf32>) -> tensor<1x3xf32>
    mir.yield %n : tensor<1x3xf32>
  }
  func.return %r, %q, %cp, %f : tensor<6x1x3xf32>, tensor<6xi32>, tensor<2x1x3xf32>, tensor<1x3xf32>
}"""

SCAN_BACKWARD_CASE = """func.func @scan_backward(%h: tensor<4xf32>, %traj: tensor<5x4xf32>, %up: tensor<4xf32>, %xs: tensor<5x4xf32>,
    %traj2: tensor<3x4xf32>, %up2: tensor<3x4xf32>) -> (tensor<4xf32>, tensor<5x4xf32>, tensor<4xf32>) {
  %dh, %dxs = mir.scan_backward init(%h : tensor<4xf32>) trajectory(%traj : tensor<5x4xf32>) upstream(%up : tensor<4xf32>) xs(%xs : tensor<5x4xf32>) length = 5 -> tensor<4xf32>, tensor<5x4xf32> vjp {
  ^bb0(%c: tensor<4xf32>, %x: tensor<4xf32>, %dn: tensor<4xf32>):
    %cx = mir.mul %c, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %d = mir.mul %dn, %cx : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %dx = mir.mul %dn, %c : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    mir.yield %d, %dx : tensor<4xf32>, tensor<4xf32>
  }
  %dh2 = mir.scan_backward init(%h : tensor<4xf32>) trajectory(%traj2 : tensor<3x4xf32>) upstream(%up2 : tensor<3x4xf32>) length = 8 save_trajectory num_checkpoints = 3 -> tensor<4xf32> vjp {
  ^bb0(%c: tensor<4xf32>, %dn: tensor<4xf32>):
    %cos = mir.cos %c : (tensor<4xf32>) -> tensor<4xf32>
    %d = mir.mul %dn, %cos : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    mir.yield %d : tensor<4xf32>
  } forward {
  ^bb0(%c: tensor<4xf32>):
    %n = mir.sin %c : (tensor<4xf32>) -> tensor<4xf32>
    mir.yield %n : tensor<4xf32>
  }
  func.return %dh, %dxs, %dh2 : tensor<4xf32>, tensor<5x4xf32>, tensor<4xf32>
}"""

CUSTOM_FN_CASE = """func.func @custom_fn(%x: tensor<4xf32>, %n: tensor<2xi32>) -> (tensor<4xf32>, tensor<2xi32>) {
  %y, %m = mir.custom_fn (%x, %n) : (tensor<4xf32>, tensor<2xi32>) -> (tensor<4xf32>, tensor<2xi32>) {
  ^bb0(%a: tensor<4xf32>, %b: tensor<2xi32>):
    %s = mir.mul %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    mir.yield %s, %b : tensor<4xf32>, tensor<2xi32>
  } vjp {
  ^bb0(%va: tensor<4xf32>, %vb: tensor<2xi32>, %ya: tensor<4xf32>, %yb: tensor<2xi32>, %dya: tensor<4xf32>, %dyb: tensor<2xi32>):
    mir.yield %dya, %dyb : tensor<4xf32>, tensor<2xi32>
  }
  func.return %y, %m : tensor<4xf32>, tensor<2xi32>
}"""


def _structured_cases() -> list[OpCase]:
    g4, g3 = "tensor<1x3x2x4xf32>", "tensor<1x3x2xf32>"
    return [
        OpCase("scan", SCAN_CASE, True),
        OpCase("scan_backward", SCAN_BACKWARD_CASE, True),
        OpCase("custom_fn", CUSTOM_FN_CASE),
        OpCase("selective_scan", "mir.selective_scan %0, %1, %2, %3, %4 state_size = 4 : (tensor<2x5x3xf32>, "
               "tensor<2x5x3xf32>, tensor<3x4xf32>, tensor<2x5x4xf32>, tensor<2x5x4xf32>) -> tensor<2x5x3xf32>", True),
        OpCase("gated_delta_net", f"mir.gated_delta_net %0, %1, %2, %3, %4 state %5 state_size = 4 : ({g4}, {g4}, {g4}, {g3}, "
               f"{g3}, tensor<1x2x4x4xf32>) -> ({g4}, tensor<1x2x4x4xf32>)", True),
        OpCase("iota", ("mir.iota dimension = 1 : tensor<2x3xi64>", "mir.iota dimension = -1 : tensor<2x4xbf16>"), args=()),
    ]  # fmt: skip


def _random_cases() -> list[OpCase]:
    offset = fixed(np.array(3, np.int64))
    return [
        OpCase("rng_uniform", "mir.rng_uniform offset %0 seed = 7 low = -1.0 high = 2.0 : (tensor<i64>) -> tensor<2x3xf32>",
               inputs=of(offset)),
        OpCase("rng_uniform_f64", "mir.rng_uniform seed = -5 low = 0.0 high = 1.0 : () -> tensor<5xf64>", args=()),
        OpCase("rng_normal", "mir.rng_normal offset %0 seed = 3 mean = 1.0 std = 2.0 : (tensor<i64>) -> tensor<4x2xf64>",
               approximate=True, inputs=of(offset)),
        OpCase("rng_normal_bf16", "mir.rng_normal seed = 1 mean = 0.0 std = 1.0 : () -> tensor<6xbf16>", True, args=()),
        OpCase("sample", "mir.sample %0, %1 top_k = 3 top_p = 0.9 temperature = 0.7 seed = 1 : (tensor<3x6xf32>, tensor<i64>) "
               "-> tensor<3xi64>".replace("%0, %1", "%0 offset %1"), inputs=of(normal(3, 6), offset)),
        OpCase("sample_all", "mir.sample %0 top_k = 0 top_p = 1.0 temperature = 1.0 seed = 4 : (tensor<4x5xbf16>) -> tensor<4xi64>"),
        OpCase("sample_dynamic", "mir.sample %0 offset %1 top_k = 0 top_p = 0.95 temperature = 1.5 seed = 4 : (tensor<?x6xf32>, "
               "tensor<i64>) -> tensor<?xi64>", inputs=of(normal(3, 6), offset)),
        OpCase("sample_greedy", "mir.sample %0 top_k = 0 top_p = 1.0 temperature = 0.0 seed = 0 : (tensor<?x6xf32>) -> tensor<?xi64>",
               inputs=of(normal(3, 6))),
    ]  # fmt: skip


def _vision_cases() -> list[OpCase]:
    x = "tensor<2x4x3x3xf32>"
    return [
        OpCase("layer_norm_2d", f"mir.layer_norm_2d %0, %1, %2 eps = 1.000000e-06 : ({x}, tensor<4xf32>, tensor<4xf32>) -> {x}", True),
        OpCase("layer_norm_2d_bf16", "mir.layer_norm_2d %0, %1, %2 eps = 1.000000e-06 : (tensor<1x3x2x2xbf16>, "
               "tensor<3xbf16>, tensor<3xbf16>) -> tensor<1x3x2x2xbf16>", True),
        OpCase("resize_nearest_2x", "mir.resize_nearest_2x %0 : (tensor<1x2x2x3xi32>) -> tensor<1x2x4x6xi32>"),
        OpCase("resize_nearest_2x_dynamic", "mir.resize_nearest_2x %0 : (tensor<1x2x?x3xf32>) -> tensor<1x2x?x6xf32>",
               inputs=of(normal(1, 2, 3, 3))),
        OpCase("axial_rope_2d", "mir.axial_rope_2d %0 end_x = 3 end_y = 2 head_dim = 8 num_heads = 2 theta = 1.000000e+02 "
               "repeat_factor = 2 : (tensor<1x2x12x8xf32>) -> tensor<1x2x12x8xf32>", True),
        OpCase("axial_rope_2d_inverse_f16", "mir.axial_rope_2d %0 end_x = 2 end_y = 2 head_dim = 4 num_heads = 1 "
               "theta = 1.000000e+04 repeat_factor = 1 inverse : (tensor<2x1x4x4xf16>) -> tensor<2x1x4x4xf16>", True),
        OpCase("conv_transpose_2d", f"mir.conv_transpose_2d %0, %1 kernel_size = [3, 2] stride = [2, 1] padding = [1, 0] "
               f"output_padding = [1, 0] dilation = [1, 2] groups = 1 : ({x}, tensor<4x3x3x2xf32>) -> tensor<2x3x6x5xf32>", True),
        OpCase("conv_transpose_2d_groups", f"mir.conv_transpose_2d %0, %1 kernel_size = [2, 2] stride = [1, 1] padding = [0, 0] "
               f"output_padding = [0, 0] dilation = [1, 1] groups = 2 : ({x}, tensor<4x1x2x2xf32>) -> tensor<2x2x4x4xf32>", True),
    ]  # fmt: skip


def _moe_cases() -> list[OpCase]:
    return [
        OpCase("lora_matmul", "mir.lora_matmul %0, %1, %2, %3 scale = 5.000000e-01 : (tensor<2x3x4xf32>, "
               "tensor<4x5xf32>, tensor<4x2xf32>, tensor<2x5xf32>) -> tensor<2x3x5xf32>"),
        OpCase("grouped_matmul_dynamic_rows", "mir.grouped_matmul %0, %1, %2 : (tensor<?x4xf32>, tensor<3x4x5xf32>, "
               "tensor<?xi64>) -> tensor<?x5xf32>",
               inputs=of(normal(5, 4), normal(3, 4, 5), fixed(np.array([2, 0, 2, 1, 0], np.int64)))),
        OpCase("dequant_grouped_matmul_int8_asym", "mir.dequant_grouped_matmul %0, %1, %2, %3, %4 scheme = "
               "int8_block_asym block_size = 4 : (tensor<?x8xf32>, tensor<3x8x5xi8>, tensor<3x2x5xf32>, "
               "tensor<3x2x5xf32>, tensor<?xi64>) -> tensor<?x5xf32>", approximate=True,
               inputs=of(normal(5, 8), ints(-128, 127, 3, 8, 5, dtype=np.int8), normal(3, 2, 5), normal(3, 2, 5),
                         fixed(np.array([2, 0, 2, 1, 0], np.int64)))),
        OpCase("dequant_moe_weights_int8", "mir.dequant_moe_weights %0, %1, %2 scheme = int8_block block_size = 4 "
               ": (tensor<2x8x3xi8>, tensor<2x2x3xf32>, tensor<1xf32>) -> tensor<2x8x3xf32>", approximate=True,
               inputs=of(ints(-128, 127, 2, 8, 3, dtype=np.int8), normal(2, 2, 3), normal(1))),
        *_quantised_expert_cases(),
    ]  # fmt: skip


def _reshaped(make: Callable[[np.random.Generator], np.ndarray], *shape: int) -> Callable[[np.random.Generator], np.ndarray]:
    return lambda rng: make(rng).reshape(shape)


def _quantised_expert_cases() -> list[OpCase]:
    """The ui8-coded and GGUF schemes of the expert ops (3 experts, ids [2, 0, 2, 1, 0])."""
    ids, one = fixed(np.array([2, 0, 2, 1, 0], np.int64)), normal(1)

    def grouped(name, scheme, k, types, params, block=""):
        w, scale, zp, n = types
        return OpCase(f"dequant_grouped_matmul_{name}", f"mir.dequant_grouped_matmul %0, %1, %2, %3, %4 scheme = "
                      f"{scheme}{block} : (tensor<?x{k}xf32>, {w}, {scale}, {zp}, tensor<?xi64>) -> tensor<?x{n}xf32>",
                      approximate=True, inputs=of(normal(5, k), *params, ids))

    return [
        grouped("int4", "int4_block", 8, ("tensor<3x4x5xui8>", "tensor<3x2x5xf32>", "tensor<1xf32>", 5),
                (ints(0, 255, 3, 4, 5, dtype=np.uint8), normal(3, 2, 5), one), " block_size = 4"),
        grouped("fp8_e5m2", "fp8_e5m2", 8, ("tensor<3x8x4xui8>", "tensor<3x4xf32>", "tensor<1xf32>", 4),
                (ints(0, 255, 3, 8, 4, dtype=np.uint8), normal(3, 4), one)),
        grouped("nvfp4", "nvfp4_block", 32, ("tensor<3x16x2xui8>", "tensor<3x2x2xui8>", "tensor<1xf32>", 2),
                (ints(0, 255, 3, 16, 2, dtype=np.uint8), ints(0x28, 0x40, 3, 2, 2, dtype=np.uint8), one)),
        grouped("gguf_q4_0", "gguf_q4_0", 64, ("tensor<3x2x36xui8>", "tensor<1xf32>", "tensor<1xf32>", 2),
                (_reshaped(_gguf_bytes(6, 64, 18), 3, 2, 36), one, one)),
        grouped("gguf_q4_k", "gguf_q4_k", 256, ("tensor<3x2x144xui8>", "tensor<1xf32>", "tensor<1xf32>", 2),
                (_reshaped(_gguf_q4_k_bytes(6, 1), 3, 2, 144), one, one)),
        OpCase("dequant_moe_weights_fp8_e4m3", "mir.dequant_moe_weights %0, %1, %2 scheme = fp8_e4m3 "
               ": (tensor<2x8x3xui8>, tensor<2x1xf32>, tensor<1xf32>) -> tensor<2x8x3xf32>", approximate=True,
               inputs=of(ints(0, 255, 2, 8, 3, dtype=np.uint8), normal(2, 1), one)),
        OpCase("dequant_moe_weights_gguf_q8_0", "mir.dequant_moe_weights %0, %1, %2 scheme = gguf_q8_0 "
               ": (tensor<2x3x34xui8>, tensor<1xf16>, tensor<1xf32>) -> tensor<2x32x3xf16>", approximate=True,
               inputs=of(_reshaped(_gguf_bytes(6, 32, 34), 2, 3, 34), normal(1, dtype=np.float16), one)),
    ]  # fmt: skip


def all_cases() -> list[OpCase]:
    """Every case: each MIR op at least once, with dtype, broadcasting and dynamic-shape variants."""
    return [
        *_constant_cases(),
        *_cast_cases(),
        *_unary_cases(),
        *_binary_cases(),
        *_contraction_cases(),
        *_shape_cases(),
        *_indexing_cases(),
        *_reduction_cases(),
        *_norm_cases(),
        *_signal_cases(),
        *_attention_cases(),
        *_conv_cases(),
        *_loss_cases(),
        *_region_cases(),
        *_backward_cases(),
        *_fused_cases(),
        *_moe_cases(),
        *_structured_cases(),
        *_quant_cases(),
        *_random_cases(),
        *_vision_cases(),
        *_splat_cases(),
    ]


def lowerable_cases() -> list[OpCase]:
    """The cases whose ops all lower to linalg: `UNLOWERABLE` ops (Gaussian splatting) run in
    the interpreter and through JAX only."""
    from rlx_xdsl import layers
    from rlx_xdsl.conversions.mir_to_linalg.lowering import UNLOWERABLE

    layers.load("linalg")
    cases = all_cases()
    module = cases_module(cases)
    skipped = {f.sym_name.data for f in module.ops if any(type(op) in UNLOWERABLE for op in f.walk())}
    return [c for c in cases if c.name not in skipped]


QUANT_X = np.array([[1.25, -0.75, 0.25], [300.0, -300.0, np.nan], [0.7, -2.2, 63.9]], np.float32)
"""Halves (ties to even), values past saturation, NaN."""


def _quant_cases() -> list[OpCase]:
    per_channel = "scales = [5.000000e-01, 2.500000e-01, 1.000000e+00] zero_points = [0, 1, 200] axis = 1"
    return [
        OpCase("quantize", "mir.quantize %0 scales = [5.000000e-01] zero_points = [3] "
               ": (tensor<3x3xf32>) -> tensor<3x3xi8>", inputs=of(fixed(QUANT_X))),
        OpCase("quantize_per_channel_ui8", f"mir.quantize %0 {per_channel} "
               ": (tensor<?x3xf32>) -> tensor<?x3xui8>", inputs=of(fixed(QUANT_X))),
        OpCase("quantize_bf16", "mir.quantize %0 scales = [2.500000e-01, 5.000000e-01] zero_points = [-4, 0] axis = 0 "
               ": (tensor<2x3xbf16>) -> tensor<2x3xi8>", inputs=of(normal(2, 3, dtype=ml_dtypes.bfloat16))),
        OpCase("dequantize", "mir.dequantize %0 scales = [5.000000e-01] zero_points = [-3] "
               ": (tensor<4x3xi8>) -> tensor<4x3xf32>", inputs=of(ints(-128, 128, 4, 3, dtype=np.int8))),
        OpCase("dequantize_per_channel_ui8", f"mir.dequantize %0 {per_channel} "
               ": (tensor<4x3xui8>) -> tensor<4x3xf32>", inputs=of(ints(0, 256, 4, 3, dtype=np.uint8))),
        *_fake_quant_cases(),
        *_dequant_matmul_cases(),
        OpCase("qmatmul", "mir.qmatmul %0, %1, %2 x_zp = 3 w_zp = 130 out_zp = -5 mult = 3.000000e-02 "
               ": (tensor<2x3x5xi8>, tensor<5x4xui8>, tensor<4xi32>) -> tensor<2x3x4xi8>",
               inputs=of(ints(-128, 127, 2, 3, 5, dtype=np.int8), ints(0, 255, 5, 4, dtype=np.uint8),
                         ints(-300, 300, 4))),
        OpCase("qconv2d", "mir.qconv2d %0, %1, %2 kernel_size = [3, 3] stride = [2, 1] padding = [1, 1] "
               "dilation = [1, 2] groups = 2 x_zp = 120 w_zp = -2 out_zp = 200 mult = 2.000000e-03 "
               ": (tensor<2x4x5x6xui8>, tensor<6x2x3x3xi8>, tensor<6xi32>) -> tensor<2x6x3x4xui8>",
               inputs=of(ints(0, 255, 2, 4, 5, 6, dtype=np.uint8), ints(-128, 127, 6, 2, 3, 3, dtype=np.int8),
                         ints(-500, 500, 6))),
        OpCase("qconv2d_dynamic", "mir.qconv2d %0, %1, %2 kernel_size = [1, 1] stride = [1, 1] padding = [0, 0] "
               "dilation = [1, 1] groups = 1 x_zp = 0 w_zp = 0 out_zp = 0 mult = 5.000000e-02 "
               ": (tensor<?x2x3x3xi8>, tensor<3x2x1x1xi8>, tensor<3xi32>) -> tensor<?x3x3x3xi8>",
               inputs=of(ints(-128, 127, 1, 2, 3, 3, dtype=np.int8), ints(-128, 127, 3, 2, 1, 1, dtype=np.int8),
                         ints(-50, 50, 3))),
    ]  # fmt: skip


def _fake_quant_cases() -> list[OpCase]:
    t, c = "tensor<4x3xf32>", "tensor<3xf32>"
    state = of(normal(4, 3), fixed(np.float32([2.0, 0.5, 0.0])))
    with_dy = of(normal(4, 3), normal(4, 3), fixed(np.float32([2.0, 0.5, 0.0])))
    lsq = of(normal(4, 3), fixed(np.float32([0.25, 0.125, 0.5])), normal(4, 3))
    ste = "bits = 3 axis = 1 ste = {} scale_mode = ema decay = 7.500000e-01"
    return [
        OpCase("fake_quantize", f"mir.fake_quantize %0 bits = 8 ste = identity scale_mode = per_batch : ({t}) -> {t}"),
        OpCase("fake_quantize_dynamic", "mir.fake_quantize %0 bits = 4 axis = 0 ste = identity scale_mode = per_batch "
               ": (tensor<?x3xf32>) -> tensor<?x3xf32>", inputs=of(normal(5, 3))),
        OpCase("fake_quantize_ema", f"mir.fake_quantize %0, %1 {ste.format('tanh')} : ({t}, {c}) -> {t}", inputs=state),
        OpCase("fake_quantize_fixed_bf16", "mir.fake_quantize %0, %1 bits = 2 ste = hard_tanh scale_mode = fixed "
               ": (tensor<4x3xbf16>, tensor<1xbf16>) -> tensor<4x3xbf16>",
               inputs=of(normal(4, 3, dtype=ml_dtypes.bfloat16), fixed(np.array([1.5], ml_dtypes.bfloat16)))),
        *(OpCase(f"fake_quantize_backward_{kind}", f"mir.fake_quantize_backward %0, %1, %2 {ste.format(kind)} "
                 f": ({t}, {t}, {c}) -> {t}", approximate=kind == "tanh", inputs=with_dy)
          for kind in ("identity", "clipped_identity", "tanh", "hard_tanh")),
        OpCase("fake_quantize_backward_per_batch", f"mir.fake_quantize_backward %0, %1 bits = 2 ste = clipped_identity "
               f"scale_mode = per_batch : ({t}, {t}) -> {t}"),
        OpCase("fake_quantize_lsq", f"mir.fake_quantize_lsq %0, %1 bits = 3 axis = 1 : ({t}, {c}) -> {t}",
               inputs=of(normal(4, 3), fixed(np.float32([0.25, 0.125, 0.5])))),
        OpCase("fake_quantize_lsq_per_tensor", f"mir.fake_quantize_lsq %0, %1 bits = 4 : ({t}, tensor<f32>) -> {t}",
               inputs=of(normal(4, 3), fixed(np.float32(0.2)))),
        OpCase("fake_quantize_lsq_backward_x", f"mir.fake_quantize_lsq_backward_x %0, %1, %2 bits = 3 axis = 1 "
               f": ({t}, {c}, {t}) -> {t}", inputs=lsq),
        OpCase("fake_quantize_lsq_backward_scale", f"mir.fake_quantize_lsq_backward_scale %0, %1, %2 bits = 3 axis = 1 "
               f": ({t}, {c}, {t}) -> {c}", approximate=True, inputs=lsq),
        OpCase("fake_quantize_lsq_backward_scale_per_tensor", "mir.fake_quantize_lsq_backward_scale %0, %1, %2 bits = 2 "
               ": (tensor<?x3xf32>, tensor<1xf32>, tensor<?x3xf32>) -> tensor<1xf32>", approximate=True,
               inputs=of(normal(4, 3), fixed(np.float32([0.5])), normal(4, 3))),
    ]


def _dequant_matmul_cases() -> list[OpCase]:
    def case(name, scheme, types, inputs, block=""):
        x, w, scale, zp, out = types
        return OpCase(f"dequant_matmul_{name}", f"mir.dequant_matmul %0, %1, %2, %3 scheme = {scheme}{block} "
                      f": ({x}, {w}, {scale}, {zp}) -> {out}", approximate=True, inputs=inputs)  # fmt: skip

    x, one = normal(3, 8), normal(1)
    return [
        case("int8", "int8_block", ("tensor<3x8xf32>", "tensor<8x4xi8>", "tensor<2x4xf32>", "tensor<1xf32>",
             "tensor<3x4xf32>"), of(x, ints(-128, 127, 8, 4, dtype=np.int8), normal(2, 4), one), " block_size = 4"),
        case("int8_asym_bf16", "int8_block_asym", ("tensor<3x8xbf16>", "tensor<8x4xi8>", "tensor<4x4xf32>",
             "tensor<4x4xf32>", "tensor<3x4xbf16>"), of(normal(3, 8, dtype=ml_dtypes.bfloat16),
             ints(-128, 127, 8, 4, dtype=np.int8), normal(4, 4), normal(4, 4)), " block_size = 2"),
        case("int4", "int4_block", ("tensor<3x?xf32>", "tensor<4x4xui8>", "tensor<2x4xf32>", "tensor<1xf32>",
             "tensor<3x4xf32>"), of(x, ints(0, 255, 4, 4, dtype=np.uint8), normal(2, 4), one), " block_size = 4"),
        case("fp8_e4m3", "fp8_e4m3", ("tensor<3x8xf32>", "tensor<8x4xui8>", "tensor<1xf32>", "tensor<1xf32>",
             "tensor<3x4xf32>"), of(x, ints(0, 255, 8, 4, dtype=np.uint8), normal(1), one)),
        case("fp8_e5m2", "fp8_e5m2", ("tensor<3x8xf32>", "tensor<8x4xui8>", "tensor<4xf32>", "tensor<1xf32>",
             "tensor<3x4xf32>"), of(x, ints(0, 255, 8, 4, dtype=np.uint8), normal(4), one)),
        *_gguf_cases(),
        case("nvfp4", "nvfp4_block", ("tensor<2x32xf32>", "tensor<16x3xui8>", "tensor<2x3xui8>", "tensor<1xf32>",
             "tensor<2x3xf32>"), of(normal(2, 32), ints(0, 255, 16, 3, dtype=np.uint8),
             ints(0x28, 0x40, 2, 3, dtype=np.uint8), normal(1))),
    ]


def _gguf_bytes(rows: int, k: int, block_bytes: int) -> Callable[[np.random.Generator], np.ndarray]:
    """Random GGML blocks whose f16 scales are sane (finite, about 0.01 to 1)."""

    def make(rng: np.random.Generator) -> np.ndarray:
        blocks = rng.integers(0, 256, (rows * k // 32, block_bytes)).astype(np.uint8)
        scales = rng.uniform(0.01, 1, len(blocks)).astype(np.float16) * rng.choice([-1, 1], len(blocks))
        blocks[:, :2] = scales.astype(np.float16).view(np.uint8).reshape(-1, 2)
        return blocks.reshape(-1)

    return make


def _gguf_cases() -> list[OpCase]:
    return [
        OpCase(f"dequant_matmul_gguf_{name}", f"mir.dequant_matmul %0, %1 scheme = gguf_{name} "
               f": (tensor<2x64xf32>, tensor<{3 * 2 * size}xui8>) -> tensor<2x3xf32>", approximate=True,
               inputs=of(normal(2, 64), _gguf_bytes(3, 64, size)))
        for name, size in (("q8_0", 34), ("q4_0", 18))
    ] + [
        OpCase("dequant_matmul_gguf_q6_k", "mir.dequant_matmul %0, %1 scheme = gguf_q6_k "
               ": (tensor<2x256xf32>, tensor<630xui8>) -> tensor<2x3xf32>", approximate=True,
               inputs=of(normal(2, 256), _gguf_q6_k_bytes(3))),
        OpCase("dequant_matmul_gguf_q4_k", "mir.dequant_matmul %0, %1 scheme = gguf_q4_k "
               ": (tensor<2x512xf32>, tensor<576xui8>) -> tensor<2x2xf32>", approximate=True,
               inputs=of(normal(2, 512), _gguf_q4_k_bytes(2, 2))),
        OpCase("dequant_matmul_gguf_q5_k", "mir.dequant_matmul %0, %1 scheme = gguf_q5_k "
               ": (tensor<2x256xf32>, tensor<352xui8>) -> tensor<2x2xf32>", approximate=True,
               inputs=of(normal(2, 256), _gguf_q4_k_bytes(2, 1, 176))),
        *(OpCase(f"dequant_matmul_gguf_{name}", f"mir.dequant_matmul %0, %1 scheme = gguf_{name} "
                 f": (tensor<2x256xf32>, tensor<{2 * size}xui8>) -> tensor<2x2xf32>", approximate=True,
                 inputs=of(normal(2, 256), _gguf_k_bytes(2, size, scales)))
          for name, size, scales in (("q2_k", 84, (80, 82)), ("q3_k", 110, (108,)))),
        OpCase("dequant_matmul_gguf_q8_k", "mir.dequant_matmul %0, %1 scheme = gguf_q8_k "
               ": (tensor<2x256xf32>, tensor<584xui8>) -> tensor<2x2xf32>", approximate=True,
               inputs=of(normal(2, 256), _gguf_q8_k_bytes(2))),
    ]  # fmt: skip


def _gguf_q8_k_bytes(rows: int) -> Callable[[np.random.Generator], np.ndarray]:
    """Random Q8_K blocks with a sane f32 `d` (their first four bytes)."""

    def make(rng: np.random.Generator) -> np.ndarray:
        data = rng.integers(0, 256, (rows, 292)).astype(np.uint8)
        data[:, :4] = rng.uniform(-0.05, 0.05, rows).astype(np.float32).view(np.uint8).reshape(-1, 4)
        return data.reshape(-1)

    return make


def _gguf_k_bytes(rows: int, size: int, scales_at) -> Callable[[np.random.Generator], np.ndarray]:
    """Random K-quant blocks (one per row) with sane f16 scales at `scales_at`."""

    def make(rng: np.random.Generator) -> np.ndarray:
        data = rng.integers(0, 256, (rows, size)).astype(np.uint8)
        for at in scales_at:
            data[:, at : at + 2] = rng.uniform(-0.05, 0.05, rows).astype(np.float16).view(np.uint8).reshape(-1, 2)
        return data.reshape(-1)

    return make


def _gguf_q4_k_bytes(rows: int, blocks: int, size: int = 144) -> Callable[[np.random.Generator], np.ndarray]:
    """Random Q4_K (or Q5_K) blocks with sane f16 `d` and `dmin` (their first four bytes)."""

    def make(rng: np.random.Generator) -> np.ndarray:
        data = rng.integers(0, 256, (rows * blocks, size)).astype(np.uint8)
        data[:, :4] = rng.uniform(-0.05, 0.05, 2 * rows * blocks).astype(np.float16).view(np.uint8).reshape(-1, 4)
        return data.reshape(-1)

    return make


def _gguf_q6_k_bytes(rows: int) -> Callable[[np.random.Generator], np.ndarray]:
    """Random Q6_K blocks (one per row, K = 256) with a sane f16 `d` (its last two bytes)."""

    def make(rng: np.random.Generator) -> np.ndarray:
        blocks = rng.integers(0, 256, (rows, 210)).astype(np.uint8)
        blocks[:, 208:] = rng.uniform(-0.05, 0.05, rows).astype(np.float16).view(np.uint8).reshape(-1, 2)
        return blocks.reshape(-1)

    return make


SPLAT_IMAGE = {"width": 10, "height": 8, "tile_size": 4}


def splat_camera(width: int = 10, height: int = 8) -> np.ndarray:
    """`meta` of a pinhole camera 3 units behind the origin, turned slightly about y."""
    c, s = np.cos(0.1), np.sin(0.1)
    view = np.eye(4)
    view[:3, :3] = [[c, 0, s], [0, 1, 0], [-s, 0, c]]
    view[:3, 3] = [0.1, -0.1, 3.0]
    return np.concatenate([view.ravel(), [0.9 * width, 0.9 * width, width / 2 + 0.2, height / 2 - 0.1, 0.01, 100.0]])


def splat_scene(n: int, sh_count: int, dtype=np.float32) -> Inputs:
    """n overlapping Gaussians in front of `splat_camera`: the seven render inputs."""

    def make(rng: np.random.Generator) -> list[np.ndarray]:
        positions = np.column_stack([rng.uniform(-0.8, 0.8, n), rng.uniform(-0.6, 0.6, n), rng.uniform(-0.5, 0.5, n)])
        arrays = [positions, rng.uniform(0.15, 0.35, (n, 3)), rng.standard_normal((n, 4)), rng.uniform(0.4, 0.9, n),
                  rng.uniform(0.2, 0.8, (n, 3)), 0.3 * rng.standard_normal((n, sh_count, 3)), splat_camera()]  # fmt: skip
        return [a.astype(dtype) for a in arrays]

    return make


def splat_rows(n: int) -> Inputs:
    """Prepared rows (pixel mean, a positive-definite conic, depth, radii, opacity, rgb) of
    n Gaussians on a 10 x 8 image, one culled (radius 0), and a camera."""

    def make(rng: np.random.Generator) -> list[np.ndarray]:
        a, c = rng.uniform(0.1, 0.6, n), rng.uniform(0.1, 0.6, n)
        b = rng.uniform(-0.5, 0.5, n) * np.sqrt(a * c)
        radius = np.ceil(3 * np.sqrt(np.column_stack([c, a]) / (a * c - b * b)[:, None]))
        radius[0] = 0
        rows = np.column_stack([rng.uniform(0, 10, n), rng.uniform(0, 8, n), a, b, c, rng.uniform(1, 5, n), radius,
                                rng.uniform(0.3, 0.9, n), rng.uniform(0, 1, (n, 3))])  # fmt: skip
        return [rows.astype(np.float32), splat_camera().astype(np.float32)]

    return make


def _splat_op(name: str, operands: int, types: str, **options: object) -> str:
    props = {**SPLAT_IMAGE, "radius_scale": 3.0, "alpha_cutoff": 1 / 256, "max_splat_steps": 0,
             "transmittance_threshold": 1e-4, "max_list_entries": 0, **options}  # fmt: skip
    args = ", ".join(f"%{i}" for i in range(operands))
    return f"mir.gaussian_splat_{name} {args} " + " ".join(f"{k} = {v}" for k, v in props.items()) + f" : {types}"


def _splat_cases() -> list[OpCase]:
    def inputs(n: str, k: int, dtype: str = "f32") -> str:
        t = f"tensor<{n}x3x{dtype}>"
        return f"{t}, {t}, tensor<{n}x4x{dtype}>, tensor<{n}x{dtype}>, {t}, tensor<{n}x{k}x3x{dtype}>, tensor<22x{dtype}>"

    image = "tensor<8x10x3xf32>"
    backward = {"loss_grad_clip": 0.5, "sh_band": 0, "max_anisotropy": 1.5}
    return [
        OpCase("gaussian_splat_render", _splat_op("render", 7, f"({inputs('5', 4)}) -> {image}"), True,
               inputs=splat_scene(5, 4)),
        # each cut changes this image: 2 Gaussians a pixel, 8 (tile, Gaussian) entries, stop at 0.45
        OpCase("gaussian_splat_render_capped", _splat_op("render", 7, f"({inputs('6', 1)}) -> {image}", max_splat_steps=2,
               max_list_entries=8, transmittance_threshold=0.45), True, inputs=splat_scene(6, 1)),
        OpCase("gaussian_splat_prepare_dynamic", _splat_op("prepare", 7, f"({inputs('?', 9, 'f64')}) -> tensor<?x12xf64>"),
               True, inputs=splat_scene(4, 9, np.float64)),
        OpCase("gaussian_splat_rasterize", _splat_op("rasterize", 2, f"(tensor<5x12xf32>, tensor<22xf32>) -> {image}",
               alpha_cutoff=0.05), True, inputs=splat_rows(5)),
        OpCase("gaussian_splat_render_backward", _splat_op("render_backward", 8, f"({inputs('4', 4)}, {image}) -> "
               "tensor<4x26xf32>", **backward), True,
               inputs=lambda rng: [*splat_scene(4, 4)(rng), rng.standard_normal((8, 10, 3)).astype(np.float32)]),
    ]  # fmt: skip
