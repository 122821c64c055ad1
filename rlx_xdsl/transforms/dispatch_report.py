"""The dispatch report (RLX's `KernelDispatchReport`): how each op kind of a graph reaches a
backend with a given supported set, and whether the graph is ready to compile.

Per op kind of the input: its count and its path,

* `native`: the backend supports it;
* `common IR`: a logical kernel (`lower_logical_kernels.LOGICAL_KERNELS`) lowered to
  primitive MIR for the backend;
* `rewritten`: another rule of `rlx-legalize` replaces it by supported ops;
* `unsupported`: no rule removes it. A kind that only the rules produce and that
  stays unsupported (layer_norm_2d's layer_norm on a primitive target) gets a row
  with count 0.

The analysis legalizes a copy of the graph; the graph itself is untouched.
`rlx-opt --dispatch-report[=json]` prints it for the supported set of the pipeline's
last `rlx-legalize`, else of its last `rlx-fusion-pipeline`'s target (the kernels
declared in `fusion/pipeline.py`), else of the `primitive` target.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from typing import Any

from xdsl.dialects.builtin import ModuleOp

from rlx_xdsl.transforms.legalize import is_unsupported, rewrite_unsupported
from rlx_xdsl.transforms.lower_logical_kernels import LOGICAL_KERNELS

NATIVE, COMMON_IR, REWRITTEN, UNSUPPORTED = "native", "common IR", "rewritten", "unsupported"


@dataclass(frozen=True)
class DispatchReport:
    rows: tuple[tuple[str, int, str], ...]
    """`(op kind, count, path)`, by kind name."""

    @staticmethod
    def analyze(module: ModuleOp, supported: frozenset[str]) -> DispatchReport:
        counts = Counter(op.name for op in module.walk() if op.name.startswith("mir."))
        copy = module.clone()
        _, left = rewrite_unsupported(copy, supported)
        stuck = {op.name for op in left}
        logical = {op.name for op in LOGICAL_KERNELS}
        rows = []
        for kind, count in sorted(counts.items()):
            if kind in stuck:
                path = UNSUPPORTED
            elif not any(is_unsupported(op, supported) for op in module.walk() if op.name == kind):
                path = NATIVE
            else:
                path = COMMON_IR if kind in logical else REWRITTEN
            rows.append((kind, count, path))
        rows += [(kind, 0, UNSUPPORTED) for kind in sorted(stuck - set(counts))]
        return DispatchReport(tuple(rows))

    @property
    def compile_ready(self) -> bool:
        return all(path != UNSUPPORTED for _, _, path in self.rows)

    def to_json(self) -> dict[str, Any]:
        return {
            "ops": [{"op": kind, "count": count, "path": path} for kind, count, path in self.rows],
            "compile_ready": self.compile_ready,
        }

    def __str__(self) -> str:
        width = max((len(kind) for kind, _, _ in self.rows), default=2)
        lines = ["dispatch report:"]
        lines += [f"  {kind:<{width}}  {count:>4}  {path}" for kind, count, path in self.rows]
        lines.append(f"compile-ready: {'yes' if self.compile_ready else 'no'}")
        return "\n".join(lines) + "\n"

    def render(self, form: str = "text") -> str:
        return json.dumps(self.to_json(), indent=2) + "\n" if form == "json" else str(self)

