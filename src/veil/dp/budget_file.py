"""A privacy budget kept in a file that many processes share, sealed against hand edits.

:class:`BudgetFile` keeps one accountant (:mod:`veil.dp.accountant`) in a JSON file and is the
only code that reads or writes it.

**Serialized charges.** ``with BudgetFile(path).open(dataset_id) as acc:`` takes an exclusive
lock (``fcntl.flock``) on ``<path>.lock``, a file of its own that is never replaced (the budget
file itself is replaced by a rename on every save, so it cannot carry a lock), re-reads and
verifies the budget file, and yields its accountant. Every charge made inside the block is saved
— sealed, and published whole by veil's writer (:func:`veil.output.write_file`: a temporary file
flushed to disk and renamed over the budget file) — before ``charge()`` returns, so a query that
charges first and draws second never draws noise that is not on record; if the save fails the
charge is taken back and no noise is drawn. The lock is held until the block ends, so two
processes can never both spend the last of a budget, and a charge is never lost by a concurrent
save: the lock serializes the read-modify-write cycle, the writer makes each file appear whole. A
process killed at any moment leaves the old file or the new one, never a mix; the kernel releases
its lock; the temporary file it left is removed by the next process that takes the lock. When the
noise draw fails after the save, the budget stays spent, which errs on the side of privacy.

**Seal.** The file carries ``"seal": {"algorithm": "HMAC-SHA256", "key_id", "mac"}``: an HMAC of
the canonical JSON of everything else (sorted keys, no spaces, UTF-8) under a 256-bit key kept
*outside* the file, in ``$VEIL_KEY_FILE`` or else ``$XDG_CONFIG_HOME/veil/budget.key``
(``~/.config/veil/budget.key``), created on first use with ``secrets`` and mode 0600. Every read
checks it, so a hand edit — charges deleted, the budget raised, a query relabelled as free
post-processing — is refused with one sentence (:class:`BudgetFileError`), never silently reset.

What the seal does *not* protect against: anyone who holds the key (they can re-seal anything);
deleting the file, or putting back an older copy of it (both sealed by the same key), which gives
a budget back; a second key (``VEIL_KEY_FILE`` pointed elsewhere) with a fresh file. The release
ledger will keep charges in an append-only database of releases, which closes those doors for
everyone who publishes through it; a budget file is the single-user form.

A budget is bound to its data by :func:`veil.dp.fingerprint.dataset_id`, a fingerprint of the
content as parsed. The ledger will implement the same contract as :meth:`BudgetFile.open` (a
context manager that yields an accountant whose charges are recorded before they return).
"""

from __future__ import annotations

import fcntl
import hashlib
import hmac
import json
import os
import secrets
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from veil.dp.accountant import (
    Budget,
    BudgetFileError,
    _BaseAccountant,
    _show,
    from_document,
    parse_document,
)
from veil.errors import DataError, ParameterError
from veil.output import create_file, describe_os_error, settle, write_file

__all__ = ["KEY_ENV", "BudgetFile", "key_path"]

#: The environment variable that names the key file (tests point it at a temporary file).
KEY_ENV = "VEIL_KEY_FILE"
SEAL_ALGORITHM = "HMAC-SHA256"
_MAC_CONTEXT = b"veil-dp-budget seal\x00"


# --------------------------------------------------------------------------- the key

def key_path() -> Path:
    """Where the sealing key is kept: ``$VEIL_KEY_FILE``, else ``$XDG_CONFIG_HOME/veil/budget.key``."""
    named = os.environ.get(KEY_ENV)
    if named:
        return Path(named)
    config = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(config) / "veil" / "budget.key"


def _read_key(path: Path) -> bytes | None:
    """The key in ``path`` (64 hex digits), or ``None`` when there is no such file."""
    try:
        text = path.read_text(encoding="ascii").strip()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or "not ASCII text"
        raise BudgetFileError(f"the budget key file {str(path)!r} cannot be read ({reason}); fix it or set "
                              f"{KEY_ENV} to the key file the budget was sealed with.") from None
    try:
        key = bytes.fromhex(text)
    except ValueError:
        key = b""
    if len(key) != 32:
        raise BudgetFileError(f"the budget key file {str(path)!r} does not hold a veil key (64 hex digits); "
                              f"restore it or set {KEY_ENV} to the right key file.")
    return key


