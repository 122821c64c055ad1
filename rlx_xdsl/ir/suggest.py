""""Did you mean ...?" for a misspelt name (a pass, an op, an option, an argument)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def close_matches(name: str, candidates: Iterable[str], n: int = 3) -> list[str]:
    """The `n` candidates most like `name` (difflib's ratio of at least 0.6), best first."""
    return difflib.get_close_matches(name, list(candidates), n=n)


def closest(name: str, candidates: Iterable[str]) -> str | None:
    """The candidate most like `name`, if any is close."""
    matches = close_matches(name, candidates, n=1)
    return matches[0] if matches else None


def did_you_mean(name: str, candidates: Iterable[str]) -> str:
    """`"; did you mean 'rlx-dce'?"` for the closest candidate, or `""`: a suffix for
    the message that rejects `name`."""
    return suggestion(closest(name, candidates))


def suggestion(match: str | None) -> str:
    """`"; did you mean 'match'?"`, or `""` without a match."""
    return f"; did you mean '{match}'?" if match is not None else ""
