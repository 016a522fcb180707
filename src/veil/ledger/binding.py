"""The binding of a population to its table: the table's fingerprint keyed with the curator's key.

:func:`veil.dp.fingerprint.dataset_id` hashes a table's content with a *public* function, so
whoever sees it and knows every record but one recovers the missing one by hashing candidates.
The ledger therefore never stores, prints or hands out that fingerprint; what it keeps to tell a
population's table from any other is the **binding**

    ``veil-table-1:`` ‖ HMAC-SHA256(key, ``"veil table binding\\0"`` ‖ fingerprint)

under veil's sealing key (:mod:`veil.ledger.keys`, the key that anchors the ledger), which never
leaves the curator's side. Without the key a binding is indistinguishable from random bytes, so it
reveals nothing of the table; with it, the same table always gets the same binding. Ledgers of an
earlier veil stored the fingerprint itself (``veil-data-1:…``); such a stored value is still
recognized (:func:`matches`) and never written again.

What the analyst sees of a population is its *name*, which the curator gives (a budget file names
its population after the table's file), never anything computed from the table's content.

A DP answer written for the gate names its table by a **tag**, HMAC(key, ``"veil answer
table\\0"`` ‖ nonce ‖ binding) with a fresh random nonce (:func:`answer_tag`): the gate, holding
the key, tells whether an answer was drawn from one of the population's tables; an analyst who
sees two answers cannot tell whether they were drawn from the same table.
"""

from __future__ import annotations

import hmac
import secrets
from dataclasses import dataclass

from veil.ledger import keys

__all__ = ["BINDING_PREFIX", "TableRef", "answer_tag", "binding", "check_tag", "keyed", "matches", "new_nonce"]

BINDING_PREFIX = "veil-table-1:"
_LEGACY_PREFIX = "veil-data-1:"
_BINDING = b"veil table binding"
_TAG = b"veil answer table"


def binding(key: bytes, fingerprint: str) -> str:
    """The binding of the table whose :func:`~veil.dp.fingerprint.dataset_id` is ``fingerprint``."""
    return BINDING_PREFIX + keys.mac(key, _BINDING, fingerprint.encode("utf-8"))


def keyed(key: bytes, stored: str) -> str:
    """A stored binding in its keyed form (a fingerprint an earlier veil stored is keyed here)."""
    return binding(key, stored) if stored.startswith(_LEGACY_PREFIX) else stored


def matches(key: bytes, stored: str | None, fingerprint: str) -> bool:
    """Whether a stored binding (or an earlier veil's stored fingerprint) is the table's."""
    if stored is None:
        return False
    if stored.startswith(_LEGACY_PREFIX):
        return hmac.compare_digest(stored, fingerprint)
    return hmac.compare_digest(stored, binding(key, fingerprint))


def new_nonce() -> str:
    """A fresh random nonce for an answer's table tag (128 bits, hex)."""
    return secrets.token_hex(16)


def answer_tag(key: bytes, nonce: str, table_binding: str) -> str:
    """The tag that names an answer's table to whoever holds the key, and to nobody else."""
    return keys.mac(key, _TAG, f"{nonce}\n{table_binding}".encode("utf-8"))


def check_tag(key: bytes, nonce: str, tag: str, bindings) -> bool:
    """Whether the tag names one of ``bindings`` (stored forms, keyed here when needed)."""
    return any(hmac.compare_digest(tag, answer_tag(key, nonce, keyed(key, b))) for b in bindings if b)


@dataclass(frozen=True, eq=False)
class TableRef:
    """A table as a ledger binds it: its fingerprint (never shown), shape and the name the curator gave it.

    Attributes:
        fingerprint: :func:`veil.dp.fingerprint.dataset_id` of the content; private to the
            curator's process, keyed before it is stored (:func:`binding`).
        table: the table as read (:class:`veil.data.io.Table`), for the key column's checks.
        name: what to call a population made for it (the file's name), or ``None``.
    """

    fingerprint: str
    table: object
    name: str | None = None

    @classmethod
    def of(cls, data, *, delimiter: str | None = None, name: str | None = None) -> TableRef:
        """The reference of a table file, frame, pyarrow Table, :class:`veil.data.io.Table` or Dataset.

        Raises:
            DataError: the table cannot be read.
        """
        import os

        from veil.data.dataset import Dataset
        from veil.data.io import Table, read_table
        from veil.dp.fingerprint import dataset_id

        if isinstance(data, Dataset):
            table = data.table
        else:
            table = data if isinstance(data, Table) else read_table(data, delimiter)
        if name is None and isinstance(data, (str, os.PathLike)):
            name = os.path.basename(os.fspath(data)) or None
        return cls(dataset_id(data if isinstance(data, Dataset) else table), table, name)

    @property
    def rows(self) -> int:
        return self.table.num_rows

    @property
    def columns(self) -> list[str]:
        return list(self.table.columns)
