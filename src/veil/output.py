"""Publishing files: a set of outputs that appears complete or not at all, and never replaces an input.

Everything veil publishes (a release and its manifest, a starter configuration, an experiment's
tables and figure, a budget file) is written through :class:`OutputSet`:

1. **Declare** the targets before any work: ``OutputSet(targets, reads=inputs)`` refuses, with
   one sentence, a target that is a folder, lies in a missing or unwritable folder, is named
   twice, or is a file the run reads (compared by resolved path and by inode, so symbolic and
   hard links, ``./x`` and ``x`` are all caught).
2. **Put** each file: its bytes go to a temporary file beside the target,
   ``.veil-<txid>.<n>.<name>.tmp`` (``txid`` is ``<pid>-<process start>-<random>``, ``n`` the
   target's position), flushed to disk, and its SHA-256 is kept. A manifest is put with
   :meth:`OutputSet.put_manifest`: it names and hashes the files it describes, and it is renamed
   into place last.
3. **Commit**: under an exclusive lock on every target folder (``flock`` on the folder itself, so
   no lock file is left behind), a commit record ``.veil-<txid>.commit`` listing every rename is
   written atomically in the folder of the last target. Writing it is the moment the set is
   published. The temporary files are then renamed over their targets, and the record removed.
   Every other folder of the set holds a ``.veil-<txid>.link`` naming the record, written before
   the record, so that a folder's leftovers can be told committed from abandoned. A set of one
   file needs no record: a rename is atomic.

A process killed at any moment therefore leaves either a commit record (the set is published and
its renames are completed by whoever comes next) or none (nothing was published, and its temporary
files are removed). Whoever next touches the folder settles the leftovers of every process that
no longer runs (its pid is gone, is a zombie, or started at another time): any veil run that writes
there, and any reader through :func:`load_manifest`.

**Folders.** An engine that writes a table as a folder of part files (Spark) publishes it with
:meth:`OutputSet.put_folder`: the engine writes into a temporary folder beside the target, which
is renamed into place on commit like a file. A folder target must not exist yet (a folder is not
replaced). A manifest that describes a folder records the SHA-256 of its *listing* (see
:func:`folder_sha256`): one line per file, so it binds the name, size and content of every part.

A program that reads the files while a commit is under way, without veil's lock, can see a new
release beside an old manifest; :func:`load_manifest` rejects such a pair by the release's SHA-256
the manifest records.

One file is published with :func:`write_file` (a set of one: a rename is atomic), several with
:func:`write_files`. A file that must never replace another, such as a secret key that racing
processes may both create, is published with :func:`create_file` (the first one wins).

Every error is a :class:`~veil.errors.DataError` with one sentence; when the operating system
refused something, its ``OSError`` is the error's ``__cause__``.

Folder locks and the settling of leftovers assume a local POSIX file system; without ``fcntl``
(Windows) sets are still committed through the record, without the lock.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import secrets
import shutil
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Callable, Iterable, Iterator, Mapping, Sequence, Union

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None

from veil.errors import DataError, ParameterError
from veil.inputs import MANIFEST_LIMIT, open_regular_file

PathLike = Union[str, os.PathLike]
Content = Union[str, bytes]

PREFIX = ".veil-"
_LEFTOVER = re.compile(r"^\.veil-(\d+)-(\d+)-([0-9a-f]+)\.(.+)$")
_NAME_CHARS = 100        # of a target's name kept in its temporary file's name
_HASH_BLOCK = 1 << 20

_REASONS = {
    errno.EACCES: "permission denied",
    errno.EPERM: "permission denied",
    errno.ENOSPC: "the disk is full",
    errno.EDQUOT: "the disk quota is exhausted",
    errno.EROFS: "the file system is read-only",
    errno.ENAMETOOLONG: "the file name is too long",
    errno.EISDIR: "it is a folder",
    errno.ENOENT: "its folder no longer exists",
}


def describe_os_error(exc: OSError) -> str:
    """The reason an operating-system error gives, in words (``the disk is full``)."""
    return _REASONS.get(exc.errno, (exc.strerror or str(exc)).lower())


# --------------------------------------------------------------------------------------------
# Processes and folder locks


def _process_state(pid: int) -> tuple[str, int] | None:
    """A process's state letter and start time (clock ticks after boot), or ``None`` without ``/proc``."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
    except OSError:
        return None
    # The command name is in parentheses and may itself hold spaces or parentheses.
    fields = stat.rsplit(b")", 1)[-1].split()
    try:
        return fields[0].decode(), int(fields[19])
    except (IndexError, ValueError):
        return None


