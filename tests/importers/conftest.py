"""Torch models exported once per test session, shared by the importer test modules."""

from __future__ import annotations

import pytest
import torch
from torch.export import Dim

from rlx_xdsl.importers.torch import import_module

from .models import MLP, ConvNet, LlamaBlock


@pytest.fixture(scope="session")
def mlp():
    torch.manual_seed(0)
    model = MLP().eval()
    return model, import_module(model, (torch.randn(3, 6),), dynamic_shapes={"x": {0: Dim("batch")}})


@pytest.fixture(scope="session")
def convnet():
    torch.manual_seed(1)
    model = ConvNet().eval()
    model.bn.running_mean.uniform_(-1, 1)
    model.bn.running_var.uniform_(0.5, 2.0)
    return model, import_module(model, (torch.randn(2, 3, 8, 8),))


@pytest.fixture(scope="session")
def llama():
    torch.manual_seed(2)
    model = LlamaBlock().eval()
    return model, import_module(model, (torch.randn(2, 8, 16),), dynamic_shapes={"x": {0: Dim("batch")}})


@pytest.fixture(scope="session")
def zoo_export():
    """`zoo_export(name)`: (model, exported program, its weights by name, example input) of
    the tiny Hugging Face (`hf_models.py`) or torchvision (`vision_models.py`) model
    `name`, exported once per session."""
    from rlx_xdsl.importers.torch import export, program_weights

    from . import hf_models, vision_models

    factories = hf_models.MODELS | vision_models.MODELS
    cache = {}

    def get(name):
        if name not in cache:
            torch.manual_seed(11)
            model, example = factories[name]()
            model.eval()
            program = export(model, (example,))
            cache[name] = model, program, program_weights(program), example
        return cache[name]

    return get


@pytest.fixture(scope="session")
def zoo_dynamic():
    """`zoo_dynamic(name)`: (model, MIR module, its weights by name, example input) of the
    tiny Hugging Face model `name` exported once per session with a dynamic batch (dim 0
    of its one input) and, for the text models (token ids), a dynamic sequence length
    (dim 1)."""
    from torch.export import Dim

    from rlx_xdsl.importers.torch import export, import_program, program_weights

    from . import hf_models

    cache = {}

    def get(name):
        if name not in cache:
            torch.manual_seed(11)
            model, example = hf_models.MODELS[name]()
            model.eval()
            dims = {0: Dim("batch", max=64)}
            if example.dtype == torch.int64:
                dims[1] = Dim("seq", max=32)
            program = export(model, (example,), dynamic_shapes={"x": dims})
            cache[name] = model, import_program(program), program_weights(program), example
        return cache[name]

    return get


@pytest.fixture(scope="session")
def zoo_model(zoo_export):
    """`zoo_model(name)`: as `zoo_export`, with the imported MIR module for the program."""
    from rlx_xdsl.importers.torch import import_program

    cache = {}

    def get(name):
        if name not in cache:
            model, program, weights, example = zoo_export(name)
            cache[name] = model, import_program(program), weights, example
        return cache[name]

    return get
