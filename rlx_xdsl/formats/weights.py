"""Weight files: named arrays in `.safetensors`, `.npz` or (read only) `.onnx` files.

The names are the `rlx.name`s of a graph's `rlx.param` arguments, so a file written
by an importer (`rlx-import-torch --weights`) feeds `rlx-run --params`. The file's
suffix chooses the format:

* `.safetensors` (https://huggingface.co/docs/safetensors): the usual format of
  published weights; needs the `safetensors` package, imported only when used;
* `.npz`: numpy's archive of `.npy` files (`numpy.savez`), no extra package;
* `.onnx`: the initializers of an ONNX model (reading only; needs `onnx`).

Every failure is a `WeightsError` whose message says what is wrong with which file.
"""

from __future__ import annotations

import io
import os
import zipfile
from pathlib import Path

import numpy as np

from rlx_xdsl.formats.files import OutputError, write_output
from rlx_xdsl.formats.onnx_model import ModelFileError, model_initializers, read_model

READABLE = (".safetensors", ".npz", ".onnx")
WRITABLE = (".safetensors", ".npz")


class WeightsError(Exception):
    """A weight file that cannot be read or written; the message names the file's problem."""


def _suffix(path: Path, formats: tuple[str, ...], verb: str) -> str:
    suffix = path.suffix.lower()
    if suffix not in formats:
        raise WeightsError(f"cannot {verb} '{path}': the weight file format is chosen by its suffix, one of {', '.join(formats)}")
    return suffix


def _needs(package: str, what: str) -> WeightsError:
    return WeightsError(f"{what} needs the '{package}' package (pip install {package}), which is not installed")


def read_weights(path: str | os.PathLike) -> dict[str, np.ndarray]:
    """The named arrays of a weight file, by name (bf16 as `ml_dtypes.bfloat16`)."""
    path = Path(path)
    suffix = _suffix(path, READABLE, "read")
    if not path.is_file():
        raise WeightsError(f"no such file: '{path}'")
    if suffix == ".safetensors":
        return _read_safetensors(path)
    if suffix == ".npz":
        return _read_npz(path)
    return _read_onnx(path)


def _read_safetensors(path: Path) -> dict[str, np.ndarray]:
    try:
        from safetensors.numpy import load_file
    except ImportError:
        raise _needs("safetensors", f"reading '{path}'") from None
    try:
        return load_file(path)
    except OSError as e:
        raise WeightsError(f"cannot read '{path}': {e.strerror or e}") from None
    except Exception as e:  # safetensors' SafetensorError and the dtypes numpy lacks
        raise WeightsError(f"'{path}' is not a valid .safetensors file ({e})") from None


def _read_npz(path: Path) -> dict[str, np.ndarray]:
    try:
        with open(path, "rb") as f:
            magic = f.read(4)
        if magic not in (b"PK\x03\x04", b"PK\x05\x06"):  # a zip archive (or an empty one)
            raise WeightsError(f"'{path}' is not a valid .npz archive (not a zip file)")
        with np.load(path, allow_pickle=False) as archive:
            return {name: archive[name] for name in archive.files}
    except WeightsError:
        raise
    except OSError as e:
        raise WeightsError(f"cannot read '{path}': {e.strerror or e}") from None
    except Exception as e:  # zipfile.BadZipFile, a corrupt member, a pickled (object) array
        raise WeightsError(f"'{path}' is not a valid .npz archive ({type(e).__name__}: {e})") from None


def _read_onnx(path: Path) -> dict[str, np.ndarray]:
    try:
        import onnx  # noqa: F401
    except ImportError:
        raise _needs("onnx", f"reading '{path}'") from None
    try:
        return model_initializers(read_model(path))
    except ModelFileError as e:
        raise WeightsError(f"'{path}': {e}") from None


def write_weights(path: str | os.PathLike, arrays: dict[str, np.ndarray]) -> None:
    """Write `arrays` to `path` in the format of its suffix, as `rlx-opt -o` writes:
    atomically, so a failure leaves an existing file as it was and creates none."""
    path = Path(path)
    suffix = _suffix(path, WRITABLE, "write")
    data = _safetensors_bytes(path, arrays) if suffix == ".safetensors" else _npz_bytes(path, arrays)
    try:
        write_output(str(path), data)
    except OutputError as e:
        raise WeightsError(str(e)) from None


def _safetensors_bytes(path: Path, arrays: dict[str, np.ndarray]) -> bytes:
    try:
        from safetensors.numpy import save
    except ImportError:
        raise _needs("safetensors", f"writing '{path}' (or write a .npz file)") from None
    try:
        # C order, keeping rank 0: `np.ascontiguousarray` makes a 0-d array (a BatchNorm's
        # `num_batches_tracked`, a scalar `nn.Parameter`) shape [1]
        return save({name: np.require(a, requirements="C") for name, a in arrays.items()})
    except Exception as e:  # a dtype safetensors lacks
        raise WeightsError(f"cannot write '{path}': {e}") from None


def _npz_bytes(path: Path, arrays: dict[str, np.ndarray]) -> bytes:
    """The `.npz` archive `numpy.savez` writes (any name allowed, `file` included)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, array in arrays.items():
            with archive.open(f"{name}.npy", "w") as member:
                try:
                    np.lib.format.write_array(member, np.asanyarray(array), allow_pickle=False)
                except ValueError as e:  # an object array
                    raise WeightsError(f"cannot write '{path}': entry '{name}': {e}") from None
    return buffer.getvalue()
