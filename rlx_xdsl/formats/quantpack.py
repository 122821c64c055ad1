"""Packing f32 weights `[K, N]` into the operands of `mir.dequant_matmul` (weight-only
quantisation for inference, `rlx-quantize-weights`).

`pack(w, scheme, block_size)` returns the quantised parameters by suffix: `q` (and
`scale`, `zp` where the scheme has them), the arrays a function rewritten by
`rlx-quantize-weights` takes as `<name>.q`, `<name>.scale`, `<name>.zp`.
`pack_file(path, ...)` packs every 2-D array of a `.npz` (or `.safetensors`, with the
`safetensors` package) file. Rounding is to nearest; scales come from each block's
largest magnitude, as GGML and the usual int8/int4 recipes do.
"""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np

from rlx_xdsl.dialects.mir.quant import GGUF_BLOCKS, NVFP4_BLOCK, QuantScheme
from rlx_xdsl.formats.quantpack_k import PACKERS

SUFFIXES = ("q", "scale", "zp")


def _blocks(w: np.ndarray, block: int) -> np.ndarray:
    k, n = w.shape
    if k % block:
        raise ValueError(f"K = {k} is not a multiple of the block size {block}")
    return w.reshape(k // block, block, n)


def _step(amax: np.ndarray, top: float) -> np.ndarray:
    """`amax / top`, 1 where a block is all zeros."""
    return np.where(amax > 0, amax / np.float32(top), np.float32(1)).astype(np.float32)


def _nibbles(codes: np.ndarray) -> np.ndarray:
    """4-bit codes `[K, N]` packed two per byte along K, the even k in the low nibble."""
    codes = codes.astype(np.uint8) & 0x0F
    return (codes[0::2] | (codes[1::2] << 4)).astype(np.uint8)


def check_block_size(scheme: QuantScheme, block_size: int | None) -> None:
    """Raise `ValueError` unless `scheme` can pack blocks of `block_size` (whatever the weight)."""
    if scheme.has_block_size and block_size is None:
        raise ValueError(f"scheme {scheme} needs a block size")
    if scheme.has_block_size and block_size < 1:
        raise ValueError(f"{scheme} needs a block size of at least 1, got {block_size}")
    if scheme is QuantScheme.INT4_BLOCK and block_size % 2:
        raise ValueError(f"int4_block needs an even block size, got {block_size}")


def pack(w: np.ndarray, scheme: str | QuantScheme, block_size: int | None = None) -> dict[str, np.ndarray]:
    """The `mir.dequant_matmul` operands quantising `w [K, N]` (GGUF: `N` rows of K values)."""
    scheme = QuantScheme(scheme)
    w = np.asarray(w, np.float32)
    k, n = w.shape
    unused = np.zeros(1, np.float32)
    check_block_size(scheme, block_size)
    if scheme in (QuantScheme.INT8_BLOCK, QuantScheme.INT4_BLOCK):
        top = 127 if scheme is QuantScheme.INT8_BLOCK else 7
        blocks = _blocks(w, block_size)
        scale = _step(np.abs(blocks).max(axis=1), top)
        q = np.clip(np.rint(blocks / scale[:, None]), -top - 1, top).reshape(k, n)
        if scheme is QuantScheme.INT8_BLOCK:
            return {"q": q.astype(np.int8), "scale": scale, "zp": unused}
        return {"q": _nibbles(q.astype(np.int8)), "scale": scale, "zp": unused}
    if scheme is QuantScheme.INT8_BLOCK_ASYM:
        blocks = _blocks(w, block_size)
        lo, hi = blocks.min(axis=1), blocks.max(axis=1)
        scale = _step(hi - lo, 255)
        zp = (-128 - lo / scale).astype(np.float32)
        q = np.clip(np.rint(blocks / scale[:, None] + zp[:, None]), -128, 127).reshape(k, n)
        return {"q": q.astype(np.int8), "scale": scale, "zp": zp}
    if scheme in (QuantScheme.FP8_E4M3, QuantScheme.FP8_E5M2):
        dtype = ml_dtypes.float8_e4m3fn if scheme is QuantScheme.FP8_E4M3 else ml_dtypes.float8_e5m2
        scale = _step(np.abs(w).max(axis=0), float(ml_dtypes.finfo(dtype).max))
        return {"q": (w / scale).astype(dtype).view(np.uint8), "scale": scale, "zp": unused}
    if scheme is QuantScheme.NVFP4_BLOCK:
        blocks = _blocks(w, NVFP4_BLOCK)
        tensor_scale = _step(np.abs(w).max(keepdims=True).reshape(1), 6 * 448)
        block_scale = (np.abs(blocks).max(axis=1) / 6 / tensor_scale).astype(ml_dtypes.float8_e4m3fn)
        step = block_scale.astype(np.float32) * tensor_scale
        values = np.where(step[:, None] > 0, blocks / np.where(step > 0, step, 1)[:, None], 0)
        codes = values.reshape(k, n).astype(ml_dtypes.float4_e2m1fn).view(np.uint8)
        return {"q": _nibbles(codes), "scale": block_scale.view(np.uint8), "zp": tensor_scale}
    if scheme.is_gguf:
        return {"q": _gguf(w.T, scheme)}
    raise ValueError(f"no packer for scheme {scheme}")


def _gguf(rows: np.ndarray, scheme: QuantScheme) -> np.ndarray:
    """GGML blocks of each row (`[N, K]`): Q4_0/Q8_0 blocks of 32 values (an f16 scale,
    then the codes) here, K-quant super-blocks of 256 in `quantpack_k`."""
    values, _ = GGUF_BLOCKS[scheme]
    n, k = rows.shape
    if k % values:
        raise ValueError(f"K = {k} is not a multiple of {scheme}'s block of {values} values")
    x = rows.reshape(n * k // values, values)
    if scheme in PACKERS:
        return PACKERS[scheme](x).reshape(-1)
    if scheme is QuantScheme.GGUF_Q8_0:
        d = np.abs(x).max(axis=1) / 127
        q = np.rint(x * np.where(d > 0, 1 / np.where(d > 0, d, 1), 0)[:, None]).astype(np.int8).view(np.uint8)
    else:  # Q4_0: the signed value of largest magnitude maps to -8
        extreme = x[np.arange(len(x)), np.abs(x).argmax(axis=1)]
        d = extreme / -8
        inverse = np.where(d != 0, 1 / np.where(d != 0, d, 1), 0)
        codes = np.minimum(15, np.trunc(x * inverse[:, None] + 8.5)).astype(np.uint8)
        q = codes[:, :16] | (codes[:, 16:] << 4)
    d16 = d.astype(np.float16).view(np.uint8).reshape(-1, 2)
    return np.concatenate([d16, q], axis=1).reshape(-1)


def pack_file(
    path: str | Path, scheme: str | QuantScheme, block_size: int | None = None, names=None
) -> dict[str, np.ndarray]:
    """Every 2-D array of a `.npz` / `.safetensors` file (or those in `names`), packed and
    named `<name>.q`, `<name>.scale`, `<name>.zp`; other arrays unchanged."""
    path = Path(path)
    if path.suffix == ".safetensors":
        from safetensors.numpy import load_file

        arrays = load_file(str(path))
    else:
        with np.load(path) as data:
            arrays = {key: data[key] for key in data.files}
    out: dict[str, np.ndarray] = {}
    for name, array in arrays.items():
        if array.ndim == 2 and (names is None or name in names):
            out.update({f"{name}.{key}": value for key, value in pack(array, scheme, block_size).items()})
        else:
            out[name] = array
    return out
