"""Console entry points: the collector's pace is set before the tool is imported.

Importing xDSL, the dialects and the passes allocates a great many long-lived objects
(classes, op definitions, parsed assembly formats). At CPython's default pace the
young generation is collected every 700 allocations and the survivors are scanned
again as they age: a few percent of a short `rlx-opt` run, all of it spent finding no
garbage. The entry point slows the pace first (`collector.YOUNG`); `tool_run_pace`
then freezes what the imports built for the run itself. Importing
`rlx_xdsl.tools.rlx_opt` in-process (tests, embedding) changes nothing.
"""

from __future__ import annotations

import gc

from rlx_xdsl.tools.collector import OLDER, YOUNG


def rlx_opt() -> None:
    """`rlx-opt`: `rlx_xdsl.tools.rlx_opt.main`, imported at a compiler's pace."""
    gc.set_threshold(YOUNG, OLDER, OLDER)
    from rlx_xdsl.tools.rlx_opt import main

    main()
