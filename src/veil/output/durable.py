"""Durable file operations of the writer: a new file written and flushed to disk, a folder's
renames made durable, and a temporary file or folder removed."""

from __future__ import annotations

import os
import shutil
from pathlib import Path


def write_synced(path: Path, data: bytes, mode: int = 0o644) -> None:
    """Create ``path`` (never over an existing file) with the permissions ``mode`` and write
    ``data`` to it, flushed to disk."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), mode)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())


def sync_folder(folder: Path) -> None:
    """Make the renames in a folder durable (some file systems cannot sync a folder: fine)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def remove(path: Path) -> None:
    """Remove a file, or a temporary folder an engine wrote (never following a symbolic link)."""
    try:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            os.unlink(path)
    except FileNotFoundError:
        pass
