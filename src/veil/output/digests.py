"""The SHA-256 a manifest records for what it describes: of a file's bytes, or of a folder's listing.

A folder of part files (an engine's table) is hashed through its *listing* (:func:`folder_sha256`):
one line per file, so the hash binds the name, size and content of every part.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from veil.inputs import open_regular_file
from veil.output.targets import PathLike

_HASH_BLOCK = 1 << 20


def file_sha256(path: PathLike) -> str:
    """The SHA-256 of a file's bytes, as hex (of a folder's listing for a folder: :func:`folder_sha256`)."""
    if Path(path).is_dir():
        return folder_sha256(path)
    digest = hashlib.sha256()
    with open_regular_file(path, keep_os_errors=True) as fh:  # a pipe or a device would never end
        for block in iter(lambda: fh.read(_HASH_BLOCK), b""):
            digest.update(block)
    return digest.hexdigest()


def folder_sha256(path: PathLike) -> str:
    """The SHA-256 of a folder's listing, as hex: what a manifest records for a folder of part files.

    The listing has one line per file under the folder (recursively, hidden files such as Spark's
    ``.crc`` checksums included), sorted by path: ``<path relative to the folder, / separated>``,
    a tab, its size in bytes, a tab, the SHA-256 of its bytes, and a line feed. It changes when any
    file is added, removed, renamed or altered.
    """
    return folder_digest(Path(path))[0]


def folder_digest(folder: Path) -> tuple[str, int, int]:
    """``(SHA-256 of the listing, total bytes, number of files)`` of a folder."""
    entries = []
    for root, dirs, files in os.walk(folder):
        dirs.sort()
        for name in files:
            full = Path(root) / name
            relative = full.relative_to(folder).as_posix()
            entries.append((relative, full.stat().st_size, file_sha256(full)))
    entries.sort()
    listing = "".join(f"{name}\t{size}\t{digest}\n" for name, size, digest in entries)
    return hashlib.sha256(listing.encode("utf-8")).hexdigest(), sum(size for _, size, _ in entries), len(entries)
