"""torch dtypes as RLX dtypes."""

from __future__ import annotations

import torch

from rlx_xdsl.importers.errors import ImportFailure

DTYPES = {
    torch.float32: "f32",
    torch.float16: "f16",
    torch.bfloat16: "bf16",
    torch.float64: "f64",
    torch.bool: "i1",
    torch.int8: "i8",
    torch.int16: "i16",
    torch.int32: "i32",
    torch.int64: "i64",
    torch.uint8: "ui8",
}
"""torch dtypes -> RLX dtype names (torch's other dtypes have no MIR twin)."""


def dtype_name(dtype: torch.dtype, where: str | None = None) -> str:
    try:
        return DTYPES[dtype]
    except KeyError:
        raise ImportFailure(f"dtype {dtype} has no MIR equivalent", where) from None


def to_numpy(tensor: torch.Tensor):
    """A tensor's values as a numpy array of the same dtype (bf16 as `ml_dtypes.bfloat16`,
    which numpy lacks and `Tensor.numpy()` refuses)."""
    tensor = tensor.detach().cpu()
    if tensor.dtype == torch.bfloat16:
        import ml_dtypes

        return tensor.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
    return tensor.numpy()
