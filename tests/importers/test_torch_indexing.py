"""ATen rules the Hugging Face and Whisper graphs need, on small plain-torch modules:
`x[i, j]` indexing, `torch.gather`, boolean and/or, 1-D convolution, against torch."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from rlx_xdsl.importers.errors import ImportFailure
from rlx_xdsl.importers.torch import import_module

from .test_torch import expect_same


class Picks(nn.Module):
    def forward(self, x, i, j):
        a = x[i[:, None], j[None, :]]  # [3, 4, 2]: broadcast index tensors on dims 0, 1
        b = x[:, j[:2], i[1:]]  # dims 1, 2 (adjacent, not leading)
        c = torch.gather(x, 1, j.reshape(1, 4, 1).expand(5, 4, 2))
        d = ((x > 0) & (x < 0.5)) | (x < -1.0)
        return a, b, c, d.float()


def test_indexing_gather_and_boolean_logic_match_torch():
    torch.manual_seed(3)
    inputs = (torch.randn(5, 6, 2), torch.tensor([4, 0, 1]), torch.tensor([5, 2, 2, 0]))
    module = import_module(Picks(), inputs)
    expect_same(module, Picks(), *inputs)
    assert sum(op.name == "mir.gather" for op in module.walk()) == 3


class FromTheEnd(nn.Module):
    """Negative indices, constant and run-time (Falcon's attention writes `x[..., [-2, 1]]`)."""

    def forward(self, x, i, j):
        return x[..., [-2, 1]], x[i], x[i, j], x[:, [-1, 0], [2, -3]]


def test_negative_indices_count_from_the_end_as_in_torch():
    inputs = (torch.randn(3, 4, 5), torch.tensor([-1, 0, -3]), torch.tensor([-4, 3, -1]))
    module = import_module(FromTheEnd(), inputs)
    expect_same(module, FromTheEnd(), *inputs)
    gathers = [op for op in module.walk() if op.name == "mir.gather"]
    last_dim = gathers[0].indices.owner  # normalised at import: -2 is index 3 of 5
    assert last_dim.name == "mir.constant" and str(last_dim.value) == "dense<[3, 1]> : tensor<2xi64>"


class Conv1d(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Conv1d(4, 6, 3, padding=1)
        self.b = nn.Conv1d(6, 6, 3, stride=2, padding=1, groups=2, bias=False)

    def forward(self, x):
        return self.b(F.gelu(self.a(x)))


def test_one_d_convolution_matches_torch():
    torch.manual_seed(4)
    model, x = Conv1d().eval(), torch.randn(2, 4, 9)
    expect_same(import_module(model, (x,)), model, x, atol=1e-5)


class Apart(nn.Module):
    def forward(self, x, i):
        return x[i, :, i]


def test_index_tensors_on_dims_apart_are_a_located_error():
    with pytest.raises(ImportFailure, match="not adjacent") as info:
        import_module(Apart(), (torch.randn(3, 4, 3), torch.tensor([0, 2])))
    assert "test_torch_indexing.py" in str(info.value)


class WholeSlices(nn.Module):
    def forward(self, x):
        return x[0:, 1:3] * 2 + x[:, :2]


def test_a_whole_slice_of_a_dynamic_dim_is_the_value_itself():
    """`x[0:]` exports as `slice(x, 0, 0, 2**63 - 1)`: on a dynamic batch, the whole dim."""
    from torch.export import Dim

    x = torch.randn(2, 4)
    module = import_module(WholeSlices(), (x,), dynamic_shapes={"x": {0: Dim("batch")}})
    for batch in (2, 5):
        expect_same(module, WholeSlices(), torch.randn(batch, 4))


class Strided(nn.Module):
    """Swin's patch merging (`x[:, 0::2, 1::2]`), a negative start, an end past the dim."""

    def forward(self, x):
        return x[:, 0::2, 1::2], x[:, -5:7:3], x[1:100:2]


def test_a_slice_with_a_step_picks_every_step_th_slice_as_torch():
    x = torch.randn(3, 8, 7)
    module = import_module(Strided(), (x,))
    expect_same(module, Strided(), x, atol=0.0)
    assert sum(op.name == "mir.gather" for op in module.walk()) == 4


class StridedBatch(nn.Module):
    def forward(self, x):
        return x[::2]


def test_a_slice_with_a_step_over_a_dynamic_dim_is_a_located_error():
    from torch.export import Dim

    with pytest.raises(ImportFailure, match="'aten.slice.Tensor': a slice with step 2 of a dynamic dim") as info:
        import_module(StridedBatch(), (torch.randn(4, 3),), dynamic_shapes={"x": {0: Dim("batch", min=3)}})
    assert "test_torch_indexing.py" in str(info.value)


class Prepend(nn.Module):
    """ViT's class token: a `[1, 1, D]` parameter expanded to the batch."""

    def __init__(self):
        super().__init__()
        self.cls = nn.Parameter(torch.randn(1, 1, 4))

    def forward(self, x):
        return torch.cat((self.cls.expand(x.shape[0], -1, -1), x), dim=1)


def test_a_static_dim_broadcast_to_the_dynamic_batch_takes_it_at_run_time():
    """The class token expands with `like` = x (before: an import error)."""
    from torch.export import Dim

    module = import_module(Prepend(), (torch.randn(2, 3, 4),), dynamic_shapes={"x": {0: Dim("batch")}})
    assert "like %x like_dims = [0, -1, -1]" in str(module)
    for batch in (1, 3):
        expect_same(module, Prepend(), torch.randn(batch, 3, 4))


class Positions(nn.Module):
    """`arange` over the dynamic batch, and over twice it (a computed size)."""

    def __init__(self, twice: bool = False):
        super().__init__()
        self.twice = twice

    def forward(self, x):
        if self.twice:
            return torch.arange(x.shape[0] * 2)
        return x.sum(1) + torch.arange(x.shape[0])


def test_an_arange_over_the_dynamic_batch_is_an_iota_sized_at_run_time():
    from torch.export import Dim

    module = import_module(Positions(), (torch.randn(2, 3),), dynamic_shapes={"x": {0: Dim("batch")}})
    assert "mir.iota dimension = 0 like %x like_dims = [0]" in str(module)
    for batch in (1, 4):
        expect_same(module, Positions(), torch.randn(batch, 3))


def test_a_dynamic_size_computed_from_another_is_a_located_error():
    from torch.export import Dim

    with pytest.raises(ImportFailure, match="a dynamic size computed by") as info:
        import_module(Positions(twice=True), (torch.randn(2, 3),), dynamic_shapes={"x": {0: Dim("batch")}})
    assert "test_torch_indexing.py" in str(info.value)
