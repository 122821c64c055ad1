"""ONNX's node tests for SoftmaxCrossEntropyLoss, LogSoftmax and Softmax, run through MIR.

    python -m rlx_xdsl.testing.onnx_conformance            # print the report
    python -m rlx_xdsl.testing.onnx_conformance --write    # (re)write docs/conformance.md
    python -m rlx_xdsl.testing.onnx_conformance --check    # exit 1 if the file is stale

Each case (inputs, expected outputs, tolerances; from the installed `onnx`
package) is mapped op by op to a MIR function, run on the reference interpreter
as it is (our kernels), then again after `rlx-lower-softmax-cross-entropy` (our
lowered graph), and compared with ONNX's expected outputs at the case's
tolerances. An `_expanded` twin holds the same test as ONNX's own decomposition;
it is mapped from its base case's node, so both run the same MIR.

The mapping:

* `SoftmaxCrossEntropyLoss` over `[N, C, d...]` scores: the class axis moves last
  and the scores flatten to `[N * d...,  C]` rows (labels to `[N * d...]`), then
  `mir.softmax_cross_entropy_with_logits` (with the node's `ignore_index`) gives the
  per-row loss, reshaped back (`none`) or reduced (`sum`; `mean` divides the sum by
  the number of rows not ignored, as ONNX and PyTorch do); the `log_prob` output is
  the log-softmax of the scores over the class axis, in primitives.
* `Softmax` is `mir.softmax`; `LogSoftmax` is `x - max - log(sum(exp(x - max)))`.

Cases outside the ops' semantics (class weights, reductions other than
none/mean/sum) are reported as such, by name, with the reason.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue

from rlx_xdsl import dtypes
from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.run import run_function
from rlx_xdsl.transforms.lower_sce import LowerSoftmaxCrossEntropyPass

OP_TYPES = ("SoftmaxCrossEntropyLoss", "LogSoftmax", "Softmax")
CASE_MODULES = ("softmax_cross_entropy_loss", "logsoftmax", "softmax")
"""The modules of `onnx.backend.test.case.node` that define the cases."""
REDUCTIONS = ("none", "mean", "sum")
DOC = Path(__file__).resolve().parents[2] / "docs" / "conformance.md"


@dataclass(frozen=True)
class Result:
    name: str
    op_type: str
    outside: str | None = None
    """Why the case is outside RLX's semantics (then it is not run)."""
    kernel: str | None = None
    """The kernel run's failure, None when it matched."""
    lowered: str | None = None
    """The lowered run's failure, None when it matched."""

    @property
    def passed(self) -> bool:
        return self.outside is None and self.kernel is None and self.lowered is None


def node_cases() -> list[Any]:
    """ONNX's test cases of the three ops (their modules register them when imported)."""
    import onnx.backend.test.case.node as node_cases_package

    for module in CASE_MODULES:
        importlib.import_module(f"{node_cases_package.__name__}.{module}")
    return [c for c in node_cases_package._NodeTestCases if _op_type_of(c.name) is not None]


def _op_type_of(name: str) -> str | None:
    if name.startswith("test_sce_"):
        return "SoftmaxCrossEntropyLoss"
    if name.startswith("test_logsoftmax_"):
        return "LogSoftmax"
    if name.startswith("test_softmax_"):
        return "Softmax"
    return None


def base_name(name: str) -> str:
    """`test_x_expanded` and `test_x_expanded_ver18` are twins of `test_x`."""
    return name.split("_expanded", 1)[0]


def _attributes(node) -> dict[str, Any]:
    from onnx import helper

    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def outside_semantics(node) -> str | None:
    """Why an SCE node is outside RLX's semantics, or None."""
    attributes = _attributes(node)
    reasons = []
    if len([i for i in node.input if i]) > 2:
        reasons.append("class weights")
    reduction = attributes.get("reduction", b"mean").decode()
    if reduction not in REDUCTIONS:
        reasons.append(f"reduction={reduction}")
    return ", ".join(reasons) or None


# The mapping --------------------------------------------------------------------


def _log_softmax(b: GraphBuilder, x: SSAValue, axis: int) -> SSAValue:
    shifted = b.sub(x, b.reduce(x, kind="max", axes=[axis], keep_dim=True))
    return b.sub(shifted, b.log(b.reduce(b.exp(shifted), kind="sum", axes=[axis], keep_dim=True)))


def _sce(b: GraphBuilder, node, scores: SSAValue, labels: SSAValue) -> list[SSAValue]:
    shape = scores.type.get_shape()
    rank, classes = len(shape), shape[1]
    rows = scores
    if rank > 2:
        rows = b.transpose(rows, perm=[0, *range(2, rank), 1])
    rows = b.reshape(rows, new_shape=[-1, classes])
    ids = b.reshape(labels, new_shape=[-1])
    ignore_index = _attributes(node).get("ignore_index")
    loss = b.softmax_cross_entropy_with_logits(rows, ids, ignore_index=ignore_index)
    reduction = _attributes(node).get("reduction", b"mean").decode()
    if reduction == "none":
        loss = b.reshape(loss, new_shape=list(labels.type.get_shape()))
    elif reduction == "mean" and ignore_index is not None:
        kept = b.compare(ids, b.constant(ignore_index, ids.type.element_type), "ne")
        count = b.reduce(b.cast(kept, loss.type.element_type), kind="sum", axes=[0])
        loss = b.div(b.reduce(loss, kind="sum", axes=[0]), count)
    else:
        loss = b.reduce(loss, kind=reduction, axes=[0])
    outputs = [loss]
    if len([o for o in node.output if o]) > 1:
        outputs.append(_log_softmax(b, scores, 1))
    return outputs


