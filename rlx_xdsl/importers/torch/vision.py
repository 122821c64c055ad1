"""Making PyPI's `torchvision` importable beside a CPU-only torch.

PyPI's `torchvision` wheel is built against CUDA torch: beside the CPU torch its C
extension (`torchvision/_C.so`, which links `libtorch_cuda.so`) does not load, and
`import torchvision` then fails registering fake kernels for `torchvision::nms` and
`torchvision::qnms` ("operator torchvision::nms does not exist"), ops only that extension
defines. `transformers` imports torchvision whenever it is installed, so the failure also
breaks `transformers` model imports. `prepare()` tries the extension as torchvision would
and, where it does not load, defines the two schemas first (without kernels: calling them
fails, and no test does) so both import. With a torchvision matching the torch build (the
CPU wheel from PyTorch's own index) the extension loads and nothing is defined. Importing
`rlx_xdsl.importers.torch` calls `prepare()`, so a model of `transformers` or torchvision
built after that imports with no extra step (only PyPI's CUDA-built wheel of torchvision
exists for torch 2.13.0 on PyPI, and `pip install torch==2.13.0` gives the CPU build).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

_SCHEMAS = (
    "nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
    "qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
)
_library = None  # kept alive: dropping a Library removes its definitions


def available() -> bool:
    """Whether torchvision is installed (not whether it imports)."""
    return importlib.util.find_spec("torchvision") is not None


def prepare() -> None:
    """Define the schemas torchvision's import needs when its C extension cannot load;
    nothing when torchvision is absent, already prepared, or its extension loads."""
    global _library
    if _library is not None or not available():
        return
    spec = importlib.util.find_spec("torchvision")
    extension = next(Path(spec.origin).parent.glob("_C.*"), None)
    if extension is None:
        return
    import torch

    try:
        torch.ops.load_library(str(extension))
    except (ImportError, OSError):
        _library = torch.library.Library("torchvision", "DEF")
        for schema in _SCHEMAS:
            _library.define(schema)
