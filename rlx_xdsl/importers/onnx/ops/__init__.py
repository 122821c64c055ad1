"""The ONNX rules, one module per op family; importing this package registers them all."""

from rlx_xdsl.importers.onnx.ops import (  # noqa: F401
    activation,
    attention,
    conv,
    elementwise,
    gather,
    loss,
    matmul,
    norm,
    quant,
    reduction,
    resize,
    shape,
    softmax,
)
