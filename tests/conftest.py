"""Hypothesis profiles.

`ci` (the default) derandomizes every property test: each run checks the same examples, so
a red run is reproducible and a green one does not hide a failure that the next run might
draw. `explore` draws fresh examples, for hunting bugs locally:
`pytest --hypothesis-profile=explore tests/autodiff` (add `--hypothesis-seed=N` to replay one).

XLA's flags are set here, before anything imports jax (they are read once, when jax starts):
four host "devices", so sharded runs are tested on CPU, and none of XLA's expensive
CPU passes or fusion emitters, which tiny test graphs gain nothing from (the fusion emitters
alone doubled the compile time of tests/conversions/test_mir_to_jax.py). Flags already in the
environment win; tool subprocesses inherit these.
"""

import os

import pytest
from hypothesis import settings
from hypothesis.vendor.pretty import for_type_by_name

from rlx_xdsl.importers.torch import vision

TEST_XLA_FLAGS = {
    "--xla_force_host_platform_device_count": "4",
    "--xla_backend_optimization_level": "0",
    "--xla_llvm_disable_expensive_passes": "true",
    "--xla_cpu_use_fusion_emitters": "false",
}


def _with_test_xla_flags(flags: str) -> str:
    """`flags` plus each test flag it does not set already."""
    given = {flag.split("=", 1)[0] for flag in flags.split()}
    extra = [f"{name}={value}" for name, value in TEST_XLA_FLAGS.items() if name not in given]
    return " ".join([flags, *extra]).strip()


os.environ["XLA_FLAGS"] = _with_test_xla_flags(os.environ.get("XLA_FLAGS", ""))

settings.register_profile("ci", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile("ci")

# PyPI's torchvision, where installed, must be prepared before anything imports
# `transformers` (which imports torchvision): importing the torch importer (above) does it,
# see `rlx_xdsl/importers/torch/vision.py`.
vision.prepare()


def _print_module(module, printer, cycle) -> None:
    """A failing example's module as IR text: Hypothesis's default repr of an xDSL module
    walks every object field by field and takes minutes on a ten-op graph."""
    printer.text(str(module))


for_type_by_name("xdsl.dialects.builtin", "ModuleOp", _print_module)


@pytest.fixture(scope="session")
def iree_op_cases(tmp_path_factory):
    """Every lowerable case of `testing/op_cases.py` compiled for IREE CPU once per test run:
    `{case name: (module, IreeModule)}`, in two modules. Shared by
    tests/conversions/mir_to_linalg/test_ops_on_iree.py and tests/backends/test_differential.py.

    pytest-xdist workers share the compiled modules through IREE's module cache
    (`RLX_IREE_CACHE_DIR`) in the run's common temporary directory: each half is compiled under
    a file lock by the first worker to take it (worker K starts with half K % 2, so two workers
    compile one half each, side by side) and read from the cache by the other."""
    pytest.importorskip("iree.compiler")
    from filelock import FileLock

    from rlx_xdsl.backends.iree import IreeModule
    from rlx_xdsl.testing.op_cases import cases_module, lowerable_cases

    worker = os.environ.get("PYTEST_XDIST_WORKER")  # "gw0", "gw1", ...; None without xdist
    shared = tmp_path_factory.getbasetemp()
    shared = shared.parent if worker else shared  # under xdist: the run's directory, not the worker's
    cases = lowerable_cases()
    halves = [cases[::2], cases[1::2]]
    modules = [cases_module(half) for half in halves]
    first = int(worker[2:]) % 2 if worker else 0
    binaries = [None, None]
    previous = os.environ.get("RLX_IREE_CACHE_DIR")
    os.environ["RLX_IREE_CACHE_DIR"] = str(shared / "iree-op-cases")
    try:
        for k in (first, 1 - first):
            with FileLock(shared / f"iree-op-cases-{k}.lock"):
                binaries[k] = IreeModule.compile_all([modules[k]])[0]
    finally:
        if previous is None:
            del os.environ["RLX_IREE_CACHE_DIR"]
        else:
            os.environ["RLX_IREE_CACHE_DIR"] = previous
    return {c.name: (m, b) for half, m, b in zip(halves, modules, binaries) for c in half}
