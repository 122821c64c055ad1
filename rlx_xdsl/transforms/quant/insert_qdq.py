"""`rlx-insert-qdq{calibration=FILE.json}`: RLX's `insert_q_dq`.

After each calibrated value, a `mir.quantize` → `mir.dequantize` pair with the value's
calibration; every other use of the value (function results included) reads the
dequantised value. The calibration file maps value names to entries:

    {"x": {"scales": [0.05]}, "h1": {"scales": [0.1, 0.2], "zero_points": [0, 3], "axis": 1}}

(`zero_points` default to zeros, no `axis` is per tensor: RLX's `CalibrationEntry`). A
value is named by its argument's `rlx.name` (or `argN`), or by the location label of
the op producing it (`loc("h1")`, the label `rlx-lower-hir` gives a block's ops; of
several ops with one label, the last names the value: a block's result). A name no
function has is an error naming it; calibrated values must be f32 (dequantize gives f32).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType, f32
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import PassFailedException, VerifyException

from rlx_xdsl.dialects.mir.quant import DequantizeOp, QuantizeOp
from rlx_xdsl.ir.diagnostics import OpError
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.ir.graph import argument_names
from rlx_xdsl.ir.locations import block_labels
from rlx_xdsl.transforms.rewriting import apply_patterns
from rlx_xdsl.transforms.statistics import pattern_statistic


class InsertQdqError(OpError, PassFailedException):
    """A located `rlx-insert-qdq` error."""


@dataclass(frozen=True)
class Calibration:
    """RLX's `CalibrationEntry`: the scales and zero points of one value."""

    scales: tuple[float, ...]
    zero_points: tuple[int, ...]
    axis: int | None

    def properties(self) -> dict:
        return {"scales": self.scales, "zero_points": self.zero_points, "axis": self.axis}

    @staticmethod
    def parse(name: str, entry: object) -> Calibration:
        if not isinstance(entry, Mapping) or "scales" not in entry:
            raise PassFailedException(f"calibration of '{name}' must be an object with 'scales', got {entry!r}")
        unknown = sorted(set(entry) - {"scales", "zero_points", "axis"})
        if unknown:
            raise PassFailedException(f"calibration of '{name}' has unknown keys {unknown}")
        scales = tuple(float(s) for s in _json_list(name, entry, "scales", _is_number, "numbers"))
        zero_points = _json_list(name, entry, "zero_points", _is_i64, "integers") if "zero_points" in entry else None
        axis = entry.get("axis")
        if axis is not None and not _is_i64(axis):
            raise PassFailedException(f"calibration of '{name}': 'axis' must be an integer, got {json.dumps(axis)}")
        return Calibration(scales, (0,) * len(scales) if zero_points is None else zero_points, axis)


