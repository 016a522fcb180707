"""An operating system's refusal in words: what the one sentence of a :class:`~veil.errors.DataError`
says when a file cannot be written or read (``the disk is full``, ``permission denied``)."""

from __future__ import annotations

import errno

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