def _create_key(path: Path) -> bytes:
    """Make a new random key at ``path``; if another process made one first, use that one.

    The key is published by :func:`veil.output.create_file`, private (0600) from its first byte,
    in a folder made private (0700) if missing: no process ever reads a half-written key and
    exactly one key wins a race.
    """
    try:
        create_file(path, secrets.token_bytes(32).hex() + "\n", mode=0o600, folder_mode=0o700)
    except DataError as exc:
        raise BudgetFileError(f"cannot create the budget key file {str(path)!r} ({_reason(exc)}); set {KEY_ENV} "
                              "to a file path you can write.") from None
    key = _read_key(path)
    if key is None:
        raise BudgetFileError(f"the budget key file {str(path)!r} vanished as it was made; try again, or set "
                              f"{KEY_ENV} to a key file of your own.")
    return key


def _reason(exc: DataError) -> str:
    """Why the writer failed: the operating system's reason, in words, or the writer's sentence."""
    cause = exc.__cause__
    return describe_os_error(cause) if isinstance(cause, OSError) else str(exc).rstrip(".")


def _key_id(key: bytes) -> str:
    """A public name of a key (it reveals nothing of it), so a wrong key is told from an edit."""
    return hashlib.sha256(b"veil key id\x00" + key).hexdigest()[:16]


def _mac(doc: dict, key: bytes) -> str:
    canonical = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    return hmac.new(key, _MAC_CONTEXT + canonical, hashlib.sha256).hexdigest()


# --------------------------------------------------------------------------- the file

def _closed(accountant: _BaseAccountant) -> None:
    raise ParameterError("this accountant came from BudgetFile.open and its with block has ended; open the "
                         "budget file again to charge it.")


