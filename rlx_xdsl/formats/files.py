"""Writing output files as `mlir-opt -o` does, for every file a tool writes (`-o`, weight
files, crash reproducers, IR dumps, reports).

A regular file, or one that does not exist yet, is replaced atomically (a temporary file in
its directory, then a rename): readers never see a partial file and a failure leaves the old
one as it was. Symlinks are followed (the link stays, its target is replaced). Anything else
(a device such as /dev/null, a FIFO, a socket) is written in place, never replaced, and a
name of one of the process's own descriptors (`/dev/stdout`, `/dev/fd/N`, `/proc/self/fd/N`)
is written through that descriptor, as a shell does. Every failure is an `OutputError` whose
message names the path the user gave.
"""

from __future__ import annotations

import os
import re
import stat
import tempfile


class OutputError(Exception):
    """A file could not be written (or its directory created); the message says which and why."""


def write_output(path: str, text: str | bytes) -> None:
    """Write `text` (or raw bytes: a weight file) to `path`: `-o`, reproducers, dumps.

    Symlinks are followed. A regular file, or one that does not exist yet, is
    replaced atomically (`write_atomically`). Anything else (a device such as
    /dev/null, a FIFO, a socket) is written in place: renaming a file over it
    would replace the device for the whole machine. A name of one of the tool's
    open descriptors (`/dev/stdout`, `/dev/fd/N`, `/proc/self/fd/N`) is written
    through that descriptor, as a shell does: into its pipe, or its file at its
    offset (`>>` appends).
    """
    descriptor = _own_descriptor(path)
    if descriptor is not None:
        _write_in_place(descriptor, text, path)
        return
    target = os.path.realpath(path)
    try:
        mode = os.stat(target).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as e:
        raise OutputError(f"cannot write '{path}': {e.strerror}") from e
    if mode is None or stat.S_ISREG(mode):
        write_atomically(target, text, shown=path)
    else:
        _write_in_place(target, text, path)


def _write_in_place(target: str | int, text: str | bytes, shown: str) -> None:
    """Write `text` into `target`: a path (a device, a FIFO), or one of the tool's
    descriptors (through a duplicate, so that the descriptor itself stays open)."""
    try:
        with open(os.dup(target) if isinstance(target, int) else target, "wb") as f:
            f.write(_encoded(text))
    except OSError as e:
        raise OutputError(f"cannot write '{shown}': {e.strerror}") from e


_STANDARD_STREAMS = {"/dev/stdout": 1, "/dev/stderr": 2}
_DESCRIPTOR = re.compile(r"(?:/dev|/proc/(self|thread-self|\d+))/fd/(\d+)")


def _own_descriptor(path: str) -> int | None:
    """The descriptor `path` names, if it or a symlink on its way names one of ours
    (`/dev/stdout`, `/dev/fd/1`, `/proc/self/fd/1`, `/proc/PID/fd/1`). Such a name links
    to "pipe:[...]" or to the file the shell opened: only the descriptor reaches it."""
    for _ in range(40):  # the kernel's limit on symlink hops
        path = os.path.abspath(path)
        if path in _STANDARD_STREAMS:
            return _STANDARD_STREAMS[path]
        match = _DESCRIPTOR.fullmatch(path)
        if match is not None and match.group(1) in (None, "self", "thread-self", str(os.getpid())):
            return int(match.group(2))
        if not os.path.islink(path):
            return None
        path = os.path.join(os.path.dirname(path), os.readlink(path))
    return None


def _encoded(text: str | bytes) -> bytes:
    return text if isinstance(text, bytes) else text.encode("utf-8")


def write_atomically(path: str, text: str | bytes, shown: str | None = None) -> None:
    """Replace the regular file `path` with `text` all at once: readers never see a
    partial file, and a failure leaves the old file as it was. Errors name `shown`
    (the path the user gave; default `path`)."""
    shown = path if shown is None else shown
    directory = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{os.path.basename(path)}.", suffix=".tmp")
    except OSError as e:
        if isinstance(e, FileNotFoundError) and os.path.isdir(directory):  # /proc/version: /proc takes no new files
            raise OutputError(f"cannot write '{shown}': cannot create a file in '{directory}'") from e
        raise OutputError(f"cannot write '{shown}': {e.strerror}") from e
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(_encoded(text))
        os.chmod(tmp, _file_mode(path))
        os.replace(tmp, path)
    except BaseException as e:
        os.unlink(tmp)
        if isinstance(e, OSError):
            raise OutputError(f"cannot write '{shown}': {e.strerror}") from e
        raise


def make_directory(path: str) -> None:
    """Create the directory `path` (and its parents) up front, or fail before any work is done."""
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as e:
        raise OutputError(f"cannot create directory '{e.filename or path}': {e.strerror}") from e
    if not os.access(path, os.W_OK | os.X_OK):
        raise OutputError(f"cannot write into directory '{path}': Permission denied")


def check_writable(path: str) -> None:
    """Fail now, before any work, if the file `path` could not be written later."""
    directory = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise OutputError(f"cannot write '{path}': Is a directory")
    if not os.path.isdir(directory):
        raise OutputError(f"cannot write '{path}': No such directory '{directory}'")
    if not os.access(directory, os.W_OK | os.X_OK):
        raise OutputError(f"cannot write '{path}': Permission denied")


def write_new_file(path: str, text: str) -> None:
    """Write `text` to `path` as `-o` writes (`write_output`), creating its directory."""
    make_directory(os.path.dirname(path) or ".")
    write_output(path, text)


def same_file(a: str, b: str) -> bool:
    """Whether the paths `a` and `b` name one existing file (through links, or hard links)."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _file_mode(path: str) -> int:
    """Keep an existing file's permissions; new files get the usual 0666 & ~umask."""
    try:
        return os.stat(path).st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask
