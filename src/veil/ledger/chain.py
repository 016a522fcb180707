"""The append-only decision log: entries chained by hash, the head anchored by an HMAC.

**Definition.** Entry ``n`` (``n`` = 1, 2, …) holds its time, author, action, population, a payload
(canonical JSON: sorted keys, no spaces, UTF-8) and the hash of entry ``n − 1`` (64 zeros for the
first). Its hash is ``SHA-256("veil-ledger entry\\0" ‖ canonical JSON of [n, at, by, action,
population, prev, payload])``. Changing any field of any entry changes its hash and breaks the
link from the next entry, so an edited, inserted or removed entry is found by walking the chain.

**Anchor.** Removing the *newest* entries leaves a shorter chain that still links. So the head is
anchored: the one row of ``anchor`` holds the last entry's number and hash and
``HMAC-SHA256(key, "veil-ledger anchor\\0" ‖ ledger id ‖ n ‖ hash)`` under veil's sealing key, kept
outside the database (:mod:`veil.ledger.keys`). Without the key, the chain cannot be cut, rewritten
and re-anchored unnoticed. Every write checks the anchor before it appends, so nothing is ever
added to a history that does not verify.

What the anchor cannot show: a whole copy of the database put back from earlier (its older anchor
is genuine), and anything done by someone who holds the key. Keep the head that
``veil ledger status`` prints elsewhere to detect the first; keep the key from the second.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import json
from dataclasses import dataclass

from sqlalchemy import bindparam, func, insert, select, update
from sqlalchemy.engine import Connection

from veil.ledger import keys
from veil.ledger.errors import LedgerError, LedgerTamperedError
from veil.ledger.schema import TABLES
from veil.ledger.statements import Prepared

__all__ = ["GENESIS", "Entry", "Head", "append", "canonical", "entries_after", "entry_hash", "key_for", "lock_head",
           "walk"]

GENESIS = "0" * 64
_ENTRY = b"veil-ledger entry\x00"
_ANCHOR = b"veil-ledger anchor"
LOG, ANCHOR = TABLES["log"], TABLES["anchor"]
_ENTRY_COLUMNS = ("seq", "at", "by", "action", "population", "payload", "prev", "hash")
_ANCHOR_COLUMNS = ("seq", "hash", "key_id", "mac")
# Compiled once per database and run on the driver's cursor (a charge runs all of them).
_READ_ANCHOR = Prepared(select(*(ANCHOR.c[c] for c in _ANCHOR_COLUMNS)).where(ANCHOR.c.id == bindparam("id")))
_LOCK_ANCHOR = Prepared(select(*(ANCHOR.c[c] for c in _ANCHOR_COLUMNS)).where(ANCHOR.c.id == bindparam("id"))
                        .with_for_update())
# The newest entry's number and the anchored entry's hash, read by a statement of its own after the
# lock is granted: under PostgreSQL's READ COMMITTED a statement that waited for a row lock sees the
# locked row as committed since, but the rest of the database as of its start.
_HEAD = Prepared(select(select(func.max(LOG.c.seq)).scalar_subquery().label("last_seq"),
                        select(LOG.c.hash).where(LOG.c.seq == bindparam("seq")).scalar_subquery()
                        .label("entry_hash")))
_INSERT_ENTRY = Prepared(insert(LOG).values({c: bindparam(c) for c in _ENTRY_COLUMNS}))
_INSERT_ANCHOR = Prepared(insert(ANCHOR).values({c: bindparam(c) for c in ("id",) + _ANCHOR_COLUMNS}))
_MOVE_ANCHOR = Prepared(update(ANCHOR).where(ANCHOR.c.id == bindparam("id"))
                        .values({c: bindparam(c) for c in _ANCHOR_COLUMNS}))
_ENTRIES_AFTER = Prepared(select(*(LOG.c[c] for c in _ENTRY_COLUMNS)).where(LOG.c.seq > bindparam("seq"))
                          .order_by(LOG.c.seq))


def canonical(value) -> str:
    """The canonical JSON text of a value (sorted keys, no spaces, non-ASCII kept)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def entry_hash(seq: int, at: str, by: str, action: str, population: str | None, prev: str, payload: str) -> str:
    """The hash of one entry (see the module notes)."""
    body = canonical([seq, at, by, action, population, prev, payload]).encode("utf-8")
    return hashlib.sha256(_ENTRY + body).hexdigest()


def anchor_mac(key: bytes, ledger_id: str, seq: int, head_hash: str) -> str:
    return keys.mac(key, _ANCHOR, f"{ledger_id}\n{seq}\n{head_hash}".encode("ascii"))


@dataclass(frozen=True)
class Head:
    """The newest entry: its number and hash (``seq`` 0 and :data:`GENESIS` before the first)."""

    seq: int
    hash: str


@dataclass(frozen=True)
class Entry:
    """One entry of the log, as stored."""

    seq: int
    at: str
    by: str
    action: str
    population: str | None
    payload: str
    prev: str
    hash: str

    @functools.cached_property
    def data(self) -> dict:
        """The payload, parsed (once)."""
        return json.loads(self.payload)

    @property
    def intact(self) -> bool:
        return self.hash == entry_hash(self.seq, self.at, self.by, self.action, self.population, self.prev,
                                       self.payload)


