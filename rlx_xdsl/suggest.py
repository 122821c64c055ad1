""""Did you mean" suggestions for misspelt names (passes, ops, options)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """`; did you mean 'x'?` for the known name closest to `name`, or '' when none is close."""
    matches = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    return f"; did you mean '{matches[0]}'?" if matches else ""
