"""`torchvision` ResNet-18 and MobileNetV3 (small), random weights, 10 classes, 32x32 images.

PyPI's torchvision needs `rlx_xdsl.importers.torch.vision.prepare()` beside the CPU torch
(importing the torch importer runs it); `load()` runs it too.
"""

from __future__ import annotations

import torch

from rlx_xdsl.importers.torch import vision

available = vision.available


def load():
    """`torchvision.models`, importable beside a CPU torch."""
    vision.prepare()
    import torchvision.models

    return torchvision.models


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