def build(node, inputs: Sequence[np.ndarray]) -> ModuleOp:
    """The MIR function `@f` computing `node` on arrays shaped like `inputs`."""
    b = GraphBuilder("f")
    args = [
        b.input(f"in{i}", x.shape, dtypes.dtype_of_numpy(x.dtype).element_type) for i, x in enumerate(inputs)
    ]
    axis = _attributes(node).get("axis", -1)
    if node.op_type == "SoftmaxCrossEntropyLoss":
        outputs = _sce(b, node, args[0], args[1])
    elif node.op_type == "LogSoftmax":
        outputs = [_log_softmax(b, args[0], axis % len(inputs[0].shape))]
    else:
        outputs = [b.softmax(args[0], axis=axis)]
    b.output(*outputs)
    return b.module()


def _compare(
    got: Sequence[np.ndarray], expected: Sequence[np.ndarray], rtol: float, atol: float
) -> str | None:
    """None when every output matches, else what differs."""
    if len(got) != len(expected):
        return f"{len(got)} outputs, expected {len(expected)}"
    for index, (out, want) in enumerate(zip(got, expected)):
        if out.shape != want.shape or out.dtype != want.dtype:
            return f"output {index}: {out.dtype}{list(out.shape)}, expected {want.dtype}{list(want.shape)}"
        if not np.allclose(out, want, rtol=rtol, atol=atol):
            return f"output {index}: max abs error {np.max(np.abs(out - want)):.3g}"
    return None


def run_case(case, node) -> Result:
    """Run one case (with `node`, its base case's node) as kernels and as the lowered graph."""
    op_type = node.op_type
    reason = outside_semantics(node) if op_type == "SoftmaxCrossEntropyLoss" else None
    if reason is not None:
        return Result(case.name, op_type, outside=reason)
    failures = {"kernel": None, "lowered": None}
    for inputs, expected in case.data_sets:
        module = build(node, inputs)
        failures["kernel"] = failures["kernel"] or _compare(
            run_function(module, "f", inputs), expected, case.rtol, case.atol
        )
        LowerSoftmaxCrossEntropyPass().apply(Context(), module)
        module.verify()
        failures["lowered"] = failures["lowered"] or _compare(
            run_function(module, "f", inputs), expected, case.rtol, case.atol
        )
    return Result(case.name, op_type, **failures)


def run_all() -> list[Result]:
    cases = node_cases()
    nodes = {c.name: c.model.graph.node[0] for c in cases if "_expanded" not in c.name}
    return [run_case(c, nodes[base_name(c.name)]) for c in sorted(cases, key=lambda c: c.name)]


# The report ---------------------------------------------------------------------


def report(results: Sequence[Result]) -> str:
    """docs/conformance.md: counts per op, then every case outside RLX's semantics by name."""
    import onnx

    lines = [
        "# ONNX conformance",
        "",
        "<!-- Generated by `python -m rlx_xdsl.testing.onnx_conformance --write`; do not edit.",
        "     tests/conformance/test_onnx_conformance.py fails when this file is stale. -->",
        "",
        f"ONNX's node tests (onnx {onnx.__version__}) for the ops below, mapped op by op to MIR",
        "(`rlx_xdsl/testing/onnx_conformance.py` says how) and run on the reference interpreter:",
        "*kernels* runs the mapped function as it is, *lowered* runs it after",
        "`rlx-lower-softmax-cross-entropy`. Each case passes when every output matches ONNX's",
        "expected one at the case's tolerances. `_expanded` cases are ONNX's primitive",
        "decompositions of the same test; they run the mapping of their base case's node.",
        "",
        "Every node test through the ONNX importer (the pass rate, each failure, the uncovered",
        "ops): `docs/onnx-node-tests.md`.",
        "",
        "| op | cases | outside RLX's semantics | kernels pass | lowered pass |",
        "|---|---|---|---|---|",
    ]
    for op_type in OP_TYPES:
        mine = [r for r in results if r.op_type == op_type]
        inside = [r for r in mine if r.outside is None]
        kernels = sum(r.kernel is None for r in inside)
        lowered = sum(r.lowered is None for r in inside)
        outside = len(mine) - len(inside)
        lines.append(
            f"| {op_type} | {len(mine)} | {outside} | {kernels} / {len(inside)} | {lowered} / {len(inside)} |"
        )
    failed = [r for r in results if r.outside is None and not r.passed]
    lines += ["", "## Failures", ""]
    lines += [f"* `{r.name}`: kernels: {r.kernel or 'ok'}; lowered: {r.lowered or 'ok'}" for r in failed] or [
        "None."
    ]
    lines += [
        "",
        "## Cases outside RLX's semantics",
        "",
        "The softmax cross-entropy ops take no class weights; these cases are not run:",
        "",
    ]
    lines += [f"* `{r.name}`: {r.outside}" for r in results if r.outside is not None]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Run ONNX's SCE, LogSoftmax and Softmax node tests through MIR."
    )
    parser.add_argument("--write", action="store_true", help=f"write the report to {DOC}")
    parser.add_argument("--check", action="store_true", help="exit 1 when the written report is stale")
    parser.add_argument("--output", type=Path, default=DOC)
    args = parser.parse_args(argv)
    text = report(run_all())
    if args.check:
        if not args.output.exists() or args.output.read_text() != text:
            print(
                f"{args.output} is stale: run `python -m rlx_xdsl.testing.onnx_conformance --write`",
                file=sys.stderr,
            )
            return 1
        return 0
    if args.write:
        args.output.write_text(text)
        print(f"wrote {args.output}")
        return 0
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