def key_for(where: str, anchor_key_id: str) -> bytes:
    """The sealing key, once checked to be the one the anchor was made with.

    Raises:
        LedgerError: the key file holds no key, or another one.
    """
    key = keys.load_key(create=False)
    if key is None or keys.key_id(key) != anchor_key_id:
        mine = "there is none" if key is None else f"that one is {keys.key_id(key)}"
        raise LedgerError(f"{where} is anchored with key {anchor_key_id} but {str(keys.key_path())!r} does not hold "
                          f"it ({mine}); set {keys.KEY_ENV} to the key file everyone who writes to it uses.")
    return key


def lock_head(conn: Connection, where: str, ledger_id: str, *, for_update: bool = True,
              key: bytes | None = None) -> tuple[Head, bytes]:
    """Lock the anchor (PostgreSQL: ``FOR UPDATE``), check it, and return the head and the key.

    ``key``: the key the caller already read for this ledger; used when the anchor names it (else
    the key file is read again).

    Raises:
        LedgerError: the key file does not hold the key the ledger was anchored with.
        LedgerTamperedError: the anchor's MAC does not verify, or the newest entry is not the
            one anchored (entries were removed or added by hand, or the newest one replaced).
    """
    row = (_LOCK_ANCHOR if for_update else _READ_ANCHOR).one(conn, {"id": 1})
    if row is None:
        raise LedgerTamperedError(f"{where} has no anchor (its row was deleted by hand), so its history cannot be "
                                  "trusted; restore it from a backup.")
    seq, digest, key_id, anchor_tag = row
    if key is None or keys.key_id(key) != key_id:
        key = key_for(where, key_id)
    if not hmac.compare_digest(anchor_tag, anchor_mac(key, ledger_id, seq, digest)):
        raise LedgerTamperedError(f"{where}'s anchor was changed by hand (its MAC does not verify); restore the "
                                  "ledger from a backup.")
    last_seq, entry_hash = _HEAD.one(conn, {"seq": seq})
    if last_seq != seq or entry_hash != digest:
        raise LedgerTamperedError(f"{where}'s {_head_problem(seq, last_seq)}, so restore the ledger from a backup.")
    return Head(seq, digest), key


def _head_problem(anchored: int, last: int | None) -> str:
    """What a log whose newest entry is not the anchored one went through, in words."""
    if last is None:
        return f"log is empty but its anchor names entry {anchored}: every entry was deleted by hand"
    if last < anchored:
        return (f"log ends at entry {last} but its anchor names entry {anchored}: the newest entries were deleted by "
                "hand")
    if last > anchored:
        return (f"log goes on after entry {anchored}, the one its anchor names, up to entry {last}: entries were "
                "added by hand")
    return (f"newest entry, entry {anchored}, is not the one its anchor names (its hash differs): it was replaced "
            "by hand")


def append(conn: Connection, head: Head, key: bytes, ledger_id: str, *, at: str, by: str, action: str,
           population: str | None, payload: dict, first: bool = False) -> Head:
    """Append one entry after ``head`` and move the anchor to it; the caller holds the write lock.

    ``first`` starts a new chain (the anchor row does not exist yet).
    """
    text = canonical(payload)
    seq = head.seq + 1
    digest = entry_hash(seq, at, by, action, population, head.hash, text)
    _INSERT_ENTRY.run(conn, dict(seq=seq, at=at, by=by, action=action, population=population, payload=text,
                                 prev=head.hash, hash=digest)).close()
    values = dict(id=1, seq=seq, hash=digest, key_id=keys.key_id(key), mac=anchor_mac(key, ledger_id, seq, digest))
    (_INSERT_ANCHOR if first else _MOVE_ANCHOR).run(conn, values).close()
    return Head(seq, digest)


def entries_after(conn: Connection, head: Head, where: str) -> list[Entry]:
    """The entries after ``head`` (one known to be genuine), checked link by link from it.

    Raises:
        LedgerTamperedError: the first of them does not follow ``head`` (the entry it links
            from was replaced), or one was edited, removed or inserted.
    """
    entries = [Entry(*row) for row in _ENTRIES_AFTER.all(conn, {"seq": head.seq})]
    _check_links(entries, head, where)
    return entries


def _check_links(entries: list[Entry], after: Head, where: str) -> None:
    prev, n = after.hash, after.seq
    for entry in entries:
        n += 1
        if entry.seq != n:
            raise LedgerTamperedError(f"{where}'s log jumps from entry {n - 1} to entry {entry.seq}: entries were "
                                      "removed by hand, so restore the ledger from a backup.")
        if not entry.intact:
            raise LedgerTamperedError(f"{where}'s entry {entry.seq} ({entry.action}) was edited after it was written "
                                      "(its hash does not match its content); restore the ledger from a backup.")
        if entry.prev != prev:
            raise LedgerTamperedError(f"{where}'s entry {entry.seq} does not follow entry {n - 1} (the chain is "
                                      "broken there): entries were replaced by hand, so restore the ledger from a "
                                      "backup.")
        prev = entry.hash


def count(conn: Connection) -> int:
    return conn.execute(select(func.count()).select_from(LOG)).scalar_one()


def walk(conn: Connection, where: str) -> list[Entry]:
    """Every entry, checked link by link from the first.

    Raises:
        LedgerTamperedError: an entry was edited (its hash does not match its content), or an
            entry is missing or was inserted (numbers not consecutive, a link broken).
    """
    return entries_after(conn, Head(0, GENESIS), where)
