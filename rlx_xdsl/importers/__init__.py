"""Importers: models written elsewhere (PyTorch `torch.export`, ONNX) as MIR graphs.

Each importer walks the other framework's graph in order and emits one or a few MIR ops
per node through the `Emitter` (types inferred by the ops), from a translation table
keyed by the framework's op (one module per op family). Parameters become `rlx.param`
arguments named as the framework names them (state-dict keys, ONNX initializer names);
dynamic dimensions become `?`. An op without an entry is an `ImportFailure` that names
the op and where it comes from.
"""
