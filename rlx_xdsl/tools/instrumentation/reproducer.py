"""Crash reproducers: `--mlir-pass-pipeline-crash-reproducer`, `--run-reproducer`.

A reproducer is the IR a failing pipeline started from, followed by MLIR's
resource trailer naming the pipeline that fails on it:

    {-#
      external_resources: {
        mlir_reproducer: {
          pipeline: "builtin.module(rlx-dce,func.func(cse))",
          disable_threading: true,
          verify_each: true
        }
      }
    #-}

`--mlir-pass-pipeline-local-reproducer` narrows it to the failing pass and the
IR that pass was given.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.passes import ModulePass

from rlx_xdsl.transforms.pipeline import ROOT_ANCHOR, AnchoredPipelinePass


def pass_text(pass_: ModulePass) -> str:
    """`pass_` spelled out with every option's value, as a pipeline accepts it back."""
    if isinstance(pass_, AnchoredPipelinePass):
        return f"{pass_.anchor}({','.join(map(pass_text, pass_.passes))})"
    return str(pass_.spec(include_default=True))


def pipeline_text(passes: Sequence[ModulePass]) -> str:
    """The `--pass-pipeline` text of `passes` (run on the root module), every option spelled out."""
    return f"{ROOT_ANCHOR}({','.join(map(pass_text, passes))})"
