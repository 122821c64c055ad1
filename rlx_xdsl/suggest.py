""""Did you mean ...?" for a misspelt name (a pass, an op, an option, an argument)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def closest(name: str, candidates: Iterable[str]) -> str | None:
    """The candidate most like `name` (difflib's ratio of at least 0.6), if any."""
    matches = difflib.get_close_matches(name, list(candidates), n=1)
    return matches[0] if matches else None


def did_you_mean(name: str, candidates: Iterable[str]) -> str:
    """`"; did you mean 'rlx-dce'?"` for the closest candidate, or `""`: a suffix for
    the message that rejects `name`."""
    match = closest(name, candidates)
    return f"; did you mean '{match}'?" if match is not None else ""
