"""A store of files a long-running program keeps and rewrites (the workbench's data folder): a
file replaced whole, a folder that appears whole under its final name, private scratch space, and
the log a child process writes.

The release files themselves still go through :class:`veil.output.OutputSet`; this module holds
the few operations a server needs around them, so that no module outside ``veil.output`` writes
a file (``tests/test_one_writer.py``).
"""
from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from veil.output.durable import sync_folder


def replace_file(path: str | os.PathLike, data: str | bytes) -> None:
    """Write ``path`` whole or not at all: a temporary file in the same folder, flushed to disk,
    then renamed over ``path`` (made if missing, with its folder). Text is written as UTF-8."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    content = data.encode("utf-8") if isinstance(data, str) else data
    fd, scratch = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(content)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(scratch, path)
    except BaseException:
        Path(scratch).unlink(missing_ok=True)
        raise
    sync_folder(path.parent)


def scratch_folder(parent: str | os.PathLike, prefix: str) -> Path:
    """A new empty folder in ``parent`` that only this process uses (its name starts with
    ``prefix`` and is unique), to fill before :func:`move_folder` gives it its final name."""
    return Path(tempfile.mkdtemp(dir=parent, prefix=prefix))


def move_folder(source: str | os.PathLike, target: str | os.PathLike) -> None:
    """Give the finished folder ``source`` its final name ``target`` in one rename (on the same file
    system), so that ``target`` appears whole; the rename is made durable.

    Raises:
        FileExistsError: ``target`` exists (a folder is never merged into or replaced).
    """
    source, target = Path(source), Path(target)
    if target.exists() or target.is_symlink():
        raise FileExistsError(f"{target} exists")
    os.rename(source, target)
    sync_folder(target.parent)


def replace_with(source: str | os.PathLike, target: str | os.PathLike) -> None:
    """Rename the finished file ``source`` over ``target`` (both in one folder): ``target`` is the
    old file or the new one, never a part of either."""
    os.replace(source, target)
    sync_folder(Path(target).parent)


@contextlib.contextmanager
def scratch_copy(data: bytes, name: str) -> Iterator[Path]:
    """``data`` as a file called ``name`` in a private temporary folder, for a reader that takes a
    path (removed with the folder on leaving the block)."""
    with tempfile.TemporaryDirectory(prefix="veil-scratch-") as folder:
        path = Path(folder) / name
        with open(path, "wb") as handle:
            handle.write(data)
        yield path


def log_file(path: str | os.PathLike) -> BinaryIO:
    """``path`` opened (new, or emptied) for a child process to write its output into."""
    return open(path, "wb")  # noqa: SIM115 - the caller hands the handle to the child and closes it