class BudgetFile:
    """A privacy budget in a file shared by processes: locked while charged, sealed, verified on read.

    Args:
        path: the budget file (JSON). Beside it live ``<path>.lock`` (never deleted) and, for a
            moment during each save, a hidden temporary file.
        timeout: how many seconds :meth:`open` waits for another process to release the lock.

    See the module notes for what the file guarantees and what it does not.
    """

    def __init__(self, path: str | os.PathLike, *, timeout: float = 60.0):
        self.path = Path(path)
        self.timeout = float(timeout)

    @property
    def lock_path(self) -> Path:
        return self.path.with_name(self.path.name + ".lock")

    def __repr__(self) -> str:
        return f"BudgetFile({str(self.path)!r})"

    # -- reading

    def read(self, dataset_id: str | None = None, *, discount=None) -> _BaseAccountant:
        """The accountant in the file, verified; ``dataset_id=None`` accepts the file's own dataset.

        No lock is needed to read: a save replaces the file whole, so a reader sees one complete
        version. Charge through :meth:`open`, never through an accountant from here.

        Raises:
            BudgetFileError: the file is missing, unreadable, corrupt, unsealed, edited since it
                was sealed, sealed with another key, or kept for another dataset.
        """
        where = f"budget file {str(self.path)!r}"
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise BudgetFileError(f"{where} does not exist; check the path.") from None
        except IsADirectoryError:
            raise BudgetFileError(f"{str(self.path)!r} is a folder, not a budget file.") from None
        except UnicodeDecodeError:
            raise BudgetFileError(f"{where} is not UTF-8 JSON; it is corrupt.") from None
        except OSError as exc:
            raise BudgetFileError(f"{where} cannot be read ({exc.strerror}).") from None
        doc = parse_document(text, str(self.path))
        seal = doc.pop("seal", None)
        if seal is None:
            self._refuse_unsealed(doc, discount)
        self._verify(doc, seal)
        return from_document(doc, dataset_id=dataset_id, discount=discount, source=str(self.path))

    def _refuse_unsealed(self, doc: dict, discount) -> None:
        where = f"budget file {str(self.path)!r}"
        if doc["version"] >= 2:
            raise BudgetFileError(f"{where} has no seal, so it was not written by veil or was edited; restore it "
                                  "from a backup.")
        old = from_document(doc, dataset_id=None, discount=discount, source=str(self.path))
        left_e, left_d = old.remaining()
        raise BudgetFileError(
            f"{where} was written by an older veil without a seal, so hand edits to it cannot be ruled out and it "
            f"is bound to the data's bytes rather than its content; if you trust it, keep it as a record and start "
            f"a new budget file for this data with what it has left (ε = {_show(left_e)}, δ = {_show(left_d)}).")

    def _verify(self, doc: dict, seal) -> None:
        where = f"budget file {str(self.path)!r}"
        if (not isinstance(seal, dict) or seal.get("algorithm") != SEAL_ALGORITHM
                or not isinstance(seal.get("mac"), str) or not isinstance(seal.get("key_id"), str)):
            raise BudgetFileError(f"{where} has a malformed seal; restore it from a backup.")
        keyfile = key_path()
        key = _read_key(keyfile)
        if key is None or seal["key_id"] != _key_id(key):
            mine = "there is none" if key is None else f"that one is {_key_id(key)}"
            raise BudgetFileError(f"{where} was sealed with key {seal['key_id']} but {str(keyfile)!r} does not "
                                  f"hold it ({mine}); set {KEY_ENV} to the key file the budget was made with.")
        if not hmac.compare_digest(seal["mac"], _mac(doc, key)):
            raise BudgetFileError(f"{where} was changed after veil sealed it (its seal does not match its content); "
                                  "a budget edited by hand cannot be trusted, so restore it from a backup.")

    # -- charging

    @contextmanager
    def open(self, dataset_id: str, *, create: Budget | _BaseAccountant | None = None,
             discount=None) -> Iterator[_BaseAccountant]:
        """Lock the file, read it, and yield its accountant; every charge is saved before it returns.

        Args:
            dataset_id: the dataset about to be queried (:func:`veil.dp.fingerprint.dataset_id`);
                the file must belong to it.
            create: when the file does not exist yet, the budget to start it with: a
                :class:`~veil.dp.accountant.Budget` (sequential composition) or a new accountant
                with no charges (temporal, window, advanced). When the file exists it must hold
                the same budget. Nothing is written until the first charge.
            discount: the g of a temporal budget kept with a custom discount function.

        Raises:
            BudgetFileError: see :meth:`read`; the lock cannot be taken within ``timeout``; a
                charge cannot be saved (then it is not made).
            ParameterError: ``create`` is not a budget, or differs from the file's.
        """
        fresh = self._fresh(create, dataset_id)
        self.check_place()
        with self._locked():
            settle(self.path.parent)  # what a save killed half-way left (only a lock holder saves)
            if self.path.exists():
                accountant = self.read(dataset_id, discount=discount)
                if fresh is not None and (fresh.budget != accountant.budget or type(fresh) is not type(accountant)):
                    raise ParameterError(f"budget file {str(self.path)!r} already holds the budget "
                                         f"{accountant.budget}; leave the new budget (--budget, create=) out.")
            elif fresh is None:
                raise BudgetFileError(f"budget file {str(self.path)!r} does not exist; give the budget to start it "
                                      "with (--budget E[,D], or create= in Python).")
            else:
                accountant = fresh
            accountant._sink = self._save
            try:
                yield accountant
            finally:
                accountant._sink = _closed

    @staticmethod
    def _fresh(create, dataset_id: str) -> _BaseAccountant | None:
        from veil.dp.accountant import Accountant

        if create is None:
            return None
        if isinstance(create, Budget):
            return Accountant(create, dataset_id=dataset_id)
        if not isinstance(create, _BaseAccountant):
            raise ParameterError(f"create must be a Budget or a new accountant, got {type(create).__name__}.")
        if create.charges:
            raise ParameterError("create must be a new accountant with no charges; charge it through the file.")
        if create.dataset_id != dataset_id:
            raise ParameterError(f"create is an accountant for dataset {create.dataset_id!r}, not {dataset_id!r}.")
        return create

    def check_place(self) -> None:
        """Refuse, before any work, a path where no budget file can be kept.

        Raises:
            BudgetFileError: the path is a folder, or its folder does not exist.
        """
        if self.path.is_dir():
            raise BudgetFileError(f"{str(self.path)!r} is a folder; give a budget file name.")
        folder = self.path.parent
        if not folder.is_dir():
            raise BudgetFileError(f"folder {str(folder)!r} of the budget file does not exist; create it or choose "
                                  "another path.")

    @contextmanager
    def _locked(self) -> Iterator[None]:
        try:
            fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o666)
        except OSError as exc:
            raise BudgetFileError(f"cannot open the lock file {str(self.lock_path)!r} beside the budget file "
                                  f"({exc.strerror}); the budget's folder must be writable.") from None
        try:
            deadline = time.monotonic() + self.timeout
            pause = 0.002
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise BudgetFileError(f"budget file {str(self.path)!r} stayed locked by another process for "
                                              f"{self.timeout:g} s; try again when it has finished.") from None
                    time.sleep(pause)
                    pause = min(pause * 2, 0.05)
            yield
        finally:
            os.close(fd)  # closing the descriptor releases the lock

    def _save(self, accountant: _BaseAccountant) -> None:
        """The sink: seal the accountant and replace the file with it, durably."""
        key = _read_key(key_path()) or _create_key(key_path())
        doc = accountant.to_document()
        doc["seal"] = {"algorithm": SEAL_ALGORITHM, "key_id": _key_id(key), "mac": _mac(doc, key)}
        try:
            write_file(self.path, json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
        except DataError as exc:
            raise BudgetFileError(f"cannot save budget file {str(self.path)!r} ({_reason(exc)}); the charge was "
                                  "not made.") from None
