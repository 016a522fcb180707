"""Checking the targets of a set before any work: a target that is a folder, lies in a missing or
unwritable folder, is named twice, or is a file the run reads is refused with one sentence.

Two paths name one file when they are equal once resolved or share an inode, so that symbolic and
hard links, ``./x`` and ``x`` are all caught (:func:`same_file`).
"""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Iterable, Sequence, Union

from veil.errors import DataError, ParameterError
from veil.output.os_errors import describe_os_error

PathLike = Union[str, os.PathLike]


def folder_of(path: Path) -> Path:
    """The absolute folder of a path, its symbolic links resolved (the file itself is not)."""
    return Path(os.path.realpath(path.parent))


def same_file(a: PathLike, b: PathLike) -> bool:
    """Whether two paths name one file: equal once resolved, or the same inode (hard links)."""
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _unwritable(folder: Path) -> str | None:
    """Why a folder cannot take new files, or ``None`` when it (probably) can."""
    if os.access(folder, os.W_OK | os.X_OK):
        return None
    try:
        if os.statvfs(folder).f_flag & os.ST_RDONLY:
            return describe_os_error(OSError(errno.EROFS, ""))
    except (OSError, AttributeError):
        pass
    return describe_os_error(OSError(errno.EACCES, ""))


def _check_folder(folder: Path, make_folders: bool) -> None:
    if folder.is_dir():
        reason = _unwritable(folder)
        if reason:
            raise DataError(f"cannot write into the folder {str(folder)!r}: {reason}; choose another output path.")
        return
    if folder.exists():
        raise DataError(f"{str(folder)!r} is a file, not a folder; choose another output path.")
    if not make_folders:
        raise DataError(f"folder {str(folder)!r} does not exist; create it or choose another output path.")
    parent = folder.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        raise DataError(f"{str(parent)!r} is a file, not a folder; choose another output path.")
    reason = _unwritable(parent)
    if reason:
        raise DataError(f"cannot create the folder {str(folder)!r}: {reason}; choose another output path.")


def refuse_inputs(targets: Sequence[PathLike], reads: Iterable[PathLike | None]) -> None:
    """Refuse an output that is a file the run reads, or that is named twice.

    Raises:
        ParameterError: a target is one of ``reads`` (the same file by resolved path or inode),
            or two targets name one file.
    """
    inputs = [r for r in reads if r is not None]
    seen: list[PathLike] = []
    for target in targets:
        if any(same_file(target, source) for source in inputs):
            raise ParameterError(f"{str(target)!r} is an input of this run; write the output somewhere else.")
        if any(same_file(target, other) for other in seen):
            raise ParameterError(f"{str(target)!r} is given as two outputs; give each output its own path.")
        seen.append(target)


def check_targets(targets: Sequence[PathLike], *, reads: Iterable[PathLike | None] = (),
                  make_folders: bool = False, folders: Iterable[PathLike] = ()) -> None:
    """Refuse, before any work is done, outputs that cannot or must not be written.

    Args:
        targets: every output.
        reads: the files the run reads.
        make_folders: whether missing folders of the targets will be created.
        folders: the targets that are written as folders of part files (they must not exist).

    Raises:
        DataError: a file target is a folder, or a folder target exists; a target's folder is
            missing (without ``make_folders``), is a file, or cannot be written (permission,
            read-only file system).
        ParameterError: a target is a file the run reads, or two targets name one file.
    """
    as_folders = {Path(f) for f in folders}
    for target in targets:
        if Path(target) in as_folders:
            if os.path.lexists(target):
                raise DataError(f"{str(target)!r} already exists; the release is written as a new folder of part "
                                "files, so give a path that does not exist yet.")
        elif Path(target).is_dir():
            raise DataError(f"{str(target)!r} is a folder; give a file name to write.")
    refuse_inputs(targets, reads)
    for folder in dict.fromkeys(Path(t).parent for t in targets):
        _check_folder(folder, make_folders)