def _start_time(pid: int) -> int:
    state = _process_state(pid)
    return state[1] if state else 0


def _new_txid() -> str:
    """A name for one process's writes that tells, later, whether that process still runs."""
    return f"{os.getpid()}-{_start_time(os.getpid())}-{secrets.token_hex(4)}"


def _alive(pid: int, start: int) -> bool:
    """Whether the process that wrote a leftover still runs (a recycled pid does not count)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        pass  # it exists but belongs to someone else
    state = _process_state(pid)
    if state is None:
        return True
    letter, started = state
    if letter in ("Z", "X"):
        return False
    return start == 0 or started == start


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


def _sync_folder(folder: Path) -> None:
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


# --------------------------------------------------------------------------------------------
# Leftovers of killed processes


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
    return not _alive(int(pid), int(start))


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
        _sync_folder(folder)
    for link in doc.get("links", []):
        _unlink(Path(link))
    _unlink(record)
    return True


def _unlink(path: Path) -> None:
    """Remove a file, or a temporary folder an engine wrote (never following a symbolic link)."""
    try:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            os.unlink(path)
    except FileNotFoundError:
        pass


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
                _unlink(folder / name)
        except OSError:
            pass  # a folder we may not change keeps its leftovers; writing there fails anyway


def _settled(folders: Iterable[Path], action: Callable[[], object] | None = None):
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
    _settled([Path(os.path.realpath(folder))])


# --------------------------------------------------------------------------------------------
# Checking targets


def _folder_of(path: Path) -> Path:
    """The absolute folder of a path, its symbolic links resolved (the file itself is not)."""
    return Path(os.path.realpath(path.parent))


def _absolute(path: Path) -> Path:
    return _folder_of(path) / path.name


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


# --------------------------------------------------------------------------------------------
# The writer


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
        self._txid = _new_txid()
        self._absolute: dict[Path, Path] = {}
        self._temporary: dict[Path, Path] = {}      # target → its temporary file
        self._digest: dict[Path, dict] = {}         # target → sha256 and size
        self._last: list[Path] = []                 # manifests: renamed after the others
        self._made: list[Path] = []                 # folders this set created
        self._links: list[Path] = []
        self._record: Path | None = None
        self._committed = False
        existing = [_folder_of(t) for t in self.targets if _folder_of(t).is_dir()]
        _settled(existing)

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
            temporary = absolute.parent / f"{PREFIX}{self._txid}.{index}.{absolute.name[:_NAME_CHARS]}.tmp"
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
            listing (:func:`folder_sha256`), its total size and its number of files.

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
            temporary = absolute.parent / f"{PREFIX}{self._txid}.{index}.{absolute.name[:_NAME_CHARS]}.tmp"
            self._temporary[target] = temporary
        except OSError as exc:
            raise self._error(exc, target) from exc
        try:
            write(str(temporary))
            digest, size, count = _folder_digest(temporary)
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
                manifest's folder, "sha256": …, "bytes": …}`` (see :func:`load_manifest`).

        Returns:
            The manifest's text, as written.
        """
        target = self._declared(path)
        folder = _folder_of(target)
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
        _settled(folders, lambda: self._publish(renames, folders))
        return list(self.targets)

    def _publish(self, renames: list[tuple[Path, Path]], folders: set[Path]) -> None:
        try:
            if len(renames) == 1:
                os.replace(*renames[0])
                self._committed = True
                _sync_folder(renames[0][1].parent)
                return
            primary = renames[-1][1].parent
            record = primary / f"{PREFIX}{self._txid}.commit"
            for folder in sorted(folders - {primary}):
                link = folder / f"{PREFIX}{self._txid}.link"
                self._links.append(link)
                _write_synced(link, str(record).encode("utf-8"))
            pending = primary / f"{PREFIX}{self._txid}.commit.tmp"
            self._record = pending
            doc = {"pid": os.getpid(), "renames": [[str(a), str(b)] for a, b in renames],
                   "links": [str(link) for link in self._links]}
            _write_synced(pending, json.dumps(doc, indent=1).encode("utf-8"))
            os.replace(pending, record)
            self._record = record
            _sync_folder(primary)
        except OSError as exc:
            raise self._error(exc, renames[-1][1]) from exc
        self._committed = True  # the set is published: from here on it is completed, never undone
        done = renames[0][1]
        try:
            for temporary, target in renames:
                done = target
                os.replace(temporary, target)
            for folder in folders:
                _sync_folder(folder)
            for link in self._links:
                _unlink(link)
            _unlink(record)
        except OSError as exc:
            raise DataError(f"writing {str(done)!r} failed after its set was committed "
                            f"({describe_os_error(exc)}); the next veil run in {str(primary)!r} completes it.") \
                from exc

    def _drop(self, target: Path) -> None:
        temporary = self._temporary.pop(target, None)
        if temporary is not None:
            _unlink(temporary)

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
                _unlink(path)
            except OSError:
                pass
        for folder in self._made:
            try:
                folder.rmdir()
            except OSError:
                pass
        self._links, self._record, self._made = [], None, []