def _is_number(value: object) -> bool:
    """A JSON number (not a boolean, which Python counts as an int)."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def _is_i64(value: object) -> bool:
    """A JSON integer that fits i64 (`0.5`, `1.0`, `"1"` and `true` are not integers)."""
    return isinstance(value, int) and not isinstance(value, bool) and -(2**63) <= value < 2**63


def _json_list(name: str, entry: Mapping, key: str, accepts, words: str) -> tuple:
    """`entry[key]`, which must be a JSON list of `words` (no coercion: RLX's
    `CalibrationEntry` holds `Vec<f32>` scales and `Vec<i64>` zero points)."""
    value = entry[key]
    if not isinstance(value, list) or not all(accepts(v) for v in value):
        raise PassFailedException(f"calibration of '{name}': '{key}' must be a list of {words}, got {json.dumps(value)}")
    return tuple(value)


def load_calibration(path: str) -> dict[str, Calibration]:
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError) as e:
        raise PassFailedException(f"cannot read calibration file '{path}': {e}") from None
    if not isinstance(data, Mapping):
        raise PassFailedException(f"calibration file '{path}' must hold an object of value names")
    return {name: Calibration.parse(name, entry) for name, entry in data.items()}


def op_label(op: Operation) -> str | None:
    labels = block_labels(op.location)
    return labels[0] if labels else None


def named_values(function: func.FuncOp) -> dict[str, SSAValue]:
    """The values of `function` a calibration can name: labelled results (the last op of a
    label wins), then arguments (an argument's name wins over a label)."""
    labelled: dict[str, SSAValue] = {}
    for op in function.body.block.ops:
        label = op_label(op)
        if label is not None and len(op.results) == 1:
            labelled[label] = op.results[0]
    return {**labelled, **dict(zip(argument_names(function), function.body.block.args))}


def is_quantised_by(value: SSAValue, calibration: Calibration) -> bool:
    """The pass ran on `value` already: it feeds a quantize with this calibration, or it is
    the dequantised value of such a pair (which carries the quantised op's label)."""
    if any(isinstance(use.operation, QuantizeOp) and _same(use.operation, calibration) for use in value.uses):
        return True
    owner = value.owner
    return (
        isinstance(owner, DequantizeOp)
        and isinstance(owner.x.owner, QuantizeOp)
        and _same(owner.x.owner, calibration)
    )


def _same(op: QuantizeOp, calibration: Calibration) -> bool:
    axis = None if op.axis is None else op.axis.value.data
    scales = tuple(float(np.float32(s)) for s in calibration.scales)  # as the f32 property holds them
    return (op.scale_list(), op.zero_point_list(), axis) == (scales, calibration.zero_points, calibration.axis)


def insert_pair(
    e: Emitter, rewriter: PatternRewriter, value: SSAValue, calibration: Calibration, where: Operation
) -> None:
    """`dequantize(quantize(value))` at `e`'s insertion point; every other use reads it."""
    if not (isinstance(value.type, TensorType) and value.type.element_type == f32):
        raise InsertQdqError(where, f"'rlx-insert-qdq' a calibrated value must be an f32 tensor, got {value.type}")
    try:
        quantized = e.mir.quantize(value, **calibration.properties())
        restored = e.mir.dequantize(quantized, **calibration.properties())
    except VerifyException as error:
        raise InsertQdqError(where, f"'rlx-insert-qdq' calibration does not fit: {error}") from None
    rewriter.replace_uses_with_if(value, restored, lambda use: use.operation is not quantized.owner)


@dataclass
class InsertAfterValues(RewritePattern):
    """Quantise the named values of each function: arguments at its start, op results
    right after their op (located there)."""

    calibration: Mapping[str, Calibration]
    found: set[str] = field(default_factory=set)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, function: func.FuncOp, rewriter: PatternRewriter) -> None:
        block = function.body.block
        for name, value in named_values(function).items():
            entry = self.calibration.get(name)
            if entry is None:
                continue
            self.found.add(name)
            if is_quantised_by(value, entry):
                continue
            owner = value.owner
            if isinstance(owner, Operation):
                e = Emitter.at(InsertPoint.after(owner), owner.location, rewriter)
                insert_pair(e, rewriter, value, entry, owner)
            else:
                first = block.first_op
                e = Emitter.at(InsertPoint.at_start(block), function.location, rewriter)
                insert_pair(e, rewriter, value, entry, first if first is not None else function)


@dataclass(frozen=True)
class InsertQdqPass(ModulePass):
    """Insert a quantize → dequantize pair after each value of a calibration file."""

    name = "rlx-insert-qdq"

    STATISTICS = (pattern_statistic(InsertAfterValues),)

    calibration: str = field(metadata={"syntax": "FILE.json", "example": "calibration.json"})

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if not self.calibration:
            raise PassFailedException("rlx-insert-qdq needs calibration=FILE.json")
        entries = load_calibration(self.calibration)
        pattern = InsertAfterValues(entries)
        apply_patterns(op, pattern)
        missing = sorted(set(entries) - pattern.found)
        functions = [f for f in op.walk() if isinstance(f, func.FuncOp)]
        if missing and functions:
            raise InsertQdqError(
                functions[0],
                f"'rlx-insert-qdq' the calibration names {', '.join(repr(m) for m in missing)}, "
                "which no function has (arguments by rlx.name or argN, results by location label)",
            )
