"""Console entry points: set the collector's pace before the tool loads, skip tear-down.

Importing xDSL, the dialects and the passes allocates a great many long-lived objects
(classes, op definitions, parsed assembly formats). At CPython's default pace the
young generation is collected every 700 allocations and the survivors are scanned
again as they age, finding no garbage. The entry point slows the pace first
(`collector.YOUNG`); `tool_run_pace` then freezes what the imports built for the run.

When the tool has finished, the process ends at once (`os._exit`, once stdout and
stderr are flushed) instead of letting the interpreter tear down every module and
free the IR object by object: that tear-down cost about a fifth of a short
`rlx-opt` run. clang does the same (`-disable-free`). Output files are complete and
closed before the tool returns. Importing `rlx_xdsl.tools.rlx_opt` in-process
(tests, embedding) is unaffected.
"""

from __future__ import annotations

import gc
import os
import sys

from rlx_xdsl.tools.collector import OLDER, YOUNG


def rlx_opt() -> None:
    """`rlx-opt`: `rlx_xdsl.tools.rlx_opt.main`, loaded at a compiler's pace."""
    gc.set_threshold(YOUNG, OLDER, OLDER)
    from rlx_xdsl.tools.rlx_opt import main

    try:
        main()
        status = 0
    except SystemExit as e:  # main's own exit, and argparse's (--help, bad flags)
        status = exit_status(e.code)
    leave(status)


def exit_status(code: object) -> int:
    """The status Python gives `sys.exit(code)`; a message is printed to stderr, as Python does."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def leave(status: int) -> None:
    """Flush the standard streams and end the process with `status`, skipping tear-down."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (BrokenPipeError, OSError, ValueError):  # a closed reader, a closed stream
            pass
    os._exit(status)
