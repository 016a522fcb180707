"""What killed processes left in a folder, completed or removed by whoever comes next.

A set of files is committed (:mod:`veil.output.writer`) by writing a commit record
``.veil-<txid>.commit`` that lists every rename, in the folder of its last target; every other
folder of the set holds a ``.veil-<txid>.link`` naming the record. A process killed at any moment
therefore leaves either a commit record (the set is published, and its renames are completed by
whoever comes next) or none (nothing was published, and its temporary files are removed). Whoever
next touches the folder settles the leftovers of every process that no longer runs (see
:mod:`veil.output.transactions`): any veil run that writes there, and any reader through
:func:`~veil.output.reading.load_manifest`. Files of running processes are left alone.

Settling happens under an exclusive lock on every folder concerned (``flock`` on the folder
itself, so no lock file is left behind), taken in sorted order so that two sets never deadlock.
Folder locks and settling assume a local POSIX file system; without ``fcntl`` (Windows) sets are
still committed through the record, without the lock.
"""

from __future__ import annotations

import json
import os
import re
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Callable, Iterable, Iterator, Sequence

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None

from veil.output.durable import remove, sync_folder
from veil.output.targets import PathLike
from veil.output.transactions import PREFIX, alive

_LEFTOVER = re.compile(r"^\.veil-(\d+)-(\d+)-([0-9a-f]+)\.(.+)$")


@contextmanager
def _locked(folders: Iterable[Path]) -> Iterator[None]:
    """Hold an exclusive lock on each folder, taken in sorted order so that two sets never deadlock."""
    with ExitStack() as stack:
        for folder in sorted(set(folders)):
            try:
                fd = os.open(folder, os.O_RDONLY)
            except OSError:
                continue  # an unreadable folder cannot be written either; the write reports it
            stack.callback(os.close, fd)
            if fcntl is not None:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX)
                except OSError:
                    pass  # a file system without locks still gets the commit record
        yield


def _leftovers(folder: Path) -> dict[str, list[str]]:
    """The leftover files in a folder, by the transaction that wrote them."""
    try:
        names = os.listdir(folder)
    except OSError:
        return {}
    found: dict[str, list[str]] = {}
    for name in names:
        match = _LEFTOVER.match(name)
        if match:
            found.setdefault(f"{match[1]}-{match[2]}-{match[3]}", []).append(name)
    return found


def _dead(txid: str) -> bool:
    pid, start, _ = txid.split("-")
    return not alive(int(pid), int(start))


def _read_json(path: Path):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _record_folders(record: Path) -> set[Path]:
    doc = _read_json(record)
    if not isinstance(doc, dict):
        return {record.parent}
    return ({record.parent} | {Path(target).parent for _, target in doc.get("renames", [])}
            | {Path(link).parent for link in doc.get("links", [])})


def _record_of(folder: Path, txid: str, names: Sequence[str]) -> Path | None:
    """The commit record a dead transaction's files in ``folder`` belong to, if it was written."""
    if f"{PREFIX}{txid}.commit" in names:
        return folder / f"{PREFIX}{txid}.commit"
    if f"{PREFIX}{txid}.link" in names:
        try:
            record = Path((folder / f"{PREFIX}{txid}.link").read_text(encoding="utf-8"))
        except OSError:
            return None
        if record.name == f"{PREFIX}{txid}.commit" and record.exists():
            return record
    return None


def _folders_to_settle(folders: set[Path]) -> set[Path]:
    """Every folder the dead transactions found in ``folders`` wrote to."""
    more = set(folders)
    for folder in folders:
        for txid, names in _leftovers(folder).items():
            if _dead(txid):
                record = _record_of(folder, txid, names)
                if record is not None:
                    more |= _record_folders(record)
    return more


def _roll_forward(record: Path) -> bool:
    """Complete a committed set: the renames it lists, then remove its links and the record.

    Returns ``False``, touching nothing, for a record veil cannot have written (a record is
    renamed into place only once complete): it is left for a person to look at.
    """
    doc = _read_json(record)
    if not isinstance(doc, dict) or not isinstance(doc.get("renames"), list):
        return False
    for temporary, target in doc.get("renames", []):
        if os.path.lexists(temporary):
            os.replace(temporary, target)
    for folder in {Path(target).parent for _, target in doc.get("renames", [])}:
        sync_folder(folder)
    for link in doc.get("links", []):
        remove(Path(link))
    remove(record)
    return True


def _settle_folder(folder: Path) -> None:
    """Roll committed sets of dead processes forward and remove the rest of what they left."""
    for txid, names in _leftovers(folder).items():
        if not _dead(txid):
            continue
        try:
            record = _record_of(folder, txid, names)
            if record is not None and not _roll_forward(record):
                continue
            for name in names:
                remove(folder / name)
        except OSError:
            pass  # a folder we may not change keeps its leftovers; writing there fails anyway


def settled(folders: Iterable[Path], action: Callable[[], object] | None = None):
    """Lock the folders (and every folder their dead transactions reach), settle the leftovers,
    then run ``action`` under the same locks."""
    wanted = {Path(f) for f in folders}
    while True:
        with _locked(wanted):
            reached = _folders_to_settle(wanted)
            if not reached <= wanted:
                wanted |= reached  # lock those too, in order, and look again
                continue
            for folder in sorted(wanted):
                _settle_folder(folder)
            return action() if action is not None else None


def settle(folder: PathLike) -> None:
    """Complete or remove what killed veil processes left in ``folder``.

    A set whose commit record was written is completed (its renames done); the temporary files
    of any other dead process are removed. Files of running processes are left alone. Errors
    (a folder that may not be changed) are ignored: it is left as it is.
    """
    settled([Path(os.path.realpath(folder))])
