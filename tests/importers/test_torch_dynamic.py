"""Run-time sizes on small plain-torch modules exported with `Dim("batch")` and
`Dim("seq")`: the patterns of the Hugging Face models (T5's `full_like` of a `[S, S]`
tensor, OPT's `full` of the ids' shape, slices to the length, views with two `?` dims,
`x[i, j]` over dynamic dims), one import each run at two sizes against torch."""

from __future__ import annotations

import pytest
import torch
from torch import nn
from torch.export import Dim

from rlx_xdsl.importers.errors import ImportFailure
from rlx_xdsl.importers.torch import import_module

from .test_torch import expect_same

DIMS = {"x": {0: Dim("batch", max=16), 1: Dim("seq", max=15)}}


class RunTimeSizes(nn.Module):
    """`x` [B, S, 4] float."""

    def __init__(self):
        super().__init__()
        self.register_buffer("pos", torch.arange(16.0)[None])

    def forward(self, x):
        b, s = x.shape[0], x.shape[1]
        rel = torch.arange(s)[:, None] - torch.arange(s)[None, :]  # [S, S]
        t5 = torch.full_like(rel, 7) + rel  # T5's full_like of a dynamic shape
        opt = torch.full((b, s), 2.0)  # OPT's full of the ids' shape
        flat = x.reshape(b * s, 4) * 3.0
        back = flat.view(b, s, 2, 2)  # two `?` dims
        cut = self.pos[:, :s] + self.pos[:, 1 : s + 1]  # slices to the length, and to S + 1
        picked = x[torch.arange(b)[:, None], torch.arange(s)[None, :]]  # x[i, j] over ? dims
        return t5.float(), opt, back, cut, picked


def test_run_time_sizes_import_once_and_match_torch_at_two_sizes():
    torch.manual_seed(5)
    model = RunTimeSizes()
    module = import_module(model, (torch.randn(2, 3, 4),), dynamic_shapes=DIMS)
    for b, s in ((1, 5), (3, 2)):
        expect_same(module, model, torch.randn(b, s, 4))


class Computed(nn.Module):
    def forward(self, x):
        return torch.full((2 * x.shape[1],), 1.0)


def test_a_size_computed_from_input_sizes_is_a_located_error_without_markers():
    with pytest.raises(ImportFailure, match=r"'aten.full.default': the size 2\*s\d+ \(dim 0\) is computed") as info:
        import_module(Computed(), (torch.randn(2, 3, 4),), dynamic_shapes=DIMS)
    assert "test_torch_dynamic.py" in str(info.value)
    assert "9223372036854775808" not in str(info.value)
