"""The supported-op coverage tables of `docs/importers.md`, generated from the importers' tables.

    python -m rlx_xdsl.importers.coverage --write    # rewrite the tables in docs/importers.md
    python -m rlx_xdsl.importers.coverage --check    # exit 1 if they are stale

Ops are grouped by the family module that registers their rule, so the table is the table.
"""

from __future__ import annotations

import argparse
import collections
import sys
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "importers.md"
BEGIN = "<!-- coverage: begin (generated; python -m rlx_xdsl.importers.coverage --write) -->"
END = "<!-- coverage: end -->"


def _table(title: str, rules: dict, spell) -> list[str]:
    families: dict[str, list[str]] = collections.defaultdict(list)
    for key, rule in rules.items():
        families[rule.__module__.rsplit(".", 1)[1]].append(spell(key))
    lines = [f"### {title}", "", "| family | ops |", "|---|---|"]
    for family in sorted(families):
        lines.append(f"| {family} | {', '.join(f'`{op}`' for op in sorted(families[family]))} |")
    return [*lines, ""]


def render() -> str:
    from rlx_xdsl.importers.onnx.translator import ONNX_OPS
    from rlx_xdsl.importers.torch.translator import ATEN

    lines = _table(f"Core ATen ({len(ATEN)} overloads)", ATEN, lambda op: str(op).removeprefix("aten."))
    lines += _table(f"ONNX ({len(ONNX_OPS)} op types, and `Constant`)", ONNX_OPS, str)
    return "\n".join(lines)


def rewritten(text: str) -> str:
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{BEGIN}\n\n{render()}\n{END}{tail}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--write", action="store_true")
    mode.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    text = DOC.read_text(encoding="utf-8")
    new = rewritten(text)
    if args.write:
        DOC.write_text(new, encoding="utf-8")
    elif args.check:
        if new != text:
            print(f"{DOC.name} is stale: run python -m rlx_xdsl.importers.coverage --write", file=sys.stderr)
            return 1
    else:
        sys.stdout.write(render())
    return 0


if __name__ == "__main__":
    sys.exit(main())
