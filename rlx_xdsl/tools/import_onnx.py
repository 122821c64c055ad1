"""`rlx-import-onnx FILE.onnx [-o OUT.mlir]`: an ONNX model as MIR text.

Each op is printed with its location, `loc("node name")` (`--no-locations` leaves them
out), so diagnostics of later tools name the ONNX node. A model that cannot be imported
(unreadable or corrupt file, unsupported op or opset) is one line
`FILE: error: <where>: <message>` and exit status 1; `-o` is written atomically, as
`rlx-opt` writes it, so a failed import leaves no file. `--weights FILE` (`.safetensors` or
`.npz`) writes the parameters' values (the initializers) for `rlx-run --params`.
"""

from __future__ import annotations

import argparse
import sys

from rlx_xdsl.formats.weights import WeightsError
from rlx_xdsl.importers.errors import ImportFailure


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="rlx-import-onnx", description="Import an ONNX model as a MIR module.")
    parser.add_argument("model", metavar="FILE.onnx", help="the ONNX model")
    parser.add_argument("-o", "--output-file", metavar="FILE", help="write to FILE (atomically; untouched on failure)")
    parser.add_argument("--function", default="main", help="the name of the imported function (default: main)")
    parser.add_argument(
        "--weights",
        metavar="FILE",
        help="also write the parameters' values (the initializers), by their rlx.name, to FILE "
        "(.safetensors, which needs the safetensors package, or .npz), for rlx-run --params",
    )
    parser.add_argument(
        "--no-locations",
        action="store_true",
        help="leave out the ops' locations (by default each op's is its node's name)",
    )
    args = parser.parse_args(argv)
    try:
        from rlx_xdsl.importers.onnx import import_model
        from rlx_xdsl.ir.printer import print_ir

        module = import_model(args.model, args.function, weights=args.weights)
        text = print_ir(module, print_debuginfo=not args.no_locations) + "\n"
    except ImportError as e:
        print(f"{args.model}: error: the ONNX importer needs the 'onnx' package ({e.name} is missing)", file=sys.stderr)
        return 1
    except ImportFailure as e:
        print(f"{args.model}: error: {e}", file=sys.stderr)
        return 1
    except WeightsError as e:
        print(f"rlx-import-onnx: error: {e}", file=sys.stderr)
        return 1
    from rlx_xdsl.tools.rlx_opt import print_or_write

    return print_or_write("rlx-import-onnx", args.output_file, text)


if __name__ == "__main__":
    sys.exit(main())
