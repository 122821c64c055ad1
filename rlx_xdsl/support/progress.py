"""Progress of long work (an IREE compile, a PyTorch import) on stderr, for a person watching.

Shown only when stderr is a terminal and the optional `rich` package is installed (the
`iree` and `torch` extras bring it); otherwise nothing is printed, so pipes, files, logs
and tests see exactly the output they saw before. The display is transient: it is erased
when the work ends.

* `status("compiling @f for IREE cpu")`: a spinner, the message and the elapsed time,
  around one blocking call;
* `track(items, "translating", total)`: a bar over an iteration, with its count and time.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import IO, Any, TypeVar

T = TypeVar("T")

_showing = False
"""Whether a display is up: a nested `status`/`track` shows nothing (one live display at a time)."""


def _progress(stream: IO[str] | None, counted: bool) -> Any:
    """A transient `rich.progress.Progress` on `stream` (stderr), with a count of items done
    when `counted`; None when `stream` is not a terminal or `rich` is not installed."""
    stream = sys.stderr if stream is None else stream
    if _showing:
        return None
    try:
        if not stream.isatty():
            return None
    except (AttributeError, ValueError):  # a closed or file-like stream without a terminal
        return None
    try:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
    except ImportError:
        return None
    columns = [SpinnerColumn(), TextColumn("{task.description}"), BarColumn()]
    if counted:
        columns.append(MofNCompleteColumn())
    return Progress(*columns, TimeElapsedColumn(), console=Console(file=stream), transient=True)


@contextmanager
def status(message: str, stream: IO[str] | None = None) -> Iterator[None]:
    """Show `message` with a spinner and the elapsed time while the block runs (an
    indeterminate bar: one blocking call gives no fraction done)."""
    progress = _progress(stream, counted=False)
    if progress is None:
        yield
        return
    with _shown(progress):
        progress.add_task(message, total=None)
        yield


def track(items: Iterable[T], description: str, total: int | None = None, stream: IO[str] | None = None) -> Iterator[T]:
    """`items`, showing `description` with a bar of how many have been taken (of `total`)."""
    progress = _progress(stream, counted=True)
    if progress is None:
        yield from items
        return
    with _shown(progress):
        yield from progress.track(items, total=total, description=description)


@contextmanager
def _shown(progress: Any) -> Iterator[None]:
    global _showing
    _showing = True
    try:
        with progress:
            yield
    finally:
        _showing = False
