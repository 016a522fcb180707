"""The writer: a set of files that appears complete or not at all, and never replaces an input.

Everything veil publishes (a release and its manifest, a starter configuration, an experiment's
tables and figure, a budget file) is written through :class:`OutputSet`:

1. **Declare** the targets before any work: ``OutputSet(targets, reads=inputs)`` refuses, with
   one sentence, a target that is a folder, lies in a missing or unwritable folder, is named
   twice, or is a file the run reads (:mod:`veil.output.targets`).
2. **Put** each file: its bytes go to a temporary file beside the target,
   ``.veil-<txid>.<n>.<name>.tmp`` (:mod:`veil.output.transactions`), flushed to disk, and its
   SHA-256 is kept. A manifest is put with :meth:`OutputSet.put_manifest`: it names and hashes the
   files it describes, and it is renamed into place last.
3. **Commit**: under an exclusive lock on every target folder, a commit record
   ``.veil-<txid>.commit`` listing every rename is written atomically in the folder of the last
   target. Writing it is the moment the set is published. The temporary files are then renamed
   over their targets, and the record removed. Every other folder of the set holds a
   ``.veil-<txid>.link`` naming the record, written before the record, so that a folder's
   leftovers can be told committed from abandoned (:mod:`veil.output.leftovers`). A set of one
   file needs no record: a rename is atomic.

**Folders.** An engine that writes a table as a folder of part files (Spark) publishes it with
:meth:`OutputSet.put_folder`: the engine writes into a temporary folder beside the target, which
is renamed into place on commit like a file. A folder target must not exist yet (a folder is not
replaced). A manifest that describes a folder records the SHA-256 of its *listing* (see
:func:`~veil.output.digests.folder_sha256`).

One file is published with :func:`write_file` (a set of one: a rename is atomic), several with
:func:`write_files`.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Callable, Iterable, Mapping, Sequence, Union

from veil.errors import DataError
from veil.output.digests import folder_digest
from veil.output.durable import remove, sync_folder, write_synced
from veil.output.leftovers import settled
from veil.output.os_errors import describe_os_error
from veil.output.targets import PathLike, check_targets, folder_of
from veil.output.transactions import NAME_CHARS, PREFIX, new_txid

Content = Union[str, bytes]


def _absolute(path: Path) -> Path:
    return folder_of(path) / path.name


class OutputSet:
    """Files that appear together, complete, or not at all.

    Args:
        targets: every file the set will write, declared before any work is done.
        reads: the files the run reads (its data, configuration, hierarchies, …); no target may
            be one of them.
        make_folders: create missing folders of the targets (removed again if nothing is
            written); otherwise a missing folder is refused.
        folders: the targets an engine writes as folders of part files (:meth:`put_folder`).

    Use it as a context manager, so that what was put is removed when the work fails::

        outputs = OutputSet([release_csv, manifest_json], reads=[data, config])
        ...                                  # the work
        with outputs:
            outputs.put(release_csv, text)
            outputs.put_manifest(manifest_json, manifest, describes={"release": release_csv})
            outputs.commit()

    Raises:
        DataError: a target is a folder; its folder is missing (without ``make_folders``), is a
            file, or cannot be written (permission, read-only file system).
        ParameterError: a target is a file the run reads, or two targets name one file.
    """

    def __init__(self, targets: Sequence[PathLike], *, reads: Iterable[PathLike | None] = (),
                 make_folders: bool = False, folders: Iterable[PathLike] = ()):
        self.targets = [Path(t) for t in targets]
        if not self.targets:
            raise ValueError("an OutputSet needs at least one target")
        self.folders = {Path(f) for f in folders}
        check_targets(self.targets, reads=reads, make_folders=make_folders, folders=self.folders)
        self.make_folders = make_folders
        self._txid = new_txid()
        self._absolute: dict[Path, Path] = {}
        self._temporary: dict[Path, Path] = {}      # target → its temporary file
        self._digest: dict[Path, dict] = {}         # target → sha256 and size
        self._last: list[Path] = []                 # manifests: renamed after the others
        self._made: list[Path] = []                 # folders this set created
        self._links: list[Path] = []
        self._record: Path | None = None
        self._committed = False
        existing = [folder_of(t) for t in self.targets if folder_of(t).is_dir()]
        settled(existing)

    def __enter__(self) -> "OutputSet":
        return self

    def __exit__(self, *exc) -> None:
        if not self._committed:
            self.abort()

    # -- writing ------------------------------------------------------------------------------

    def _declared(self, path: PathLike) -> Path:
        path = Path(path)
        for target in self.targets:
            if target == path:
                return target
        raise ValueError(f"{str(path)!r} was not declared as a target of this OutputSet")

    def _error(self, exc: OSError, target: Path) -> DataError:
        self.abort()
        return DataError(f"cannot write {str(target)!r}: {describe_os_error(exc)}; nothing was written.")

    def _ensure_folder(self, target: Path) -> Path:
        folder = target.parent
        if not folder.is_dir() and self.make_folders:
            missing = []
            walk = folder
            while not walk.exists():
                missing.append(walk)
                walk = walk.parent
            folder.mkdir(parents=True, exist_ok=True)
            self._made.extend(missing)
        absolute = _absolute(target)
        self._absolute[target] = absolute
        return absolute

    def put(self, path: PathLike, content: Content | Iterable[Content], *, mode: int | None = None) -> dict:
        """Write ``content`` (text is written as UTF-8, line ends as given) to a temporary file
        beside the target ``path``; it appears at ``path`` on :meth:`commit`.

        ``content`` may also be an iterable of pieces (text or bytes-like), written and hashed
        one after the other, so that a large file is never held whole; an error raised while
        the pieces are made removes everything put, like a failed write.

        The file gets the permissions of the file it replaces (a new one what ``open`` gives);
        ``mode`` (``0o600`` for a file only its owner may read) sets them from its first byte.

        Returns:
            ``{"sha256": …, "bytes": …}`` of the content.

        Raises:
            DataError: the file cannot be written (permission, full disk, read-only file
                system); everything put so far is removed.
        """
        target = self._declared(path)
        pieces = [content] if isinstance(content, (str, bytes, bytearray, memoryview)) else content
        digest, size = hashlib.sha256(), 0
        try:
            absolute = self._ensure_folder(target)
            self._drop(target)
            index = self.targets.index(target)
            temporary = absolute.parent / f"{PREFIX}{self._txid}.{index}.{absolute.name[:NAME_CHARS]}.tmp"
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0),
                         0o666 if mode is None else mode)
            self._temporary[target] = temporary
            with os.fdopen(fd, "wb") as fh:
                try:
                    # An existing file keeps its permissions; a new one gets what open() would give.
                    os.fchmod(fh.fileno(), (os.stat(absolute).st_mode & 0o7777) if mode is None else mode)
                except FileNotFoundError:
                    pass
                for piece in pieces:
                    data = piece.encode("utf-8") if isinstance(piece, str) else piece
                    fh.write(data)
                    digest.update(data)
                    size += memoryview(data).nbytes
                fh.flush()
                os.fsync(fh.fileno())
        except OSError as exc:
            raise self._error(exc, target) from exc
        except BaseException:
            self.abort()
            raise
        self._digest[target] = {"sha256": digest.hexdigest(), "bytes": size}
        return dict(self._digest[target])

    def put_folder(self, path: PathLike, write: Callable[[str], object]) -> dict:
        """Have ``write(folder)`` write a folder of part files (an engine's table) into a temporary
        folder beside the target ``path``, which must be declared in ``folders``; it appears at
        ``path`` on :meth:`commit`.

        Returns:
            ``{"sha256": …, "bytes": …, "files": …, "folder": True}``: the SHA-256 of the folder's
            listing (:func:`~veil.output.digests.folder_sha256`), its total size and its number of files.

        Raises:
            DataError: the folder cannot be written; everything put so far is removed. Whatever
                ``write`` raises is raised after the same clean-up.
        """
        target = self._declared(path)
        if target not in self.folders:
            raise ValueError(f"{str(target)!r} was not declared as a folder of this OutputSet")
        try:
            absolute = self._ensure_folder(target)
            self._drop(target)
            index = self.targets.index(target)
            temporary = absolute.parent / f"{PREFIX}{self._txid}.{index}.{absolute.name[:NAME_CHARS]}.tmp"
            self._temporary[target] = temporary
        except OSError as exc:
            raise self._error(exc, target) from exc
        try:
            write(str(temporary))
            digest, size, count = folder_digest(temporary)
        except OSError as exc:
            raise self._error(exc, target) from exc
        except BaseException:
            self.abort()
            raise
        self._digest[target] = {"sha256": digest, "bytes": size, "files": count, "folder": True}
        return dict(self._digest[target])

    def describe(self, path: PathLike, relative_to: PathLike | None = None) -> dict:
        """``{"file": …, "sha256": …, "bytes": …}`` of a file already put; ``file`` is relative to
        the folder ``relative_to`` (with ``/`` separators) or the path as given."""
        target = self._declared(path)
        if target not in self._digest:
            raise ValueError(f"{str(target)!r} has not been put yet")
        if relative_to is None:
            name = str(target)
        else:
            name = os.path.relpath(self._absolute[target], os.path.realpath(relative_to)).replace(os.sep, "/")
        return {"file": name, **self._digest[target]}

    def put_manifest(self, path: PathLike, manifest: Mapping, describes: Mapping[str, PathLike]) -> str:
        """Put a JSON manifest that names and hashes the files it describes; it is renamed into
        place after every other file of the set.

        Args:
            path: the manifest's target.
            manifest: its content; each key of ``describes`` is added to it.
            describes: key → a target already put, recorded as ``{"file": path relative to the
                manifest's folder, "sha256": …, "bytes": …}`` (see :func:`~veil.output.reading.load_manifest`).

        Returns:
            The manifest's text, as written.
        """
        target = self._declared(path)
        folder = folder_of(target)
        doc = {**manifest, **{key: self.describe(p, relative_to=folder) for key, p in describes.items()}}
        text = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
        self.put(target, text)
        if target not in self._last:
            self._last.append(target)
        return text

    def commit(self) -> list[Path]:
        """Rename every file put into place, all of them or none (see the module).

        Returns:
            The targets, in the order they were declared.

        Raises:
            DataError: a file cannot be renamed into place (nothing is published), or, after the
                commit record was written, a rename failed (the set is completed by the next
                veil run in that folder).
        """
        missing = [t for t in self.targets if t not in self._temporary]
        if missing:
            raise ValueError(f"{str(missing[0])!r} was declared but not put")
        order = [t for t in self.targets if t not in self._last] + self._last
        renames = [(self._temporary[t], self._absolute[t]) for t in order]
        folders = {target.parent for _, target in renames}
        settled(folders, lambda: self._publish(renames, folders))
        return list(self.targets)

    def _publish(self, renames: list[tuple[Path, Path]], folders: set[Path]) -> None:
        try:
            if len(renames) == 1:
                os.replace(*renames[0])
                self._committed = True
                sync_folder(renames[0][1].parent)
                return
            primary = renames[-1][1].parent
            record = primary / f"{PREFIX}{self._txid}.commit"
            for folder in sorted(folders - {primary}):
                link = folder / f"{PREFIX}{self._txid}.link"
                self._links.append(link)
                write_synced(link, str(record).encode("utf-8"))
            pending = primary / f"{PREFIX}{self._txid}.commit.tmp"
            self._record = pending
            doc = {"pid": os.getpid(), "renames": [[str(a), str(b)] for a, b in renames],
                   "links": [str(link) for link in self._links]}
            write_synced(pending, json.dumps(doc, indent=1).encode("utf-8"))
            os.replace(pending, record)
            self._record = record
            sync_folder(primary)
        except OSError as exc:
            raise self._error(exc, renames[-1][1]) from exc
        self._committed = True  # the set is published: from here on it is completed, never undone
        done = renames[0][1]
        try:
            for temporary, target in renames:
                done = target
                os.replace(temporary, target)
            for folder in folders:
                sync_folder(folder)
            for link in self._links:
                remove(link)
            remove(record)
        except OSError as exc:
            raise DataError(f"writing {str(done)!r} failed after its set was committed "
                            f"({describe_os_error(exc)}); the next veil run in {str(primary)!r} completes it.") \
                from exc

    def _drop(self, target: Path) -> None:
        temporary = self._temporary.pop(target, None)
        if temporary is not None:
            remove(temporary)

    def abort(self) -> None:
        """Remove everything put (and the folders this set created); nothing is published."""
        if self._committed:
            return
        for target in list(self._temporary):
            try:
                self._drop(target)
            except OSError:
                pass
        for path in self._links + ([self._record] if self._record else []):
            try:
                remove(path)
            except OSError:
                pass
        for folder in self._made:
            try:
                folder.rmdir()
            except OSError:
                pass
        self._links, self._record, self._made = [], None, []


def write_file(path: PathLike, content: Content | Iterable[Content], *, reads: Iterable[PathLike | None] = (),
               make_folders: bool = False) -> Path:
    """Write one file whole: its content goes to a temporary file beside ``path``, is flushed to
    disk and renamed over ``path``, so a reader sees the old file or the new one, never a part.

    Raises:
        DataError: the file cannot be written (see :class:`OutputSet`); nothing is left behind.
        ParameterError: ``path`` is a file the run reads.
    """
    return write_files({path: content}, reads=reads, make_folders=make_folders)[0]


def write_files(files: Mapping[PathLike, Content | Iterable[Content]], *, reads: Iterable[PathLike | None] = (),
                make_folders: bool = False) -> list[Path]:
    """Write several files as one :class:`OutputSet`: all of them appear, or none does (each
    content whole, or in pieces: see :meth:`OutputSet.put`).

    Raises:
        DataError: a target cannot be written (see :class:`OutputSet`).
        ParameterError: a target is a file the run reads, or is named twice.
    """
    with OutputSet(list(files), reads=reads, make_folders=make_folders) as outputs:
        for path, content in files.items():
            outputs.put(path, content)
        return outputs.commit()
