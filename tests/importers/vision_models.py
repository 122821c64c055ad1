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


# Breadth: one cheap check each (`test_model_zoo.py`), narrowed where the constructor allows.


def _image() -> torch.Tensor:
    return torch.randn(2, 3, 32, 32)


def convnext():
    """Two stages (8 and 16 channels, one block each)."""
    from torchvision.models.convnext import CNBlockConfig, ConvNeXt

    load()
    return ConvNeXt([CNBlockConfig(8, 16, 1), CNBlockConfig(16, None, 1)], num_classes=10), _image()


def squeezenet():
    """`squeezenet1_0`: max pooling with `ceil_mode`."""
    return load().squeezenet1_0(num_classes=10), _image()


def densenet():
    """Four dense blocks of one layer, growth rate 8."""
    from torchvision.models.densenet import DenseNet

    load()
    model = DenseNet(growth_rate=8, block_config=(1, 1, 1, 1), num_init_features=16, bn_size=2, num_classes=10)
    return _with_random_batch_norms(model), _image()


def regnet():
    """Two blocks of group width 8."""
    from torchvision.models.regnet import BlockParams, RegNet

    load()
    params = BlockParams.from_init_params(depth=2, w_0=8, w_a=8.0, w_m=2.0, group_width=8)
    return _with_random_batch_norms(RegNet(params, stem_width=8, num_classes=10)), _image()


def shufflenet():
    """ShuffleNetV2 with one unit per stage: the channel shuffle."""
    from torchvision.models.shufflenetv2 import ShuffleNetV2

    load()
    return _with_random_batch_norms(ShuffleNetV2([1, 1, 1], [8, 16, 32, 64, 128], num_classes=10)), _image()



BREADTH = {f.__name__: f for f in (convnext, squeezenet, densenet, regnet, shufflenet)}
