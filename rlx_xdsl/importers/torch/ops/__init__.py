"""The ATen rules, one module per op family; importing this package registers them all."""

from rlx_xdsl.importers.torch.ops import (  # noqa: F401
    activation,
    attention,
    conv,
    elementwise,
    embedding,
    matmul,
    norm,
    reduction,
    shape,
    softmax,
)
