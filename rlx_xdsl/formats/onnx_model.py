"""ONNX model files: reading a model and its initializers (needs the optional `onnx`).

The importer (`importers/onnx`) and the weight files (`weights.py`: an `.onnx` file's
initializers as named arrays) both read models here.
"""

from __future__ import annotations

import os
from typing import Any


class ModelFileError(Exception):
    """A file that cannot be read, or is not a valid ONNX model; the message says which."""


def read_model(path_or_proto: Any):
    """An `onnx.ModelProto` from a path, bytes or a proto (external data loaded beside a path).

    Raises `ModelFileError` saying why a file cannot be read or is not an ONNX model."""
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
        raise ModelFileError(f"cannot read the model: {e.strerror}") from None
    except Exception as e:  # protobuf's DecodeError and friends
        raise ModelFileError(f"not a valid ONNX model ({type(e).__name__}: {e})") from None
    if not model.HasField("graph"):
        raise ModelFileError("not a valid ONNX model (no graph)")
    if any(i.data_location == 1 for i in model.graph.initializer):  # EXTERNAL
        from onnx.external_data_helper import load_external_data_for_model

        try:
            load_external_data_for_model(model, os.path.dirname(os.path.abspath(os.fspath(path_or_proto))))
        except Exception as e:
            raise ModelFileError(f"cannot read the model's external data: {e}") from None
    return model


def model_initializers(model) -> dict:
    """The initializers of an `onnx.ModelProto` as numpy arrays, by name."""
    from onnx import numpy_helper

    return {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
