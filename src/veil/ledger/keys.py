"""veil's sealing key: 256 random bits kept outside every store it seals.

A ledger anchors the head of its decision log with an HMAC under this key (and budget files of
earlier veil versions were sealed with it), so that whoever can edit the store but does not hold
the key cannot rewrite history unnoticed. The key lives in ``$VEIL_KEY_FILE``, or else
``$XDG_CONFIG_HOME/veil/budget.key`` (``~/.config/veil/budget.key``), and is created on first use
with :mod:`secrets` and mode 0600. Everyone who writes to one ledger must use the same key file.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from pathlib import Path

from veil.errors import DataError, VeilError
from veil.output.os_errors import describe_os_error

__all__ = ["KEY_ENV", "SealKeyError", "key_id", "key_path", "load_key", "mac"]

#: The environment variable that names the key file (tests point it at a temporary file).
KEY_ENV = "VEIL_KEY_FILE"
# The key last read, by its file's path, inode, size and modification time: a ledger reads it
# for every write, and a file that changed is read again.
_read: dict[tuple, bytes] = {}


class SealKeyError(VeilError):
    """The sealing key cannot be read or made."""


def key_path() -> Path:
    """Where the sealing key is kept: ``$VEIL_KEY_FILE``, else ``$XDG_CONFIG_HOME/veil/budget.key``."""
    named = os.environ.get(KEY_ENV)
    if named:
        return Path(named)
    config = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(config) / "veil" / "budget.key"


def read_key(path: Path) -> bytes | None:
    """The key in ``path`` (64 hex digits), or ``None`` when there is no such file.

    Raises:
        SealKeyError: the file cannot be read or does not hold a key.
    """
    try:
        stat = path.stat()
        signature = (str(path), stat.st_ino, stat.st_size, stat.st_mtime_ns)
        if signature in _read:
            return _read[signature]
        text = path.read_text(encoding="ascii").strip()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or "not ASCII text"
        raise SealKeyError(f"the veil key file {str(path)!r} cannot be read ({reason}); fix it or set {KEY_ENV} to "
                        "the key file the store was sealed with.") from None
    try:
        key = bytes.fromhex(text)
    except ValueError:
        key = b""
    if len(key) != 32:
        raise SealKeyError(f"the veil key file {str(path)!r} does not hold a veil key (64 hex digits); restore it or "
                           f"set {KEY_ENV} to the right key file.")
    _read.clear()
    _read[signature] = key
    return key


def _create_key(path: Path) -> bytes:
    """Make a new random key at ``path`` (private from its first byte); if another process made one
    first, use that one (:func:`veil.output.create_file`: exactly one key wins a race)."""
    from veil.output.creation import create_file

    try:
        create_file(path, secrets.token_bytes(32).hex() + "\n", mode=0o600, folder_mode=0o700)
    except DataError as exc:
        reason = describe_os_error(exc.__cause__) if isinstance(exc.__cause__, OSError) else str(exc)
        raise SealKeyError(f"cannot create the veil key file {str(path)!r} ({reason}); set {KEY_ENV} to a file "
                           "path you can write.") from None
    key = read_key(path)
    if key is None:
        raise SealKeyError(f"the veil key file {str(path)!r} vanished as it was made; try again, or set {KEY_ENV} "
                           "to a key file of your own.")
    return key


def load_key(*, create: bool) -> bytes | None:
    """The key at :func:`key_path`; made there when missing and ``create``, else ``None`` when missing.

    Raises:
        SealKeyError: the key file cannot be read, holds no key, or cannot be made.
    """
    path = key_path()
    key = read_key(path)
    if key is None and create:
        key = _create_key(path)
    return key


def key_id(key: bytes) -> str:
    """A public name of a key (it reveals nothing of it), so that a wrong key is told from an edit."""
    return hashlib.sha256(b"veil key id\x00" + key).hexdigest()[:16]


def mac(key: bytes, context: bytes, message: bytes) -> str:
    """HMAC-SHA256 of ``message`` under ``key``, in a ``context`` that keeps one use's MACs from another's."""
    return hmac.new(key, context + b"\x00" + message, hashlib.sha256).hexdigest()
