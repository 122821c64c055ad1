"""Progress on stderr: shown on a terminal (a pseudo-terminal here), nothing otherwise."""

from __future__ import annotations

import os
import sys

import pytest

from rlx_xdsl.support.progress import status, track

pytest.importorskip("rich")


@pytest.fixture
def terminal(monkeypatch):
    """A function making stderr a pseudo-terminal (in the test's call phase: pytest's capture
    sets sys.stderr again after fixtures) and returning what was written to it so far."""
    master, slave = os.openpty()
    stream = os.fdopen(slave, "w")

    def written() -> str:
        if sys.stderr is not stream:
            monkeypatch.setattr(sys, "stderr", stream)
        stream.flush()
        os.set_blocking(master, False)
        chunks = []
        while True:
            try:
                chunk = os.read(master, 1 << 16)
            except BlockingIOError:
                break
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks).decode(errors="replace")

    yield written
    stream.close()
    os.close(master)


def test_nothing_is_printed_when_stderr_is_not_a_terminal(capsys):
    with status("iree-compile: @f for cpu"):
        pass
    assert list(track([1, 2, 3], "translating", total=3)) == [1, 2, 3]
    assert capsys.readouterr() == ("", "")


def test_a_terminal_sees_the_work_and_its_progress(terminal):
    terminal()  # from here on, stderr is the terminal
    with status("iree-compile: @f for cpu"):
        pass
    assert "iree-compile: @f for cpu" in terminal()
    assert list(track([1, 2, 3], "translating", total=3)) == [1, 2, 3]
    assert "3/3" in terminal()


def test_nested_progress_shows_only_the_outer_one(terminal):
    terminal()  # from here on, stderr is the terminal
    with status("outer"):
        assert list(track([1], "inner", total=1)) == [1]
    text = terminal()
    assert "outer" in text and "inner" not in text


def test_an_iree_compile_says_what_it_compiles(terminal, monkeypatch):
    """The compile itself is stubbed out (it takes seconds): the status is around it."""
    terminal()  # from here on, stderr is the terminal
    from rlx_xdsl.backends import iree
    from rlx_xdsl.building.builder import GraphBuilder

    seen = []
    monkeypatch.setattr(iree, "compile_text", lambda text, device: seen.append(terminal()) or b"")
    monkeypatch.setattr(iree.IreeModule, "_load", lambda self, vmfb: None)
    b = GraphBuilder("progress_probe")
    b.output(b.neg(b.input("x", [3])))
    iree.IreeModule(b.module(), "cpu")
    assert "iree-compile: @progress_probe for cpu" in seen[0]
