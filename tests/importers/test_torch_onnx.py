"""The LLaMA-like block exported by `torch.onnx.export` imports through the ONNX importer
and agrees with PyTorch, as the same block through `import_module` does."""

from __future__ import annotations

import io
import warnings

import numpy as np
import onnx
import torch

from rlx_xdsl.importers.onnx import import_model, initializers
from rlx_xdsl.ir.graph import argument_name, find_function, is_param
from rlx_xdsl.run import run_function

from .models import LlamaBlock


def assert_imports_like_torch(exported: onnx.ModelProto, model: torch.nn.Module, x: torch.Tensor) -> None:
    """The exported model, imported and run on the interpreter with its initializers, equals `model(x)`."""
    module = import_model(exported)
    f = find_function(module)
    weights = initializers(exported)
    args = [weights[argument_name(f, i)] if is_param(f, i) else x.numpy() for i in range(len(f.args))]
    (got,) = run_function(module, None, args)
    with torch.no_grad():
        expected = model(x).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)

def test_llama_block_from_torch_onnx_export_matches_torch():
    torch.manual_seed(5)
    model = LlamaBlock(kv_heads=4).eval()  # the TorchScript exporter has no grouped-query SDPA
    x = torch.randn(2, 8, 16)
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the exporter's own deprecation notices
        torch.onnx.export(model, (x,), buffer, dynamo=False, opset_version=18, input_names=["x"])
    exported = onnx.load_from_string(buffer.getvalue())
    assert_imports_like_torch(exported, model, x)


def test_llama_block_from_the_dynamo_onnx_exporter_matches_torch():
    """`torch.onnx.export(dynamo=True)` (onnxscript, its newest opset) imports as well."""
    torch.manual_seed(6)
    model = LlamaBlock(kv_heads=4).eval()
    x = torch.randn(2, 8, 16)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        program = torch.onnx.export(model, (x,), dynamo=True, verbose=False)
    exported = program.model_proto
    assert_imports_like_torch(exported, model, x)
