"""Opening the files a user names: regular files only, and never more of one than a bound.

A path on a command line can name what is not a file to read to its end: a named pipe (FIFO),
whose reader waits until someone writes; a device such as ``/dev/zero`` or ``/dev/urandom``,
which never ends; a socket. veil refuses those before it reads a byte, in one sentence, and opens
a path without waiting (``O_NONBLOCK``), so a pipe put in the file's place between the check and
the open is refused too. A document veil reads whole (a configuration, a manifest, an order or
query file, a JSON answer) is read up to a bound and refused beyond it, so a huge file is one
sentence, not a machine out of memory.

Every function takes the error class to raise (a :class:`~veil.errors.VeilError` subclass) and
the words naming the file (``"configuration file"``), so the caller's message keeps its own
terms: ``<what> '<path>' is a named pipe, not a regular file; …``.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO

from veil.errors import DataError, VeilError

#: The most bytes of a document (a configuration, an order or query file, a JSON answer) read.
DOCUMENT_LIMIT = 64 << 20
#: The most bytes of a manifest read (it maps every published value, so it can be large).
MANIFEST_LIMIT = 1 << 30

_KINDS = ((stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISCHR, "a device"), (stat.S_ISBLK, "a device"),
          (stat.S_ISSOCK, "a socket"))


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def _size(limit: int) -> str:
    return f"{limit >> 20:,} MiB" if limit >= 1 << 20 else f"{limit:,} bytes"


def _refuse_special(mode: int, path: Path, what: str, error: type[VeilError]) -> None:
    if stat.S_ISDIR(mode):
        raise error(f"{what} {str(path)!r} is a folder, not a file.")
    if not stat.S_ISREG(mode):
        raise error(f"{what} {str(path)!r} is {_kind(mode)}, not a regular file; give a file veil can read "
                    "to its end.")


def check_regular_file(path: str | os.PathLike, what: str = "file", error: type[VeilError] = DataError) -> Path:
    """Refuse, without opening it, a path that is not an existing regular file.

    Args:
        path: the path the user gave (a symbolic link is followed).
        what: the words naming it in a message (``"configuration file"``).
        error: the exception raised.

    Returns:
        The path.

    Raises:
        error: the path does not exist, is a folder, or is a named pipe, device or socket.
    """
    path = Path(path)
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise error(f"{what} {str(path)!r} does not exist; check the path.") from None
    except OSError as exc:
        raise error(f"cannot read {what} {str(path)!r} ({(exc.strerror or str(exc)).lower()}).") from None
    _refuse_special(mode, path, what, error)
    return path


def open_regular_file(path: str | os.PathLike, what: str = "file", error: type[VeilError] = DataError, *,
                      keep_os_errors: bool = False) -> BinaryIO:
    """Open a regular file for reading in binary, refusing anything else without waiting on it.

    The file is opened with ``O_NONBLOCK`` (opening a named pipe would otherwise wait for a
    writer) and checked on its descriptor, then read as usual.

    Args:
        path: the path the user gave (a symbolic link is followed).
        what: the words naming it in a message (``"configuration file"``).
        error: the exception raised.
        keep_os_errors: raise the ``OSError`` of a path that cannot be opened (missing, a folder,
            not permitted) as ``open`` raises it, for a caller that words those itself.

    Raises:
        error: as :func:`check_regular_file`, or the file cannot be opened.
    """
    path = Path(path)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if keep_os_errors and exc.errno != errno.ENXIO:
            raise
        _refuse_unopened(exc, path, what, error)
    try:
        mode = os.fstat(fd).st_mode
        if keep_os_errors and stat.S_ISDIR(mode):  # as open() says it
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
        _refuse_special(mode, path, what, error)
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _refuse_unopened(exc: OSError, path: Path, what: str, error: type[VeilError]) -> None:
    name = repr(str(path))
    if isinstance(exc, FileNotFoundError):
        raise error(f"{what} {name} does not exist; check the path.") from None
    if isinstance(exc, IsADirectoryError):
        raise error(f"{what} {name} is a folder, not a file.") from None
    if exc.errno == errno.ENXIO:  # a socket
        raise error(f"{what} {name} is a socket, not a regular file; give a file veil can read to its end.") from None
    raise error(f"cannot read {what} {name} ({(exc.strerror or str(exc)).lower()}).") from None


def read_bytes(path: str | os.PathLike, what: str = "file", limit: int = DOCUMENT_LIMIT,
               error: type[VeilError] = DataError) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes.

    Raises:
        error: as :func:`open_regular_file`, or the file holds more than ``limit`` bytes.
    """
    with open_regular_file(path, what, error) as fh:
        try:
            content = fh.read(limit + 1)
        except OSError as exc:
            raise error(f"cannot read {what} {str(path)!r} ({(exc.strerror or str(exc)).lower()}).") from None
    if len(content) > limit:
        raise error(f"{what} {str(path)!r} holds more than {_size(limit)}, more than veil reads of such a "
                    "file; check that it is the right file.")
    return content


def read_text(path: str | os.PathLike, what: str = "file", limit: int = DOCUMENT_LIMIT,
              error: type[VeilError] = DataError, encoding: str = "utf-8") -> str:
    """The text of a regular UTF-8 file of at most ``limit`` bytes (``encoding="utf-8-sig"`` drops
    a byte-order mark).

    Raises:
        error: as :func:`read_bytes`, or the file is not UTF-8 text.
    """
    content = read_bytes(path, what, limit, error)
    try:
        return content.decode(encoding)
    except UnicodeDecodeError:
        raise error(f"{what} {str(path)!r} is not UTF-8 text; save it as UTF-8.") from None


__all__ = ["DOCUMENT_LIMIT", "MANIFEST_LIMIT", "check_regular_file", "open_regular_file", "read_bytes", "read_text"]
