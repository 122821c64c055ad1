"""What the imported-model pipeline tests (`test_torch_pipelines.py`, `test_model_zoo.py`)
share: running the module, a pass applied to a copy, and both sides' parameter gradients
of `sum(c * model(x))`."""

from __future__ import annotations

import numpy as np
import torch
from xdsl.context import Context

from rlx_xdsl.autodiff.grad import GradPass
from rlx_xdsl.autodiff.prepare import PrepareAdPass
from rlx_xdsl.context import make_context
from rlx_xdsl.ir.graph import find_function
from rlx_xdsl.run import run_function


def compute(module, args, backend="interpreter"):
    (out,) = run_function(module, find_function(module).sym_name.data, args, backend=backend)
    return out


def transformed(module, compiler_pass):
    """A verified copy of `module` after `compiler_pass`."""
    copy = module.clone()
    compiler_pass.apply(Context(), copy)
    copy.verify()
    return copy


def rlx_gradients(module, wrt, args, cotangent):
    """`rlx-prepare-ad` then `rlx-grad` on a copy: the output and the gradients of `wrt`."""
    grad = module.clone()
    PrepareAdPass().apply(make_context(), grad)
    name = find_function(grad).sym_name.data
    GradPass(func=name, wrt=tuple(wrt)).apply(make_context(), grad)
    grad.verify()
    return run_function(grad, f"{name}_grad", [*args, cotangent])


def torch_gradients(model, x, cotangent) -> dict[str, np.ndarray | None]:
    """Each parameter's `grad` after torch's backward of the same loss (None: none reached it)."""
    model.zero_grad()
    (model(x) * torch.from_numpy(cotangent)).sum().backward()
    grads = {k: None if p.grad is None else p.grad.numpy() for k, p in model.named_parameters()}
    model.zero_grad()
    return grads
