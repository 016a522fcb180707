"""Creating a file that must never replace another, such as a secret key that racing processes may
both create: of several processes creating it at once, exactly one succeeds (:func:`create_file`).

A file another library builds (an SQLite ledger) is built at a :func:`scratch_path` beside its
target and put in place with :func:`link_scratch`. Both are hard links, which never replace a file
and which no process sees half done; the temporary files are named like the writer's, so that what
a killed process left is removed by the next settling of the folder (:mod:`veil.output.leftovers`).
"""

from __future__ import annotations

import os
from pathlib import Path

from veil.errors import DataError
from veil.output.durable import remove, sync_folder, write_synced
from veil.output.leftovers import settled
from veil.output.os_errors import describe_os_error
from veil.output.targets import PathLike, folder_of
from veil.output.transactions import NAME_CHARS, PREFIX, new_txid


def scratch_path(target: PathLike) -> Path:
    """A temporary path beside ``target``, for a file another library builds before veil links or
    renames it into place (an SQLite ledger): named like the writer's temporary files, so that
    whatever a killed process left there (the file and its companions, ``-wal`` …) is removed by
    the next :func:`~veil.output.leftovers.settle` of the folder, and never while that process runs."""
    target = Path(target)
    return target.parent / f"{PREFIX}{new_txid()}.0.{target.name[:NAME_CHARS]}.tmp"


def link_scratch(scratch: PathLike, path: PathLike) -> bool:
    """Put a finished file built at a :func:`scratch_path` in place as ``path``, unless a file is
    there already: a hard link, which never replaces and which no process sees half done, and
    then the folder is synced. The scratch file stays (its builder removes it).

    Returns:
        ``True`` if this call created ``path``, ``False`` if it existed already.

    Raises:
        OSError: the link or the folder's sync failed for another reason (the caller words it).
    """
    target = Path(path)
    try:
        os.link(scratch, target)
    except FileExistsError:
        return False
    sync_folder(target.parent)
    return True


def create_file(path: PathLike, content: str | bytes, *, mode: int = 0o666, folder_mode: int | None = None) -> bool:
    """Publish a file that must never replace one already there: of several processes creating
    it at once, exactly one succeeds, and no process ever sees it half written.

    The content is written and flushed to a temporary file beside ``path`` (created with
    ``mode``, which the umask narrows, so a secret is private from its first byte), then
    hard-linked to ``path``, which fails if ``path`` exists.

    Args:
        path: the file to create.
        content: its content (text is written as UTF-8).
        mode: the permissions of the new file, e.g. ``0o600`` for a secret.
        folder_mode: when given, missing folders of ``path`` are created with these permissions;
            otherwise a missing folder is an error.

    Returns:
        ``True`` if this call created the file, ``False`` if it existed already.

    Raises:
        DataError: the file or its folder cannot be created (permission, full disk, read-only
            file system); the operating system's error is the ``__cause__``.
    """
    target = Path(path)
    data = content.encode("utf-8") if isinstance(content, str) else bytes(content)
    temporary = target.parent / f"{PREFIX}{new_txid()}.0.{target.name[:NAME_CHARS]}.tmp"
    try:
        if folder_mode is not None:
            target.parent.mkdir(mode=folder_mode, parents=True, exist_ok=True)
        settled([folder_of(target)])
        try:
            write_synced(temporary, data, mode)
            os.link(temporary, target)
        except FileExistsError:
            return False
        finally:
            remove(temporary)
        sync_folder(target.parent)
        return True
    except OSError as exc:
        raise DataError(f"cannot create {str(target)!r}: {describe_os_error(exc)}.") from exc
