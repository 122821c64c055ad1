"""Every lowered module goes down to the LLVM dialect with upstream MLIR's standard passes.

Each lit test of `rlx-convert-mir-to-linalg`, the module of every primitive op's cases,
the LLaMA graph and random graphs are lowered (`rlx_xdsl.testing.lowering.lowered`, which also reads
the text back) and run through `mlir-opt` 22 with its default one-shot bufferization
(function boundaries included), linalg to loops, and the conversions to LLVM. One-shot
bufferization with defaults rejects a loop whose yielded tensor is not written into its
iter_arg; the result must be LLVM dialect only.

`mlir-opt` comes from Debian's `mlir-22-tools` (`.ci/run` installs it). Under CI
(`CI=true`) a missing tool fails these tests; elsewhere they are skipped, saying why.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import ModuleOp

from rlx_xdsl.context import make_context
from rlx_xdsl.ir.printer import print_ir
from rlx_xdsl.ir.source import SPLIT_MARKER, parse_source, split_chunks
from rlx_xdsl.testing.lowering import graph_text, lowered, merged

LIT_DIR = Path(__file__).parents[3] / "lit_tests" / "conversions" / "mir-to-linalg"
LOWERING_RUN = re.compile(r"^// RUN: rlx-opt %s .*-p rlx-convert-mir-to-linalg( --verify-roundtrip)? \|", re.MULTILINE)
LIT_FILES = sorted(p for p in LIT_DIR.glob("*.mlir") if LOWERING_RUN.search(p.read_text()))

PIPELINE = (
    "--one-shot-bufferize=bufferize-function-boundaries",  # upstream defaults otherwise
    "--convert-linalg-to-loops",
    "--expand-strided-metadata",  # memref.subview & co. into offsets (affine.apply) ...
    "--lower-affine",  # ... which become arith
    "--convert-scf-to-cf",
    "--convert-complex-to-standard",  # complex.div, abs & co. into arith/math on the parts
    "--convert-math-to-llvm",
    "--convert-math-to-libm",  # what LLVM has no intrinsic for (erf): libm calls
    "--finalize-memref-to-llvm",
    "--convert-arith-to-llvm",
    "--convert-complex-to-llvm",  # complex.create, re, im, add, sub, constant
    "--convert-func-to-llvm",
    "--convert-cf-to-llvm",
    "--reconcile-unrealized-casts",
)
"""Upstream's way from tensors to the LLVM dialect (as in MLIR's bufferization and
LLVM-lowering tests), with one-shot bufferization's default options."""

GENERIC_OP = re.compile(r'"([a-z_]+\.[a-z_.0-9]+)"\(')


def mlir_opt() -> str:
    """The path of `mlir-opt` 22; fails under CI, skips elsewhere, when it is missing."""
    found = shutil.which("mlir-opt-22") or shutil.which("/usr/lib/llvm-22/bin/mlir-opt")
    if found is None:
        message = "mlir-opt 22 not found (apt-get install mlir-22-tools; .ci/run does)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return found


def to_llvm(modules: list[ModuleOp], name: str) -> None:
    """Run `PIPELINE` on the modules' text; it must succeed and leave LLVM dialect only."""
    tool = mlir_opt()
    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder) / name
        source.write_text(f"\n{SPLIT_MARKER}\n".join(print_ir(m) for m in modules))
        run = subprocess.run(
            [tool, "--split-input-file", *PIPELINE, "--mlir-print-op-generic", str(source)],
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert run.returncode == 0, f"mlir-opt rejected the lowered {name}:\n{run.stderr[:4000]}"
    left = Counter(n for n in GENERIC_OP.findall(run.stdout) if not n.startswith("llvm."))
    del left["builtin.module"]
    assert not left, f"not lowered to LLVM: {dict(left)}"


def lowered_chunks(path: Path) -> list[ModuleOp]:
    """The modules of a lit file (split at `// -----`), lowered."""
    ctx = make_context()
    return [
        lowered(parse_source(ctx, text, str(path), line_offset=offset)[0])
        for text, offset in split_chunks(path.read_text())
    ]


@pytest.mark.parametrize("path", LIT_FILES, ids=[p.stem for p in LIT_FILES])
def test_a_lowered_lit_file_goes_down_to_llvm(path):
    to_llvm(lowered_chunks(path), path.name)


UPSTREAM = {"builtin", "func", "arith", "math", "complex", "tensor", "linalg", "scf"}


def test_every_op_case_is_upstream_mlir_that_verifies_and_goes_down_to_llvm(lowered_cases):
    """The only test of `lowered_cases` (lowering and reading back every case costs about
    10 s), so under `pytest -n` one worker builds it, not each; the first checks need no
    `mlir-opt`, so they run (and can fail) where it is missing."""
    foreign = sorted({op.name for op in lowered_cases.walk() if op.name.split(".")[0] not in UPSTREAM})
    assert foreign == []
    lowered_cases.verify()
    to_llvm([lowered_cases], "op-cases.mlir")


def test_the_llama_graph_goes_down_to_llvm(lowered_llama):
    to_llvm([lowered_llama], "llama.mlir")


@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(graph_text(), min_size=4, max_size=4))
def test_random_graphs_go_down_to_llvm(texts):
    """Random graphs (four a module, as `mlir-opt` costs a start-up per call)."""
    to_llvm([lowered(merged(texts))], "random-graphs.mlir")


def test_the_lit_files_are_found():
    """A renamed RUN line must not silently empty the parametrization."""
    assert {"structured.mlir", "regions.mlir", "contraction.mlir"} <= {p.name for p in LIT_FILES}


def test_a_missing_mlir_opt_fails_under_ci_and_skips_elsewhere(monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda _: None)
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="mlir-22-tools"):
        mlir_opt()
    monkeypatch.delenv("CI")
    with pytest.raises(pytest.skip.Exception, match="mlir-22-tools"):
        mlir_opt()
