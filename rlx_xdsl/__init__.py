"""rlx-xdsl: an MLIR-style ML graph compiler (RLX's middle-end) on xDSL."""

__version__ = "0.1.0"
