"""Importing PyTorch models through `torch.export`.

    from rlx_xdsl.importers.torch import import_module
    module = import_module(model, (torch.randn(2, 16),), dynamic_shapes={"x": {0: Dim("batch")}})

The model is exported (`torch.export.export`), decomposed to PyTorch's core ATen op
set (`run_decompositions`), and translated node by node (`translator.py`, rules in
`ops/`). Ops that are one MIR op (`kept_whole()`: attention, silu, RMSNorm) are left out of
the decomposition, and hand-written RMSNorm, RoPE and SwiGLU become their MIR ops
(`idioms.py`; HIR blocks with `hir=True`), so fusion and the fusion report see what a
hand-written graph gives. Importing this package makes PyPI's CUDA-built torchvision (which
`transformers` imports) importable beside the CPU torch (`vision.py`).
"""

from __future__ import annotations

import warnings
from typing import Any

from xdsl.dialects.builtin import ModuleOp

from rlx_xdsl.importers.errors import ImportFailure
from rlx_xdsl.importers.torch import vision

vision.prepare()  # before the user's code imports `transformers` or torchvision: see vision.py

__all__ = [
    "ImportFailure", "export", "import_module", "import_program", "program_state", "program_weights", "supported_ops",
]  # fmt: skip


def kept_whole() -> list:
    """The ATen ops not decomposed, because each is one MIR op."""
    import torch

    aten = torch.ops.aten
    return [aten.scaled_dot_product_attention.default, aten.silu.default, aten.rms_norm.default]


def export(model: Any, example_args: tuple, dynamic_shapes: Any = None):
    """`model` exported and decomposed to core ATen, except the ops `kept_whole()`."""
    import torch

    from rlx_xdsl.support.progress import status

    decompositions = torch.export.default_decompositions()
    for op in kept_whole():
        decompositions.pop(op, None)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*LeafSpec", category=FutureWarning)  # torch's own
        try:
            with status(f"torch.export: tracing {type(model).__name__}"):
                program = torch.export.export(model, tuple(example_args), dynamic_shapes=dynamic_shapes, strict=False)
        except Exception as e:  # torch raises many kinds: report them all as one import failure
            raise ImportFailure(f"torch.export failed: {type(e).__name__}: {e}") from e
        with status("torch.export: decomposing to core ATen"):
            return program.run_decompositions(decompositions)


def import_program(program: Any, name: str = "forward", hir: bool = False) -> ModuleOp:
    """An `ExportedProgram` (core ATen, e.g. from `export`) as a MIR module with one function;
    with `hir`, hand-written SwiGLU, RMSNorm and RoPE idioms as HIR blocks (`idioms.py`)."""
    from rlx_xdsl.importers.torch.translator import translate

    return translate(program, name, hir)


def import_module(
    model: Any,
    example_args: tuple,
    dynamic_shapes: Any = None,
    name: str = "forward",
    weights: Any = None,
    hir: bool = False,
) -> ModuleOp:
    """`model(*example_args)` as a MIR module: parameters and buffers are `rlx.param`
    arguments named by their state-dict keys, dims marked dynamic are `?`. A buffer the
    model updates in place (a static KV cache) is a plain argument named by its key, and
    its new value an extra result after the model's outputs (`program_state`).

    With `weights` (a `.safetensors` or `.npz` path) their values are written there too,
    by the same names, for `rlx-run --params`; a failure to write is a `WeightsError`.
    With `hir`, the hand-written idioms `idioms.py` finds (SwiGLU with its down
    projection, RMSNorm of a residual sum, RMSNorm, RoPE) are HIR blocks (`hir.swiglu`,
    `hir.residual_rms_norm`, ...) for `rlx-lower-hir` to lower by its policy."""
    program = export(model, example_args, dynamic_shapes)
    module = import_program(program, name, hir)
    if weights is not None:
        from rlx_xdsl.formats.weights import write_weights
        from rlx_xdsl.support.progress import status

        with status(f"writing the weights to {weights}"):
            write_weights(weights, program_weights(program))
    return module


def program_weights(program: Any) -> dict:
    """The values of an `ExportedProgram`'s parameters and buffers as numpy arrays, by
    state-dict key: the `rlx.name`s of the imported function's `rlx.param` arguments
    (a tied weight under its first key only)."""
    from torch.export.graph_signature import InputKind

    from rlx_xdsl.importers.torch.translator import tied_weights

    tied = tied_weights(program)  # one argument, so one entry
    state = set(program.graph_signature.buffers_to_mutate.values())  # arguments, not weights
    values = {}
    for spec in program.graph_signature.input_specs:
        if spec.kind in (InputKind.PARAMETER, InputKind.BUFFER) and spec.target not in tied.keys() | state:
            values[spec.target] = _initial_value(program, spec.target)
    return values


def program_state(program: Any) -> dict:
    """The initial values of the buffers an `ExportedProgram` mutates (a static KV cache), by
    state-dict key, in the order of the imported function's arguments and of its extra
    results: each step takes them as arguments and returns their new values after its
    outputs, for the caller to pass to the next step."""
    mutated = set(program.graph_signature.buffers_to_mutate.values())
    specs = program.graph_signature.input_specs
    return {spec.target: _initial_value(program, spec.target) for spec in specs if spec.target in mutated}


def _initial_value(program: Any, target: str):
    from rlx_xdsl.importers.torch.types import to_numpy

    # a non-persistent buffer is not in the state dict but among the constants
    return to_numpy(program.state_dict.get(target, program.constants.get(target)))


def supported_ops() -> list[str]:
    """The ATen overloads the table translates, by name."""
    from rlx_xdsl.importers.torch.translator import ATEN

    return sorted(str(op) for op in ATEN)
