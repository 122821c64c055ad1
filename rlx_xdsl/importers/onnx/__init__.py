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

import os
from typing import Any

from xdsl.dialects.builtin import ModuleOp

from rlx_xdsl.importers.errors import ImportFailure

__all__ = ["ImportFailure", "import_model", "initializers", "load", "supported_ops"]


def load(path_or_proto: Any):
    """An `onnx.ModelProto` from a path, bytes or a proto; unreadable files are `ImportFailure`s."""
    import onnx

    if isinstance(path_or_proto, onnx.ModelProto):
        return path_or_proto
    try:
        if isinstance(path_or_proto, bytes):
            return onnx.load_model_from_string(path_or_proto)
        with open(os.fspath(path_or_proto), "rb") as f:
            data = f.read()
        model = onnx.load_model_from_string(data)
    except OSError as e:
        raise ImportFailure(f"cannot read the model: {e.strerror}") from None
    except Exception as e:  # protobuf's DecodeError and friends
        raise ImportFailure(f"not a valid ONNX model ({type(e).__name__}: {e})") from None
    if not model.HasField("graph"):
        raise ImportFailure("not a valid ONNX model (no graph)")
    if any(i.data_location == 1 for i in model.graph.initializer):  # EXTERNAL
        from onnx.external_data_helper import load_external_data_for_model

        try:
            load_external_data_for_model(model, os.path.dirname(os.path.abspath(os.fspath(path_or_proto))))
        except Exception as e:
            raise ImportFailure(f"cannot read the model's external data: {e}") from None
    return model


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
        from rlx_xdsl.graph import graph_args
        from rlx_xdsl.weights import write_weights

        values = initializers(model)
        (f,) = module.ops  # the one function `translate` builds
        write_weights(weights, {a.name: values[a.name] for a in graph_args(f) if a.is_param})
    return module


def initializers(path_or_proto: Any) -> dict:
    """The model's initializers as numpy arrays, by name (the imported parameters' values)."""
    from onnx import numpy_helper

    return {i.name: numpy_helper.to_array(i) for i in load(path_or_proto).graph.initializer}


def supported_ops() -> list[str]:
    """The ONNX op types the table translates (plus `Constant`)."""
    from rlx_xdsl.importers.onnx.translator import ONNX_OPS

    return sorted({*ONNX_OPS, "Constant"})
