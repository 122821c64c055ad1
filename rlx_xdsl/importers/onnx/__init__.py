"""Importing ONNX models.

    from rlx_xdsl.importers.onnx import import_model
    module = import_model("model.onnx")      # or a loaded onnx.ModelProto

Default-domain opsets 1 to the installed `onnx`'s newest (the rules follow 13-23: older
models are upgraded by `onnx.version_converter`, see `translator.Translator`).
Initializers become `rlx.param` arguments named by
the initializer; symbolic dims (`dim_param`) and unknown dims become `?`; each op is
located at `NameLoc(node name)`. `rlx-import-onnx FILE.onnx -o OUT.mlir` is the tool.
"""

from __future__ import annotations

from typing import Any

from xdsl.dialects.builtin import ModuleOp

from rlx_xdsl.formats.onnx_model import ModelFileError, model_initializers, read_model
from rlx_xdsl.importers.errors import ImportFailure

__all__ = ["ImportFailure", "import_model", "initializers", "load", "supported_ops"]


def load(path_or_proto: Any):
    """An `onnx.ModelProto` from a path, bytes or a proto; unreadable files are `ImportFailure`s."""
    try:
        return read_model(path_or_proto)
    except ModelFileError as e:
        raise ImportFailure(str(e)) from None


def import_model(path_or_proto: Any, name: str = "main", bind: dict | None = None, weights: Any = None) -> ModuleOp:
    """The ONNX model's graph as a MIR module with one function `@name`.

    `bind` maps graph inputs to numpy arrays fixed at import time: they become
    compile-time values (a Reshape's shape, a Slice's bounds, reduction axes), not arguments.
    With `weights` (a `.safetensors` or `.npz` path) the values of the function's
    parameters (the initializers not folded into constants) are written there, by name,
    for `rlx-run --params`; a failure to write is a `WeightsError`.
    """
    from rlx_xdsl.importers.onnx.translator import translate

    model = load(path_or_proto)
    module = translate(model, name, bind)
    if weights is not None:
        from rlx_xdsl.formats.weights import write_weights
        from rlx_xdsl.ir.graph import graph_args

        values = initializers(model)
        (f,) = module.ops  # the one function `translate` builds
        write_weights(weights, {a.name: values[a.name] for a in graph_args(f) if a.is_param})
    return module


def initializers(path_or_proto: Any) -> dict:
    """The model's initializers as numpy arrays, by name (the imported parameters' values)."""
    return model_initializers(load(path_or_proto))


def supported_ops() -> list[str]:
    """The ONNX op types the table translates (plus `Constant`)."""
    from rlx_xdsl.importers.onnx.translator import ONNX_OPS

    return sorted({*ONNX_OPS, "Constant"})
