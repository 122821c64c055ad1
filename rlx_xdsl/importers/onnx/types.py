"""ONNX element types as RLX dtypes, and the opsets the importer follows."""

from __future__ import annotations

import onnx

from rlx_xdsl.importers.errors import ImportFailure

P = onnx.TensorProto
DTYPES = {
    P.FLOAT: "f32",
    P.FLOAT16: "f16",
    P.BFLOAT16: "bf16",
    P.DOUBLE: "f64",
    P.BOOL: "i1",
    P.INT8: "i8",
    P.INT16: "i16",
    P.INT32: "i32",
    P.INT64: "i64",
    P.UINT8: "ui8",
    P.UINT16: "ui16",
    P.UINT32: "ui32",
    P.UINT64: "ui64",
    P.INT2: "i2",
    P.UINT2: "ui2",
    P.INT4: "i4",
    P.UINT4: "ui4",
    P.FLOAT8E4M3FN: "f8E4M3FN",
    P.FLOAT8E4M3FNUZ: "f8E4M3FNUZ",
    P.FLOAT8E5M2: "f8E5M2",
    P.FLOAT8E5M2FNUZ: "f8E5M2FNUZ",
    P.FLOAT4E2M1: "f4E2M1FN",
}
"""ONNX element types -> RLX dtype names (the others, strings, complex numbers and
FLOAT8E8M0, have no MIR twin)."""

RULE_OPSETS = range(13, 24)
"""The default-domain opset versions whose semantics the rules follow. An older model is
first converted to the oldest of them by `onnx.version_converter`; in a newer one, a node
whose op changed after the newest of them other than by accepting more element types is
refused (see `Translator._check_schema`)."""

OPSETS = range(1, onnx.defs.onnx_opset_version() + 1)
"""The default-domain opset versions the importer reads: up to the installed `onnx`'s newest."""


def dtype_name(elem_type: int, where: str | None = None) -> str:
    try:
        return DTYPES[elem_type]
    except KeyError:
        name = P.DataType.Name(elem_type) if elem_type in P.DataType.values() else str(elem_type)
        raise ImportFailure(f"element type {name} has no MIR equivalent", where) from None
