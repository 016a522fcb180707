"""Reading a published pair back: a manifest veil wrote, checked against the file it describes.

A program that reads the files while a commit is under way, without veil's lock, can see a new
release beside an old manifest; :func:`load_manifest` rejects such a pair by the release's SHA-256
the manifest records (:mod:`veil.output.digests`), after settling what killed processes left in
the folders (:mod:`veil.output.leftovers`).
"""

from __future__ import annotations

import json
from pathlib import Path

from veil.errors import DataError
from veil.inputs import MANIFEST_LIMIT, open_regular_file
from veil.output.digests import file_sha256
from veil.output.leftovers import settled
from veil.output.os_errors import describe_os_error
from veil.output.targets import PathLike, folder_of, same_file


def load_manifest(path: PathLike, release: PathLike | None = None, key: str = "release") -> dict:
    """Read a manifest veil wrote and check that the file it describes is the one published with it.

    The manifest's entry ``key`` names a file (relative to the manifest's folder) with its
    SHA-256; the file's bytes must have that hash. What killed processes left in the folders is
    settled first (see :mod:`veil.output.leftovers`), under the folders' locks, so a set being committed is read
    either before or after.

    Args:
        path: the manifest (JSON).
        release: the file the caller holds for the one described; it must be that file.
        key: the manifest's entry that describes the file.

    Returns:
        The manifest, parsed.

    Raises:
        DataError: the manifest cannot be read or is not JSON, names no file with its SHA-256,
            names another file than ``release``, or the file is missing or does not match.
    """
    path = Path(path)
    folders = {folder_of(path)} | ({folder_of(Path(release))} if release is not None else set())
    return settled(folders, lambda: _verified(path, release, key))


def _verified(path: Path, release: PathLike | None, key: str) -> dict:
    if path.is_dir():
        raise DataError(f"manifest {str(path)!r} is a folder, not a manifest file.")
    try:
        # A regular file only (a pipe or a device never ends), of a manifest's size at most.
        with open_regular_file(path, "manifest", keep_os_errors=True) as fh:
            content = fh.read(MANIFEST_LIMIT + 1)
        if len(content) > MANIFEST_LIMIT:
            raise DataError(f"manifest {str(path)!r} holds more than {MANIFEST_LIMIT >> 20:,} MiB, more than a "
                            "manifest can be; give the manifest written with the release.")
        text = content.decode("utf-8")
    except FileNotFoundError:
        raise DataError(f"manifest {str(path)!r} does not exist; check the path.") from None
    except (OSError, UnicodeDecodeError) as exc:
        reason = describe_os_error(exc) if isinstance(exc, OSError) else "it is not UTF-8 text"
        raise DataError(f"cannot read the manifest {str(path)!r}: {reason}.") from None
    try:
        doc = json.loads(text)
    except ValueError:
        raise DataError(f"{str(path)!r} is not a veil manifest (not JSON); give the manifest written with "
                        "the release.") from None
    entry = doc.get(key) if isinstance(doc, dict) else None
    if not (isinstance(entry, dict) and isinstance(entry.get("file"), str) and isinstance(entry.get("sha256"), str)):
        raise DataError(f"manifest {str(path)!r} does not name its {key} file with a SHA-256, so the pair cannot "
                        "be checked; publish the release again with this version of veil.")
    named = folder_of(path) / entry["file"]
    if release is not None and not same_file(release, named):
        raise DataError(f"manifest {str(path)!r} describes {str(named)!r}, not {str(release)!r}; give the manifest "
                        "written with that release.")
    try:
        digest = file_sha256(named)
    except FileNotFoundError:
        raise DataError(f"the {key} {str(named)!r} named by manifest {str(path)!r} does not exist; they must be "
                        "published together.") from None
    except OSError as exc:
        raise DataError(f"cannot read {str(named)!r}: {describe_os_error(exc)}.") from None
    if digest != entry["sha256"]:
        raise DataError(f"the {key} {str(named)!r} does not match its manifest {str(path)!r} (their SHA-256 "
                        "differ): they were not published together, so publish them again.")
    return doc
