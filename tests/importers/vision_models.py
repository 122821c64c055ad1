"""`torchvision` ResNet-18 and MobileNetV3 (small), random weights, 10 classes, 32x32 images.

PyPI's `torchvision` wheel is built against CUDA torch: beside the CPU torch its C
extension (`torchvision/_C.so`, which needs `libtorch_cuda.so`) does not load, and
torchvision then fails at import registering fake kernels for `torchvision::nms` and
`torchvision::qnms`, ops only that extension defines. The models need none of its ops,
so `load()` tries the extension as torchvision would and, where it does not load,
defines the two schemas first (without kernels: calling them would fail) so the import
succeeds. With a torchvision matching the torch build (the PyTorch CPU index) the
extension loads and nothing is defined.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import torch

_SCHEMAS = (
    "nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
    "qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
)
_library = None  # kept alive: dropping a Library removes its definitions


def available() -> bool:
    return importlib.util.find_spec("torchvision") is not None


def load():
    """`torchvision.models`, importable beside a CPU torch (see the module docstring)."""
    global _library
    spec = importlib.util.find_spec("torchvision")
    extension = next(Path(spec.origin).parent.glob("_C.*"), None)
    if _library is None and extension is not None and not _extension_loads(extension):
        _library = torch.library.Library("torchvision", "DEF")
        for schema in _SCHEMAS:
            _library.define(schema)
    import torchvision.models

    return torchvision.models


def _extension_loads(path: Path) -> bool:
    try:
        torch.ops.load_library(str(path))
    except (ImportError, OSError):
        return False
    return True


def _with_random_batch_norms(model):
    """Batch norms with random statistics and affine weights: at their initial identity
    MobileNetV3's logits are ~1e-10, which half precision flushes to zero."""
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.uniform_(-0.2, 0.2)
                m.running_var.uniform_(0.5, 1.5)
                m.weight.uniform_(0.8, 1.6)
                m.bias.uniform_(-0.2, 0.2)
    return model


def resnet18():
    return _with_random_batch_norms(load().resnet18(num_classes=10)), torch.randn(2, 3, 32, 32)


def mobilenet_v3():
    return _with_random_batch_norms(load().mobilenet_v3_small(num_classes=10)), torch.randn(2, 3, 32, 32)


MODELS = {f.__name__: f for f in (resnet18, mobilenet_v3)}