def _write_synced(path: Path, data: bytes, mode: int = 0o644) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), mode)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())


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


def scratch_path(target: PathLike) -> Path:
    """A temporary path beside ``target``, for a file another library builds before veil links or
    renames it into place (an SQLite ledger): named like this module's temporary files, so that
    whatever a killed process left there (the file and its companions, ``-wal`` …) is removed by
    the next :func:`settle` of the folder, and never while that process runs."""
    target = Path(target)
    return target.parent / f"{PREFIX}{_new_txid()}.0.{target.name[:_NAME_CHARS]}.tmp"


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
    _sync_folder(target.parent)
    return True


def create_file(path: PathLike, content: Content, *, mode: int = 0o666, folder_mode: int | None = None) -> bool:
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
    temporary = target.parent / f"{PREFIX}{_new_txid()}.0.{target.name[:_NAME_CHARS]}.tmp"
    try:
        if folder_mode is not None:
            target.parent.mkdir(mode=folder_mode, parents=True, exist_ok=True)
        _settled([_folder_of(target)])
        try:
            _write_synced(temporary, data, mode)
            os.link(temporary, target)
        except FileExistsError:
            return False
        finally:
            _unlink(temporary)
        _sync_folder(target.parent)
        return True
    except OSError as exc:
        raise DataError(f"cannot create {str(target)!r}: {describe_os_error(exc)}.") from exc


# --------------------------------------------------------------------------------------------
# Reading a published pair back


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
    return _folder_digest(Path(path))[0]


def _folder_digest(folder: Path) -> tuple[str, int, int]:
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


def load_manifest(path: PathLike, release: PathLike | None = None, key: str = "release") -> dict:
    """Read a manifest veil wrote and check that the file it describes is the one published with it.

    The manifest's entry ``key`` names a file (relative to the manifest's folder) with its
    SHA-256; the file's bytes must have that hash. What killed processes left in the folders is
    settled first (see the module), under the folders' locks, so a set being committed is read
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
    folders = {_folder_of(path)} | ({_folder_of(Path(release))} if release is not None else set())
    return _settled(folders, lambda: _verified(path, release, key))


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
    named = _folder_of(path) / entry["file"]
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
