"""`rlx-import-torch MODULE:FACTORY --example-shapes x=2x16 [-o OUT.mlir]`: a PyTorch model as MIR.

`MODULE:FACTORY` names a function (or class) that returns the `nn.Module`, called without
arguments; the model is put in eval mode. `--example-shapes` gives the example inputs by
`forward`'s parameter names, `NAME=DxDx...[:DTYPE]` (random f32 by default; integer dtypes
draw from 0-9, for token ids): each name must be a parameter of `forward`, the inputs are passed
in `forward`'s order, and a parameter left out must have a default; `--dynamic NAME=AXIS[,AXIS]`
marks dims dynamic (`?`; their example sizes must be 2 or more: torch.export specialises sizes
0 and 1 to constants); `--weights FILE`
writes the parameters' values (`.safetensors` or `.npz`) for `rlx-run --params`. Failures are one
line `rlx-import-torch: error: <message>`, exit status 1; `-o` is written atomically.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import sys

from rlx_xdsl.formats.weights import WeightsError
from rlx_xdsl.importers.errors import ImportFailure
from rlx_xdsl.ir.suggest import did_you_mean

_DTYPES = ("f32", "f16", "bf16", "f64", "i64", "i32")


class UsageError(Exception):
    pass


def _shapes(specs: list[str]) -> list[tuple[str, list[int], str]]:
    parsed = []
    for spec in specs:
        name, _, rest = spec.partition("=")
        dims, _, dtype = rest.partition(":")
        dtype = dtype or "f32"
        try:
            shape = [int(d) for d in dims.split("x")] if dims else []
        except ValueError:
            raise UsageError(f"bad --example-shapes entry '{spec}' (expected NAME=DxD...[:DTYPE])") from None
        if not name or dtype not in _DTYPES or any(d < 0 for d in shape):
            raise UsageError(f"bad --example-shapes entry '{spec}' (expected NAME=DxD...[:{'|'.join(_DTYPES)}])")
        parsed.append((name, shape, dtype))
    return parsed


def _in_forward_order(model, shapes: list[tuple[str, list[int], str]]) -> list[tuple[str, list[int], str]]:
    """`shapes` in the order of `model.forward`'s parameters, which they must name (inputs are
    passed positionally); a parameter not given must have a default and come after those given.
    A `forward(*args)` names nothing to check: `shapes` stay in their order."""
    parameters = [
        p for p in inspect.signature(model.forward).parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)
    ]  # fmt: skip
    if any(p.kind == p.VAR_POSITIONAL for p in parameters):
        return shapes
    names = [p.name for p in parameters]
    given = {}
    for entry in shapes:
        name = entry[0]
        if name not in names:
            known = ", ".join(f"'{n}'" for n in names) or "none"
            raise UsageError(
                f"--example-shapes names '{name}', which is not a parameter of forward{did_you_mean(name, names)} "
                f"(forward's parameters: {known})"
            )
        if name in given:
            raise UsageError(f"--example-shapes gives '{name}' twice")
        given[name] = entry
    last = max(names.index(name) for name in given) if given else -1
    for p in parameters:
        if p.name not in given and (p.default is p.empty or names.index(p.name) < last):
            why = "has no default" if p.default is p.empty else "comes before a parameter given (inputs are passed in forward's order)"
            raise UsageError(f"forward's parameter '{p.name}' needs an --example-shapes entry: it {why}")
    return [given[name] for name in names if name in given]


def _dynamic(specs: list[str], shapes: list[tuple[str, list[int], str]]) -> dict[str, dict[int, object]] | None:
    if not specs:
        return None
    from torch.export import Dim

    dims = {name: shape for name, shape, _ in shapes}
    dynamic: dict[str, dict[int, object]] = {name: {} for name in dims}
    for spec in specs:
        name, _, axes = spec.partition("=")
        if name not in dynamic:
            raise UsageError(f"--dynamic names '{name}', which is not in --example-shapes{did_you_mean(name, dims)}")
        try:
            numbers = [int(axis) for axis in axes.split(",")]
        except ValueError:
            raise UsageError(f"bad --dynamic entry '{spec}' (expected NAME=AXIS[,AXIS])") from None
        for axis in numbers:
            if not 0 <= axis < len(dims[name]):
                raise UsageError(f"--dynamic {spec}: '{name}' has no dim {axis} (its example shape has rank {len(dims[name])})")
            if dims[name][axis] < 2:
                raise UsageError(
                    f"--dynamic {spec}: the example size of dim {axis} of '{name}' is {dims[name][axis]}, and "
                    "torch.export specialises sizes 0 and 1 to constants; give it an example size of 2 or more"
                )
            dynamic[name][axis] = Dim(f"{name}_{axis}")
    return dynamic


def _factory(target: str):
    module_name, _, attribute = target.partition(":")
    if not module_name or not attribute:
        raise UsageError(f"expected MODULE:FACTORY, got '{target}'")
    try:
        module = importlib.import_module(module_name)
    except ImportError as e:
        raise UsageError(f"cannot import '{module_name}': {e}") from None
    try:
        return getattr(module, attribute)
    except AttributeError:
        raise UsageError(f"'{module_name}' has no '{attribute}'") from None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="rlx-import-torch", description="Import a PyTorch model as a MIR module.")
    parser.add_argument("target", metavar="MODULE:FACTORY", help="a function returning the nn.Module")
    parser.add_argument(
        "--example-shapes",
        nargs="+",
        default=[],
        metavar="NAME=DxD[:DTYPE]",
        help="the example inputs, by the names of forward's parameters (passed in forward's order; one "
        "left out must have a default), e.g. x=2x16 or ids=1x8:i64; DTYPE is one of "
        f"{', '.join(_DTYPES)} (default f32; random values, integers from 0-9)",
    )
    parser.add_argument(
        "--dynamic",
        nargs="+",
        default=[],
        metavar="NAME=AXIS[,AXIS]",
        help="mark dims of an --example-shapes input dynamic ('?' in the IR), e.g. x=0 for a dynamic "
        "batch; their example sizes must be 2 or more (torch.export specialises sizes 0 and 1)",
    )
    parser.add_argument("-o", "--output-file", metavar="FILE", help="write to FILE (atomically; untouched on failure)")
    parser.add_argument(
        "--weights",
        metavar="FILE",
        help="also write the parameters and buffers, by their rlx.name, to FILE (.safetensors, "
        "which needs the safetensors package, or .npz), for rlx-run --params",
    )
    parser.add_argument("--no-locations", action="store_true", help="leave out the ops' source locations")
    parser.add_argument(
        "--hir",
        action="store_true",
        help="hand-written SwiGLU, RMSNorm and RoPE as HIR blocks (hir.swiglu, hir.residual_rms_norm, ...)",
    )
    args = parser.parse_args(argv)
    try:
        import torch

        from rlx_xdsl.importers.torch import import_module
        from rlx_xdsl.ir.printer import print_ir

        shapes = _shapes(args.example_shapes)
        dynamic = _dynamic(args.dynamic, shapes)
        model = _factory(args.target)()
        if not isinstance(model, torch.nn.Module):
            raise UsageError(f"'{args.target}' returned a {type(model).__name__}, not an nn.Module")
        shapes = _in_forward_order(model, shapes)
        model.eval()
        generator = torch.Generator().manual_seed(0)
        examples = tuple(_example(shape, dtype, generator) for _, shape, dtype in shapes)
        dynamic_shapes = [dynamic[name] for name, _, _ in shapes] if dynamic else None
        module = import_module(model, examples, dynamic_shapes=dynamic_shapes, weights=args.weights, hir=args.hir)
        text = print_ir(module, print_debuginfo=not args.no_locations) + "\n"
    except (UsageError, ImportFailure, WeightsError) as e:
        print(f"rlx-import-torch: error: {e}", file=sys.stderr)
        return 1
    from rlx_xdsl.tools.rlx_opt import print_or_write

    return print_or_write("rlx-import-torch", args.output_file, text)


def _example(shape: list[int], dtype: str, generator):
    import torch

    torch_dtype = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16, "f64": torch.float64}
    if dtype in torch_dtype:
        return torch.randn(shape, generator=generator).to(torch_dtype[dtype])
    return torch.randint(0, 10, shape, generator=generator, dtype=torch.int64 if dtype == "i64" else torch.int32)


if __name__ == "__main__":
    sys.exit(main())
