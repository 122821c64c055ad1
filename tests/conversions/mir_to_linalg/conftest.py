"""Lowered modules that the tests of the lowering check (lowering and reading them back
costs seconds, so each is built once per session; `lowered_cases` has one test, so that
under `pytest -n` only one worker builds it)."""

import pytest

from rlx_xdsl.testing.llama import build_llama
from rlx_xdsl.testing.lowering import lowered
from rlx_xdsl.testing.op_cases import cases_module, lowerable_cases


@pytest.fixture(scope="session")
def lowered_cases():
    """Every primitive op's cases, lowered (do not modify)."""
    return lowered(cases_module(lowerable_cases()))


@pytest.fixture(scope="session")
def lowered_llama():
    """The one-layer LLaMA graph, lowered (do not modify)."""
    return lowered(build_llama(1))
