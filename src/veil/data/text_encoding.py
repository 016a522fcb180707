"""The text encoding of the CSV tables veil reads: UTF-8 unless a run names another.

A table saved by a spreadsheet in Western Europe is often Windows-1252 or Latin-1, not UTF-8.
:func:`veil.data.io.read_csv` takes an ``encoding``; when it is not given, the encoding named by
the innermost :func:`reading_encoding` block applies (the ``veil`` commands' ``--encoding``
option opens one around the whole command), else UTF-8. Only tables are decoded so: hierarchy,
order and configuration files are UTF-8, and every file veil writes is UTF-8.
"""

from __future__ import annotations

import codecs
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Iterator

from veil.errors import ParameterError

UTF8 = "utf-8"

_CURRENT: ContextVar[str] = ContextVar("veil_csv_encoding", default=UTF8)


def normalize_encoding(name: str | None) -> str:
    """The codec's canonical name (``latin-1`` → ``iso8859-1``); ``None`` is UTF-8.

    Raises:
        ParameterError: no codec of that name, or one that does not decode bytes to text.
    """
    if name is None:
        return UTF8
    try:
        info = codecs.lookup(name.strip())
    except LookupError:
        raise ParameterError(f"unknown text encoding {name!r}; give one such as utf-8, cp1252 or latin-1.") from None
    if not getattr(info, "_is_text_encoding", True):
        raise ParameterError(f"{name!r} is not a text encoding; give one such as utf-8, cp1252 or latin-1.")
    return "utf-8" if info.name in ("utf-8", "utf-8-sig") else info.name


def current_encoding() -> str:
    """The encoding tables are read with when a reader is given none (UTF-8 by default)."""
    return _CURRENT.get()


@contextmanager
def reading_encoding(name: str | None) -> Iterator[str]:
    """Read the tables of the block in ``name`` (``None``: leave the encoding as it is).

    Raises:
        ParameterError: an unknown encoding.
    """
    if name is None:
        yield current_encoding()
        return
    token = _CURRENT.set(normalize_encoding(name))
    try:
        yield _CURRENT.get()
    finally:
        _CURRENT.reset(token)
